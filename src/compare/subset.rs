//! Client-side comparison: is every field the chart set present, with the same value, in the live
//! object? Server defaults the chart omits are not drift; quantities and int-or-string values are
//! compared by meaning.

use super::merge_keys::{is_empty, keys, pair};
use super::quantity;
use crate::model::{FieldDiff, FieldPath, Segment};
use serde_json::Value;

/// Differences between what the chart set (`desired`, as made [`comparable`]) and the live
/// object.
pub(crate) fn differences(desired: &Value, live: &Value) -> Vec<FieldDiff> {
    let mut out = Vec::new();
    walk(desired, Some(live), &mut FieldPath::root(), "", &mut out);
    out
}

/// The desired object as the server stores it, where that is known without asking: a Secret's
/// `stringData` is folded into `data` (base64). Borrowed unchanged for everything else.
pub(crate) fn comparable(desired: &Value) -> std::borrow::Cow<'_, Value> {
    use base64::Engine;
    use std::borrow::Cow;
    let is_secret = desired.get("kind").and_then(Value::as_str) == Some("Secret");
    if !is_secret || desired.get("stringData").is_none() {
        return Cow::Borrowed(desired);
    }
    let mut out = desired.clone();
    let Some(obj) = out.as_object_mut() else { return Cow::Owned(out) };
    if let Some(Value::Object(string_data)) = obj.remove("stringData") {
        let data = obj.entry("data").or_insert_with(|| Value::Object(Default::default()));
        if let Some(data) = data.as_object_mut() {
            for (k, v) in string_data {
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                data.insert(k, base64::engine::general_purpose::STANDARD.encode(text).into());
            }
        }
    }
    Cow::Owned(out)
}

fn walk(desired: &Value, live: Option<&Value>, path: &mut FieldPath, field: &str, out: &mut Vec<FieldDiff>) {
    let Some(live) = live.filter(|l| !l.is_null()) else {
        if !is_empty(desired) {
            out.push(FieldDiff::new(path.clone(), Some(desired), None));
        }
        return;
    };
    match (desired, live) {
        (Value::Object(d), Value::Object(l)) => {
            for (k, dv) in d {
                path.0.push(Segment::Field(k.clone()));
                walk(dv, l.get(k), path, k, out);
                path.0.pop();
            }
        }
        (Value::Array(d), Value::Array(l)) => match (keys(field, d), keys(field, l)) {
            (Some(dk), Some(lk)) => {
                let (partners, _) = pair(&dk, &lk);
                for (i, ((dv, key), j)) in d.iter().zip(dk).zip(partners).enumerate() {
                    path.0.push(Segment::Item { recorded: Some(i), live: j, key: Some(key) });
                    match j {
                        Some(j) => walk(dv, Some(&l[j]), path, field, out),
                        None => out.push(FieldDiff::new(path.clone(), Some(dv), None)),
                    }
                    path.0.pop();
                }
            }
            _ if d.len() != l.len() => out.push(FieldDiff::new(path.clone(), Some(desired), Some(live))),
            _ => {
                for (i, (dv, lv)) in d.iter().zip(l).enumerate() {
                    path.0.push(Segment::Item { recorded: Some(i), live: Some(i), key: None });
                    walk(dv, Some(lv), path, field, out);
                    path.0.pop();
                }
            }
        },
        (Value::Array(d), _) if d.is_empty() => {}
        (Value::Object(d), _) if d.is_empty() => {}
        // `null` in a chart sets nothing (`creationTimestamp: null` from `kubectl create
        // --dry-run=client -o yaml`): whatever the server keeps there is not drift.
        (Value::Null, _) => {}
        _ if scalar_equal(desired, live, path) => {}
        _ => out.push(FieldDiff::new(path.clone(), Some(desired), Some(live))),
    }
}

/// Scalars equal by meaning: same JSON, same number, number vs numeric string (int-or-string),
/// or, under resource quantities, the same amount.
pub(crate) fn scalar_equal(d: &Value, l: &Value, path: &FieldPath) -> bool {
    if d == l {
        return true;
    }
    match (d, l) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Number(n), Value::String(s)) | (Value::String(s), Value::Number(n)) => {
            s.trim() == n.to_string() || (is_quantity_path(path) && quantity::equal(s, &n.to_string()))
        }
        (Value::String(a), Value::String(b)) => is_quantity_path(path) && quantity::equal(a, b),
        _ => false,
    }
}

/// Fields that hold resource quantities (`resources.requests.cpu`, quota `hard`, PVC storage...).
fn is_quantity_path(path: &FieldPath) -> bool {
    const PARENTS: [&str; 6] = ["requests", "limits", "hard", "capacity", "allocatable", "overhead"];
    fn name(s: Option<&Segment>) -> &str {
        match s {
            Some(Segment::Field(k)) => k.as_str(),
            _ => "",
        }
    }
    let mut rev = path.0.iter().rev();
    let last = name(rev.next());
    let parent = name(rev.next());
    PARENTS.contains(&parent) || matches!(last, "sizeLimit" | "storage")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_template_pasted_from_kubectl_dry_run_is_in_sync() {
        let desired = serde_json::json!({
            "metadata": {"name": "web", "creationTimestamp": null},
            "spec": {"strategy": {}, "template": {"metadata": {"creationTimestamp": null},
                "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {}}]}}},
            "status": {}
        });
        let live = serde_json::json!({
            "metadata": {"name": "web", "creationTimestamp": "2026-11-30T10:00:00Z"},
            "spec": {"strategy": {"type": "RollingUpdate"}, "template": {"metadata": {},
                "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {}}]}}},
            "status": {"replicas": 1}
        });
        assert_eq!(super::differences(&desired, &live), vec![]);
    }

    use super::*;
    use serde_json::json;

    fn paths(d: Value, l: Value) -> Vec<String> {
        differences(&comparable(&d), &l).into_iter().map(|f| f.path.pointer()).collect()
    }

    #[test]
    fn a_repeated_key_is_compared_by_its_rank_among_equals() {
        let env = |a: &str, b: &str| {
            json!({"spec": {"containers": [{"name": "web", "env": [
            {"name": "MODE", "value": a}, {"name": "OTHER", "value": "o"}, {"name": "MODE", "value": b}]}]}})
        };
        let recorded = env("a", "b");
        assert!(paths(recorded.clone(), env("a", "b")).is_empty(), "an untouched object is in sync");
        let diffs = differences(&recorded, &env("a", "edited"));
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        assert_eq!(diffs[0].path.pointer(), "/spec/containers/0/env/2/value");
        assert_eq!(diffs[0].path.to_string(), "spec.containers[name=web].env[name=MODE].value");
    }

    #[test]
    fn server_defaults_and_extra_fields_are_not_drift() {
        let d = json!({"spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "web", "image": "a"}]}}}});
        let l = json!({"spec": {"replicas": 2, "progressDeadlineSeconds": 600, "template": {"spec": {
            "containers": [{"name": "web", "image": "a", "imagePullPolicy": "IfNotPresent"}], "restartPolicy": "Always"}}}});
        assert!(paths(d, l).is_empty());
    }

    #[test]
    fn quantities_and_int_or_string() {
        let d = json!({"resources": {"requests": {"cpu": 0.5, "memory": "1024Mi"}, "limits": {"cpu": "1000m"}}, "port": 8080, "target": "8080"});
        let l = json!({"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1"}}, "port": "8080", "target": 8080});
        assert!(paths(d, l).is_empty());
        let d = json!({"data": {"x": "1000m"}});
        let l = json!({"data": {"x": "1"}});
        assert_eq!(paths(d, l), ["/data/x"], "quantities only compare by value under resources");
    }

    #[test]
    fn changed_and_removed_fields_are_found() {
        let d = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "web", "image": "a"}]}}}});
        let l = json!({"metadata": {"labels": {}}, "spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "side", "image": "s"}, {"name": "web", "image": "b"}]}}}});
        assert_eq!(paths(d, l), ["/metadata/labels/app", "/spec/replicas", "/spec/template/spec/containers/1/image"]);
    }

    #[test]
    fn keyed_element_missing_and_positional_lists() {
        let d = json!({"env": [{"name": "A", "value": "1"}]});
        assert_eq!(
            paths(d.clone(), json!({"env": [{"name": "B", "value": "1"}]})),
            ["/env/0"],
            "resolves in the record"
        );
        let diff = differences(&d, &json!({"env": [{"name": "B", "value": "1"}]})).remove(0);
        assert_eq!(diff.path.to_string(), "env[name=A]");
        assert_eq!(diff.path.live_insert_pointer().as_deref(), Some("/env/-"));
        let d = json!({"rules": [{"verbs": ["get"]}]});
        let l = json!({"rules": [{"verbs": ["get"]}, {"verbs": ["list"]}]});
        assert_eq!(paths(d, l), ["/rules"], "an appended rule changes an atomic list");
        let d = json!({"args": ["a", "b"]});
        assert_eq!(paths(d, json!({"args": ["a", "c"]})), ["/args/1"]);
    }

    #[test]
    fn secret_string_data_is_compared_as_data() {
        let d = json!({"kind": "Secret", "data": {"a": "eA=="}, "stringData": {"b": "hi"}});
        assert!(paths(d.clone(), json!({"kind": "Secret", "data": {"a": "eA==", "b": "aGk="}})).is_empty());
        assert_eq!(paths(d, json!({"kind": "Secret", "data": {"a": "eA==", "b": "aG8="}})), ["/data/b"]);
    }

    #[test]
    fn empty_desired_values_match_absent_live_fields() {
        let d = json!({"metadata": {"annotations": {}}, "spec": {"hostNetwork": false, "env": [], "x": null}});
        assert!(paths(d, json!({"metadata": {}, "spec": {}})).is_empty());
    }
}

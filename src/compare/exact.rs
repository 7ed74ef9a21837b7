//! Exact comparison of two server-produced objects (a server-side apply dry-run result against
//! the live object), after removing what the server owns.

use super::merge_keys::{keys, pair};
use crate::model::{FieldDiff, FieldPath, Segment};
use serde_json::Value;

/// Metadata the server (or a controller) owns; never drift.
const SERVER_METADATA: [&str; 6] =
    ["managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"];
/// Annotations controllers add to objects Helm owns.
pub(crate) const CONTROLLER_ANNOTATIONS: [&str; 2] =
    ["deployment.kubernetes.io/revision", "kubectl.kubernetes.io/restartedAt"];

/// Removes `status` and server-owned metadata in place.
pub(crate) fn strip_server_fields(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    map.remove("status");
    if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in SERVER_METADATA {
            meta.remove(k);
        }
        if let Some(ann) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            for k in CONTROLLER_ANNOTATIONS {
                ann.remove(k);
            }
            if ann.is_empty() {
                meta.remove("annotations");
            }
        }
    }
}

/// Every path where `recorded` (what applying the release would produce) and `live` differ.
pub(crate) fn differences(recorded: &Value, live: &Value) -> Vec<FieldDiff> {
    let mut r = recorded.clone();
    let mut l = live.clone();
    strip_server_fields(&mut r);
    strip_server_fields(&mut l);
    let mut out = Vec::new();
    walk(Some(&r), Some(&l), &mut FieldPath::root(), "", &mut out);
    out
}

fn walk(r: Option<&Value>, l: Option<&Value>, path: &mut FieldPath, field: &str, out: &mut Vec<FieldDiff>) {
    let mut step = |segment: Segment, path: &mut FieldPath, r: Option<&Value>, l: Option<&Value>, field: &str| {
        path.0.push(segment);
        walk(r, l, path, field, out);
        path.0.pop();
    };
    match (r, l) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            for (k, av) in a {
                step(Segment::Field(k.clone()), path, Some(av), b.get(k), k);
            }
            for (k, bv) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                step(Segment::Field(k.clone()), path, None, Some(bv), k);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => match (keys(field, a), keys(field, b)) {
            (Some(ak), Some(bk)) => {
                let (partners, alone) = pair(&ak, &bk);
                for (i, (key, j)) in ak.iter().zip(partners).enumerate() {
                    let item = Segment::Item { recorded: Some(i), live: j, key: Some(key.clone()) };
                    step(item, path, Some(&a[i]), j.map(|j| &b[j]), field);
                }
                for j in alone {
                    step(
                        Segment::Item { recorded: None, live: Some(j), key: Some(bk[j].clone()) },
                        path,
                        None,
                        Some(&b[j]),
                        field,
                    );
                }
            }
            _ if a.len() != b.len() => out.push(FieldDiff::new(path.clone(), r, l)),
            _ => {
                for (i, (av, bv)) in a.iter().zip(b).enumerate() {
                    step(
                        Segment::Item { recorded: Some(i), live: Some(i), key: None },
                        path,
                        Some(av),
                        Some(bv),
                        field,
                    );
                }
            }
        },
        (a, b) if a == b => {}
        (a, b) => out.push(FieldDiff::new(path.clone(), a, b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ignores_server_owned_fields() {
        let r = json!({"metadata": {"name": "a", "generation": 3, "resourceVersion": "9", "annotations": {"deployment.kubernetes.io/revision": "2"}}, "status": {"x": 1}});
        let l = json!({"metadata": {"name": "a", "generation": 2, "resourceVersion": "8", "managedFields": []}, "status": {"x": 2}});
        assert!(differences(&r, &l).is_empty());
    }

    #[test]
    fn a_repeated_key_is_compared_by_its_rank_among_equals() {
        let env = |values: &[&str]| {
            let items: Vec<Value> = values.iter().map(|v| json!({"name": "MODE", "value": v})).collect();
            json!({"spec": {"containers": [{"name": "web", "env": items}]}})
        };
        assert!(differences(&env(&["a", "b"]), &env(&["a", "b"])).is_empty());
        let changed: Vec<String> =
            differences(&env(&["a", "b"]), &env(&["a", "c", "d"])).iter().map(|f| f.path.pointer()).collect();
        assert_eq!(changed, ["/spec/containers/0/env/1/value", "/spec/containers/0/env/2"]);
    }

    #[test]
    fn reports_changed_added_and_removed_paths() {
        let r = json!({"spec": {"replicas": 2, "containers": [{"name": "web", "image": "a"}]}, "data": {"k": "v"}});
        let l =
            json!({"spec": {"replicas": 5, "containers": [{"name": "web", "image": "a"}, {"name": "x"}]}, "data": {}});
        let got: Vec<_> = differences(&r, &l).into_iter().map(|d| (d.path.pointer(), d.recorded, d.live)).collect();
        assert_eq!(
            got,
            vec![
                ("/data/k".to_string(), Some(json!("v")), None),
                ("/spec/containers/1".to_string(), None, Some(json!({"name": "x"}))),
                ("/spec/replicas".to_string(), Some(json!(2)), Some(json!(5))),
            ]
        );
    }
}

//! Changes made outside Helm: fields of the live object that another field manager set and the
//! chart does not declare, read from `metadata.managedFields`.

use crate::model::{FieldPath, Foreign, ItemKey};
use serde_json::{Map, Value};

/// Managers that are Helm itself.
pub const HELM_MANAGERS: [&str; 2] = ["helm", "helm-controller"];
/// Managers of the control plane whose writes are not user drift.
const SYSTEM_MANAGERS: [&str; 5] =
    ["kube-controller-manager", "kube-scheduler", "kubelet", "kube-apiserver", "before-first-apply"];

/// The manager of a managedFields entry.
pub fn manager_of(entry: &Value) -> &str {
    entry.get("manager").and_then(Value::as_str).unwrap_or("")
}

/// Whether a managedFields entry is the control plane's (a system manager, or a status write).
pub fn is_system_entry(entry: &Value) -> bool {
    SYSTEM_MANAGERS.contains(&manager_of(entry)) || entry.get("subresource").and_then(Value::as_str) == Some("status")
}

/// Fields in `live` owned by a non-Helm, non-system manager and absent from `desired`.
pub fn foreign(desired: &Value, live: &Value) -> Vec<Foreign> {
    let mut out: Vec<Foreign> = Vec::new();
    let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array);
    for entry in entries.into_iter().flatten() {
        let manager = manager_of(entry);
        if HELM_MANAGERS.contains(&manager) || is_system_entry(entry) {
            continue;
        }
        if let Some(fields) = entry.get("fieldsV1").and_then(Value::as_object) {
            let mut found = Vec::new();
            walk(fields, Some(desired), live, &FieldPath::root(), &mut found);
            for (path, value) in found {
                if !out.iter().any(|f| f.path == path) {
                    out.push(Foreign { path, value, manager: manager.to_string(), changed_by: None });
                }
            }
        }
    }
    out.sort_by_cached_key(|f| f.path.pointer());
    out
}

fn walk(
    fields: &Map<String, Value>,
    desired: Option<&Value>,
    live: &Value,
    path: &FieldPath,
    out: &mut Vec<(FieldPath, Value)>,
) {
    for (k, child) in fields {
        let children = child.as_object().filter(|c| !c.is_empty());
        if let Some(name) = k.strip_prefix("f:") {
            let Some(lv) = live.get(name) else { continue };
            let at = path.field(name);
            match desired.and_then(|d| d.get(name)).filter(|d| !d.is_null()) {
                None => out.push((at, lv.clone())),
                Some(dv) => {
                    if let Some(c) = children {
                        walk(c, Some(dv), lv, &at, out);
                    }
                }
            }
        } else if let Some(key) = k.strip_prefix("k:") {
            let Ok(Value::Object(key)) = serde_json::from_str::<Value>(key) else { continue };
            let Some((i, lv)) = find_item(live, &key) else { continue };
            let in_desired = desired.and_then(|d| find_item(d, &key));
            let item_key = ItemKey::from_fields(key.iter().map(|(k, v)| (k.as_str(), v)));
            let at = path.item(in_desired.map(|(j, _)| j), Some(i), Some(item_key));
            match in_desired {
                None => out.push((at, lv.clone())),
                Some((_, dv)) => {
                    if let Some(c) = children {
                        walk(c, Some(dv), lv, &at, out);
                    }
                }
            }
        } else if let Some(v) = k.strip_prefix("v:") {
            let Ok(value) = serde_json::from_str::<Value>(v) else { continue };
            let in_desired = desired.and_then(Value::as_array).is_some_and(|d| d.contains(&value));
            let live_index = live.as_array().and_then(|l| l.iter().position(|x| *x == value));
            if let (false, Some(i)) = (in_desired, live_index) {
                out.push((path.item(None, Some(i), None), value));
            }
        }
    }
}

/// The element of list `v` whose fields match every field of `key`.
pub fn find_item<'a>(v: &'a Value, key: &Map<String, Value>) -> Option<(usize, &'a Value)> {
    v.as_array()?.iter().enumerate().find(|(_, e)| {
        key.iter()
            .all(|(k, want)| e.get(k).is_some_and(|got| super::subset::scalar_equal(want, got, &FieldPath::root())))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn live(managed: Value) -> Value {
        json!({
            "metadata": {"labels": {"app": "web", "team": "x"}, "managedFields": managed},
            "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "a", "env": [
                {"name": "GREETING", "value": "hi"}, {"name": "FOO", "value": "bar"}]}]}}}
        })
    }

    #[test]
    fn finds_env_var_and_label_added_by_kubectl() {
        let desired = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "a", "env": [{"name": "GREETING", "value": "hi"}]}]}}}});
        let managed = json!([
            {"manager": "helm", "operation": "Update", "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}},
            {"manager": "kubectl-set", "operation": "Update", "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"web\"}": {"f:env": {"k:{\"name\":\"FOO\"}": {".": {}, "f:name": {}, "f:value": {}}}}}}}}}},
            {"manager": "kubectl-label", "operation": "Update", "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}}},
            {"manager": "kube-controller-manager", "operation": "Update", "fieldsV1": {"f:metadata": {"f:annotations": {}}}},
            {"manager": "kubectl-edit", "operation": "Update", "subresource": "status", "fieldsV1": {"f:status": {}}}
        ]);
        let got: Vec<(String, String, Value, String)> = foreign(&desired, &live(managed))
            .into_iter()
            .map(|f| (f.path.pointer(), f.path.to_string(), f.value, f.manager))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/metadata/labels/team".into(), "metadata.labels.team".into(), json!("x"), "kubectl-label".into()),
                (
                    "/spec/template/spec/containers/0/env/1".into(),
                    "spec.template.spec.containers[name=web].env[name=FOO]".into(),
                    json!({"name": "FOO", "value": "bar"}),
                    "kubectl-set".into()
                ),
            ]
        );
    }

    #[test]
    fn fields_the_chart_declares_are_not_foreign() {
        let desired = json!({"metadata": {"labels": {"app": "web", "team": "x"}}});
        let managed = json!([{"manager": "kubectl-label", "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}}}]);
        assert!(foreign(&desired, &live(managed)).is_empty());
    }

    #[test]
    fn a_false_or_zero_the_chart_declares_is_not_foreign() {
        let desired = json!({"spec": {"automountServiceAccountToken": false, "replicas": 0}});
        let live = json!({"spec": {"automountServiceAccountToken": false, "replicas": 0}, "metadata": {"managedFields": [
            {"manager": "kubectl-patch", "fieldsV1": {"f:spec": {"f:automountServiceAccountToken": {}, "f:replicas": {}}}}]}});
        assert!(foreign(&desired, &live).is_empty());
    }
}

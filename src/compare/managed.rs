//! Changes made outside Helm: fields of the live object that another field manager set and the
//! chart does not declare, read from `metadata.managedFields`.

use crate::model::{FieldPath, Foreign, ItemKey, ServerValue};
use serde_json::{Map, Value};

/// Managers of the control plane whose writes are not user drift.
pub(crate) const SYSTEM_MANAGERS: [&str; 6] = [
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "kube-apiserver",
    "before-first-apply",
    "cloud-controller-manager",
];

/// The manager of a managedFields entry.
pub(crate) fn manager_of(entry: &Value) -> &str {
    entry.get("manager").and_then(Value::as_str).unwrap_or("")
}

/// Whether a managedFields entry is the control plane's (a system manager, or a status write).
pub(crate) fn is_system_entry(entry: &Value) -> bool {
    SYSTEM_MANAGERS.contains(&manager_of(entry)) || entry.get("subresource").and_then(Value::as_str) == Some("status")
}

/// Whether a managedFields entry is neither Helm's (the release's writer, `helm`) nor the
/// control plane's: what another writer (a person, a tool, a restore) owns.
pub(crate) fn is_other_writer(entry: &Value, helm: &str) -> bool {
    manager_of(entry) != helm && !is_system_entry(entry)
}

/// Whether a manager other than Helm (`helm`) and the control plane owns fields of `live` (only
/// then can anything be foreign).
pub(crate) fn owned_besides_helm(live: &Value, helm: &str) -> bool {
    live.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|e| is_other_writer(e, helm))
}

/// Fields another manager owns that the chart does not set: those whose live value is what the
/// server holds for Helm's object (`held`, from [`super::defaults::held`]) apart from the others.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Found {
    /// Added outside Helm.
    pub(crate) added: Vec<Foreign>,
    /// The server's defaults (or chosen values) for Helm's object, owned by another manager: a
    /// restored or re-created object's, ownership rather than content.
    pub(crate) defaults: Vec<ServerValue>,
}

/// Fields in `live` owned by a manager other than Helm (`helm`) and the control plane and absent
/// from `desired`; those
/// `held` holds with their live value are [`Found::defaults`]. The values the server chooses (a
/// cluster IP, a node port) are the server's only when owned by one of the object's `creators`
/// (it made the object with them: a restore); another owner changed them.
pub(crate) fn foreign(desired: &Value, held: &Value, creators: &[String], live: &Value, helm: &str) -> Found {
    let fixed = super::defaults::without_chosen(held);
    let mut out = Found::default();
    let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array);
    for entry in entries.into_iter().flatten() {
        if !is_other_writer(entry, helm) {
            continue;
        }
        let manager = manager_of(entry);
        if let Some(fields) = entry.get("fieldsV1").and_then(Value::as_object) {
            let mut found = Vec::new();
            let held = if creators.iter().any(|c| c == manager) { held } else { &fixed };
            walk(fields, Sides { desired: Some(desired), held: Some(held) }, live, &FieldPath::root(), &mut found);
            for (path, value, default) in found {
                let known =
                    |p: &FieldPath| out.added.iter().any(|f| f.path == *p) || out.defaults.iter().any(|d| d.path == *p);
                if known(&path) {
                    continue;
                }
                let manager = manager.to_string();
                match default {
                    true => out.defaults.push(ServerValue { path, manager }),
                    false => out.added.push(Foreign { path, value, manager, changed_by: None }),
                }
            }
        }
    }
    out.added.sort_by_cached_key(|f| f.path.pointer());
    out.defaults.sort_by_cached_key(|f| f.path.pointer());
    out
}

/// Where a walk is in what the chart set and in what the server would hold for it.
#[derive(Clone, Copy)]
struct Sides<'a> {
    desired: Option<&'a Value>,
    held: Option<&'a Value>,
}

impl<'a> Sides<'a> {
    fn field(self, name: &str) -> Sides<'a> {
        let get = |v: Option<&'a Value>| v.and_then(|d| d.get(name)).filter(|d| !d.is_null());
        Sides { desired: get(self.desired), held: get(self.held) }
    }
}

/// Each owned field found: its path, live value and whether it is the server's (held) value.
fn walk(
    fields: &Map<String, Value>,
    at: Sides<'_>,
    live: &Value,
    path: &FieldPath,
    out: &mut Vec<(FieldPath, Value, bool)>,
) {
    for (k, child) in fields {
        let children = child.as_object().filter(|c| !c.is_empty());
        if let Some(name) = k.strip_prefix("f:") {
            let Some(lv) = live.get(name) else { continue };
            let here = path.field(name);
            let sides = at.field(name);
            match (sides.desired, sides.held) {
                (Some(dv), held) => match children {
                    Some(c) => walk(c, sides, lv, &here, out),
                    // A whole value owned (an atomic map or list: a Service's selector): what
                    // it holds beyond the chart's is added.
                    None => extras(held.unwrap_or(dv), lv, &here, out),
                },
                (None, Some(held)) if super::defaults::holds(lv, held) => out.push((here, Value::Null, true)),
                (None, Some(_)) if children.is_some() && lv.is_object() => {
                    walk(children.expect("checked"), sides, lv, &here, out)
                }
                (None, _) => out.push((here, lv.clone(), false)),
            }
        } else if let Some(key) = k.strip_prefix("k:") {
            let Ok(Value::Object(key)) = serde_json::from_str::<Value>(key) else { continue };
            let Some((i, lv)) = find_item(live, &key) else { continue };
            // Items are found in what the server would hold (a port's `protocol: TCP` filled
            // in), at the same index in what the chart set.
            let in_held = at.held.and_then(|d| find_item(d, &key));
            let in_desired = match in_held {
                Some((j, _)) => at.desired.and_then(|d| d.get(j)).map(|d| (j, d)),
                None => at.desired.and_then(|d| find_item(d, &key)),
            };
            let item_key = ItemKey::from_fields(key.iter().map(|(k, v)| (k.as_str(), v)));
            let here = path.item(in_desired.map(|(j, _)| j), Some(i), Some(item_key));
            match in_desired {
                None => out.push((here, lv.clone(), false)),
                Some((_, dv)) => {
                    if let Some(c) = children {
                        walk(
                            c,
                            Sides { desired: Some(dv), held: in_held.map(|(_, h)| h).or(Some(dv)) },
                            lv,
                            &here,
                            out,
                        );
                    }
                }
            }
        } else if let Some(v) = k.strip_prefix("v:") {
            let Ok(value) = serde_json::from_str::<Value>(v) else { continue };
            let within = |side: Option<&Value>| side.and_then(Value::as_array).is_some_and(|d| d.contains(&value));
            let live_index = live.as_array().and_then(|l| l.iter().position(|x| *x == value));
            if let (false, Some(i)) = (within(at.desired), live_index) {
                let default = within(at.held);
                out.push((path.item(None, Some(i), None), value, default));
            }
        }
    }
}

/// The entries of an atomic `live` value beyond what the server would hold (`held`): maps
/// compared key by key, lists of equal length item by item (a list of another length differs
/// from the chart's, which the comparison reports).
fn extras(held: &Value, live: &Value, path: &FieldPath, out: &mut Vec<(FieldPath, Value, bool)>) {
    match (held, live) {
        (Value::Object(h), Value::Object(l)) => {
            for (k, lv) in l {
                match h.get(k).filter(|h| !h.is_null()) {
                    None => out.push((path.field(k), lv.clone(), false)),
                    Some(hv) if hv.as_str() == Some(super::defaults::CHOSEN) => {}
                    Some(hv) => extras(hv, lv, &path.field(k), out),
                }
            }
        }
        (Value::Array(h), Value::Array(l)) if h.len() == l.len() => {
            for (i, (hv, lv)) in h.iter().zip(l).enumerate() {
                extras(hv, lv, &path.item(Some(i), Some(i), None), out);
            }
        }
        _ => {}
    }
}

/// The element of list `v` whose fields match every field of `key`.
pub(crate) fn find_item<'a>(v: &'a Value, key: &Map<String, Value>) -> Option<(usize, &'a Value)> {
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
        let got: Vec<(String, String, Value, String)> = foreign(&desired, &desired, &[], &live(managed), "helm")
            .added
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
        assert!(foreign(&desired, &desired, &[], &live(managed), "helm").added.is_empty());
    }

    #[test]
    fn a_false_or_zero_the_chart_declares_is_not_foreign() {
        let desired = json!({"spec": {"automountServiceAccountToken": false, "replicas": 0}});
        let live = json!({"spec": {"automountServiceAccountToken": false, "replicas": 0}, "metadata": {"managedFields": [
            {"manager": "kubectl-patch", "fieldsV1": {"f:spec": {"f:automountServiceAccountToken": {}, "f:replicas": {}}}}]}});
        assert!(foreign(&desired, &desired, &[], &live, "helm").added.is_empty());
    }

    /// A Service re-created from its own `get -o json` (Helm's request: a port without protocol).
    fn restored_service(selector: Value) -> Value {
        json!({"metadata": {"managedFields": [{"manager": "velero-server", "operation": "Update", "fieldsV1": {"f:spec": {
                "f:clusterIP": {}, "f:type": {}, "f:sessionAffinity": {}, "f:selector": {},
                "f:ports": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}}}}}]},
            "spec": {"clusterIP": "10.0.0.8", "type": "ClusterIP", "sessionAffinity": "None", "selector": selector,
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}})
    }

    #[test]
    fn the_servers_values_owned_elsewhere_are_defaults_not_additions() {
        let desired = json!({"spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}});
        let held = super::super::defaults::held("", "Service", &desired, None);
        let found =
            foreign(&desired, &held, &["velero-server".into()], &restored_service(json!({"app": "web"})), "helm");
        assert!(found.added.is_empty(), "{:?}", found.added);
        let defaults: Vec<String> = found.defaults.iter().map(|d| d.path.to_string()).collect();
        assert_eq!(
            defaults,
            [
                "spec.clusterIP",
                "spec.ports[port=80,protocol=TCP].protocol",
                "spec.ports[port=80,protocol=TCP].targetPort",
                "spec.sessionAffinity",
                "spec.type"
            ]
        );
        // Without what the server holds, the same fields read as added outside Helm.
        assert_eq!(foreign(&desired, &desired, &[], &restored_service(json!({"app": "web"})), "helm").added.len(), 4);
        // A chosen value (the cluster IP) owned by someone who did not create the object was
        // changed by them.
        let edited = foreign(&desired, &held, &[], &restored_service(json!({"app": "web"})), "helm");
        assert_eq!(edited.added.iter().map(|a| a.path.to_string()).collect::<Vec<_>>(), ["spec.clusterIP"]);
    }

    #[test]
    fn what_an_atomic_value_holds_beyond_the_chart_is_added() {
        let desired = json!({"spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}});
        let held = super::super::defaults::held("", "Service", &desired, None);
        let mut live = restored_service(json!({"app": "web", "tier": "x"}));
        live["spec"]["type"] = json!("NodePort");
        let found = foreign(&desired, &held, &["velero-server".into()], &live, "helm");
        let added: Vec<(String, Value)> = found.added.into_iter().map(|a| (a.path.to_string(), a.value)).collect();
        assert_eq!(added, [("spec.selector.tier".to_string(), json!("x")), ("spec.type".into(), json!("NodePort"))]);
    }
}

//! Who owns the fields the chart sets (`metadata.managedFields`). For server-side applied
//! releases, a field another manager owns (alone, or shared with Helm) makes a `helm upgrade`
//! that changes it fail with a conflict; [`reclaimed`] gives such fields back to Helm.

use super::managed::{find_item as find, is_other_manager, is_system_entry, manager_of};
use crate::model::{FieldPath, ItemKey, Ownership};
use serde_json::{Map, Value};

/// Fields of `desired` owned by a manager other than Helm (the release's writer, `helm`) and the
/// control plane, with that manager and whether Helm shares them (a server-side apply that changes a field conflicts with every other
/// owner, shared or not).
pub(crate) fn disowned(desired: &Value, live: &Value, helm: &str) -> Vec<Ownership> {
    let entries: Vec<&Value> =
        live.pointer("/metadata/managedFields").and_then(Value::as_array).into_iter().flatten().collect();
    let leaves = |entry: &Value| {
        let mut out = Vec::new();
        if let Some(fields) = entry.get("fieldsV1").and_then(Value::as_object) {
            owned_leaves(fields, desired, live, &mut FieldPath::root(), &mut out);
        }
        out
    };
    let helms: Vec<FieldPath> = entries.iter().filter(|e| manager_of(e) == helm).flat_map(|e| leaves(e)).collect();
    let mut out: Vec<Ownership> = Vec::new();
    for entry in entries.iter().filter(|e| is_other_manager(e, helm)) {
        for path in leaves(entry) {
            if !out.iter().any(|o| o.path == path) {
                let shared = helms.contains(&path);
                out.push(Ownership { path, manager: manager_of(entry).to_string(), shared });
            }
        }
    }
    out.sort_by_cached_key(|o| o.path.order());
    out
}

/// The leaves of `desired` that a field set (`fieldsV1`) holds, as paths into `desired` (and
/// `live`).
pub(crate) fn owned_leaves(
    fields: &Map<String, Value>,
    desired: &Value,
    live: &Value,
    path: &mut FieldPath,
    out: &mut Vec<FieldPath>,
) {
    for (k, child) in fields {
        let children = child.as_object().filter(|c| c.keys().any(|k| k != "."));
        if let Some(name) = k.strip_prefix("f:") {
            let (Some(dv), Some(lv)) = (desired.get(name), live.get(name)) else { continue };
            let mut at = path.field(name);
            match children {
                Some(c) => owned_leaves(c, dv, lv, &mut at, out),
                None => out.push(at),
            }
        } else if let Some(key) = k.strip_prefix("k:") {
            let Ok(Value::Object(key)) = serde_json::from_str::<Value>(key) else { continue };
            let (Some((i, dv)), Some((j, lv))) = (find(desired, &key), find(live, &key)) else { continue };
            let item_key = ItemKey::from_fields(key.iter().map(|(k, v)| (k.as_str(), v)));
            let mut at = path.item(Some(i), Some(j), Some(item_key));
            match children {
                Some(c) => owned_leaves(c, dv, lv, &mut at, out),
                None => out.push(at),
            }
        } else if let Some(v) = k.strip_prefix("v:") {
            let Ok(value) = serde_json::from_str::<Value>(v) else { continue };
            let position = |list: &Value| list.as_array().and_then(|l| l.iter().position(|x| *x == value));
            if let (Some(i), Some(j)) = (position(desired), position(live)) {
                out.push(path.item(Some(i), Some(j), None));
            }
        }
    }
}

/// `live`'s managedFields with every field that Helm's server-side apply entry (the release's
/// writer, `helm`) owns taken away from the other non-system entries (Helm's own `Update` entry
/// included), so that Helm alone owns what it applies; `None` when nothing changes.
pub(crate) fn reclaimed(live: &Value, helm: &str) -> Option<Value> {
    let entries = live.pointer("/metadata/managedFields")?.as_array()?;
    let is_helm_apply =
        |e: &Value| manager_of(e) == helm && e.get("operation").and_then(Value::as_str) == Some("Apply");
    let helm = entries.iter().find(|e| is_helm_apply(e))?.get("fieldsV1")?.as_object()?;
    let mut changed = false;
    let mut out = Vec::new();
    for e in entries {
        let fields = e.get("fieldsV1").and_then(Value::as_object);
        let (Some(fields), false, false) = (fields, is_helm_apply(e), is_system_entry(e)) else {
            out.push(e.clone());
            continue;
        };
        let left = subtract(fields, helm);
        if &left == fields {
            out.push(e.clone());
            continue;
        }
        changed = true;
        if left.keys().any(|k| k != ".") {
            let mut e = e.clone();
            e["fieldsV1"] = Value::Object(left);
            out.push(e);
        }
    }
    changed.then_some(Value::Array(out))
}

/// The field set `f` without what `h` holds: a leaf of `h` removes the whole branch of `f`.
fn subtract(f: &Map<String, Value>, h: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in f {
        match (h.get(k).and_then(Value::as_object), v.as_object()) {
            (Some(hk), Some(vk)) if hk.keys().any(|k| k != ".") && vk.keys().any(|k| k != ".") => {
                let rest = subtract(vk, hk);
                if rest.keys().any(|k| k != ".") {
                    out.insert(k.clone(), Value::Object(rest));
                }
            }
            (Some(_), _) => {}
            (None, _) => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// `live`'s managedFields with the entries of `from` (the helm command, after a `helm upgrade`
/// of a controller's release) given to `to` (the release's writer): each merged into `to`'s
/// entry of the same operation, or renamed, so that the writer's next upgrade finds every field
/// it applied its own; `None` when `from` owns nothing there.
pub(crate) fn handed_over(live: &Value, from: &str, to: &str) -> Option<Value> {
    let entries = live.pointer("/metadata/managedFields")?.as_array()?;
    let plain = |e: &Value| e.get("subresource").and_then(Value::as_str).is_none_or(str::is_empty);
    let operation = |e: &Value| e.get("operation").and_then(Value::as_str).unwrap_or("").to_string();
    let given: Vec<&Value> = entries.iter().filter(|e| manager_of(e) == from && plain(e)).collect();
    if given.is_empty() {
        return None;
    }
    let mut out: Vec<Value> = entries.iter().filter(|e| !(manager_of(e) == from && plain(e))).cloned().collect();
    for g in given {
        let op = operation(g);
        match out.iter_mut().find(|e| manager_of(e) == to && plain(e) && operation(e) == op) {
            Some(mine) => {
                let (Some(Value::Object(theirs)), Some(Value::Object(ours))) =
                    (g.get("fieldsV1"), mine.get_mut("fieldsV1"))
                else {
                    continue;
                };
                union(ours, theirs);
                if let Some(time) = g.get("time") {
                    mine["time"] = time.clone();
                }
            }
            None => {
                let mut renamed = g.clone();
                renamed["manager"] = Value::String(to.to_string());
                out.push(renamed);
            }
        }
    }
    Some(Value::Array(out))
}

/// `into` with every field of `from` added (field sets: a leaf is `{}`).
fn union(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for (k, v) in from {
        match (into.get_mut(k), v) {
            (Some(Value::Object(here)), Value::Object(there)) => union(here, there),
            (Some(_), _) => {}
            (None, v) => _ = into.insert(k.clone(), v.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A ConfigMap deleted and created again by hand, then applied by Helm (same values).
    fn recreated() -> Value {
        json!({
            "metadata": {"name": "c", "labels": {"app": "web"}, "managedFields": [
                {"manager": "helm", "operation": "Apply", "fieldsV1": {"f:data": {"f:greeting": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}},
                {"manager": "kubectl-create", "operation": "Update", "fieldsV1": {"f:data": {".": {}, "f:greeting": {}, "f:extra": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "fieldsV1": {"f:data": {"f:greeting": {}}}}
            ]},
            "data": {"greeting": "hello", "extra": "x"}
        })
    }

    #[test]
    fn fields_helm_does_not_own_are_found() {
        let desired = json!({"metadata": {"name": "c", "labels": {"app": "web"}}, "data": {"greeting": "hello"}});
        let mut live = recreated();
        live["metadata"]["managedFields"].as_array_mut().unwrap().remove(0);
        let found: Vec<(String, String)> =
            disowned(&desired, &live, "helm").into_iter().map(|o| (o.path.to_string(), o.manager)).collect();
        assert_eq!(
            found,
            [
                ("data.greeting".to_string(), "kubectl-create".to_string()),
                ("metadata.labels.app".into(), "kubectl-create".into())
            ]
        );
        let shared: Vec<(String, bool)> =
            disowned(&desired, &recreated(), "helm").into_iter().map(|o| (o.path.to_string(), o.shared)).collect();
        assert_eq!(shared, [("data.greeting".to_string(), true), ("metadata.labels.app".into(), true)]);
    }

    #[test]
    fn reclaiming_leaves_other_managers_what_helm_does_not_apply() {
        let fields = reclaimed(&recreated(), "helm").unwrap();
        let create = fields.as_array().unwrap().iter().find(|e| e["manager"] == "kubectl-create").unwrap();
        assert_eq!(create["fieldsV1"], json!({"f:data": {".": {}, "f:extra": {}}}));
        let kcm = fields.as_array().unwrap().iter().find(|e| e["manager"] == "kube-controller-manager").unwrap();
        assert_eq!(kcm["fieldsV1"], json!({"f:data": {"f:greeting": {}}}), "system managers keep theirs");
        let mut once = recreated();
        once["metadata"]["managedFields"] = fields;
        assert_eq!(reclaimed(&once, "helm"), None, "nothing left to reclaim");
    }

    #[test]
    fn keyed_items_are_matched_by_key() {
        let desired = json!({"spec": {"ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}]}});
        let live = json!({"metadata": {"managedFields": [
            {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": {"f:spec": {"f:ports": {
                "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}}}}}}
        ]}, "spec": {"ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}]}});
        let found: Vec<String> = disowned(&desired, &live, "helm").into_iter().map(|o| o.path.to_string()).collect();
        assert_eq!(found, ["spec.ports[containerPort=80,protocol=TCP].name"]);
    }

    #[test]
    fn the_helm_commands_fields_are_handed_to_the_writer() {
        let live = json!({"metadata": {"managedFields": [
            {"manager": "helm-controller", "operation": "Apply", "time": "2026-12-01T10:00:00Z", "fieldsV1": {"f:data": {"f:key": {}}}},
            {"manager": "helm", "operation": "Apply", "time": "2026-12-01T11:00:00Z", "fieldsV1": {"f:data": {"f:key": {}, "f:new": {}}}},
            {"manager": "helm", "operation": "Update", "fieldsV1": {"f:metadata": {"f:labels": {}}}},
            {"manager": "helm", "operation": "Update", "subresource": "status", "fieldsV1": {"f:status": {}}},
            {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": {"f:data": {"f:hand": {}}}}
        ]}});
        let out = handed_over(&live, "helm", "helm-controller").unwrap();
        let managers: Vec<(&str, &str)> = out
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["manager"].as_str().unwrap(), e["operation"].as_str().unwrap()))
            .collect();
        assert_eq!(
            managers,
            [
                ("helm-controller", "Apply"),
                ("helm", "Update"),
                ("kubectl-edit", "Update"),
                ("helm-controller", "Update")
            ]
        );
        assert_eq!(out[0]["fieldsV1"], json!({"f:data": {"f:key": {}, "f:new": {}}}), "merged");
        assert_eq!(out[0]["time"], "2026-12-01T11:00:00Z");
        assert_eq!(out[1]["subresource"], "status", "a status write is not handed over");
        assert_eq!(handed_over(&out, "helm", "helm-controller"), None, "nothing left to hand over");
    }
}

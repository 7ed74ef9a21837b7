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
/// control plane's: what another field manager (a person, a tool, a restore) owns.
pub(crate) fn is_other_manager(entry: &Value, helm: &str) -> bool {
    manager_of(entry) != helm && !is_system_entry(entry)
}

/// Whether `live`'s managedFields hold an entry of Helm's writer (`helm`) that owns fields: an
/// object Helm applied that holds none has had its ownership record wiped (a write that
/// replaced `metadata.managedFields`), or every field Helm set taken over by another manager.
pub(crate) fn holds_entry_of(live: &Value, helm: &str) -> bool {
    let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array);
    entries.into_iter().flatten().any(|e| {
        manager_of(e) == helm && e.get("fieldsV1").is_some_and(|f| f.as_object().is_some_and(|o| !o.is_empty()))
    })
}

/// Whether a manager other than Helm (`helm`) owns fields of `live` outside `status` (only
/// then can anything be foreign: a control-plane name's fields too, beyond what it writes by
/// design).
pub(crate) fn owned_besides_helm(live: &Value, helm: &str) -> bool {
    live.pointer("/metadata/managedFields").and_then(Value::as_array).into_iter().flatten().any(|e| walked(e, helm))
}

/// Whether an entry's fields are walked for additions: every manager's but Helm's own and a
/// `status` write's (a control-plane name is a claim: what it adds beyond its paths by design
/// is foreign).
fn walked(entry: &Value, helm: &str) -> bool {
    manager_of(entry) != helm && entry.get("subresource").and_then(Value::as_str) != Some("status")
}

/// What the control plane's managers write by design outside `status`, by kind (`*`: any):
/// a JSON pointer, or a key prefix ending in `~1` (`/metadata/annotations/pv.kubernetes.io~1`).
/// A control-plane name anywhere else is just a name (`kubectl patch --field-manager=...`).
const BY_DESIGN: &[(&str, &str, &str)] = &[
    ("kube-controller-manager", "Deployment", "/metadata/annotations/deployment.kubernetes.io~1revision"),
    ("kube-controller-manager", "Secret", "/data"),
    ("kube-controller-manager", "Secret", "/metadata/annotations/kubernetes.io~1service-account.uid"),
    ("kube-controller-manager", "ConfigMap", "/data"),
    ("kube-controller-manager", "PersistentVolumeClaim", "/spec/volumeName"),
    ("kube-controller-manager", "PersistentVolumeClaim", "/metadata/annotations/pv.kubernetes.io~1"),
    ("kube-controller-manager", "PersistentVolumeClaim", "/metadata/annotations/volume.kubernetes.io~1"),
    ("kube-controller-manager", "PersistentVolumeClaim", "/metadata/annotations/volume.beta.kubernetes.io~1"),
    ("kube-controller-manager", "PersistentVolume", "/spec/claimRef"),
    ("kube-controller-manager", "PersistentVolume", "/metadata/annotations/pv.kubernetes.io~1"),
    ("kube-controller-manager", "ClusterRole", "/rules"),
    ("kube-controller-manager", "Job", "/metadata/annotations/batch.kubernetes.io~1"),
    ("kube-controller-manager", "Endpoints", "/subsets"),
    ("kube-controller-manager", "EndpointSlice", "/endpoints"),
    ("kube-controller-manager", "EndpointSlice", "/ports"),
    ("kube-scheduler", "Pod", "/spec/nodeName"),
    ("cloud-controller-manager", "Service", "/metadata/finalizers"),
];

/// Whether `manager` writes `pointer` of `live` by design: its row of [`BY_DESIGN`] (a Secret's
/// `data` only for a ServiceAccount token, a ConfigMap's only for `kube-public/cluster-info`), and
/// finalizers while the object is deleted. `before-first-apply` (the server's name for the fields
/// an object had before its first server-side apply) writes nothing by design: it is a name any
/// client can send, so what it holds beyond the chart and the server's defaults is judged by its
/// value, as every name's.
fn by_design(manager: &str, live: &Value, pointer: &str) -> bool {
    let kind = live.get("kind").and_then(Value::as_str).unwrap_or_default();
    let text = |p: &str| live.pointer(p).and_then(Value::as_str).unwrap_or_default();
    let deleting = live.pointer("/metadata/deletionTimestamp").is_some();
    if deleting && SYSTEM_MANAGERS.contains(&manager) && under(pointer, "/metadata/finalizers") {
        return true;
    }
    BY_DESIGN.iter().any(|&(m, k, at)| {
        let applies = match (k, at) {
            ("Secret", "/data") => text("/type") == "kubernetes.io/service-account-token",
            ("ConfigMap", "/data") => {
                text("/metadata/name") == "cluster-info" && text("/metadata/namespace") == "kube-public"
            }
            _ => true,
        };
        m == manager && (k == "*" || k == kind) && applies && under(pointer, at)
    })
}

/// What `manager` owns at `path` (holding `value`) beyond what it writes by design: nothing
/// when the path is by design, the map's entries one by one when a path by design lies within
/// it, else the whole.
fn beyond_design(manager: &str, live: &Value, path: FieldPath, value: Value) -> Vec<(FieldPath, Value)> {
    let pointer = path.pointer();
    if by_design(manager, live, &pointer) {
        return Vec::new();
    }
    let within = |at: &str| at.strip_prefix(pointer.as_str()).is_some_and(|rest| rest.starts_with('/'));
    match value {
        Value::Object(map) if BY_DESIGN.iter().any(|&(m, _, at)| m == manager && within(at)) => map
            .into_iter()
            .flat_map(|(k, v)| {
                let here = path.field(&k);
                beyond_design(manager, live, here, v)
            })
            .collect(),
        value => vec![(path, value)],
    }
}

/// Whether `pointer` is `at` or under it (`at` ending in `~1`: a key that starts so).
fn under(pointer: &str, at: &str) -> bool {
    match pointer.strip_prefix(at) {
        Some(rest) => rest.is_empty() || rest.starts_with('/') || at.ends_with("~1"),
        None => false,
    }
}

/// Fields another manager owns that the chart does not set: those whose live value is what the
/// server holds for Helm's object (`held`, from [`super::defaults::held`]) apart from the others.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct OwnedElsewhere {
    /// Added outside Helm.
    pub(crate) added: Vec<Foreign>,
    /// The server's defaults (or chosen values) for Helm's object, owned by another manager: a
    /// restored or re-created object's, ownership rather than content.
    pub(crate) defaults: Vec<ServerValue>,
    /// What admission may have added, as far as a reader can tell (shown, not counted).
    pub(crate) admitted: Vec<crate::model::Expected>,
    /// The mutating webhooks and policies that cover the object (the read-only engine).
    pub(crate) admission: Vec<String>,
}

/// Fields in `live` owned by a manager other than Helm (`helm`) and the control plane and absent
/// from `desired`; those
/// `held` holds with their live value are [`OwnedElsewhere::defaults`]. The values the server chooses (a
/// cluster IP, a node port) are the server's only when owned by one of the object's `creators`
/// (it made the object with them: a restore); another owner changed them.
pub(crate) fn foreign(desired: &Value, held: &Value, creators: &[String], live: &Value, helm: &str) -> OwnedElsewhere {
    let fixed = super::defaults::without_chosen(held);
    let mut out = OwnedElsewhere::default();
    let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array);
    for entry in entries.into_iter().flatten() {
        if !walked(entry, helm) {
            continue;
        }
        let manager = manager_of(entry);
        let system = SYSTEM_MANAGERS.contains(&manager);
        if let Some(fields) = entry.get("fieldsV1").and_then(Value::as_object) {
            let mut found = Vec::new();
            // What the object held before its first server-side apply includes what the server
            // and its controllers chose then; anyone else who holds a chosen value changed it.
            let first = manager == "before-first-apply";
            let held = if first || creators.iter().any(|c| c == manager) { held } else { &fixed };
            walk(fields, Sides { desired: Some(desired), held: Some(held) }, live, &FieldPath::root(), &mut found);
            if system {
                // A control-plane write by design is not drift, nor its value ownership news.
                found = found
                    .into_iter()
                    .filter(|(_, _, default)| !default)
                    .flat_map(|(path, value, _)| beyond_design(manager, live, path, value))
                    .map(|(path, value)| (path, value, false))
                    .collect();
            }
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

/// Fields Helm's own name (`helm`) holds that the chart does not set and the server would not
/// hold for Helm's object (`held`): a name is a claim (`kubectl patch --field-manager=helm`),
/// so each is Helm's apply only when the server, asked, makes it again (admission); else added.
pub(crate) fn under_helms_name(desired: &Value, held: &Value, live: &Value, helm: &str) -> Vec<Foreign> {
    let mut out: Vec<Foreign> = Vec::new();
    let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array);
    for entry in entries.into_iter().flatten() {
        let status = entry.get("subresource").and_then(Value::as_str) == Some("status");
        let Some(fields) = entry.get("fieldsV1").and_then(Value::as_object).filter(|_| !status) else { continue };
        if manager_of(entry) != helm {
            continue;
        }
        let mut found = Vec::new();
        walk(fields, Sides { desired: Some(desired), held: Some(held) }, live, &FieldPath::root(), &mut found);
        for (path, value, default) in found {
            if !default && !out.iter().any(|f| f.path == path) {
                out.push(Foreign { path, value, manager: helm.to_string(), changed_by: None });
            }
        }
    }
    out
}

/// Whether `root` holds `value` at `path` (list items found by their key, set items by value):
/// the same field as in the object the path was found in, wherever its index is now.
pub(crate) fn holds_at(root: &Value, path: &FieldPath, value: &Value) -> bool {
    use crate::model::Segment;
    let mut here = root;
    for (i, segment) in path.0.iter().enumerate() {
        let last = i + 1 == path.0.len();
        here = match segment {
            Segment::Field(name) => match here.get(name) {
                Some(v) => v,
                None => return false,
            },
            Segment::Item { key: Some(key), .. } => {
                let item = here.as_array().into_iter().flatten().find(|e| {
                    key.0
                        .iter()
                        .all(|(k, want)| e.get(k).is_some_and(|got| crate::model::path::scalar_text(got) == *want))
                });
                match item {
                    Some(v) => v,
                    None => return false,
                }
            }
            Segment::Item { key: None, .. } if last => {
                return here.as_array().is_some_and(|items| items.contains(value));
            }
            Segment::Item { live, .. } => match live.and_then(|n| here.get(n)) {
                Some(v) => v,
                None => return false,
            },
        };
    }
    here == value
}

/// Where a walk is in what the chart set and in what the server would hold for it.
#[derive(Clone, Copy)]
pub(super) struct Sides<'a> {
    pub(super) desired: Option<&'a Value>,
    pub(super) held: Option<&'a Value>,
}

impl<'a> Sides<'a> {
    pub(super) fn field(self, name: &str) -> Sides<'a> {
        let get = |v: Option<&'a Value>| v.and_then(|d| d.get(name)).filter(|d| !d.is_null());
        Sides { desired: get(self.desired), held: get(self.held) }
    }
}

/// Whether the chart sets `name` to `null` (a template that renders `rules:` with nothing under
/// it) and the live value is empty: what an apply of that leaves under the writer's name (Helm
/// 4's server-side apply owns `f:rules` and the server holds `rules: null`), nothing added.
pub(super) fn sets_nothing(desired: Option<&Value>, name: &str, live: &Value) -> bool {
    let null = desired.and_then(|d| d.get(name)).is_some_and(Value::is_null);
    let empty =
        live.is_null() || live.as_array().is_some_and(Vec::is_empty) || live.as_object().is_some_and(Map::is_empty);
    null && empty
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
                (None, _) if sets_nothing(at.desired, name, lv) => {}
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
    #[test]
    fn an_object_without_its_writers_entry_has_lost_its_ownership_record() {
        use serde_json::json;
        let with = |managed: serde_json::Value| json!({"metadata": {"managedFields": managed}});
        let helms = json!([{"manager": "helm", "operation": "Update", "fieldsV1": {"f:data": {}}}]);
        assert!(super::holds_entry_of(&with(helms), "helm"));
        assert!(!super::holds_entry_of(&with(json!([{}])), "helm"), "wiped to one empty entry");
        assert!(!super::holds_entry_of(&with(json!([])), "helm"));
        assert!(!super::holds_entry_of(&json!({"metadata": {}}), "helm"));
        let others = json!([{"manager": "kubectl-edit", "operation": "Update", "fieldsV1": {"f:data": {}}}]);
        assert!(!super::holds_entry_of(&with(others), "helm"));
        let renamed = json!([{"manager": "helm", "operation": "Update"}]);
        assert!(!super::holds_entry_of(&with(renamed), "helm"), "a name owning nothing");
        assert!(!super::holds_entry_of(&with(json!([{"manager": "manager", "fieldsV1": {"f:a": {}}}])), "helm"));
    }

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
    fn a_control_plane_name_excuses_only_what_it_writes_by_design() {
        let desired = json!({"kind": "Deployment", "metadata": {"name": "web"}, "spec": {"template": {"spec": {
            "containers": [{"name": "web", "image": "a"}]}}}});
        let live = json!({"kind": "Deployment", "metadata": {"name": "web",
            "annotations": {"deployment.kubernetes.io/revision": "3"},
            "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "fieldsV1": {
                "f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}},
                "f:spec": {"f:template": {"f:spec": {"f:hostNetwork": {}, "f:containers": {
                    "k:{\"name\":\"miner\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}}]},
            "spec": {"template": {"spec": {"hostNetwork": true, "containers": [
                {"name": "web", "image": "a"}, {"name": "miner", "image": "evil/x"}]}}}});
        let added: Vec<String> =
            foreign(&desired, &desired, &[], &live, "helm").added.iter().map(|f| f.path.pointer()).collect();
        assert_eq!(added, ["/spec/template/spec/containers/1", "/spec/template/spec/hostNetwork"]);
        assert!(by_design(
            "kube-controller-manager",
            &live,
            "/metadata/annotations/deployment.kubernetes.io~1revision"
        ));
        assert!(!by_design("kube-controller-manager", &live, "/metadata/annotations/x"));
        let token = json!({"kind": "Secret", "type": "kubernetes.io/service-account-token"});
        assert!(by_design("kube-controller-manager", &token, "/data/token"));
        assert!(!by_design("kube-controller-manager", &json!({"kind": "Secret", "type": "Opaque"}), "/data/x"));
        assert!(!by_design("kubelet", &live, "/spec/template"), "a name with no paths writes none");
        assert!(under(
            "/metadata/annotations/pv.kubernetes.io~1bound-by-controller",
            "/metadata/annotations/pv.kubernetes.io~1"
        ));
        assert!(!under("/spec/volumeNames", "/spec/volumeName"));
    }

    #[test]
    fn helms_own_name_holds_only_what_the_chart_sets_or_the_server_would() {
        let desired = json!({"kind": "Deployment", "spec": {"replicas": 1, "template": {"spec": {
            "containers": [{"name": "web", "image": "a"}]}}}});
        let held = json!({"kind": "Deployment", "spec": {"replicas": 1, "revisionHistoryLimit": 10,
            "template": {"spec": {"containers": [{"name": "web", "image": "a"}]}}}});
        let live = json!({"kind": "Deployment", "metadata": {"managedFields": [
            {"manager": "helm", "operation": "Update", "fieldsV1": {"f:spec": {"f:replicas": {},
                "f:revisionHistoryLimit": {}, "f:template": {"f:spec": {"f:hostNetwork": {}, "f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:name": {}, "f:image": {}},
                    "k:{\"name\":\"miner\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}},
            {"manager": "helm", "operation": "Update", "subresource": "status", "fieldsV1": {"f:status": {"f:x": {}}}},
            {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": {"f:spec": {"f:paused": {}}}}]},
            "spec": {"replicas": 1, "revisionHistoryLimit": 10, "paused": true, "template": {"spec": {"hostNetwork": true,
                "containers": [{"name": "miner", "image": "evil/x"}, {"name": "web", "image": "a"}]}}},
            "status": {"x": 1}});
        let claimed = under_helms_name(&desired, &held, &live, "helm");
        let paths: Vec<String> = claimed.iter().map(|f| f.path.to_string()).collect();
        assert_eq!(paths, ["spec.template.spec.containers[name=miner]", "spec.template.spec.hostNetwork"]);
        assert!(claimed.iter().all(|f| f.manager == "helm"));
        assert!(under_helms_name(&desired, &held, &live, "manager").is_empty(), "another writer's name: not Helm's");
        // Found again by key wherever the item is now; a value that differs is not held.
        let moved = json!({"spec": {"template": {"spec": {"hostNetwork": true,
            "containers": [{"name": "web", "image": "a"}, {"name": "miner", "image": "evil/x"}]}}}});
        assert!(claimed.iter().all(|f| holds_at(&moved, &f.path, &f.value)));
        let gone = json!({"spec": {"template": {"spec": {"hostNetwork": false, "containers": [{"name": "web"}]}}}});
        assert!(claimed.iter().all(|f| !holds_at(&gone, &f.path, &f.value)));
        let set = FieldPath::root().field("finalizers").item(None, Some(3), None);
        assert!(holds_at(&json!({"finalizers": ["a", "b"]}), &set, &json!("b")));
        assert!(!holds_at(&json!({"finalizers": ["a"]}), &set, &json!("b")));
    }

    #[test]
    fn before_first_apply_is_a_name_judged_by_its_values() {
        let desired = json!({"kind": "Deployment", "metadata": {"annotations": {"team": "a"}}});
        let live = json!({"kind": "Deployment", "metadata": {"annotations": {"team": "a", "planted": "x"},
            "managedFields": [{"manager": "before-first-apply", "operation": "Update", "fieldsV1": {
                "f:metadata": {"f:annotations": {"f:team": {}, "f:planted": {}}}}}]}});
        let added: Vec<String> =
            foreign(&desired, &desired, &[], &live, "helm").added.iter().map(|f| f.path.to_string()).collect();
        assert_eq!(added, ["metadata.annotations.planted"], "what the chart sets is not added; the rest is");
    }

    #[test]
    fn an_empty_value_the_chart_renders_as_null_is_nothing_added() {
        // A Role whose template renders `rules:` with nothing under it, applied by Helm 4.
        let desired = json!({"kind": "Role", "metadata": {"name": "r"}, "rules": null});
        let live = |rules: Value| {
            json!({"kind": "Role", "rules": rules, "metadata": {"managedFields": [
                {"manager": "helm", "operation": "Apply", "fieldsV1": {"f:rules": {}}}]}})
        };
        assert!(under_helms_name(&desired, &desired, &live(Value::Null), "helm").is_empty());
        assert!(under_helms_name(&desired, &desired, &live(json!([])), "helm").is_empty());
        // A rule written under Helm's name where the chart set none is added all the same.
        let planted = live(json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]));
        let added = under_helms_name(&desired, &desired, &planted, "helm");
        assert_eq!(added.iter().map(|f| f.path.to_string()).collect::<Vec<_>>(), ["rules"]);
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

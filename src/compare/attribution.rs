//! Who changed a field: the field manager whose `metadata.managedFields` entry holds it (the
//! latest writer when several do), and whether that writer looks like a person's tool.

use super::managed::manager_of;
use crate::model::{Attribution, FieldPath, Segment};
use serde_json::{Map, Value};

/// Managers that are people's tools (kubectl and its sub-commands, k9s, Lens, dashboards).
const PERSON_TOOLS: [&str; 8] =
    ["kubectl", "k9s", "lens", "openlens", "headlamp", "kubernetes-dashboard", "dashboard", "mozilla"];

/// Whether a manager name looks like a person at a terminal or a UI rather than a controller.
pub(crate) fn is_person(manager: &str) -> bool {
    let m = manager.to_ascii_lowercase();
    PERSON_TOOLS.iter().any(|t| m == *t || m.starts_with(&format!("{t}-")) || m.starts_with(&format!("{t}/")))
}

/// Who made the object, when Helm never wrote it: it was deleted and created again outside Helm
/// (a backup restored, `kubectl create -f` of its own `get -o yaml`). The earliest writer that
/// is not the control plane, when no entry of its managedFields is Helm's (the release's writer,
/// `helm`).
pub(crate) fn recreated(live: &Value, helm: &str) -> Option<Attribution> {
    let entries = live.pointer("/metadata/managedFields")?.as_array()?;
    if entries.iter().any(|e| manager_of(e) == helm) {
        return None;
    }
    let time = |e: &Value| e.get("time").and_then(Value::as_str).unwrap_or("").to_string();
    let creator = entries.iter().filter(|e| super::managed::is_other_manager(e, helm)).min_by_key(|e| time(e))?;
    Some(attribution(creator))
}

/// The managers (not Helm, not the control plane) that wrote the object when it was created and
/// not since (their entry's time is its creation's, to the second): what they own they set as
/// the object was made, such as the values a restore kept from the backup.
pub(crate) fn creators(live: &Value, helm: &str) -> Vec<String> {
    use k8s_openapi::jiff::Timestamp;
    let at = |v: Option<&Value>| v.and_then(Value::as_str).and_then(|t| t.parse::<Timestamp>().ok());
    let Some(created) = at(live.pointer("/metadata/creationTimestamp")) else { return Vec::new() };
    let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array).into_iter().flatten();
    entries
        .filter(|e| super::managed::is_other_manager(e, helm))
        .filter(|e| at(e.get("time")).is_some_and(|t| (t.as_second() - created.as_second()).abs() <= 1))
        .map(|e| manager_of(e).to_string())
        .collect()
}

/// A managedFields entry as who wrote and when.
fn attribution(entry: &Value) -> Attribution {
    let text = |k: &str| entry.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let manager = manager_of(entry).to_string();
    Attribution {
        person: is_person(&manager),
        audit: None,
        manager,
        operation: text("operation").unwrap_or_default(),
        subresource: text("subresource"),
        time: text("time"),
    }
}

/// The last writer of the field at `path` of `live`, from its managedFields; `None` when no
/// entry holds it (a removed field is only attributed when a whole parent, such as an atomic
/// list, was written).
pub(crate) fn of(live: &Value, path: &FieldPath) -> Option<Attribution> {
    let entries = live.pointer("/metadata/managedFields")?.as_array()?;
    let time = |e: &Value| e.get("time").and_then(Value::as_str).unwrap_or("").to_string();
    let writer = entries
        .iter()
        .filter(|e| e.get("fieldsV1").is_some_and(|f| holds(f, live, &path.0)))
        .max_by_key(|e| time(e))?;
    Some(attribution(writer))
}

/// Whether a field set holds the path (or a whole ancestor of it).
fn holds(fields: &Value, live: &Value, path: &[Segment]) -> bool {
    let Some(map) = fields.as_object() else { return false };
    let Some((first, rest)) = path.split_first() else { return true };
    let (child, next) = match first {
        Segment::Field(k) => (map.get(&format!("f:{k}")), live.get(k)),
        Segment::Item { live: Some(j), .. } => {
            let Some(item) = live.get(*j) else { return false };
            (map.iter().find(|(k, _)| is_item(k, item)).map(|(_, v)| v), Some(item))
        }
        Segment::Item { live: None, .. } => return false,
    };
    let Some(child) = child else { return false };
    // An empty set is the field alone: the whole value for a scalar or an atomic list, but only
    // the map's presence for a map (`f:data: {}` left to Helm after another manager took a key).
    if child.as_object().is_none_or(|c| c.keys().all(|k| k == ".")) {
        return rest.is_empty() || !next.is_some_and(Value::is_object);
    }
    match next {
        Some(next) => holds(child, next, rest),
        None => rest.is_empty(),
    }
}

/// Whether a field-set key (`k:{...}` or `v:...`) names this list item.
pub(super) fn is_item(key: &str, item: &Value) -> bool {
    if let Some(k) = key.strip_prefix("k:") {
        let Ok(Value::Object(k)) = serde_json::from_str::<Value>(k) else { return false };
        return matches_key(&k, item);
    }
    key.strip_prefix("v:").and_then(|v| serde_json::from_str::<Value>(v).ok()).is_some_and(|v| v == *item)
}

fn matches_key(key: &Map<String, Value>, item: &Value) -> bool {
    key.iter()
        .all(|(k, want)| item.get(k).is_some_and(|got| super::subset::scalar_equal(want, got, &FieldPath::root())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Helm keeps `f:data: {}` after another manager took `data.greeting`: the key is the other
    /// manager's, even when both wrote in the same second.
    #[test]
    fn a_map_owned_alone_does_not_hold_its_keys() {
        let live = json!({
            "data": {"greeting": "mine"},
            "metadata": {"managedFields": [
                {"manager": "fighter", "operation": "Update", "time": "2026-11-30T00:08:44Z", "fieldsV1": {"f:data": {"f:greeting": {}}}},
                {"manager": "helm", "operation": "Update", "time": "2026-11-30T00:08:44Z", "fieldsV1": {"f:data": {}}},
            ]},
        });
        let by = of(&live, &crate::testing::path("/data/greeting")).unwrap();
        assert_eq!(by.manager, "fighter");
    }

    fn live() -> Value {
        json!({
            "metadata": {"managedFields": [
                {"manager": "helm", "operation": "Apply", "time": "2026-01-01T00:00:00Z",
                 "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:args": {}}}}}}}},
                {"manager": "kubectl", "operation": "Update", "subresource": "scale", "time": "2026-01-02T00:00:00Z",
                 "fieldsV1": {"f:spec": {"f:replicas": {}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "time": "2026-01-03T00:00:00Z",
                 "fieldsV1": {"f:status": {"f:replicas": {}}}}
            ]},
            "spec": {"replicas": 4, "template": {"spec": {"containers": [{"name": "web", "image": "a", "args": ["x", "y"]}]}}}
        })
    }

    #[test]
    fn the_latest_writer_of_a_field() {
        let a = of(&live(), &crate::testing::path("/spec/replicas")).unwrap();
        assert_eq!(
            (a.manager.as_str(), a.operation.as_str(), a.subresource.as_deref()),
            ("kubectl", "Update", Some("scale"))
        );
        assert!(a.person);
        assert_eq!(a.time.as_deref(), Some("2026-01-02T00:00:00Z"));
    }

    #[test]
    fn keyed_items_and_whole_parents() {
        let args = crate::testing::path("/spec/template/spec/containers/0/args/1");
        assert_eq!(of(&live(), &args).unwrap().manager, "helm", "an atomic list is held whole");
        assert!(of(&live(), &crate::testing::path("/spec/paused")).is_none());
    }

    #[test]
    fn people_and_controllers() {
        for m in ["kubectl", "kubectl-edit", "kubectl-client-side-apply", "k9s", "Lens", "Mozilla/5.0"] {
            assert!(is_person(m), "{m}");
        }
        for m in ["helm", "kube-controller-manager", "argocd-controller", "cainjector", "kubectlish"] {
            assert!(!is_person(m), "{m}");
        }
    }

    #[test]
    fn an_object_helm_never_wrote_was_recreated_by_its_first_writer() {
        let entry = |m: &str, t: &str| json!({"manager": m, "operation": "Update", "time": t, "fieldsV1": {}});
        let live = |entries: Vec<Value>| json!({"metadata": {"managedFields": entries}});
        let restored = live(vec![
            entry("kube-controller-manager", "2026-11-30T08:00:00Z"),
            entry("kubectl-scale", "2026-11-30T10:00:00Z"),
            entry("velero-server", "2026-11-30T09:00:00Z"),
        ]);
        let by = recreated(&restored, "helm").expect("re-created");
        assert_eq!((by.manager.as_str(), by.time.as_deref()), ("velero-server", Some("2026-11-30T09:00:00Z")));
        assert_eq!(
            recreated(&live(vec![entry("helm", "x"), entry("kubectl-create", "y")]), "helm"),
            None,
            "Helm wrote it"
        );
        assert_eq!(
            recreated(&live(vec![entry("kube-controller-manager", "x")]), "helm"),
            None,
            "only the control plane"
        );
        assert_eq!(recreated(&json!({"metadata": {}}), "helm"), None, "no managedFields kept: nothing known");
    }

    #[test]
    fn the_creators_are_who_wrote_at_creation_and_not_since() {
        let entry = |m: &str, t: &str| json!({"manager": m, "operation": "Update", "time": t, "fieldsV1": {}});
        let live = json!({"metadata": {"creationTimestamp": "2026-11-30T09:00:00Z", "managedFields": [
            entry("velero-server", "2026-11-30T09:00:01Z"), entry("helm", "2026-11-30T09:05:00Z"),
            entry("kubectl-edit", "2026-11-30T09:10:00Z"), entry("kube-controller-manager", "2026-11-30T09:00:00Z")]}});
        assert_eq!(creators(&live, "helm"), ["velero-server"]);
        assert!(creators(&json!({"metadata": {"managedFields": []}}), "helm").is_empty());
    }
}

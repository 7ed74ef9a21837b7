//! Fields no field manager owns. The API server records a write's fields under its manager
//! before admission runs, so what a mutating webhook adds is recorded under no manager; and a
//! write that rewrites `metadata.managedFields` (`kubectl replace` of an edited object with its
//! old entries, entries cleared) leaves whatever it added without an owner. No name says whose
//! such a field is: only the values (what the chart sets, what the server holds for it) and what
//! the server does when asked. [`unowned`] finds the candidates; the engine decides with
//! evidence.

use super::defaults;
use super::managed::{Sides, sets_nothing};
use super::merge_keys::element_key;
use crate::model::{FieldPath, Foreign, ItemKey};
use serde_json::{Map, Value};

/// Top-level fields no managedFields entry tracks.
const UNTRACKED_TOP: [&str; 3] = ["apiVersion", "kind", "status"];
/// Metadata the server owns, never tracked by a managedFields entry.
const UNTRACKED_METADATA: [&str; 10] = [
    "name",
    "namespace",
    "generateName",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
];

/// Fields of `live` that no managedFields entry owns, that the chart (`desired`) does not set
/// and whose value is not what the server holds for Helm's object (`held`): each with its
/// value, under the manager `""` (none).
pub(crate) fn unowned(desired: &Value, held: &Value, live: &Value) -> Vec<Foreign> {
    let mut owned = Map::new();
    let entries = live.pointer("/metadata/managedFields").and_then(Value::as_array);
    for fields in entries.into_iter().flatten().filter_map(|e| e.get("fieldsV1").and_then(Value::as_object)) {
        join(&mut owned, fields);
    }
    let Some(map) = live.as_object() else { return Vec::new() };
    let mut out = Vec::new();
    let at = Sides { desired: Some(desired), held: Some(held) };
    for (k, lv) in map.iter().filter(|(k, _)| !UNTRACKED_TOP.contains(&k.as_str())) {
        if sets_nothing(at.desired, k, lv) {
            continue;
        }
        let node = owned.get(&format!("f:{k}")).and_then(Value::as_object);
        let mut value = std::borrow::Cow::Borrowed(lv);
        if k == "metadata"
            && let Some(meta) = value.to_mut().as_object_mut()
        {
            meta.retain(|k, _| !UNTRACKED_METADATA.contains(&k.as_str()));
        }
        field(node, at.field(k), &value, &FieldPath::root().field(k), k, &mut out);
    }
    // What controllers annotate an object Helm owns with is never drift (the comparison strips it).
    let annotated = |p: &FieldPath| {
        let at = p.pointer();
        super::exact::CONTROLLER_ANNOTATIONS
            .iter()
            .any(|a| at == format!("/metadata/annotations/{}", a.replace('/', "~1")))
    };
    out.retain(|(path, _)| !annotated(path));
    out.sort_by_cached_key(|(path, _)| path.pointer());
    out.into_iter().map(|(path, value)| Foreign { path, value, manager: String::new(), changed_by: None }).collect()
}

/// Merges the fields of one managedFields entry into the union of all of them.
fn join(into: &mut Map<String, Value>, fields: &Map<String, Value>) {
    for (k, v) in fields {
        match (into.get_mut(k), v) {
            (Some(Value::Object(have)), Value::Object(more)) => join(have, more),
            (Some(_), _) => {}
            (None, v) => {
                into.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Whether a managedFields node names fields within it (else it owns its value whole).
fn has_children(node: &Map<String, Value>) -> bool {
    node.keys().any(|k| k != ".")
}

impl<'a> Sides<'a> {
    /// The item of each side's list that is `item` (by its key, else by value).
    fn item(self, list: &str, item: &Value) -> (Sides<'a>, Option<usize>) {
        let find = |side: Option<&'a Value>| {
            let items = side?.as_array()?;
            let key = element_key(list, item);
            items.iter().enumerate().find(|(_, d)| match &key {
                Some(key) => element_key(list, d).as_ref() == Some(key),
                None => *d == item,
            })
        };
        let (desired, held) = (find(self.desired), find(self.held));
        let index = desired.or(held).map(|(i, _)| i);
        (Sides { desired: desired.map(|(_, d)| d), held: held.map(|(_, h)| h) }, index)
    }
}

/// One live field (`name` its key or its list's name) with the union's node for it (`None`:
/// nobody owns it): the parts nobody owns that neither side holds.
fn field(
    node: Option<&Map<String, Value>>,
    at: Sides<'_>,
    live: &Value,
    path: &FieldPath,
    name: &str,
    out: &mut Vec<(FieldPath, Value)>,
) {
    if node.is_some_and(|n| !has_children(n)) {
        return;
    }
    if at.held.is_some_and(|h| defaults::holds(live, h)) {
        return;
    }
    // Labels and annotations are keys of their own, each said (and removed) alone.
    let keyed = matches!(path.pointer().as_str(), "/metadata/labels" | "/metadata/annotations");
    if node.is_none() && at.desired.is_none() && at.held.is_none() && !keyed {
        out.push((path.clone(), live.clone()));
        return;
    }
    match live {
        Value::Object(map) => {
            for (k, lv) in map.iter().filter(|(k, lv)| !sets_nothing(at.desired, k, lv)) {
                let child = node.and_then(|n| n.get(&format!("f:{k}"))).and_then(Value::as_object);
                field(child, at.field(k), lv, &path.field(k), k, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let child = node.and_then(|n| owning(n, item));
                let (sides, index) = at.item(name, item);
                let (owned_key, child) = child.map_or((None, None), |(key, c)| (key, Some(c)));
                let key = element_key(name, item).or(owned_key);
                let here = path.item(index, Some(i), key);
                field(child, sides, item, &here, name, out);
            }
        }
        // A value the chart sets, owned by nobody: the comparison reports it if it differs.
        _ => {}
    }
}

/// The union's node for a list item: a `k:` key its fields match, or a `v:` value it is; with
/// the item's key.
fn owning<'a>(node: &'a Map<String, Value>, item: &Value) -> Option<(Option<ItemKey>, &'a Map<String, Value>)> {
    let (k, child) = node.iter().find(|(k, c)| c.is_object() && super::attribution::is_item(k, item))?;
    let key = k.strip_prefix("k:").and_then(|key| serde_json::from_str::<Map<String, Value>>(key).ok());
    Some((key.map(|key| ItemKey::from_fields(key.iter().map(|(k, v)| (k.as_str(), v)))), child.as_object()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(found: &[Foreign]) -> Vec<String> {
        found.iter().map(|f| f.path.to_string()).collect()
    }

    #[test]
    fn an_empty_value_the_chart_renders_as_null_is_nobodys_addition() {
        let desired = json!({"kind": "Role", "rules": null});
        let live = json!({"kind": "Role", "rules": null, "metadata": {"managedFields": [
            {"manager": "helm", "operation": "Update", "fieldsV1": {"f:metadata": {}}}]}});
        assert!(unowned(&desired, &desired, &live).is_empty());
        let planted = json!({"kind": "Role", "rules": [{"verbs": ["*"]}], "metadata": {"managedFields": []}});
        let found: Vec<String> = unowned(&desired, &desired, &planted).iter().map(|f| f.path.to_string()).collect();
        assert!(found.iter().any(|p| p.starts_with("rules")), "rules where the chart set none: {found:?}");
    }

    #[test]
    fn what_nobody_owns_and_neither_the_chart_nor_the_server_holds_is_found() {
        let desired = json!({"kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "web", "image": "a"}]}}}});
        let mut held = desired.clone();
        held["spec"]["revisionHistoryLimit"] = json!(10);
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "uid": "u", "resourceVersion": "9", "generation": 2,
                "labels": {"app": "web", "admitted": "yes"},
                "managedFields": [{"manager": "helm", "operation": "Update", "fieldsV1": {
                    "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                    "f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {
                        "k:{\"name\":\"web\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}}]},
            "spec": {"replicas": 1, "revisionHistoryLimit": 10, "template": {"spec": {"hostNetwork": true,
                "containers": [{"name": "web", "image": "a", "args": ["x"]}, {"name": "miner", "image": "evil/x"}]}}},
            "status": {"replicas": 1}});
        let found = unowned(&desired, &held, &live);
        assert_eq!(
            paths(&found),
            [
                "metadata.labels.admitted",
                "spec.template.spec.containers[name=web].args",
                "spec.template.spec.containers[name=miner]",
                "spec.template.spec.hostNetwork"
            ]
        );
        assert!(found.iter().all(|f| f.manager.is_empty()));
        assert_eq!(found[2].value, json!({"name": "miner", "image": "evil/x"}));
    }

    #[test]
    fn owned_fields_and_the_servers_own_are_not_unowned() {
        let desired = json!({"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
        let live = json!({"kind": "ConfigMap", "metadata": {"name": "c", "uid": "u", "finalizers": ["x"],
                "managedFields": [
                    {"manager": "helm", "fieldsV1": {"f:data": {".": {}, "f:a": {}}}},
                    {"manager": "someone", "fieldsV1": {"f:data": {"f:b": {}}, "f:metadata": {"f:finalizers": {"v:\"x\"": {}}}}},
                    {"manager": "atomic", "fieldsV1": {"f:binaryData": {}}}]},
            "data": {"a": "1", "b": "2"}, "binaryData": {"z": "AA=="}});
        assert!(unowned(&desired, &desired, &live).is_empty());
    }

    #[test]
    fn with_no_entries_everything_beyond_the_chart_and_the_server_is_unowned() {
        let desired = json!({"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
        let held = json!({"kind": "ConfigMap", "metadata": {"name": "c", "finalizers": ["keep"]}, "data": {"a": "1"}});
        let live = json!({"kind": "ConfigMap", "metadata": {"name": "c", "finalizers": ["keep"],
                "annotations": {"x": "y", "deployment.kubernetes.io/revision": "2"}}, "data": {"a": "1", "b": "2"}});
        assert_eq!(paths(&unowned(&desired, &held, &live)), ["data.b", "metadata.annotations.x"]);
    }
}

//! What Helm adds to every object at apply time (managed-by label, release annotations,
//! namespace) and does not store in the manifest.

use super::DesiredObject;
use serde_json::{Map, Value};

pub(crate) const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
pub(crate) use crate::model::{RELEASE_NAME_ANNOTATION, RELEASE_NAMESPACE_ANNOTATION};

/// Adds the managed-by label and the release annotations, as Helm does before sending.
pub(crate) fn add_release_metadata(obj: &mut DesiredObject, release: &str, release_namespace: &str) {
    let Some(meta) = obj.object.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    child(meta, "labels").insert(MANAGED_BY_LABEL.into(), "Helm".into());
    let ann = child(meta, "annotations");
    ann.insert(RELEASE_NAME_ANNOTATION.into(), release.into());
    ann.insert(RELEASE_NAMESPACE_ANNOTATION.into(), release_namespace.into());
}

/// Places the object: namespaced objects without a namespace get `namespace` (Helm's rule);
/// cluster-scoped objects carry none.
pub(crate) fn place(obj: &mut DesiredObject, namespace: Option<&str>) {
    obj.namespace = namespace.map(str::to_string);
    let Some(meta) = obj.object.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    match namespace {
        Some(ns) => {
            meta.insert("namespace".into(), ns.into());
        }
        None => {
            meta.remove("namespace");
        }
    }
}

fn child<'a>(meta: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = meta.entry(key).or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut().expect("just made an object")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desired::from_manifest;

    #[test]
    fn adds_what_helm_adds() {
        let mut o = from_manifest(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    app.kubernetes.io/managed-by: me\n",
        )
        .unwrap()
        .remove(0);
        add_release_metadata(&mut o, "rel", "ns");
        place(&mut o, Some("ns"));
        let m = &o.object["metadata"];
        assert_eq!(m["labels"][MANAGED_BY_LABEL], "Helm");
        assert_eq!(m["annotations"][RELEASE_NAME_ANNOTATION], "rel");
        assert_eq!(m["annotations"][RELEASE_NAMESPACE_ANNOTATION], "ns");
        assert_eq!(m["namespace"], "ns");
        place(&mut o, None);
        assert!(o.object["metadata"].get("namespace").is_none());
    }
}

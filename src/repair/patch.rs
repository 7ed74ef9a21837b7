//! The bodies of repair changes: guarded JSON patches for client-side applied releases, and the
//! desired object with ignored fields kept at their live values for server-side apply.

use crate::model::ObjectDrift;
use crate::model::path::{remove, set};
use serde_json::{Value, json};

/// The desired object with every ignored path set to its live value (or left out when absent
/// live), so that a server-side apply never touches what the ignore rules protect.
pub fn keep_ignored(desired: &Value, o: &ObjectDrift) -> Value {
    let mut body = desired.clone();
    let live = o.live.clone().unwrap_or(Value::Null);
    for i in &o.ignored {
        let Some(at) = i.path.recorded_pointer() else { continue };
        match i.path.live_pointer().and_then(|p| live.pointer(&p)) {
            Some(v) => set(&mut body, &at, v.clone()),
            None => remove(&mut body, &at),
        }
    }
    body
}

/// JSON patch restoring each differing field, guarded by a test of its live value.
pub fn restore_ops(o: &ObjectDrift) -> Value {
    let mut ops = Vec::new();
    for f in &o.fields {
        match (&f.recorded, &f.live, f.path.live_pointer()) {
            (Some(r), Some(l), Some(at)) => {
                ops.push(json!({"op": "test", "path": at, "value": l}));
                ops.push(json!({"op": "replace", "path": at, "value": r}));
            }
            (Some(r), None, _) => {
                let at = f.path.live_insert_pointer().unwrap_or_else(|| f.path.pointer());
                ops.push(json!({"op": "add", "path": at, "value": r}));
            }
            (None, Some(l), Some(at)) => {
                ops.push(json!({"op": "test", "path": at, "value": l}));
                ops.push(json!({"op": "remove", "path": at}));
            }
            _ => {}
        }
    }
    Value::Array(ops)
}

/// JSON patch removing fields added outside Helm; list items from the last index down so earlier
/// removals do not shift later ones.
pub fn remove_ops(o: &ObjectDrift) -> Value {
    let mut added: Vec<_> = o.added.iter().filter_map(|a| Some((a.path.order(), a.path.live_pointer()?, a))).collect();
    added.sort_by(|a, b| b.0.cmp(&a.0));
    let mut ops = Vec::new();
    for (_, at, a) in added {
        ops.push(json!({"op": "test", "path": at, "value": a.value}));
        ops.push(json!({"op": "remove", "path": at}));
    }
    Value::Array(ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, FieldPath, Foreign, Ignored, ItemKey, ObjectId, Verdict};

    fn modified() -> ObjectDrift {
        let p = FieldPath::from_pointer;
        let env = p("/spec/template/spec/containers/0/env");
        let mut o =
            ObjectDrift::new(ObjectId::new("apps/v1", "Deployment", Some("ns"), "web"), None, Verdict::Modified);
        o.fields = vec![
            FieldDiff::new(p("/spec/template/spec/containers/0/image"), Some(&json!("a:1")), Some(&json!("a:2"))),
            FieldDiff::new(p("/metadata/labels/app"), Some(&json!("web")), None),
            FieldDiff::new(
                env.item(Some(0), None, Some(ItemKey::from_fields([("name", &json!("A"))]))),
                Some(&json!({"name": "A"})),
                None,
            ),
        ];
        o.added = (1..=10)
            .map(|i| Foreign {
                path: env.item(None, Some(i), None),
                value: json!({"name": format!("X{i}")}),
                manager: "k".into(),
            })
            .collect();
        o.ignored = vec![Ignored { path: p("/spec/replicas"), reason: "HPA".into() }];
        o.live = Some(json!({"spec": {"replicas": 7}}));
        o
    }

    #[test]
    fn restore_patch_is_guarded_and_appends_missing_items() {
        assert_eq!(
            restore_ops(&modified()),
            json!([
                {"op": "test", "path": "/spec/template/spec/containers/0/image", "value": "a:2"},
                {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "a:1"},
                {"op": "add", "path": "/metadata/labels/app", "value": "web"},
                {"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "A"}},
            ])
        );
    }

    #[test]
    fn foreign_fields_are_removed_from_the_end() {
        let ops = remove_ops(&modified());
        let paths: Vec<_> =
            ops.as_array().unwrap().iter().filter(|o| o["op"] == "remove").map(|o| o["path"].clone()).collect();
        assert_eq!(paths[0], json!("/spec/template/spec/containers/0/env/10"));
        assert_eq!(paths[1], json!("/spec/template/spec/containers/0/env/9"));
        assert_eq!(paths[9], json!("/spec/template/spec/containers/0/env/1"));
    }

    #[test]
    fn applies_keep_ignored_paths_at_their_live_value() {
        let desired = json!({"spec": {"replicas": 2, "paused": false}});
        assert_eq!(keep_ignored(&desired, &modified()), json!({"spec": {"replicas": 7, "paused": false}}));
        let mut o = modified();
        o.live = Some(json!({"spec": {}}));
        assert_eq!(keep_ignored(&desired, &o), json!({"spec": {"paused": false}}));
    }
}

//! The bodies of repair changes: guarded JSON patches for client-side applied releases, and the
//! desired object with ignored fields kept at their live values for server-side apply.

use crate::model::path::{remove, set};
use crate::model::{FieldPath, ObjectDrift, Segment};
use serde_json::{Value, json};

/// The desired object with every ignored or accepted path set to its live value (or left out
/// when absent live), so that a server-side apply never touches what the ignore rules protect
/// or what the baseline accepted.
pub(crate) fn keep_ignored(desired: &Value, o: &ObjectDrift) -> Value {
    let mut body = desired.clone();
    let live = o.live.clone().unwrap_or(Value::Null);
    let kept = o.ignored.iter().map(|i| &i.path).chain(o.accepted.iter().map(|a| &a.path));
    for path in kept {
        let Some(at) = path.recorded_pointer() else { continue };
        match path.live_pointer().and_then(|p| live.pointer(&p)) {
            Some(v) => set(&mut body, &at, v.clone()),
            None => remove(&mut body, &at),
        }
    }
    body
}

/// One guarded JSON patch that puts an object back: changed values replaced, recorded fields
/// added back, the `remove` paths removed (each guarded by a `test` of its live value), list
/// items restored at their recorded position. Operations are ordered so that no index shifts
/// under a later one: replacements and map fields first, then removals from the last list
/// position down, then list items from the first position up.
pub(crate) fn repair_ops(o: &ObjectDrift, remove: &[FieldPath]) -> Value {
    let live = o.live.clone().unwrap_or(Value::Null);
    let mut ops = Vec::new();
    let mut inserts = Vec::new();
    for f in &o.fields {
        match (&f.recorded, &f.live, f.path.live_pointer()) {
            (Some(r), Some(l), Some(at)) => {
                ops.push(json!({"op": "test", "path": at, "value": l}));
                ops.push(json!({"op": "replace", "path": at, "value": r}));
            }
            (Some(r), None, _) => match f.path.0.last() {
                Some(Segment::Item { recorded: Some(i), live: None, .. }) => inserts.push((&f.path, *i, r)),
                _ => {
                    let at = f.path.live_insert_pointer().unwrap_or_else(|| f.path.pointer());
                    ops.push(json!({"op": "add", "path": at, "value": r}));
                }
            },
            _ => {}
        }
    }
    let mut removals: Vec<(&FieldPath, String)> = remove.iter().filter_map(|p| Some((p, p.live_pointer()?))).collect();
    removals.sort_by_key(|(p, _)| std::cmp::Reverse(p.order()));
    // How long each list is once its removals are made, as items go back in.
    let mut lengths: std::collections::HashMap<String, usize> = Default::default();
    for (_, at) in &removals {
        if let Some(value) = live.pointer(at) {
            ops.push(json!({"op": "test", "path": at, "value": value}));
            ops.push(json!({"op": "remove", "path": at}));
            if let Some((list, _)) = at.rsplit_once('/') {
                let len = lengths.entry(list.to_string()).or_insert_with(|| list_len(&live, list));
                *len = len.saturating_sub(1);
            }
        }
    }
    inserts.sort_by_key(|(p, _, _)| p.order());
    for (path, index, value) in inserts {
        let Some(list) = FieldPath(path.0[..path.0.len() - 1].to_vec()).live_pointer() else { continue };
        let len = lengths.entry(list.clone()).or_insert_with(|| list_len(&live, &list));
        let at = (index).min(*len);
        *len += 1;
        ops.push(json!({"op": "add", "path": format!("{list}/{at}"), "value": value}));
    }
    Value::Array(ops)
}

fn list_len(root: &Value, pointer: &str) -> usize {
    root.pointer(pointer).and_then(Value::as_array).map_or(0, Vec::len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, FieldPath, Foreign, Ignored, ItemKey, ObjectId, Verdict};

    fn modified() -> ObjectDrift {
        let p = crate::testing::path;
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
                changed_by: None,
            })
            .collect();
        o.ignored = vec![Ignored { path: p("/spec/replicas"), reason: "HPA".into() }];
        o.live = Some(json!({"spec": {"replicas": 7}}));
        o
    }

    #[test]
    fn one_guarded_patch_restores_removes_and_reinserts() {
        let mut o = modified();
        o.live = Some(
            json!({"spec": {"template": {"spec": {"containers": [{"image": "a:2", "env": (0..=10).map(|i| json!({"name": format!("X{i}")})).collect::<Vec<_>>()}]}}}}),
        );
        let remove: Vec<FieldPath> = o.added.iter().map(|a| a.path.clone()).collect();
        let ops = repair_ops(&o, &remove);
        let ops = ops.as_array().unwrap();
        let summary: Vec<String> =
            ops.iter().map(|op| format!("{} {}", op["op"].as_str().unwrap(), op["path"].as_str().unwrap())).collect();
        assert_eq!(
            &summary[..3],
            [
                "test /spec/template/spec/containers/0/image",
                "replace /spec/template/spec/containers/0/image",
                "add /metadata/labels/app",
            ]
        );
        let removed: Vec<&str> = summary.iter().filter(|s| s.starts_with("remove")).map(String::as_str).collect();
        assert_eq!(removed[0], "remove /spec/template/spec/containers/0/env/10", "from the end: {removed:?}");
        assert_eq!(removed[9], "remove /spec/template/spec/containers/0/env/1");
        assert_eq!(
            summary.last().unwrap(),
            "add /spec/template/spec/containers/0/env/0",
            "back at its recorded position"
        );
    }

    #[test]
    fn applies_keep_ignored_paths_at_their_live_value() {
        let desired = json!({"spec": {"replicas": 2, "paused": false}});
        assert_eq!(keep_ignored(&desired, &modified()), json!({"spec": {"replicas": 7, "paused": false}}));
        let mut o = modified();
        o.live = Some(json!({"spec": {}}));
        assert_eq!(keep_ignored(&desired, &o), json!({"spec": {"paused": false}}));
        // What the baseline accepted is kept as well (its live value, or left out).
        let mut o = modified();
        o.live = Some(json!({"spec": {"replicas": 7, "paused": true}}));
        let accepted = |at: &str| crate::model::Accepted {
            path: crate::testing::path(at),
            change: "modified".into(),
            until: None,
        };
        o.accepted = vec![accepted("/spec/paused"), accepted("/spec/gone")];
        let desired = json!({"spec": {"replicas": 2, "paused": false, "gone": 1}});
        assert_eq!(keep_ignored(&desired, &o), json!({"spec": {"replicas": 7, "paused": true}}));
    }
}

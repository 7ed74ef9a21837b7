//! Unified diffs of recorded vs live YAML for a drifted object, showing exactly the differences
//! the verdict found: the "recorded" side is the live object with each of them undone, so server
//! defaults and fields nobody changed never show as changes.

use super::secret;
use crate::model::path::{remove, set};
use crate::model::{FieldPath, ObjectDrift, Segment};
use serde_json::Value;

/// The unified diff (`--- recorded` / `+++ live`) of a drifted object, or `None` when there is
/// no live object to show.
pub(crate) fn unified(o: &ObjectDrift, context: usize, show_secrets: bool) -> Option<String> {
    let mut live = o.live.clone()?;
    let mut recorded = recorded_view(o, &live);
    secret::mask_pair(&o.id, &mut recorded, &mut live, show_secrets);
    let (a, b) = (to_yaml(&recorded), to_yaml(&live));
    let diff = similar::TextDiff::from_lines(&a, &b);
    let text = diff.unified_diff().context_radius(context).header("recorded", "live").to_string();
    (!text.is_empty()).then_some(text)
}

/// The live object with every difference of the verdict undone.
fn recorded_view(o: &ObjectDrift, live: &Value) -> Value {
    let mut view = live.clone();
    // Values that changed: put the recorded one back (no list position moves).
    for f in &o.fields {
        if let (Some(r), Some(_), Some(at)) = (&f.recorded, &f.live, f.path.live_pointer()) {
            set(&mut view, &at, r.clone());
        }
    }
    // Values only live (added outside Helm, or not in the release): removed, last list item first.
    let mut removals: Vec<&FieldPath> = o.added.iter().map(|a| &a.path).collect();
    removals.extend(o.fields.iter().filter(|f| f.recorded.is_none() && f.live.is_some()).map(|f| &f.path));
    removals.sort_by_key(|p| std::cmp::Reverse(p.order()));
    // Values only recorded: put back where they were. A list item that another item replaced
    // (a changed key) keeps the fields the server filled in on that item.
    let replaced = o.replaced_items();
    let mut restored: Vec<(&FieldPath, Value)> = Vec::new();
    for f in o.fields.iter().filter(|f| f.live.is_none()) {
        let Some(r) = &f.recorded else { continue };
        let mut value = r.clone();
        let took = replaced.iter().find(|(gone, _)| *gone == &f.path).map(|(_, took)| *took);
        if let Some(replaced) = took.and_then(|p| live.pointer(&p.live_pointer()?))
            && let (Some(mine), Some(theirs)) = (value.as_object_mut(), replaced.as_object())
        {
            for (k, v) in theirs {
                mine.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        restored.push((&f.path, value));
    }
    for p in removals {
        if let Some(at) = p.live_pointer() {
            remove(&mut view, &at);
        }
    }
    restored.sort_by_key(|(p, _)| p.order());
    for (p, value) in restored {
        insert(&mut view, p, value);
    }
    view
}

/// Puts a recorded-only value back: a list item at its recorded position, a map field by key.
fn insert(view: &mut Value, path: &FieldPath, value: Value) {
    match path.0.split_last() {
        Some((Segment::Item { recorded: Some(i), live: None, .. }, parent)) => {
            let Some(at) = FieldPath(parent.to_vec()).live_pointer() else { return };
            if let Some(Value::Array(list)) = view.pointer_mut(&at) {
                list.insert((*i).min(list.len()), value);
            }
        }
        _ => {
            if let Some(at) = path.live_insert_pointer() {
                set(view, &at, value);
            }
        }
    }
}

fn to_yaml(v: &Value) -> String {
    serde_yaml::to_string(v).unwrap_or_else(|_| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, Foreign, ItemKey, ObjectId, Verdict};
    use serde_json::json;

    fn modified(kind: &str, live: Value, fields: Vec<FieldDiff>, added: Vec<Foreign>) -> ObjectDrift {
        let mut o = ObjectDrift::new(ObjectId::new("v1", kind, Some("ns"), "x"), None, Verdict::Modified);
        o.fields = fields;
        o.added = added;
        o.live = Some(live);
        o
    }

    #[test]
    fn shows_changed_and_added_lines_with_context() {
        let live = json!({"spec": {"a": 1, "b": 2, "c": 3, "replicas": 5, "env": [{"name": "A"}, {"name": "EXTRA"}]}});
        let o = modified(
            "Deployment",
            live,
            vec![FieldDiff::new(crate::testing::path("/spec/replicas"), Some(&json!(2)), Some(&json!(5)))],
            vec![Foreign {
                path: crate::testing::path("/spec/env").item(None, Some(1), None),
                value: json!({"name": "EXTRA"}),
                manager: "kubectl-set".into(),
                changed_by: None,
            }],
        );
        let d = unified(&o, 1, false).unwrap();
        assert!(d.starts_with("--- recorded\n+++ live\n"), "{d}");
        assert!(d.contains("-  replicas: 2\n") && d.contains("+  replicas: 5\n"), "{d}");
        assert!(d.contains("+  - name: EXTRA\n"), "{d}");
        assert!(!d.contains("  a: 1"), "context is limited: {d}");
    }

    /// A changed containerPort seen by the read-only engine: the recorded port (without the
    /// protocol the server defaulted) is missing, the live one was added by kubectl. The diff
    /// shows the port number, not the defaulted protocol.
    #[test]
    fn a_replaced_list_item_shows_only_what_changed() {
        let ports = crate::testing::path("/spec/ports");
        let key = |n: i64| Some(ItemKey::from_fields([("containerPort", &json!(n)), ("protocol", &json!("TCP"))]));
        let live = json!({"spec": {"ports": [{"containerPort": 9090, "name": "http", "protocol": "TCP"}]}});
        let o = modified(
            "Pod",
            live,
            vec![FieldDiff::new(
                ports.item(Some(0), None, key(8080)),
                Some(&json!({"containerPort": 8080, "name": "http"})),
                None,
            )],
            vec![Foreign {
                path: ports.item(None, Some(0), key(9090)),
                value: json!({"containerPort": 9090, "name": "http", "protocol": "TCP"}),
                manager: "kubectl-edit".into(),
                changed_by: None,
            }],
        );
        let d = unified(&o, 3, false).unwrap();
        assert!(d.contains("-  - containerPort: 8080\n") && d.contains("+  - containerPort: 9090\n"), "{d}");
        assert!(!d.contains("+    protocol: TCP") && !d.contains("-    protocol"), "{d}");
    }

    #[test]
    fn secrets_are_masked_but_changes_still_show() {
        let live = json!({"data": {"password": "bmV3", "user": "YQ=="}});
        let o = modified(
            "Secret",
            live,
            vec![FieldDiff::new(crate::testing::path("/data/password"), Some(&json!("b2xk")), Some(&json!("bmV3")))],
            vec![],
        );
        let d = unified(&o, 3, false).unwrap();
        assert!(d.contains("-  password: (hidden)\n+  password: (hidden, differs)\n"), "{d}");
        assert!(!d.contains("bmV3") && !d.contains("b2xk"), "{d}");
        assert!(unified(&o, 3, true).unwrap().contains("+  password: bmV3"));
    }
}

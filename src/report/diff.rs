//! Unified diffs of recorded vs live YAML for a modified object, limited to the changed parts.

use crate::compare::ObjectDrift;
use crate::compare::path::{remove, set};
use serde_json::Value;

/// Text shown instead of a secret value.
const HIDDEN: &str = "(hidden)";

/// The unified diff (`--- recorded` / `+++ live`) of a modified object, or `None` when there is
/// no live object to show.
pub fn unified(o: &ObjectDrift, context: usize, show_secrets: bool) -> Option<String> {
    let live = o.live.as_ref()?;
    let mut recorded = live.clone();
    for a in &o.added {
        remove(&mut recorded, &a.path);
    }
    for f in &o.fields {
        match &f.recorded {
            Some(v) => set(&mut recorded, &f.path, v.clone()),
            None => remove(&mut recorded, &f.path),
        }
    }
    let mut live = live.clone();
    if o.kind == "Secret" && !show_secrets {
        mask_secret(&mut recorded, &mut live);
    }
    let (a, b) = (to_yaml(&recorded), to_yaml(&live));
    let diff = similar::TextDiff::from_lines(&a, &b);
    let text = diff.unified_diff().context_radius(context).header("recorded", "live").to_string();
    (!text.is_empty()).then_some(text)
}

fn to_yaml(v: &Value) -> String {
    serde_yaml::to_string(v).unwrap_or_else(|_| v.to_string())
}

/// Replaces secret values on both sides, keeping whether each key differs.
fn mask_secret(recorded: &mut Value, live: &mut Value) {
    for field in ["data", "stringData"] {
        let r = recorded.get(field).and_then(Value::as_object).cloned().unwrap_or_default();
        let l = live.get(field).and_then(Value::as_object).cloned().unwrap_or_default();
        for (side, mine, other, tag) in [(&mut *recorded, &r, &l, "recorded value"), (&mut *live, &l, &r, "live value")]
        {
            if let Some(map) = side.get_mut(field).and_then(Value::as_object_mut) {
                for (k, v) in map.iter_mut() {
                    let same = other.get(k) == mine.get(k);
                    *v = Value::String(if same { HIDDEN.into() } else { format!("(hidden {tag})") });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{FieldDiff, Foreign, Verdict};
    use serde_json::json;

    fn modified(kind: &str, live: Value, fields: Vec<FieldDiff>, added: Vec<Foreign>) -> ObjectDrift {
        ObjectDrift {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: Some("ns".into()),
            name: "x".into(),
            source: None,
            verdict: Verdict::Modified,
            fields,
            added,
            ignored: Vec::new(),
            engine: None,
            live: Some(live),
        }
    }

    #[test]
    fn shows_changed_and_added_lines_with_context() {
        let live = json!({"spec": {"a": 1, "b": 2, "c": 3, "replicas": 5, "env": [{"name": "A"}, {"name": "EXTRA"}]}});
        let o = modified(
            "Deployment",
            live,
            vec![FieldDiff::new("/spec/replicas", Some(&json!(2)), Some(&json!(5)))],
            vec![Foreign {
                path: "/spec/env/1".into(),
                value: json!({"name": "EXTRA"}),
                manager: "kubectl-set".into(),
            }],
        );
        let d = unified(&o, 1, false).unwrap();
        assert!(d.starts_with("--- recorded\n+++ live\n"), "{d}");
        assert!(d.contains("-  replicas: 2\n") && d.contains("+  replicas: 5\n"), "{d}");
        assert!(d.contains("+  - name: EXTRA\n"), "{d}");
        assert!(!d.contains("  a: 1"), "context is limited: {d}");
    }

    #[test]
    fn secrets_are_masked_but_changes_still_show() {
        let live = json!({"data": {"password": "bmV3", "user": "YQ=="}});
        let o = modified(
            "Secret",
            live,
            vec![FieldDiff::new("/data/password", Some(&json!("b2xk")), Some(&json!("bmV3")))],
            vec![],
        );
        let d = unified(&o, 3, false).unwrap();
        assert!(d.contains("-  password: (hidden recorded value)\n+  password: (hidden live value)\n"), "{d}");
        assert!(!d.contains("bmV3") && !d.contains("b2xk"), "{d}");
        assert!(unified(&o, 3, true).unwrap().contains("+  password: bmV3"));
    }

    #[test]
    fn missing_list_elements_are_appended() {
        let mut v = json!({"env": []});
        set(&mut v, "/env/[A]", json!({"name": "A"}));
        assert_eq!(v, json!({"env": [{"name": "A"}]}));
        remove(&mut v, "/env/0");
        assert_eq!(v, json!({"env": []}));
    }
}

//! The release's values as `--set` keys: every scalar with its key (`image.tag`,
//! `hosts[1].name`), a copy with some of them replaced, and the `--set-json` pair that sets a
//! key with `--reuse-values` (a key inside a list sets the whole list: Helm replaces lists).

use serde_json::{Map, Value};
use std::fmt;

/// One step of a key: a map key or a list position.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum KeyPart {
    Key(String),
    Index(usize),
}

/// A value's place in the values tree.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key(pub Vec<KeyPart>);

impl fmt::Display for Key {
    /// As `--set` spells it: `a.b[0].c`, dots inside a key escaped (`a\.b`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                KeyPart::Key(k) if i == 0 => write!(f, "{}", k.replace('.', "\\."))?,
                KeyPart::Key(k) => write!(f, ".{}", k.replace('.', "\\."))?,
                KeyPart::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

impl Key {
    /// The part of the key `--set-json` can set without losing list items: up to the first list.
    pub(crate) fn settable(&self) -> Key {
        let end = self.0.iter().position(|s| matches!(s, KeyPart::Index(_))).unwrap_or(self.0.len());
        Key(self.0[..end].to_vec())
    }

    /// The last map key (`initialDelaySeconds` of `probes.liveness.initialDelaySeconds`).
    pub(crate) fn last_name(&self) -> &str {
        self.0.iter().rev().find_map(|s| if let KeyPart::Key(k) = s { Some(k.as_str()) } else { None }).unwrap_or("")
    }
}

/// The chart's default values with the user's on top (what the templates saw).
pub(crate) fn merged(defaults: Option<&Value>, user: Option<&Value>) -> Value {
    let mut values = defaults.cloned().unwrap_or(Value::Null);
    if let Some(user) = user {
        merge(&mut values, user);
    }
    values
}

/// `top` merged into `base` as Helm's (and Flux's) `MergeMaps`: maps merge key by key, anything
/// else replaces.
pub(crate) fn merge(base: &mut Value, top: &Value) {
    match (base, top) {
        (Value::Object(b), Value::Object(t)) => {
            for (k, v) in t {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, t) => *b = t.clone(),
    }
}

/// Every scalar (not null) with its key, in key order; keys `--set` cannot spell are left out.
pub(crate) fn leaves(values: &Value) -> Vec<(Key, Value)> {
    let mut out = Vec::new();
    walk(values, &mut Vec::new(), &mut out);
    out
}

fn walk(v: &Value, at: &mut Vec<KeyPart>, out: &mut Vec<(Key, Value)>) {
    match v {
        Value::Object(m) => walk_map(m, at, out),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(KeyPart::Index(i));
                walk(item, at, out);
                at.pop();
            }
        }
        Value::Null => {}
        scalar if !at.is_empty() => out.push((Key(at.clone()), scalar.clone())),
        _ => {}
    }
}

fn walk_map(m: &Map<String, Value>, at: &mut Vec<KeyPart>, out: &mut Vec<(Key, Value)>) {
    let spellable = |k: &str| !k.is_empty() && !k.contains(['=', ',', '[', ']', '\\', '\'']);
    for (k, v) in m.iter().filter(|(k, _)| spellable(k)) {
        at.push(KeyPart::Key(k.clone()));
        walk(v, at, out);
        at.pop();
    }
}

/// The value at `key`.
pub(crate) fn get<'a>(values: &'a Value, key: &Key) -> Option<&'a Value> {
    key.0.iter().try_fold(values, |v, step| match step {
        KeyPart::Key(k) => v.get(k),
        KeyPart::Index(i) => v.get(i),
    })
}

/// Sets the value at `key`, making the maps on the way that values.yaml leaves out (a list
/// item must exist).
pub(crate) fn set(values: &mut Value, key: &Key, value: Value) {
    let slot = key.0.iter().try_fold(values, |v, step| match step {
        KeyPart::Key(k) => {
            if v.is_null() {
                *v = Value::Object(Map::new());
            }
            v.as_object_mut().map(|m| m.entry(k.clone()).or_insert(Value::Null))
        }
        KeyPart::Index(i) => v.get_mut(i),
    });
    if let Some(slot) = slot {
        *slot = value;
    }
}

/// The values a template may read that hold nothing: nulls of values.yaml and the keys a
/// template names (`.Values.a.b`) that values.yaml lacks, each as `null`.
pub(crate) fn absent(values: &Value, named: &[Key]) -> Vec<(Key, Value)> {
    let mut out = Vec::new();
    nulls(values, &mut Vec::new(), &mut out);
    for key in named {
        let missing = get(values, key).is_none();
        // Under a value that is not a map (a string, a list), a key cannot be set.
        let settable = (0..key.0.len())
            .all(|i| get(values, &Key(key.0[..i].to_vec())).is_none_or(|v| v.is_object() || v.is_null()));
        if missing && settable && !out.iter().any(|(k, _)| k == key) {
            out.push((key.clone(), Value::Null));
        }
    }
    out
}

fn nulls(v: &Value, at: &mut Vec<KeyPart>, out: &mut Vec<(Key, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                at.push(KeyPart::Key(k.clone()));
                nulls(v, at, out);
                at.pop();
            }
        }
        Value::Null if !at.is_empty() => out.push((Key(at.clone()), Value::Null)),
        _ => {}
    }
}

/// The `--set-json` pairs that give each changed key its new value in `values` (already
/// changed): one pair per settable key, lists whole.
pub(crate) fn set_pairs(values: &Value, changed: &[Key]) -> Vec<(String, Value)> {
    let mut roots: Vec<Key> = changed.iter().map(Key::settable).collect();
    roots.sort();
    roots.dedup();
    roots.into_iter().filter_map(|k| Some((k.to_string(), get(values, &k)?.clone()))).collect()
}

/// How Helm's templates print a value (`{{ .Values.x }}`): numbers from a values file are
/// floats, printed without a fraction when whole.
pub(crate) fn printed(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e6 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_become_set_keys() {
        let values = merged(
            Some(
                &json!({"image": {"repo": "web", "tag": "1.0"}, "replicas": 2, "hosts": [{"name": "a"}], "a.b": 1, "x=y": 2}),
            ),
            Some(&json!({"replicas": 3, "image": {"tag": "2.0"}, "gone": null})),
        );
        let keys: Vec<(String, Value)> = leaves(&values).into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        assert_eq!(
            keys,
            vec![
                ("a\\.b".into(), json!(1)),
                ("hosts[0].name".into(), json!("a")),
                ("image.repo".into(), json!("web")),
                ("image.tag".into(), json!("2.0")),
                ("replicas".into(), json!(3)),
            ]
        );
    }

    #[test]
    fn a_key_inside_a_list_sets_the_whole_list() {
        let mut values = json!({"hosts": [{"name": "a"}, {"name": "b"}], "replicas": 1});
        let host = Key(vec![KeyPart::Key("hosts".into()), KeyPart::Index(1), KeyPart::Key("name".into())]);
        assert_eq!(get(&values, &host), Some(&json!("b")));
        set(&mut values, &host, json!("c"));
        let replicas = Key(vec![KeyPart::Key("replicas".into())]);
        set(&mut values, &replicas, json!(3));
        assert_eq!(
            set_pairs(&values, &[host.clone(), replicas, host]),
            vec![("hosts".into(), json!([{"name": "a"}, {"name": "c"}])), ("replicas".into(), json!(3))]
        );
    }

    /// Nulls and the keys templates name that values.yaml lacks are the values a `default`
    /// may stand for; setting one makes the maps on its way.
    #[test]
    fn absent_values_are_named_and_settable() {
        let values = json!({"image": {"tag": null, "repository": "nginx"}, "name": "x"});
        let key = |s: &str| Key(s.split('.').map(|k| KeyPart::Key(k.into())).collect());
        let named = [key("logLevel"), key("image.repository"), key("name.first"), key("probes.liveness.delay")];
        let found: Vec<String> = absent(&values, &named).into_iter().map(|(k, _)| k.to_string()).collect();
        assert_eq!(found, ["image.tag", "logLevel", "probes.liveness.delay"]);
        let mut tree = values.clone();
        set(&mut tree, &key("probes.liveness.delay"), json!(3));
        assert_eq!(tree["probes"], json!({"liveness": {"delay": 3}}));
    }

    #[test]
    fn numbers_print_as_templates_print_them() {
        assert_eq!(printed(&json!(9898.0)), "9898");
        assert_eq!(printed(&json!(9898)), "9898");
        assert_eq!(printed(&json!(0.5)), "0.5");
        assert_eq!(printed(&json!("x")), "x");
    }
}

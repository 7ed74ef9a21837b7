//! Where a chart lets a list or a map grow: values it leaves empty by default (`extraArgs: {}`,
//! `extraEnvs: []`, `config: {}`). A field whose live list or map holds what the recorded one
//! holds plus items added by hand is explained by the empty value whose probe shows up in it
//! (`--{key}={value}` for `extraArgs`), and the items are set there.

use super::values::{self, Key};
use serde_json::{Map, Value};

/// Every empty map or list among the values, with its key.
pub(crate) fn empties(values: &Value) -> Vec<Key> {
    let mut out = Vec::new();
    walk(values, &mut Vec::new(), &mut out);
    out
}

fn walk(v: &Value, at: &mut Vec<values::KeyPart>, out: &mut Vec<Key>) {
    match v {
        Value::Object(m) if m.is_empty() && !at.is_empty() => out.push(Key(at.clone())),
        Value::Array(a) if a.is_empty() && !at.is_empty() => out.push(Key(at.clone())),
        Value::Object(m) => {
            for (k, v) in m.iter().filter(|(k, _)| !k.contains(['=', ',', '[', ']', '\\', '\''])) {
                at.push(values::KeyPart::Key(k.clone()));
                walk(v, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// The probe put in empty value `n`: a map of one entry, or a list of one item.
pub(crate) fn probe(n: usize, empty: &Value) -> Value {
    let (key, value) = marks(n);
    if empty.is_object() {
        Value::Object(Map::from_iter([(key, Value::String(value))]))
    } else {
        Value::Array(vec![Value::String(value)])
    }
}

/// The words a probe writes (letters only: they survive quoting and case rules).
fn marks(n: usize) -> (String, String) {
    let letters: String = n.to_string().chars().map(|d| (b'a' + d as u8 - b'0') as char).collect();
    (format!("hdkey{letters}q"), format!("hdval{letters}q"))
}

/// What grew: items appended to a list, or entries added to a map.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Growth {
    Items(Vec<Value>),
    Entries(Map<String, Value>),
}

/// What `live` holds beyond `recorded`, when it holds all of `recorded` (each recorded item
/// matched once; each recorded entry with its value): a list or a map that only grew.
pub(crate) fn growth(recorded: &Value, live: &Value) -> Option<Growth> {
    match (recorded, live) {
        (Value::Array(recorded), Value::Array(live)) => {
            let mut left: Vec<&Value> = live.iter().collect();
            for r in recorded {
                let at = left.iter().position(|l| *l == r)?;
                left.remove(at);
            }
            (!left.is_empty()).then(|| Growth::Items(left.into_iter().cloned().collect()))
        }
        (Value::Object(recorded), Value::Object(live)) => {
            if recorded.iter().any(|(k, v)| live.get(k) != Some(v)) {
                return None;
            }
            let added: Map<String, Value> =
                live.iter().filter(|(k, _)| !recorded.contains_key(*k)).map(|(k, v)| (k.clone(), v.clone())).collect();
            (!added.is_empty()).then_some(Growth::Entries(added))
        }
        _ => None,
    }
}

/// How a template writes the entries of an empty value into a list or a map: into a list item
/// as text around the entry's key and value (`--`, `=`, ``), as the item itself, or into a map
/// as its entries.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Form {
    pub(crate) empty: usize,
    kind: FormKind,
}

#[derive(Clone, Debug, PartialEq)]
enum FormKind {
    /// `{before}{key}{between}{value}{after}` as one text item.
    Text { before: String, between: Option<String>, after: String },
    /// The empty list's items, whatever they are (`toYaml .Values.extraEnvs`).
    Item,
    /// The empty map's entries, as they are (`toYaml .Values.config`).
    Entry,
}

impl Form {
    /// The form of empty value `n`'s probe in a rendered list or map, if it shows there.
    pub(crate) fn of(n: usize, rendered: &Value) -> Option<Form> {
        let (key, value) = marks(n);
        let kind = match rendered {
            Value::Object(m) => {
                (m.get(&key).and_then(Value::as_str) == Some(value.as_str())).then_some(FormKind::Entry)
            }
            Value::Array(items) => items.iter().filter_map(Value::as_str).find_map(|item| {
                let v = item.find(&value)?;
                match item.find(&key) {
                    _ if item == value => Some(FormKind::Item),
                    Some(k) if k < v => Some(FormKind::Text {
                        before: item[..k].to_string(),
                        between: Some(item[k + key.len()..v].to_string()),
                        after: item[v + value.len()..].to_string(),
                    }),
                    Some(_) => None,
                    None => Some(FormKind::Text {
                        before: item[..v].to_string(),
                        between: None,
                        after: item[v + value.len()..].to_string(),
                    }),
                }
            }),
            _ => None,
        }?;
        Some(Form { empty: n, kind })
    }

    /// The entry a text item added by hand is: `(key, value)` for a map, `(_, value)` for a list.
    fn entry(before: &str, between: Option<&str>, after: &str, item: &str) -> Option<(String, String)> {
        let inner = item.strip_prefix(before)?.strip_suffix(after)?;
        match between {
            Some(sep) => {
                let (k, v) = inner.split_once(sep)?;
                (!k.is_empty()).then(|| (k.to_string(), v.to_string()))
            }
            None => Some((String::new(), inner.to_string())),
        }
    }

    /// The value that makes the template write what grew (everything must fit the form).
    pub(crate) fn value_for(&self, grown: &Growth) -> Option<Value> {
        match (&self.kind, grown) {
            (FormKind::Entry, Growth::Entries(m)) => Some(Value::Object(m.clone())),
            (FormKind::Item, Growth::Items(items)) => Some(Value::Array(items.clone())),
            (FormKind::Text { before, between, after }, Growth::Items(items)) => {
                let entries: Option<Vec<(String, String)>> = items
                    .iter()
                    .map(|v| v.as_str().and_then(|s| Form::entry(before, between.as_deref(), after, s)))
                    .collect();
                let entries = entries?;
                Some(match between {
                    Some(_) => Value::Object(entries.into_iter().map(|(k, v)| (k, Value::String(v))).collect()),
                    None => Value::Array(entries.into_iter().map(|(_, v)| Value::String(v)).collect()),
                })
            }
            _ => None,
        }
    }

    /// The form in words: `--{KEY}={VALUE}`, `{ITEM}`, `{KEY}: {VALUE}`.
    pub(crate) fn shape(&self) -> String {
        match &self.kind {
            FormKind::Text { before, between: Some(sep), after } => format!("{before}{{KEY}}{sep}{{VALUE}}{after}"),
            FormKind::Text { before, between: None, after } => format!("{before}{{VALUE}}{after}"),
            FormKind::Item => "{ITEM}".into(),
            FormKind::Entry => "{KEY}: {VALUE}".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_argument_added_by_hand_is_an_entry_of_the_empty_map_that_writes_it() {
        let values = json!({"controller": {"extraArgs": {}, "extraEnvs": [], "image": {"tag": "1"}}, "x": []});
        let keys: Vec<String> = empties(&values).iter().map(ToString::to_string).collect();
        assert_eq!(keys, ["controller.extraArgs", "controller.extraEnvs", "x"]);
        let (k, v) = marks(12);
        assert_eq!(probe(12, &json!({})), json!({ k.clone(): v.clone() }));
        let rendered = json!(["/nginx-ingress-controller", format!("--{k}={v}")]);
        let form = Form::of(12, &rendered).unwrap();
        assert_eq!(form.shape(), "--{KEY}={VALUE}");
        let recorded = json!(["/nginx-ingress-controller", "--election-id=x"]);
        let live = json!(["/nginx-ingress-controller", "--election-id=x", "--v=5", "--enable-metrics=true"]);
        let grown = growth(&recorded, &live).unwrap();
        assert_eq!(form.value_for(&grown), Some(json!({"v": "5", "enable-metrics": "true"})));
        assert_eq!(growth(&recorded, &json!(["--v=5"])), None, "an item removed: not a list that only grew");
        assert_eq!(form.value_for(&Growth::Items(vec![json!("plain")])), None, "an item not in the form");
    }

    #[test]
    fn items_and_entries_as_they_are() {
        let env = json!({"name": "DEBUG", "value": "1"});
        let items = Form::of(3, &json!([{"name": "A"}, marks(3).1])).unwrap();
        assert_eq!(items.shape(), "{ITEM}");
        let grown = growth(&json!([{"name": "A"}]), &json!([{"name": "A"}, env.clone()])).unwrap();
        assert_eq!(items.value_for(&grown), Some(json!([env])));
        let (k, v) = marks(4);
        let entries = Form::of(4, &json!({"a": "1", k: v})).unwrap();
        let grown = growth(&json!({"a": "1"}), &json!({"a": "1", "use-forwarded-headers": "true"})).unwrap();
        assert_eq!(entries.value_for(&grown), Some(json!({"use-forwarded-headers": "true"})));
        assert_eq!(growth(&json!({"a": "1"}), &json!({"a": "2", "b": "3"})), None, "a value changed too");
    }
}

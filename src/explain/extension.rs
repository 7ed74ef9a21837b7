//! Where a chart lets a list or a map grow: values it leaves empty by default (`extraArgs: {}`,
//! `extraEnvs: []`, `config: {}`). A field whose live list or map holds what the recorded one
//! holds plus items added by hand is explained by the empty value whose probe shows up in it
//! (`--{key}={value}` for `extraArgs`), and the items are set there.

use super::values::{self, Key};
use serde_json::{Map, Value};

/// Every empty map or list among the values, with its key.
pub fn empties(values: &Value) -> Vec<Key> {
    let mut out = Vec::new();
    walk(values, &mut Vec::new(), &mut out);
    out
}

fn walk(v: &Value, at: &mut Vec<values::Step>, out: &mut Vec<Key>) {
    match v {
        Value::Object(m) if m.is_empty() && !at.is_empty() => out.push(Key(at.clone())),
        Value::Array(a) if a.is_empty() && !at.is_empty() => out.push(Key(at.clone())),
        Value::Object(m) => {
            for (k, v) in m.iter().filter(|(k, _)| !k.contains(['=', ',', '[', ']', '\\', '\''])) {
                at.push(values::Step::Key(k.clone()));
                walk(v, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// The probe put in empty value `n`: a map of one entry, or a list of one item.
pub fn probe(n: usize, empty: &Value) -> Value {
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

/// How a template writes each entry of an empty value into a list item: the text around the
/// entry's key and value (`--`, `=`, ``), or the item is the value itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    pub empty: usize,
    before: String,
    between: Option<String>,
    after: String,
}

impl Form {
    /// The form of empty value `n`'s probe in a rendered list, if an item shows it.
    pub fn in_list(n: usize, rendered: &Value) -> Option<Form> {
        let (key, value) = marks(n);
        rendered.as_array()?.iter().filter_map(Value::as_str).find_map(|item| {
            let v = item.find(&value)?;
            match item.find(&key) {
                Some(k) if k < v => Some(Form {
                    empty: n,
                    before: item[..k].to_string(),
                    between: Some(item[k + key.len()..v].to_string()),
                    after: item[v + value.len()..].to_string(),
                }),
                Some(_) => None,
                None => Some(Form {
                    empty: n,
                    before: item[..v].to_string(),
                    between: None,
                    after: item[v + value.len()..].to_string(),
                }),
            }
        })
    }

    /// The entry an item added by hand is, in this form: `(key, value)` for a map, `(_, value)`
    /// for a list.
    fn entry(&self, item: &str) -> Option<(String, String)> {
        let inner = item.strip_prefix(&self.before)?.strip_suffix(&self.after)?;
        match &self.between {
            Some(sep) => {
                let (k, v) = inner.split_once(sep.as_str())?;
                (!k.is_empty()).then(|| (k.to_string(), v.to_string()))
            }
            None => Some((String::new(), inner.to_string())),
        }
    }

    /// The value that makes the template write `added` (items of a list): every item must fit.
    pub fn value_for(&self, added: &[&Value]) -> Option<Value> {
        let entries: Option<Vec<(String, String)>> =
            added.iter().map(|v| v.as_str().and_then(|s| self.entry(s))).collect();
        let entries = entries.filter(|e| !e.is_empty())?;
        Some(match self.between {
            Some(_) => Value::Object(entries.into_iter().map(|(k, v)| (k, Value::String(v))).collect()),
            None => Value::Array(entries.into_iter().map(|(_, v)| Value::String(v)).collect()),
        })
    }

    /// The form in words: `--{KEY}={VALUE}`.
    pub fn shape(&self) -> String {
        match &self.between {
            Some(sep) => format!("{}{{KEY}}{sep}{{VALUE}}{}", self.before, self.after),
            None => format!("{}{{VALUE}}{}", self.before, self.after),
        }
    }
}

/// The items of `live` not in `recorded` (each recorded item matched once), when every recorded
/// item is still there: a list that only grew.
pub fn added<'a>(recorded: &Value, live: &'a Value) -> Option<Vec<&'a Value>> {
    let (recorded, live) = (recorded.as_array()?, live.as_array()?);
    let mut left: Vec<&Value> = live.iter().collect();
    for r in recorded {
        let at = left.iter().position(|l| *l == r)?;
        left.remove(at);
    }
    (!left.is_empty()).then_some(left)
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
        let form = Form::in_list(12, &rendered).unwrap();
        assert_eq!(form.shape(), "--{KEY}={VALUE}");
        let recorded = json!(["/nginx-ingress-controller", "--election-id=x"]);
        let live = json!(["/nginx-ingress-controller", "--election-id=x", "--v=5", "--enable-metrics=true"]);
        let grown = added(&recorded, &live).unwrap();
        assert_eq!(form.value_for(&grown), Some(json!({"v": "5", "enable-metrics": "true"})));
        assert_eq!(added(&recorded, &json!(["--v=5"])), None, "an item removed: not a list that only grew");
        assert_eq!(form.value_for(&[&json!("plain")]), None, "an item not in the form");
        let items = Form::in_list(3, &json!([format!("{}", marks(3).1)])).unwrap();
        assert_eq!(items.value_for(&[&json!("a"), &json!("b")]), Some(json!(["a", "b"])));
    }
}

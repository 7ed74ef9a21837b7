//! Where a difference is: a [`FieldPath`] from an object's root, which knows the position of
//! each list item in the recorded and in the live object. From it come an RFC 6901 pointer that
//! resolves in the object a value belongs to (JSON, repair) and the readable form people see
//! (`spec.template.spec.containers[name=web].ports[containerPort=8080,protocol=TCP]`).

use serde_json::Value;
use std::fmt;

/// The identity of a keyed list item: its merge-key fields and their values, as shown.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct ItemKey(pub Vec<(String, String)>);

impl ItemKey {
    /// A key from merge-key fields and their JSON values (strings shown without quotes).
    pub(crate) fn from_fields<'a>(fields: impl IntoIterator<Item = (&'a str, &'a Value)>) -> ItemKey {
        ItemKey(fields.into_iter().map(|(k, v)| (k.to_string(), scalar_text(v))).collect())
    }
}

impl fmt::Display for ItemKey {
    /// `name=web`, `containerPort=8080,protocol=TCP`; a value that would read as more (a comma,
    /// a bracket, a space, a control character) is quoted: `name="a,b=c"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            if v.chars().any(|c| c.is_control() || c.is_whitespace() || ",=[]\"\\".contains(c)) {
                write!(f, "{sep}{k}={}", Value::String(v.clone()))?;
            } else {
                write!(f, "{sep}{k}={v}")?;
            }
        }
        Ok(())
    }
}

/// A JSON scalar as text: strings bare, everything else as JSON.
pub(crate) fn scalar_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// One step from a parent value to a child.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Segment {
    /// A map key.
    Field(String),
    /// A list item: its index in the recorded and in the live list (`None` on the side that
    /// lacks it), and its merge key when the list is keyed.
    Item { recorded: Option<usize>, live: Option<usize>, key: Option<ItemKey> },
}

/// A path from an object's root to one field.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    pub(crate) fn root() -> FieldPath {
        FieldPath(Vec::new())
    }

    /// Whether this is the whole object.
    pub(crate) fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// This path with a map key appended.
    pub(crate) fn field(&self, name: &str) -> FieldPath {
        let mut next = self.clone();
        next.0.push(Segment::Field(name.to_string()));
        next
    }

    /// This path with a list item appended.
    pub(crate) fn item(&self, recorded: Option<usize>, live: Option<usize>, key: Option<ItemKey>) -> FieldPath {
        let mut next = self.clone();
        next.0.push(Segment::Item { recorded, live, key });
        next
    }

    /// The pointer in the live object, `None` when some item of the path is not live.
    pub(crate) fn live_pointer(&self) -> Option<String> {
        self.pointer_by(|recorded, live| {
            let _ = recorded;
            live
        })
    }

    /// The pointer in the recorded object, `None` when some item of the path is not recorded.
    pub(crate) fn recorded_pointer(&self) -> Option<String> {
        self.pointer_by(|recorded, _| recorded)
    }

    /// The pointer in the object that holds the value: the live one, else the recorded one.
    pub(crate) fn pointer(&self) -> String {
        self.live_pointer().or_else(|| self.recorded_pointer()).unwrap_or_default()
    }

    /// The pointer of the parent in the live object and, for an item missing live, `-` (append)
    /// as the last token: where a JSON patch adds a value back.
    pub(crate) fn live_insert_pointer(&self) -> Option<String> {
        match self.0.split_last() {
            Some((Segment::Item { live: None, .. }, parent)) => {
                Some(format!("{}/-", FieldPath(parent.to_vec()).live_pointer()?))
            }
            _ => self.live_pointer(),
        }
    }

    /// A sort key that follows the path and orders list positions by number (`10` after `9`;
    /// the live position, else the recorded one): sorted descending, removals of list items
    /// never shift one another.
    pub(crate) fn order(&self) -> Vec<(String, usize)> {
        self.0
            .iter()
            .map(|s| match s {
                Segment::Field(k) => (k.clone(), 0),
                Segment::Item { recorded, live, .. } => (String::new(), live.or(*recorded).unwrap_or_default()),
            })
            .collect()
    }

    fn pointer_by(&self, index: impl Fn(Option<usize>, Option<usize>) -> Option<usize>) -> Option<String> {
        let mut out = String::new();
        for s in &self.0 {
            match s {
                Segment::Field(k) => out = join(&out, k),
                Segment::Item { recorded, live, .. } => out = join(&out, &index(*recorded, *live)?.to_string()),
            }
        }
        Some(out)
    }
}

impl fmt::Display for FieldPath {
    /// `spec.template.spec.containers[name=web].image`, `metadata.labels["app.kubernetes.io/name"]`,
    /// `rules[0].verbs`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(whole object)");
        }
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Field(k) if plain_name(k) => write!(f, "{}{k}", if i == 0 { "" } else { "." })?,
                Segment::Field(k) => write!(f, "[{}]", serde_json::Value::String(k.clone()))?,
                Segment::Item { key: Some(key), .. } => write!(f, "[{key}]")?,
                Segment::Item { recorded, live, .. } => write!(f, "[{}]", live.or(*recorded).unwrap_or_default())?,
            }
        }
        Ok(())
    }
}

fn plain_name(k: &str) -> bool {
    !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Appends one reference token to a pointer, escaping `~` and `/`.
pub(crate) fn join(path: &str, token: &str) -> String {
    format!("{path}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// Whether `path` is `prefix` or lies under it.
pub(crate) fn under(path: &str, prefix: &str) -> bool {
    path == prefix || (path.starts_with(prefix) && path[prefix.len()..].starts_with('/'))
}

/// Whether `path` lies at or under a pointer `pattern` whose `*` tokens match any one token
/// (`/webhooks/*/clientConfig/caBundle`).
pub(crate) fn under_pattern(path: &str, pattern: &str) -> bool {
    let (p, q) = (tokens(path), tokens(pattern));
    p.len() >= q.len() && q.iter().zip(&p).all(|(want, got)| want == "*" || want == got)
}

/// Whether a pointer `pattern` (with `*` tokens) names something strictly under `path`.
pub(crate) fn reaches_below(pattern: &str, path: &str) -> bool {
    let (q, p) = (tokens(pattern), tokens(path));
    q.len() > p.len() && q.iter().zip(&p).all(|(want, got)| want == "*" || want == got)
}

/// The unescaped reference tokens of a pointer.
pub(crate) fn tokens(path: &str) -> Vec<String> {
    path.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect()
}

/// Sets the value at a pointer, creating objects on the way; `-` or an index past the end
/// appends to a list.
pub(crate) fn set(root: &mut Value, path: &str, value: Value) {
    let tokens = tokens(path);
    let Some((last, parents)) = tokens.split_last() else {
        *root = value;
        return;
    };
    let mut cur = root;
    for t in parents {
        cur = match cur {
            Value::Object(m) => m.entry(t.clone()).or_insert_with(|| Value::Object(Default::default())),
            Value::Array(a) => match t.parse::<usize>().ok().filter(|i| *i < a.len()) {
                Some(i) => &mut a[i],
                None => return,
            },
            _ => return,
        };
    }
    match cur {
        Value::Object(m) => {
            m.insert(last.clone(), value);
        }
        Value::Array(a) => match last.parse::<usize>() {
            Ok(i) if i < a.len() => a[i] = value,
            _ => a.push(value),
        },
        _ => {}
    }
}

/// Removes the value at a pointer (nothing when it does not resolve).
pub(crate) fn remove(root: &mut Value, path: &str) {
    let tokens = tokens(path);
    let Some((last, parents)) = tokens.split_last() else { return };
    let mut cur = root;
    for t in parents {
        cur = match cur {
            Value::Object(m) => match m.get_mut(t) {
                Some(v) => v,
                None => return,
            },
            Value::Array(a) => match t.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(v) => v,
                None => return,
            },
            _ => return,
        };
    }
    match cur {
        Value::Object(m) => {
            m.remove(last);
        }
        Value::Array(a) => {
            if let Ok(i) = last.parse::<usize>()
                && i < a.len()
            {
                a.remove(i);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn port_path() -> FieldPath {
        let key = ItemKey::from_fields([("containerPort", &json!(8080)), ("protocol", &json!("TCP"))]);
        FieldPath::root()
            .field("spec")
            .field("template")
            .field("spec")
            .field("containers")
            .item(Some(0), Some(1), Some(ItemKey::from_fields([("name", &json!("web"))])))
            .field("ports")
            .item(Some(2), None, Some(key))
    }

    #[test]
    fn readable_form_names_keyed_items() {
        assert_eq!(
            port_path().to_string(),
            "spec.template.spec.containers[name=web].ports[containerPort=8080,protocol=TCP]"
        );
        let label = FieldPath::root().field("metadata").field("labels").field("app.kubernetes.io/name");
        assert_eq!(label.to_string(), "metadata.labels[\"app.kubernetes.io/name\"]");
        assert_eq!(crate::testing::path("/rules/0/verbs").to_string(), "rules[0].verbs");
    }

    /// A key's value that would read as more than one value, or holds a control character, is
    /// quoted.
    #[test]
    fn item_keys_quote_what_would_read_as_more() {
        let quoted = ItemKey::from_fields([("name", &json!("a,b=c]\u{1b}"))]);
        assert_eq!(quoted.to_string(), r#"name="a,b=c]\u001b""#);
        assert_eq!(ItemKey::from_fields([("name", &json!("web-1.x"))]).to_string(), "name=web-1.x");
    }

    #[test]
    fn pointers_resolve_on_the_side_that_holds_the_value() {
        let p = port_path();
        assert_eq!(p.live_pointer(), None);
        assert_eq!(p.recorded_pointer().as_deref(), Some("/spec/template/spec/containers/0/ports/2"));
        assert_eq!(p.pointer(), "/spec/template/spec/containers/0/ports/2");
        assert_eq!(p.live_insert_pointer().as_deref(), Some("/spec/template/spec/containers/1/ports/-"));
        let label = FieldPath::root().field("metadata").field("labels").field("app.kubernetes.io/name");
        assert_eq!(label.pointer(), "/metadata/labels/app.kubernetes.io~1name");
        assert_eq!(crate::testing::path(&label.pointer()), label);
    }

    #[test]
    fn pointer_helpers() {
        assert!(under("/spec/replicas", "/spec/replicas"));
        assert!(under("/spec/template/spec", "/spec/template"));
        assert!(!under("/spec/replicasX", "/spec/replicas"));
        assert!(under_pattern("/webhooks/3/clientConfig/caBundle", "/webhooks/*/clientConfig/caBundle"));
        assert!(under_pattern("/spec/replicas", "/spec/replicas"));
        assert!(!under_pattern("/spec", "/spec/replicas"));
        assert!(!under_pattern("/webhooks/3/name", "/webhooks/*/clientConfig"));
        assert!(reaches_below("/webhooks/*/clientConfig/caBundle", "/webhooks/10"));
        assert!(!reaches_below("/webhooks/*/clientConfig", "/webhooks/10/clientConfig"));
        let mut v = json!({"env": []});
        set(&mut v, "/env/-", json!({"name": "A"}));
        assert_eq!(v, json!({"env": [{"name": "A"}]}));
        remove(&mut v, "/env/0");
        assert_eq!(v, json!({"env": []}));
    }
}

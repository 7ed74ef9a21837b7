//! JSON pointers (RFC 6901) and how list elements are matched, like server-side apply's merge keys.

use serde_json::Value;

/// Appends one reference token to a pointer, escaping `~` and `/`.
pub fn join(path: &str, token: &str) -> String {
    format!("{path}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// Whether `path` is `prefix` or lies under it.
pub fn under(path: &str, prefix: &str) -> bool {
    path == prefix || (path.starts_with(prefix) && path[prefix.len()..].starts_with('/'))
}

/// The identity of an element of the list held by `field` (e.g. a container's `name`, a
/// volumeMount's `mountPath`), or `None` for lists compared by position.
pub fn element_key(field: &str, element: &Value) -> Option<String> {
    let obj = element.as_object()?;
    let text = |k: &str| obj.get(k).map(|v| v.to_string());
    match field {
        "volumeMounts" => text("mountPath"),
        "volumeDevices" => text("devicePath"),
        "hostAliases" => text("ip"),
        "ports" => text("containerPort").or_else(|| text("port")).map(|p| {
            let protocol = obj.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
            format!("{p}/{protocol}")
        }),
        _ => text("name"),
    }
}

/// Keys for every element, or `None` when any element has none (then the list is positional).
pub fn keys(field: &str, list: &[Value]) -> Option<Vec<String>> {
    list.iter().map(|e| element_key(field, e)).collect()
}

/// Whether a desired value means "nothing" (the server omits such fields when empty).
pub fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.values().all(is_empty),
    }
}

fn tokens(path: &str) -> Vec<String> {
    path.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~")).collect()
}

/// Sets the value at a JSON pointer, creating objects on the way; a `[key]` token appends.
pub fn set(root: &mut Value, path: &str, value: Value) {
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

pub fn remove(root: &mut Value, path: &str) {
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

    #[test]
    fn pointers_escape_and_nest() {
        assert_eq!(join("/metadata/labels", "app.kubernetes.io/name"), "/metadata/labels/app.kubernetes.io~1name");
        assert!(under("/spec/replicas", "/spec/replicas"));
        assert!(under("/spec/template/spec", "/spec/template"));
        assert!(!under("/spec/replicasX", "/spec/replicas"));
    }

    #[test]
    fn merge_keys() {
        assert_eq!(element_key("containers", &json!({"name": "web"})), Some("\"web\"".into()));
        assert_eq!(element_key("volumeMounts", &json!({"mountPath": "/d", "name": "v"})), Some("\"/d\"".into()));
        assert_eq!(element_key("ports", &json!({"containerPort": 80})), Some("80/TCP".into()));
        assert_eq!(element_key("ports", &json!({"port": 80, "protocol": "UDP"})), Some("80/UDP".into()));
        assert_eq!(keys("rules", &[json!({"verbs": ["get"]})]), None);
    }
}

//! How list items are matched, like server-side apply's merge keys, and what counts as an empty
//! value.

use crate::model::ItemKey;
use serde_json::Value;

/// The identity of an item of the list held by `field` (a container's `name`, a volumeMount's
/// `mountPath`, a port's number and protocol), or `None` for lists compared by position.
pub fn element_key(field: &str, element: &Value) -> Option<ItemKey> {
    let obj = element.as_object()?;
    let one = |k: &'static str| obj.get(k).map(|v| ItemKey::from_fields([(k, v)]));
    match field {
        "volumeMounts" => one("mountPath"),
        "volumeDevices" => one("devicePath"),
        "hostAliases" => one("ip"),
        "ports" => {
            let (name, number) = obj
                .get("containerPort")
                .map(|v| ("containerPort", v))
                .or_else(|| obj.get("port").map(|v| ("port", v)))?;
            let tcp = Value::String("TCP".into());
            let protocol = obj.get("protocol").unwrap_or(&tcp);
            Some(ItemKey::from_fields([(name, number), ("protocol", protocol)]))
        }
        _ => one("name"),
    }
}

/// Keys for every element, or `None` when any element has none (then the list is positional).
pub fn keys(field: &str, list: &[Value]) -> Option<Vec<ItemKey>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_keys() {
        let key = |f, v| element_key(f, &v).map(|k| k.to_string());
        assert_eq!(key("containers", json!({"name": "web"})).as_deref(), Some("name=web"));
        assert_eq!(key("volumeMounts", json!({"mountPath": "/d", "name": "v"})).as_deref(), Some("mountPath=/d"));
        assert_eq!(key("ports", json!({"containerPort": 80})).as_deref(), Some("containerPort=80,protocol=TCP"));
        assert_eq!(key("ports", json!({"port": 80, "protocol": "UDP"})).as_deref(), Some("port=80,protocol=UDP"));
        assert_eq!(keys("rules", &[json!({"verbs": ["get"]})]), None);
    }
}

//! How list items are matched, like server-side apply's merge keys, and what counts as an empty
//! value.

use crate::model::ItemKey;
use serde_json::Value;

/// The identity of an item of the list held by `field` (a container's `name`, a volumeMount's
/// `mountPath`, a port's number and protocol), or `None` for lists compared by position.
pub(crate) fn element_key(field: &str, element: &Value) -> Option<ItemKey> {
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
pub(crate) fn keys(field: &str, list: &[Value]) -> Option<Vec<ItemKey>> {
    list.iter().map(|e| element_key(field, e)).collect()
}

/// Pairs the items of two keyed lists: each item of `a` with the item of `b` that has its key
/// and the same rank among the items with that key. Kubernetes accepts a key twice (two env
/// entries named `MODE`, with a warning): the first `MODE` pairs with the first, the second with
/// the second. Returns the partner in `b` of each item of `a`, and the items of `b` left alone.
pub(crate) fn pair(a: &[ItemKey], b: &[ItemKey]) -> (Vec<Option<usize>>, Vec<usize>) {
    let mut in_b: std::collections::HashMap<&ItemKey, std::collections::VecDeque<usize>> = Default::default();
    for (j, key) in b.iter().enumerate() {
        in_b.entry(key).or_default().push_back(j);
    }
    let partners: Vec<Option<usize>> =
        a.iter().map(|key| in_b.get_mut(key).and_then(std::collections::VecDeque::pop_front)).collect();
    let mut alone: Vec<usize> = in_b.into_values().flatten().collect();
    alone.sort_unstable();
    (partners, alone)
}

/// Whether a desired value means "nothing" (the server omits such fields when empty).
pub(crate) fn is_empty(v: &Value) -> bool {
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

    #[test]
    fn repeated_keys_pair_by_their_rank_among_equals() {
        let k = |names: &[&str]| names.iter().map(|n| ItemKey::from_fields([("name", &json!(n))])).collect::<Vec<_>>();
        let (a, b) = (k(&["MODE", "X", "MODE"]), k(&["X", "MODE", "MODE", "MODE"]));
        assert_eq!(pair(&a, &b), (vec![Some(1), Some(0), Some(2)], vec![3]));
        assert_eq!(pair(&k(&["MODE", "MODE"]), &k(&["MODE"])), (vec![Some(0), None], vec![]));
        assert_eq!(pair(&k(&[]), &k(&["A"])), (vec![], vec![0]));
    }
}

//! What is secret, and the one way it is hidden in every output (text, diff, JSON, JUnit): a
//! core Secret's `data` and `stringData` values, and the `kubectl apply` annotation that copies
//! them. Never masked in the model: repair writes the real values.

use crate::model::ObjectId;
use crate::model::path::under;
use serde_json::Value;

/// What is shown instead of a secret value.
pub const HIDDEN: &str = "(hidden)";
/// What the live side of a diff shows for a secret value that differs from the record.
pub const HIDDEN_CHANGED: &str = "(hidden, differs)";

/// `kubectl apply`'s copy of the whole object, secret values included.
const LAST_APPLIED: &str = "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration";
/// Pointers whose values (and everything under them) are secret in a core Secret.
const SECRET_POINTERS: [&str; 3] = ["/data", "/stringData", LAST_APPLIED];

/// Whether the value at `pointer` in this object is (or holds) secret data.
pub fn is_secret(id: &ObjectId, pointer: &str) -> bool {
    id.is_secret() && SECRET_POINTERS.iter().any(|p| under(pointer, p) || under(p, pointer))
}

/// The value at `pointer` as it may be shown: secret values replaced by [`HIDDEN`] (a map of
/// them keeps its keys), everything else unchanged. `show` (`--show-secrets`) shows all.
pub fn mask(id: &ObjectId, pointer: &str, value: &Value, show: bool) -> Value {
    if show || !is_secret(id, pointer) {
        return value.clone();
    }
    let mut masked = value.clone();
    for p in SECRET_POINTERS {
        if let Some(inner) = p.strip_prefix(pointer).filter(|rest| rest.is_empty() || rest.starts_with('/')) {
            hide(&mut masked, inner, None);
        }
    }
    if SECRET_POINTERS.iter().any(|p| under(pointer, p) && pointer != *p) {
        masked = Value::String(HIDDEN.into());
    }
    masked
}

/// Both sides of a diff of one object with secret values hidden; a value that differs from
/// the other side reads [`HIDDEN_CHANGED`] on the live side, so the diff still shows it changed.
pub fn mask_pair(id: &ObjectId, recorded: &mut Value, live: &mut Value, show: bool) {
    if show || !id.is_secret() {
        return;
    }
    let original = recorded.clone();
    for p in SECRET_POINTERS {
        hide(recorded, p, None);
        hide(live, p, original.pointer(p));
    }
}

/// Replaces the value at `pointer` (each value of it, when a map) with the marker; `other` is
/// the same place on the other side, for marking values that differ.
fn hide(root: &mut Value, pointer: &str, other: Option<&Value>) {
    let Some(slot) = (if pointer.is_empty() { Some(root) } else { root.pointer_mut(pointer) }) else { return };
    let marker = |mine: &Value, theirs: Option<&Value>| {
        let differs = other.is_some() && theirs != Some(mine);
        Value::String(if differs { HIDDEN_CHANGED } else { HIDDEN }.into())
    };
    match slot {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                *v = marker(v, other.and_then(|o| o.get(k)));
            }
        }
        v => *v = marker(v, other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secret() -> ObjectId {
        ObjectId::new("v1", "Secret", Some("ns"), "creds")
    }

    /// The one test of what is secret.
    #[test]
    fn what_is_secret() {
        let s = secret();
        for p in ["/data", "/data/password", "/stringData/token", LAST_APPLIED, "", "/metadata/annotations"] {
            assert!(is_secret(&s, p), "{p}");
        }
        for p in ["/metadata/labels/app", "/type", "/metadata/annotations/owner"] {
            assert!(!is_secret(&s, p), "{p}");
        }
        let cm = ObjectId::new("v1", "ConfigMap", Some("ns"), "cfg");
        assert!(!is_secret(&cm, "/data/password"));
    }

    #[test]
    fn masks_values_keeps_keys() {
        let s = secret();
        assert_eq!(mask(&s, "/data/password", &json!("czNjcmV0"), false), json!(HIDDEN));
        assert_eq!(mask(&s, "/data/password", &json!("czNjcmV0"), true), json!("czNjcmV0"));
        assert_eq!(mask(&s, "/data", &json!({"a": "eA=="}), false), json!({"a": HIDDEN}));
        let whole = json!({"kind": "Secret", "data": {"a": "eA=="}, "metadata": {"name": "x"}});
        let masked = mask(&s, "", &whole, false);
        assert_eq!(masked["data"]["a"], HIDDEN);
        assert_eq!(masked["metadata"]["name"], "x");
        assert_eq!(mask(&s, "/metadata/labels/app", &json!("web"), false), json!("web"));
    }

    #[test]
    fn diff_sides_show_which_values_differ() {
        let mut r = json!({"data": {"password": "b2xk", "user": "YQ=="}});
        let mut l = json!({"data": {"password": "bmV3", "user": "YQ=="}});
        mask_pair(&secret(), &mut r, &mut l, false);
        assert_eq!(r, json!({"data": {"password": HIDDEN, "user": HIDDEN}}));
        assert_eq!(l, json!({"data": {"password": HIDDEN_CHANGED, "user": HIDDEN}}));
    }
}

//! What is secret, and the one way it is hidden in every output (text, diff, JSON, JUnit,
//! `render`): a core Secret's `data` and `stringData` values, and the annotations in which
//! `kubectl apply`, kapp and Rancher copy them. Never masked in the model: repair writes the real
//! values.

use crate::model::ObjectId;
use crate::model::path::under;
use serde_json::Value;

pub(crate) use crate::model::HIDDEN;
/// What the live side of a diff shows for a secret value that differs from the record.
pub(crate) const HIDDEN_CHANGED: &str = "(hidden, differs)";

use crate::model::SECRET_POINTERS;
#[cfg(test)]
const LAST_APPLIED: &str = SECRET_POINTERS[2];
#[cfg(test)]
const KAPP_ORIGINAL: &str = SECRET_POINTERS[3];
#[cfg(test)]
const RANCHER_APPLIED: &str = SECRET_POINTERS[4];

/// Whether the value at `pointer` in this object is (or holds) secret data.
pub(crate) fn is_secret(id: &ObjectId, pointer: &str) -> bool {
    id.is_secret_path(pointer)
}

/// The value at `pointer` as it may be shown: secret values replaced by [`HIDDEN`] (a map of
/// them keeps its keys), everything else unchanged. `show` (`--show-secrets`) shows all.
pub(crate) fn mask(id: &ObjectId, pointer: &str, value: &Value, show: bool) -> Value {
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
pub(crate) fn mask_pair(id: &ObjectId, recorded: &mut Value, live: &mut Value, show: bool) {
    if show || !id.is_secret() {
        return;
    }
    let original = recorded.clone();
    for p in SECRET_POINTERS {
        hide(recorded, p, None);
        hide(live, p, original.pointer(p));
    }
}

/// Two versions of one manifest document (stored and rendered; `None` when a side has none) as
/// they may be shown: a core Secret's values hidden as in every diff (a value that differs reads
/// [`HIDDEN_CHANGED`] on the rendered side), other documents unchanged. `show` shows all.
pub(crate) fn mask_documents(stored: Option<&str>, rendered: Option<&str>, show: bool) -> (String, String) {
    let text = |s: Option<&str>| s.unwrap_or_default().to_string();
    // A stored document is the record writer's: read through the one budgeted parser.
    let parse = |s: Option<&str>| {
        s.and_then(|t| crate::yaml::to_json_within(t, &mut crate::yaml::Budget::for_manifest(t.len())).ok())
    };
    let (a, b) = (parse(stored), parse(rendered));
    let secret = |v: &Option<Value>| v.as_ref().is_some_and(|v| v["kind"] == "Secret" && v["apiVersion"] == "v1");
    if show || !(secret(&a) || secret(&b)) {
        return (text(stored), text(rendered));
    }
    let id = ObjectId::new("v1", "Secret", None, "");
    let (mut a, mut b) = (a.unwrap_or(Value::Null), b.unwrap_or(Value::Null));
    mask_pair(&id, &mut a, &mut b, false);
    let yaml = |v: &Value, present: Option<&str>| match present {
        Some(_) => serde_yaml::to_string(v).unwrap_or_default().trim_end().to_string(),
        None => String::new(),
    };
    (yaml(&a, stored), yaml(&b, rendered))
}

/// What `helm` printed (a dry run's `MANIFEST:` and `HOOKS:` sections hold whole documents)
/// with the values of every core Secret document hidden, line by line: the text around the
/// documents (`NOTES:`) is not YAML, so the documents are not parsed. `show` shows all.
pub(crate) fn mask_helm_output(text: &str, show: bool) -> String {
    if show {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for doc in text.split_inclusive('\n').collect::<Vec<_>>().split_inclusive(|l| l.trim_end() == "---") {
        let secret = doc.iter().any(|l| l.trim_end() == "kind: Secret");
        let mut inside = false;
        for line in doc {
            let body = line.trim_end_matches(['\n', '\r']);
            let top = !body.starts_with([' ', '\t']) && !body.is_empty();
            if top {
                inside = false;
            }
            match body.split_once(':') {
                Some((key @ ("data" | "stringData"), rest)) if secret && top => {
                    if rest.trim().is_empty() {
                        inside = true;
                        out.push_str(line);
                    } else {
                        out.push_str(&format!("{key}: {HIDDEN}\n"));
                    }
                }
                Some((key, _)) if inside && !top => out.push_str(&format!("{key}: {HIDDEN}\n")),
                _ if inside && !top && !body.trim().is_empty() => out.push_str(&format!("  {HIDDEN}\n")),
                _ => out.push_str(line),
            }
        }
    }
    out
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
        for p in [
            "/data",
            "/data/password",
            "/stringData/token",
            LAST_APPLIED,
            "",
            "/metadata/annotations",
            KAPP_ORIGINAL,
            RANCHER_APPLIED,
        ] {
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

    #[test]
    fn rendered_secret_documents_are_masked_and_still_show_a_change() {
        let stored = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  password: b2xk\n  user: YWRt\n";
        let rendered = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  password: bmV3\n  user: YWRt\n";
        let (a, b) = mask_documents(Some(stored), Some(rendered), false);
        for t in [&a, &b] {
            assert!(!t.contains("b2xk") && !t.contains("bmV3") && !t.contains("YWRt"), "{t}");
        }
        assert!(b.contains("password: (hidden, differs)") && b.contains("user: (hidden)"), "{b}");
        let (only, _) = mask_documents(Some(stored), None, false);
        assert!(only.contains("password: (hidden)"), "{only}");
        assert_eq!(mask_documents(Some(stored), Some(rendered), true), (stored.to_string(), rendered.to_string()));
        let cm = "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n";
        assert_eq!(mask_documents(Some(cm), None, false).0, cm);
    }

    #[test]
    fn helm_output_hides_secret_documents_only() {
        let text = "NAME: web\nMANIFEST:\n---\n# Source: c/templates/s.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  password: \"aHVudGVy\"\n  multi: |\n    line1\nstringData: {token: abc}\n---\napiVersion: v1\nkind: ConfigMap\ndata:\n  shown: yes\n\nNOTES:\nhello\n";
        let masked = mask_helm_output(text, false);
        for secret in ["aHVudGVy", "line1", "abc"] {
            assert!(!masked.contains(secret), "{masked}");
        }
        assert!(masked.contains("  password: (hidden)\n") && masked.contains("stringData: (hidden)\n"), "{masked}");
        assert!(masked.contains("  shown: yes\n") && masked.contains("NOTES:\nhello\n"), "{masked}");
        assert_eq!(mask_helm_output(text, true), text);
    }
}

//! A drift signature: what an object drifted by (paths and hashes of the values on both sides),
//! derived from the verdict alone, so that the same drift gets the same signature after a resync
//! or a restart of the watcher. Never holds a value.

use crate::model::ObjectDrift;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The signature of a drifted object (hex, 64 characters); `None` when it does not count as drift.
pub fn of(object: &ObjectDrift) -> Option<String> {
    if !object.is_drift() {
        return None;
    }
    let mut parts: Vec<String> = Vec::new();
    parts.push(format!("object {} {}", object.id.api_version, object.id));
    parts.push(format!("verdict {}", object.kind().word()));
    for f in &object.fields {
        parts.push(format!("field {} {} {}", f.path.pointer(), hash(f.recorded.as_ref()), hash(f.live.as_ref())));
    }
    for a in &object.added {
        parts.push(format!("added {} {}", a.path.pointer(), hash(Some(&a.value))));
    }
    for d in &object.disowned {
        parts.push(format!("owned {} {}", d.path.pointer(), d.manager));
    }
    parts[2..].sort();
    let mut digest = Sha256::new();
    for p in &parts {
        digest.update(p.as_bytes());
        digest.update(b"\n");
    }
    Some(digest.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// A value's hash (absent values hash to `-`).
fn hash(value: Option<&Value>) -> String {
    match value {
        None => "-".into(),
        Some(v) => {
            let digest = Sha256::digest(v.to_string().as_bytes());
            digest.iter().take(12).map(|b| format!("{b:02x}")).collect()
        }
    }
}

/// The paths an object drifted by, as JSON pointers (for Events and logs: never values).
pub fn paths(object: &ObjectDrift) -> Vec<String> {
    let mut out: Vec<String> = object.fields.iter().map(|f| f.path.pointer()).collect();
    out.extend(object.added.iter().map(|a| a.path.pointer()));
    out.extend(object.disowned.iter().map(|d| d.path.pointer()));
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, FieldPath, ObjectId, Verdict};
    use serde_json::json;

    fn drifted(replicas: i64) -> ObjectDrift {
        let mut o =
            ObjectDrift::new(ObjectId::new("apps/v1", "Deployment", Some("ns"), "web"), None, Verdict::Modified);
        let path = FieldPath::from_pointer("/spec/replicas");
        o.fields.push(FieldDiff::new(path, Some(&json!(1)), Some(&json!(replicas))));
        o
    }

    #[test]
    fn same_drift_same_signature_other_value_other_signature() {
        assert_eq!(of(&drifted(3)), of(&drifted(3)));
        assert_ne!(of(&drifted(3)), of(&drifted(4)));
        assert_eq!(of(&drifted(3)).unwrap().len(), 64);
    }

    #[test]
    fn in_sync_has_no_signature_and_order_does_not_matter() {
        let o = ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some("ns"), "c"), None, Verdict::InSync);
        assert_eq!(of(&o), None);
        let mut a = drifted(3);
        a.fields.push(FieldDiff::new(FieldPath::from_pointer("/metadata/labels/x"), None, Some(&json!("y"))));
        let mut b = a.clone();
        b.fields.reverse();
        assert_eq!(of(&a), of(&b));
        assert_eq!(paths(&a), vec!["/spec/replicas", "/metadata/labels/x"]);
    }

    #[test]
    fn a_secret_value_is_only_hashed() {
        let mut o = ObjectDrift::new(ObjectId::new("v1", "Secret", Some("ns"), "s"), None, Verdict::Modified);
        o.fields.push(FieldDiff::new(
            FieldPath::from_pointer("/data/password"),
            Some(&json!("b2xk")),
            Some(&json!("c2VjcmV0")),
        ));
        let sig = of(&o).unwrap();
        assert!(!sig.contains("c2VjcmV0"));
        assert_eq!(paths(&o), vec!["/data/password"]);
    }
}

//! A drift signature: what an object drifted by (paths and keyed hashes of the values on both
//! sides), derived from the verdict alone, so that the same drift gets the same signature after a
//! resync or a restart of the watcher. Never holds a value, and is keyed (HMAC-SHA-256 with the
//! install's key): whoever reads Events or notifications cannot confirm a guessed value, nor
//! predict the name of the Event a drift will get.

use crate::digest::hex;
use crate::model::ObjectDrift;
use ring::hmac;
use serde_json::Value;
use std::sync::Arc;

/// Computes signatures with one key.
#[derive(Clone)]
pub(crate) struct Signer {
    key: Arc<hmac::Key>,
}

impl Signer {
    /// A signer keyed with `key` (at least 32 bytes are expected).
    pub(crate) fn new(key: &[u8]) -> Signer {
        Signer { key: Arc::new(hmac::Key::new(hmac::HMAC_SHA256, key)) }
    }

    /// The signature of a drifted object of a release (hex, 64 characters); `None` when it does
    /// not count as drift.
    pub(crate) fn of(&self, release: &crate::watch::keys::ReleaseKey, object: &ObjectDrift) -> Option<String> {
        signature(self, release, object)
    }

    fn mac(&self, data: &[u8]) -> Vec<u8> {
        hmac::sign(&self.key, data).as_ref().to_vec()
    }

    /// A value's keyed hash (absent values hash to `-`).
    fn hash(&self, value: Option<&Value>) -> String {
        match value {
            None => "-".into(),
            Some(v) => hex(&self.mac(v.to_string().as_bytes())[..12]),
        }
    }
}

/// Whether `text` has the shape of a signature: 64 lowercase hexadecimal digits.
pub(crate) fn well_formed(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn signature(signer: &Signer, release: &crate::watch::keys::ReleaseKey, object: &ObjectDrift) -> Option<String> {
    if !object.is_drift() {
        return None;
    }
    let hash = |v| signer.hash(v);
    let mut parts: Vec<String> = Vec::new();
    parts.push(format!("object {} {} of release {release}", object.id.api_version, object.id));
    parts.push(format!("verdict {}", object.drift_kind().word()));
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
    let text: String = parts.iter().map(|p| format!("{p}\n")).collect();
    Some(hex(&signer.mac(text.as_bytes())))
}

/// The paths an object drifted by, as JSON pointers (for Events and logs: never values).
pub(crate) fn paths(object: &ObjectDrift) -> Vec<String> {
    let mut out: Vec<String> = object.fields.iter().map(|f| f.path.pointer()).collect();
    out.extend(object.added.iter().map(|a| a.path.pointer()));
    out.extend(object.disowned.iter().map(|d| d.path.pointer()));
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, ObjectId, Verdict};
    use serde_json::json;

    fn drifted(replicas: i64) -> ObjectDrift {
        let mut o =
            ObjectDrift::new(ObjectId::new("apps/v1", "Deployment", Some("ns"), "web"), None, Verdict::Modified);
        let path = crate::testing::path("/spec/replicas");
        o.fields.push(FieldDiff::new(path, Some(&json!(1)), Some(&json!(replicas))));
        o
    }

    fn of(o: &ObjectDrift) -> Option<String> {
        Signer::new(b"0123456789abcdef0123456789abcdef").of(&crate::watch::keys::ReleaseKey::new("ns", "web"), o)
    }

    #[test]
    fn same_drift_same_signature_other_value_other_signature() {
        assert_eq!(of(&drifted(3)), of(&drifted(3)));
        assert_ne!(of(&drifted(3)), of(&drifted(4)));
        assert!(well_formed(&of(&drifted(3)).unwrap()));
    }

    #[test]
    fn another_key_another_signature() {
        let other = Signer::new(b"another key, another install....")
            .of(&crate::watch::keys::ReleaseKey::new("ns", "web"), &drifted(3));
        assert_ne!(of(&drifted(3)), other);
        let release = Signer::new(b"0123456789abcdef0123456789abcdef")
            .of(&crate::watch::keys::ReleaseKey::new("ns", "db"), &drifted(3));
        assert_ne!(of(&drifted(3)), release, "another release's drift is another drift");
    }

    #[test]
    fn hmac_sha256_as_rfc_4231_test_case_2() {
        let mac = Signer::new(b"Jefe").mac(b"what do ya want for nothing?");
        assert_eq!(hex(&mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn shapes_of_signatures() {
        assert!(well_formed(&"a1".repeat(32)));
        assert!(!well_formed("x"));
        assert!(!well_formed(&"A1".repeat(32)));
        assert!(!well_formed(&"é".repeat(32)));
    }

    #[test]
    fn in_sync_has_no_signature_and_order_does_not_matter() {
        let o = ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some("ns"), "c"), None, Verdict::InSync);
        assert_eq!(of(&o), None);
        let mut a = drifted(3);
        a.fields.push(FieldDiff::new(crate::testing::path("/metadata/labels/x"), None, Some(&json!("y"))));
        let mut b = a.clone();
        b.fields.reverse();
        assert_eq!(of(&a), of(&b));
        assert_eq!(paths(&a), vec!["/spec/replicas", "/metadata/labels/x"]);
    }

    #[test]
    fn a_secret_value_is_only_hashed() {
        let mut o = ObjectDrift::new(ObjectId::new("v1", "Secret", Some("ns"), "s"), None, Verdict::Modified);
        o.fields.push(FieldDiff::new(
            crate::testing::path("/data/password"),
            Some(&json!("b2xk")),
            Some(&json!("c2VjcmV0")),
        ));
        let sig = of(&o).unwrap();
        assert!(!sig.contains("c2VjcmV0"));
        assert_eq!(paths(&o), vec!["/data/password"]);
    }
}

//! The install's signature key: 32 random bytes kept in a Secret of the watcher's namespace
//! (`--signature-key-secret`), made by the first watcher that finds none, so that every replica
//! and every restart signs alike and no one without that Secret can derive a signature.

use crate::api::ApiError;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ObjectMeta, PostParams};
use std::collections::BTreeMap;

/// The data key holding the key.
const FIELD: &str = "key";
/// The shortest key taken from a Secret.
const MIN_LEN: usize = 32;

/// Where the key came from.
pub(crate) enum KeyOrigin {
    /// Read from the Secret, or created there now.
    Secret,
    /// The Secret could not be read or written: a key for this process alone (signatures change
    /// at the next start, so drift already reported is reported again).
    Process(KeyError),
}

/// Why the key in the cluster is not used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyError {
    /// The watcher's namespace is not named: the session's namespace may be a tenant's, who could
    /// plant a key they know.
    #[error(
        "the watcher's namespace is not named (--pause-namespace): a key in the session's namespace {namespace} \
         could be planted by whoever may write Secrets there"
    )]
    Unnamed { namespace: String },
    #[error("{at} holds no \"key\" of at least 32 bytes")]
    Short { at: String },
    #[error("cannot read {at}: {error}")]
    Unread { at: String, error: ApiError },
    #[error("cannot create {at}: {error}")]
    Uncreated { at: String, error: ApiError },
    #[error("{at} vanished")]
    Vanished { at: String },
}

/// A new random key.
pub(crate) fn random() -> Vec<u8> {
    crate::random::bytes::<MIN_LEN>().to_vec()
}

/// This process's key, made once: where no Secret holds the install's key, every watcher of the
/// process (one made again after a lease is lost and won back, a fleet member restarted) signs
/// with it, so a drift keeps its signature, and its one Event, for the life of the process.
pub(crate) fn for_process() -> Vec<u8> {
    static KEY: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    KEY.get_or_init(random).clone()
}

/// A fleet member's own key, derived from the fleet's (HMAC-SHA-256 of its name): the members
/// share no key, so what one member's cluster may read of its signatures (its Events) confirms
/// nothing about another member's values.
pub(crate) fn for_member(fleet: &[u8], member: &str) -> Vec<u8> {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, fleet);
    ring::hmac::sign(&key, format!("helm-drift member {member}").as_bytes()).as_ref().to_vec()
}

/// The key in Secret `namespace/name`, created when absent; a key for this process when the
/// Secret cannot be used (with the reason).
pub(crate) async fn load(client: &kube::Client, namespace: &str, name: &str) -> (Vec<u8>, KeyOrigin) {
    match read_or_create(client, namespace, name).await {
        Ok(key) => (key, KeyOrigin::Secret),
        Err(why) => (for_process(), KeyOrigin::Process(why)),
    }
}

#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn read_or_create(client: &kube::Client, namespace: &str, name: &str) -> Result<Vec<u8>, KeyError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let at = format!("Secret {namespace}/{name}");
    let read = |s: Secret| -> Result<Vec<u8>, KeyError> {
        let key = s.data.and_then(|mut d| d.remove(FIELD)).map(|b| b.0).unwrap_or_default();
        if key.len() < MIN_LEN {
            return Err(KeyError::Short { at: at.clone() });
        }
        Ok(key)
    };
    let get = || async {
        api.get_opt(name)
            .await
            .map_err(|e| KeyError::Unread { at: at.clone(), error: ApiError::from_kube(&e, "get", "secrets") })
    };
    if let Some(s) = get().await? {
        return read(s);
    }
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            labels: Some(BTreeMap::from([("app.kubernetes.io/name".to_string(), "helm-drift".to_string())])),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(FIELD.to_string(), ByteString(random()))])),
        type_: Some("Opaque".into()),
        ..Default::default()
    };
    match api.create(&PostParams::default(), &secret).await {
        Ok(s) => read(s),
        // Another replica made it first: use theirs.
        Err(kube::Error::Api(s)) if s.code == 409 => read(get().await?.ok_or(KeyError::Vanished { at: at.clone() })?),
        Err(e) => Err(KeyError::Uncreated { at: at.clone(), error: ApiError::from_kube(&e, "create", "secrets") }),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_process_signs_with_one_key_where_the_cluster_holds_none() {
        assert_eq!(super::for_process(), super::for_process());
        assert_eq!(super::for_process().len(), super::MIN_LEN);
    }

    #[test]
    fn random_keys_differ() {
        let (a, b) = (super::random(), super::random());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }

    #[test]
    fn each_member_of_a_fleet_signs_with_a_key_of_its_own() {
        let fleet = [7u8; 32];
        let (eu, us) = (super::for_member(&fleet, "fleet/eu"), super::for_member(&fleet, "fleet/us"));
        assert_eq!(eu.len(), 32);
        assert_ne!(eu, us);
        assert_ne!(eu, fleet.to_vec());
        assert_eq!(eu, super::for_member(&fleet, "fleet/eu"), "the same across restarts");
    }
}

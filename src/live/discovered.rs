//! Discovery results shared between sessions that found the same APIs: a fleet's members mostly
//! serve the same groups, versions and kinds, and each copy of a cluster's discovery is about
//! 40 KiB. A result is kept while a session holds it, found again by a keyed 128-bit fingerprint
//! of everything it says (groups, versions, each resource and its capabilities).

use kube::discovery::Discovery;
use std::collections::HashMap;
use std::fmt::Write;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::{Arc, Mutex, OnceLock, Weak};

type Fingerprint = (u64, u64);

/// The discoveries held now, by fingerprint (keyed at random per process, so that no API server
/// can choose a result that collides with another's).
struct Discoveries {
    keys: (RandomState, RandomState),
    found: Mutex<HashMap<Fingerprint, Weak<Discovery>>>,
}

fn held() -> &'static Discoveries {
    static HELD: OnceLock<Discoveries> = OnceLock::new();
    HELD.get_or_init(|| Discoveries { keys: (RandomState::new(), RandomState::new()), found: Mutex::default() })
}

/// `found`, or the same result another session holds.
pub(crate) fn shared(found: Discovery) -> Arc<Discovery> {
    let held = held();
    let key = fingerprint(&found, &held.keys);
    let mut all = held.found.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(same) = all.get(&key).and_then(Weak::upgrade) {
        return same;
    }
    all.retain(|_, w| w.strong_count() > 0);
    let found = Arc::new(found);
    all.insert(key, Arc::downgrade(&found));
    found
}

/// Two hashers fed the same text: what the discovery says, group by group.
struct Hashing(Box<dyn Hasher>, Box<dyn Hasher>);

impl Write for Hashing {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.write(s.as_bytes());
        self.1.write(s.as_bytes());
        Ok(())
    }
}

fn fingerprint(d: &Discovery, keys: &(RandomState, RandomState)) -> Fingerprint {
    let mut h = Hashing(Box::new(keys.0.build_hasher()), Box::new(keys.1.build_hasher()));
    // In name order: a discovery keeps its groups in a map of its own order.
    let mut groups: Vec<_> = d.groups().collect();
    groups.sort_by_key(|g| g.name());
    for group in groups {
        let _ = write!(h, "\0group {:?} preferred {:?}", group.name(), group.preferred_version());
        for version in group.versions() {
            let _ = write!(h, "\0version {version:?}");
            for (resource, caps) in group.versioned_resources(version) {
                let _ = write!(h, "\0{resource:?} {caps:?}");
            }
        }
    }
    (h.0.finish(), h.1.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A discovery as a cluster serving `kinds` (core/v1) answers it: parsing only, no cluster.
    #[expect(clippy::disallowed_methods, reason = "a canned answer, no cluster read")]
    async fn discovery(kinds: &[&str]) -> Discovery {
        let resources: Vec<_> = kinds
            .iter()
            .map(|k| json!({"resource": format!("{}s", k.to_lowercase()), "responseKind": {"group": "", "version": "v1", "kind": k}, "scope": "Namespaced", "verbs": ["get", "list", "watch"]}))
            .collect();
        let core = json!({"apiVersion": "apidiscovery.k8s.io/v2", "kind": "APIGroupDiscoveryList", "items": [
            {"metadata": {"name": ""}, "versions": [{"version": "v1", "resources": resources}]}]});
        // Groups besides the core one, which a discovery keeps in an order of its own.
        let groups: Vec<_> = ["a.example", "b.example", "c.example", "d.example", "e.example", "f.example"]
            .iter()
            .map(|g| json!({"metadata": {"name": g}, "versions": [{"version": "v1", "resources": [
                {"resource": "things", "responseKind": {"group": g, "version": "v1", "kind": "Thing"}, "scope": "Cluster", "verbs": ["get"]}]}]}))
            .collect();
        let others = json!({"apiVersion": "apidiscovery.k8s.io/v2", "kind": "APIGroupDiscoveryList", "items": groups});
        let service = tower::service_fn(move |r: http::Request<kube::client::Body>| {
            let body = if r.uri().path() == "/api" { core.to_string() } else { others.to_string() };
            async move {
                Ok::<_, std::convert::Infallible>(http::Response::new(kube::client::Body::from(body.into_bytes())))
            }
        });
        Discovery::new(kube::Client::new(service, "default")).run_aggregated().await.unwrap()
    }

    #[tokio::test]
    async fn sessions_that_found_the_same_apis_share_one_discovery_and_no_other() {
        let a = shared(discovery(&["ConfigMap", "Secret"]).await);
        for _ in 0..8 {
            let b = shared(discovery(&["ConfigMap", "Secret"]).await);
            assert!(Arc::ptr_eq(&a, &b), "the same APIs: one copy");
        }
        let b = shared(discovery(&["ConfigMap", "Secret"]).await);
        let c = shared(discovery(&["ConfigMap", "Secret", "Service"]).await);
        assert!(!Arc::ptr_eq(&a, &c), "one kind more: its own");
        let d = shared(discovery(&["ConfigMap", "Service"]).await);
        assert!(!Arc::ptr_eq(&c, &d) && !Arc::ptr_eq(&a, &d));
        assert!(d.groups().find(|g| g.name().is_empty()).is_some_and(|g| g.versioned_resources("v1").len() == 2));
        let weak = Arc::downgrade(&a);
        drop((a, b));
        assert!(weak.upgrade().is_none(), "kept only while a session holds it");
    }
}

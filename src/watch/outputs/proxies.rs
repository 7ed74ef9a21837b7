//! The releases of a fleet member that Cluster API's Helm add-on provider (CAAPH) installs, by
//! their `HelmReleaseProxy` in the management cluster: the revision judged is the one CAAPH
//! recorded, drift is also an Event on the proxy (where the platform team looks), and the
//! proxy's annotations (not the workload cluster's records) say whether it heals, how often.

use super::drift_events::{self, Recorded};
use crate::api::ApiError;
use crate::inventory::Proxy;
use crate::model::ObjectId;
use crate::watch::keys::ReleaseKey;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// The proxies of one member, and the management cluster's client their Events are written with.
pub(crate) struct Proxies {
    client: kube::Client,
    cluster: String,
    by_release: HashMap<ReleaseKey, Proxy>,
    /// Revisions found deployed that CAAPH did not record, said once each.
    said: Mutex<HashSet<(ReleaseKey, u32)>>,
}

impl Proxies {
    pub(crate) fn new(client: kube::Client, cluster: &str, proxies: Vec<Proxy>) -> Proxies {
        let by_release = proxies.into_iter().map(|p| (ReleaseKey::new(&p.release_namespace, &p.release), p)).collect();
        Proxies { client, cluster: cluster.to_string(), by_release, said: Mutex::default() }
    }

    pub(crate) fn of(&self, key: &ReleaseKey) -> Option<&Proxy> {
        self.by_release.get(key)
    }

    pub(crate) fn all(&self) -> impl Iterator<Item = (&ReleaseKey, &Proxy)> {
        self.by_release.iter()
    }

    /// Whether a revision CAAPH did not record is news (said once per release and revision).
    pub(crate) fn first_mismatch(&self, key: &ReleaseKey, deployed: u32) -> bool {
        self.said.lock().is_ok_and(|mut s| s.insert((key.clone(), deployed)))
    }

    /// Records an Event about a release's drift on its HelmReleaseProxy.
    pub(crate) async fn record(
        &self,
        key: &ReleaseKey,
        reason: &str,
        signature: &str,
        message: &str,
    ) -> Option<Result<Recorded, ApiError>> {
        let proxy = self.of(key)?;
        let id =
            ObjectId::new("addons.cluster.x-k8s.io/v1alpha1", "HelmReleaseProxy", Some(&proxy.namespace), &proxy.name);
        let message = format!("cluster {}: {message}", self.cluster);
        Some(drift_events::record(&self.client, (&id, proxy.uid.as_deref()), key, reason, signature, &message).await)
    }
}

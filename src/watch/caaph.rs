//! The room of CAAPH's releases: those of a fleet member that Cluster API's Helm add-on provider
//! installs, by their `HelmReleaseProxy` in the management cluster. The revision judged is the
//! one CAAPH recorded, drift is also an Event on the proxy (where the platform team looks, written
//! by the outputs), and the proxy's annotations (not the workload cluster's records) say whether
//! it heals, how often.

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
    fn first_mismatch(&self, key: &ReleaseKey, deployed: u32) -> bool {
        self.said.lock().is_ok_and(|mut s| s.insert((key.clone(), deployed)))
    }

    /// Where an Event about a release's drift goes in the management cluster: the client, the
    /// release's HelmReleaseProxy with its uid, and the message naming the member.
    pub(crate) fn subject(&self, key: &ReleaseKey, message: &str) -> Option<Subject<'_>> {
        let proxy = self.of(key)?;
        let id =
            ObjectId::new("addons.cluster.x-k8s.io/v1alpha1", "HelmReleaseProxy", Some(&proxy.namespace), &proxy.name);
        let message = format!("cluster {}: {message}", self.cluster);
        Some(Subject { client: &self.client, id, uid: proxy.uid.as_deref(), message })
    }

    /// Each proxied release with whether it heals and how often, as its proxy says.
    pub(crate) fn opt_ins(&self) -> impl Iterator<Item = (&ReleaseKey, bool, Option<std::time::Duration>)> {
        self.by_release.iter().map(|(key, p)| (key, p.repair, p.interval))
    }

    /// The revision deployed when it is not the one CAAPH recorded for `key`, the first time it
    /// is seen (said once per release and revision).
    pub(crate) fn unrecorded(&self, key: &ReleaseKey, deployed: u32) -> Option<u32> {
        let recorded = self.of(key)?.revision?;
        (recorded != deployed && self.first_mismatch(key, deployed)).then_some(deployed)
    }
}

/// An Event's place on a HelmReleaseProxy.
pub(crate) struct Subject<'a> {
    pub(crate) client: &'a kube::Client,
    pub(crate) id: ObjectId,
    pub(crate) uid: Option<&'a str>,
    pub(crate) message: String,
}

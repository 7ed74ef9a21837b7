//! The inventory kept from watches (bookmarks; a resync only as a watch's re-list): Cluster
//! API's Clusters, the metadata of the kubeconfig Secrets beside them and CAAPH's proxies, or
//! Argo CD's cluster Secrets. A change is told at once ([`InventoryFeed::changed`]); a kubeconfig is read
//! (one GET) only when its Secret's resourceVersion changes, so a fleet at rest asks the
//! management cluster nothing but its watches.

use super::entry::{Inventory, InventoryKind, Member, Proxy, Scope};
use super::unreachable::{Unreachable, Why};
use super::watch_store::{Named, NotListed, WatchStore};
use super::{argocd, caaph, capi};
use crate::api::{backed_off, not_served, scoped, scoped_with, watch_config};
use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DynamicObject};
use kube::config::Kubeconfig;
use kube::core::PartialObjectMeta;
use kube::runtime::watcher::{self, Event};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// A kubeconfig as read at a Secret's resourceVersion (or why it cannot be used).
type KubeconfigRead = (Option<String>, Result<Kubeconfig, Unreachable>);

/// What a watch says went wrong (the watch, the error), for the operator's log and metrics.
pub(crate) type Trouble = Arc<dyn Fn(&'static str, String) + Send + Sync>;

/// An Argo CD cluster Secret as kept: the member it amounts to, told apart by resourceVersion.
#[derive(Clone)]
struct ArgoEntry {
    version: Option<String>,
    member: Member,
}

impl PartialEq for ArgoEntry {
    fn eq(&self, other: &ArgoEntry) -> bool {
        self.version == other.version
    }
}

/// Everything the watches keep.
#[derive(Default)]
struct InventoryKept {
    /// Cluster API's Clusters: whether the control plane is ready.
    clusters: WatchStore<bool>,
    /// The `*-kubeconfig` Secrets' resourceVersions.
    secrets: WatchStore<Option<String>>,
    /// HelmChartProxies: the repair annotations a release proxy may take from them.
    charts: WatchStore<BTreeMap<String, String>>,
    /// HelmReleaseProxies, trimmed to what a proxy is read from.
    releases: WatchStore<Value>,
    /// Argo CD's cluster Secrets.
    argo: WatchStore<ArgoEntry>,
}

/// The inventory, kept from watches of the management cluster.
pub(crate) struct InventoryFeed {
    kept: Arc<Mutex<InventoryKept>>,
    changed: watch::Receiver<u64>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    client: kube::Client,
    source: InventoryKind,
    /// Each Cluster's kubeconfig, as read at its Secret's resourceVersion.
    kubeconfigs: Mutex<BTreeMap<Named, KubeconfigRead>>,
}

impl Drop for InventoryFeed {
    fn drop(&mut self) {
        self.tasks.iter().for_each(tokio::task::JoinHandle::abort);
    }
}

/// How often a kind not served (CAAPH not installed) is asked for again.
const NOT_SERVED_AGAIN: std::time::Duration = std::time::Duration::from_secs(300);

fn dynamic(client: &kube::Client, scope: &Scope, resource: &kube::api::ApiResource) -> Api<DynamicObject> {
    scoped_with(client, scope.namespace.as_deref(), resource)
}

impl InventoryFeed {
    /// Starts the watches of `source` in `scope` (`trouble` hears of each watch that fails,
    /// once until it works again).
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    pub(crate) fn start(
        client: &kube::Client,
        source: InventoryKind,
        scope: &Scope,
        trouble: Trouble,
    ) -> InventoryFeed {
        let kept = Arc::new(Mutex::new(InventoryKept::default()));
        let (tx, changed) = watch::channel(0u64);
        let tx = Arc::new(tx);
        let on = On { kept: kept.clone(), tx, trouble };
        let selected = |config: watcher::Config| match &scope.selector {
            Some(s) => config.labels(s),
            None => config,
        };
        let tasks = match source {
            InventoryKind::Capi => {
                let clusters = dynamic(client, scope, &capi::clusters());
                // Metadata only: a Secret's data is read when its resourceVersion changes.
                let secrets: Api<PartialObjectMeta<Secret>> = scoped(client, scope.namespace.as_deref());
                let charts = dynamic(client, scope, &caaph::resource("HelmChartProxy", "helmchartproxies"));
                let releases = dynamic(client, scope, &caaph::resource("HelmReleaseProxy", "helmreleaseproxies"));
                vec![
                    on.follow(
                        watcher::watcher(clusters, selected(watch_config())),
                        "Clusters",
                        |k| &mut k.clusters,
                        false,
                        |c| capi::cluster_of(c).map(|(ns, name, ready)| ((ns, name), ready)),
                    ),
                    on.follow(
                        watcher::watcher(secrets, watch_config()),
                        "kubeconfig Secrets",
                        |k| &mut k.secrets,
                        false,
                        |s| {
                            let (ns, name) = (s.metadata.namespace?, s.metadata.name?);
                            name.ends_with("-kubeconfig").then_some(((ns, name), s.metadata.resource_version))
                        },
                    ),
                    on.follow(
                        watcher::watcher(charts, watch_config()),
                        "HelmChartProxies",
                        |k| &mut k.charts,
                        true,
                        caaph::chart_says,
                    ),
                    on.follow(
                        watcher::watcher(releases, watch_config()),
                        "HelmReleaseProxies",
                        |k| &mut k.releases,
                        true,
                        trimmed,
                    ),
                ]
            }
            InventoryKind::Argocd => {
                let selector = match &scope.selector {
                    Some(s) => format!("{},{s}", argocd::SECRET_TYPE),
                    None => argocd::SECRET_TYPE.to_string(),
                };
                let secrets: Api<Secret> = scoped(client, scope.namespace.as_deref());
                vec![on.follow(
                    watcher::watcher(secrets, watch_config().labels(&selector)),
                    "Argo CD cluster Secrets",
                    |k| &mut k.argo,
                    false,
                    |s: Secret| {
                        let version = s.metadata.resource_version.clone();
                        let member = argocd::member_of(s)?;
                        let key = member.name.split_once('/').map(|(a, b)| (a.to_string(), b.to_string()))?;
                        Some((key, ArgoEntry { version, member }))
                    },
                )]
            }
        };
        InventoryFeed { kept, changed, tasks, client: client.clone(), source, kubeconfigs: Mutex::new(BTreeMap::new()) }
    }

    /// Resolves when what the watches keep has changed since this was last asked.
    pub(crate) async fn changed(&mut self) {
        if self.changed.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// The inventory as the watches keep it now (a kubeconfig read only where its Secret
    /// changed), or which watch has not listed yet.
    pub(crate) async fn read(&self) -> Result<Inventory, NotListed> {
        match self.source {
            InventoryKind::Argocd => {
                let kept = self.kept.lock().expect("inventory lock");
                kept.argo.listed("Argo CD cluster Secrets")?;
                let members = kept.argo.live.values().map(|e| e.member.clone()).collect();
                Ok(Inventory { members, ..Inventory::default() })
            }
            InventoryKind::Capi => self.capi().await,
        }
    }

    async fn capi(&self) -> Result<Inventory, NotListed> {
        let (clusters, secrets, releases) = {
            let kept = self.kept.lock().expect("inventory lock");
            kept.clusters.listed("Clusters")?;
            kept.secrets.listed("kubeconfig Secrets")?;
            kept.charts.listed("HelmChartProxies")?;
            kept.releases.listed("HelmReleaseProxies")?;
            let releases: Vec<(String, Proxy)> = kept
                .releases
                .live
                .values()
                .filter_map(|v| serde_json::from_value::<DynamicObject>(v.clone()).ok())
                .filter_map(|o| caaph::proxy(&o, &kept.charts.live))
                .collect();
            (kept.clusters.live.clone(), kept.secrets.live.clone(), releases)
        };
        let mut out = Inventory::default();
        for ((namespace, name), ready) in clusters {
            let member = format!("{namespace}/{name}");
            if !ready {
                out.skipped.push((member, "its control plane is not ready".into()));
                continue;
            }
            let secret = (namespace.clone(), format!("{name}-kubeconfig"));
            let kubeconfig = match secrets.get(&secret) {
                None => Err(Unreachable::new(&format!("Secret {namespace}/{}", secret.1), Why::NoSecret)),
                Some(version) => self.kubeconfig(&namespace, &name, version).await,
            };
            out.members.push(Member { name: member, kubeconfig, proxies: Vec::new(), proxies_past_cap: Vec::new() });
        }
        let known: Vec<Named> =
            out.members.iter().filter_map(|m| m.name.split_once('/')).map(|(a, b)| (a.into(), b.into())).collect();
        self.kubeconfigs.lock().expect("kubeconfig lock").retain(|k, _| known.contains(k));
        caaph::give(&mut out, releases);
        Ok(out)
    }

    /// Cluster `namespace/name`'s kubeconfig at its Secret's `version`: read once per version.
    async fn kubeconfig(
        &self,
        namespace: &str,
        name: &str,
        version: &Option<String>,
    ) -> Result<Kubeconfig, Unreachable> {
        let key = (namespace.to_string(), name.to_string());
        if let Some((v, read)) = self.kubeconfigs.lock().expect("kubeconfig lock").get(&key)
            && v == version
        {
            return read.clone();
        }
        let read = capi::reach(&self.client, namespace, name).await;
        self.kubeconfigs.lock().expect("kubeconfig lock").insert(key, (version.clone(), read.clone()));
        read
    }
}

/// A HelmReleaseProxy trimmed to what [`caaph::proxy`] reads (its values can be large).
fn trimmed(o: DynamicObject) -> Option<(Named, Value)> {
    let key = (o.metadata.namespace.clone()?, o.metadata.name.clone()?);
    let spec = o.data.get("spec");
    let at = |p: &str| spec.and_then(|s| s.pointer(p)).cloned().unwrap_or(Value::Null);
    let value = json!({
        "apiVersion": "addons.cluster.x-k8s.io/v1alpha1", "kind": "HelmReleaseProxy",
        "metadata": {"name": key.1, "namespace": key.0, "uid": o.metadata.uid,
            "labels": o.metadata.labels, "annotations": o.metadata.annotations},
        "spec": {"clusterRef": at("/clusterRef"), "releaseName": at("/releaseName"), "namespace": at("/namespace")},
        "status": {"revision": o.data.pointer("/status/revision").cloned().unwrap_or(Value::Null)},
    });
    Some((key, value))
}

/// Where each watch's events go.
struct On {
    kept: Arc<Mutex<InventoryKept>>,
    tx: Arc<watch::Sender<u64>>,
    trouble: Trouble,
}

impl On {
    /// Follows one watch into its store (`keep`: an object as kept, none to leave it out);
    /// `absent_is_empty`: a kind not served is none of it (CAAPH's, when CAAPH is not there).
    fn follow<K, T, S>(
        &self,
        stream: S,
        watch: &'static str,
        store: fn(&mut InventoryKept) -> &mut WatchStore<T>,
        absent_is_empty: bool,
        keep: fn(K) -> Option<(Named, T)>,
    ) -> tokio::task::JoinHandle<()>
    where
        S: Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
        K: Send + 'static,
        T: PartialEq + Send + 'static,
    {
        let (kept, tx, trouble) = (self.kept.clone(), self.tx.clone(), self.trouble.clone());
        let stream = backed_off(stream, absent_is_empty.then_some(NOT_SERVED_AGAIN));
        tokio::spawn(async move {
            futures::pin_mut!(stream);
            let mut failing = false;
            while let Some(item) = stream.next().await {
                let changed = match item {
                    Ok(event) => {
                        failing = false;
                        let event = match event {
                            Event::Init => Event::Init,
                            Event::InitDone => Event::InitDone,
                            Event::InitApply(o) => Event::InitApply(keep(o)),
                            Event::Apply(o) => Event::Apply(keep(o)),
                            Event::Delete(o) => Event::Delete(keep(o)),
                        };
                        store(&mut kept.lock().expect("inventory lock")).take(event)
                    }
                    Err(e) if absent_is_empty && not_served(&e) => {
                        store(&mut kept.lock().expect("inventory lock")).absent()
                    }
                    Err(e) => {
                        store(&mut kept.lock().expect("inventory lock")).last = Some(e.to_string());
                        if !failing {
                            trouble(watch, e.to_string());
                        }
                        failing = true;
                        false
                    }
                };
                if changed {
                    tx.send_modify(|n| *n = n.wrapping_add(1));
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_proxy_is_kept_as_what_it_is_read_from() {
        let o: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "addons.cluster.x-k8s.io/v1alpha1", "kind": "HelmReleaseProxy",
            "metadata": {"name": "p", "namespace": "fleet", "uid": "u"},
            "spec": {"clusterRef": {"name": "eu"}, "releaseName": "r", "namespace": "apps", "values": "x: 1\n".repeat(1000)},
            "status": {"revision": 4}
        }))
        .unwrap();
        let (k, v) = trimmed(o).unwrap();
        assert_eq!(k, ("fleet".to_string(), "p".to_string()));
        assert!(v["spec"].get("values").is_none(), "its values are not kept");
        let back: DynamicObject = serde_json::from_value(v).unwrap();
        let (cluster, p) = caaph::proxy(&back, &BTreeMap::new()).unwrap();
        assert_eq!((cluster.as_str(), p.release.as_str(), p.revision), ("fleet/eu", "r", Some(4)));
    }
}

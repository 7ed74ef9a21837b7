//! A connection for a run: the cluster, Helm's storage and discovery, made once; and the live
//! objects read during the run.

use crate::api as cluster;
use crate::live;
use crate::release::{ReleaseIndex, Storage};
use crate::settings::Settings;
use anyhow::{Context, Result};

/// Its state is its own: read through its methods, the live cache forgotten only by
/// [`Session::forget_live`], discovery replaced only by [`Session::rediscovered`].
pub(crate) struct Session {
    cluster: cluster::Cluster,
    storage: Storage,
    /// Shared with the other sessions that found the same APIs (a fleet's members).
    discovery: std::sync::Arc<kube::Discovery>,
    /// The namespace from `-n` / `HELM_NAMESPACE`, else the kubeconfig context's.
    namespace: String,
    /// Live objects read for this run.
    live: live::LiveCache,
    /// Earlier runs of hooks read (`--hooks`), by revision.
    hook_runs: super::hook_runs::EarlierRuns,
}

impl Session {
    pub(crate) async fn open(settings: &Settings) -> Result<Session> {
        let cluster = cluster::connect(&settings.connection).await?;
        let namespace = settings.namespace.clone().unwrap_or_else(|| cluster.default_namespace.clone());
        let storage = Storage::open(cluster.client.clone(), settings.driver, settings.sql_connection.as_deref())
            .await?
            .trusting(settings.trust.namespaces.clone());
        let discovery = live::discover(&cluster.client).await.with_context(|| {
            let timeout = settings.connection.timeout.map_or(String::new(), |t| format!(", {t:?} per request"));
            format!("cannot reach the cluster at {} (API discovery failed, retried{timeout})", cluster.server)
        })?;
        Ok(Session { cluster, storage, discovery, namespace, live: Default::default(), hook_runs: Default::default() })
    }

    /// A session from its parts, nothing read (tests that put a watcher together offline).
    #[cfg(test)]
    pub(crate) fn from_parts(cluster: cluster::Cluster, storage: Storage, discovery: kube::Discovery) -> Session {
        let discovery = std::sync::Arc::new(discovery);
        let namespace = cluster.default_namespace.clone();
        Session { cluster, storage, discovery, namespace, live: Default::default(), hook_runs: Default::default() }
    }

    pub(crate) fn cluster(&self) -> &cluster::Cluster {
        &self.cluster
    }

    pub(crate) fn client(&self) -> &kube::Client {
        &self.cluster.client
    }

    pub(crate) fn storage(&self) -> &Storage {
        &self.storage
    }

    pub(crate) fn discovery(&self) -> &kube::Discovery {
        &self.discovery
    }

    pub(crate) fn namespace(&self) -> &str {
        &self.namespace
    }

    pub(crate) fn live(&self) -> &live::LiveCache {
        &self.live
    }

    pub(crate) fn hook_runs(&self) -> &super::hook_runs::EarlierRuns {
        &self.hook_runs
    }

    /// The cluster's APIs read again (a repair that created a CRD serves new kinds).
    pub(crate) fn rediscovered(&mut self, discovery: std::sync::Arc<kube::Discovery>) {
        self.discovery = discovery;
    }

    /// The stored revisions of one release in the session's namespace.
    pub(crate) async fn history(&self, release: &str) -> Result<ReleaseIndex> {
        self.storage
            .history(&self.namespace, release)
            .await
            .with_context(|| format!("cannot read release {release:?} (cluster {})", self.cluster.server))
    }

    /// The cluster as `helm template` should see it: its version and every served API version
    /// (and `group/version/Kind`).
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    pub(crate) async fn capabilities(&self) -> Result<crate::helm::Capabilities> {
        let kube_version = self
            .cluster
            .client
            .apiserver_version()
            .await
            .map_err(|e| crate::api::ApiError::from_kube(&e, "get", "/version"))
            .context("reading the cluster's version")?
            .git_version;
        let mut api_versions = Vec::new();
        for group in self.discovery.groups() {
            for v in group.versions() {
                let gv = if group.name().is_empty() { v.to_string() } else { format!("{}/{v}", group.name()) };
                for (ar, _) in group.versioned_resources(v) {
                    api_versions.push(format!("{gv}/{}", ar.kind));
                }
                api_versions.push(gv);
            }
        }
        Ok(crate::helm::Capabilities { kube_version, api_versions })
    }

    /// Forgets the live objects read so far (to read repaired objects afresh).
    pub(crate) fn forget_live(&mut self) {
        self.live = Default::default();
    }
}

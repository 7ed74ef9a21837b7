//! What an inventory holds: where it comes from, which entries are read, and each cluster
//! with how it is reached.

use kube::config::Kubeconfig;

/// Where a fleet's clusters come from (`--clusters`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InventoryKind {
    /// Cluster API: `Cluster` objects with a ready control plane, reached through their
    /// `<cluster>-kubeconfig` Secret.
    Capi,
    /// Argo CD: its cluster Secrets (`argocd.argoproj.io/secret-type: cluster`), each holding
    /// its server and inline credentials.
    Argocd,
}

impl InventoryKind {
    /// Every source, in the order `--clusters` lists them: adding one is its reader and a row
    /// here and in [`InventoryKind::about`].
    pub(crate) const ALL: [InventoryKind; 2] = [InventoryKind::Capi, InventoryKind::Argocd];

    /// `(--clusters name, what it lists for messages, the namespace it is read in by default)`.
    fn about(self) -> (&'static str, &'static str, Option<&'static str>) {
        match self {
            InventoryKind::Capi => ("capi", "Cluster API Clusters", None),
            // Argo CD reads its cluster Secrets only in its own namespace.
            InventoryKind::Argocd => ("argocd", "Argo CD cluster Secrets", Some("argocd")),
        }
    }

    /// Its `--clusters` name.
    pub(crate) fn name(self) -> &'static str {
        self.about().0
    }

    /// What the inventory lists, for messages.
    pub(crate) fn entries(self) -> &'static str {
        self.about().1
    }

    /// The namespace it is read in when `--clusters-namespace` does not say (`None`: it must).
    pub(crate) fn default_namespace(self) -> Option<&'static str> {
        self.about().2
    }

    /// The source a `--clusters` name names.
    pub(crate) fn named(name: &str) -> Option<InventoryKind> {
        InventoryKind::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Which inventory entries to read: a namespace (else every one the identity may list) and a
/// label selector.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    pub(crate) namespace: Option<String>,
    pub(crate) selector: Option<String>,
}

/// One cluster of the inventory: its name (`namespace/name`) and how to reach it, or why it
/// cannot be reached.
#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub(crate) name: String,
    pub(crate) kubeconfig: Result<Kubeconfig, super::Unreachable>,
    /// The Helm releases Cluster API's Helm add-on provider (CAAPH) installs on it.
    pub(crate) proxies: Vec<Proxy>,
    /// The HelmReleaseProxies naming it past [`super::caaph::MAX_PROXIES_PER_MEMBER`]
    /// (`namespace/name`): not watched, and said.
    pub(crate) proxies_past_cap: Vec<String>,
}

/// A CAAPH `HelmReleaseProxy`: the release it names on its workload cluster, the revision CAAPH
/// recorded, and how the platform team asked for its drift to be corrected (annotations on it
/// or its `HelmChartProxy`, in the management cluster, which the workload cluster's tenants
/// cannot write).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Proxy {
    /// The HelmReleaseProxy (`namespace`, `name`, `uid`) in the management cluster.
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) uid: Option<String>,
    /// The HelmChartProxy it was made from.
    pub(crate) chart_proxy: Option<String>,
    pub(crate) release_namespace: String,
    pub(crate) release: String,
    /// `status.revision`: the revision CAAPH installed, the one judged.
    pub(crate) revision: Option<u32>,
    /// `helm-drift.io/repair: "true"` (the HelmReleaseProxy's annotation, else its
    /// HelmChartProxy's).
    pub(crate) repair: bool,
    /// `helm-drift.io/repair-interval`: at least this long between two repairs.
    pub(crate) interval: Option<std::time::Duration>,
    /// That annotation when it cannot be read (the default interval applies, and the watcher
    /// says so).
    pub(crate) interval_unread: Option<String>,
}

/// The clusters to look at, and those left out with the reason (a control plane not ready).
#[derive(Clone, Debug, Default)]
pub(crate) struct Inventory {
    pub(crate) members: Vec<Member>,
    pub(crate) skipped: Vec<(String, String)>,
}

//! `plan --helmchartproxy`: what Cluster API's Helm add-on provider (CAAPH) will do on every
//! workload cluster a HelmChartProxy selects, from the management cluster or a changed one
//! from a file (a pull request). For each selected Cluster, as CAAPH decides it: paused or
//! being deleted is skipped; an `InstallOnce` release installed is left alone; a changed chart
//! name, repository, release name or namespace is a reinstall; else the values template is
//! executed over the Cluster (and its control plane and infrastructure objects), and the
//! release is installed, or upgraded when its chart version or values differ from its record's
//! (or it failed), else left as it is. A release on a cluster no longer selected is
//! uninstalled. Each upgrade is then planned by `plan` on that cluster, reached through its
//! kubeconfig Secret, as the Helm 3 SDK applies it.

mod member;
mod proxy;
mod reads;
mod template;

pub(crate) use proxy::ChartProxySource;

use super::PlanRequest;
use crate::engine::Session;
use crate::model::{ClusterOutcome, ClusterPlan, FleetPlan, NotRun};
use crate::settings::Settings;
use anyhow::Result;
use member::{Fleet, Workload};
use proxy::{ChartProxy, PAUSED, ProxyError};
use serde_json::Value;

/// The plan of every cluster the HelmChartProxy `source` names reaches, read through `mgmt`
/// (the management cluster), from `base` (the helm, the chart if given).
pub(crate) async fn fleet(
    mgmt: &Session,
    settings: &Settings,
    base: &PlanRequest,
    source: &ChartProxySource,
) -> Result<FleetPlan> {
    let namespace = mgmt.namespace();
    let (object, from) = match source {
        ChartProxySource::Cluster(name) => {
            let read = reads::chart_proxy(mgmt.client(), namespace, name).await.map_err(|e| {
                ProxyError::Unreadable { namespace: namespace.into(), name: name.clone(), why: e.to_string() }
            })?;
            (read, "the management cluster".to_string())
        }
        ChartProxySource::File { path, name } => {
            (proxy::from_file(path, name.as_deref(), namespace)?, path.display().to_string())
        }
    };
    let from_file = matches!(source, ChartProxySource::File { .. }).then(|| from.clone());
    let proxy = ChartProxy::from_json(&object, namespace)?;
    let clusters = reads::clusters(mgmt.client(), &proxy.namespace, &proxy.selector).await?;
    let proxies = reads::release_proxies(mgmt.client(), &proxy.namespace, &proxy.name).await?;
    let (chart, chart_flags, mut notes) = chart_of(&proxy, base);
    // The proxy's own chart is fetched in an empty directory: its name is never a local path.
    let empty = tempfile::Builder::new().prefix("helm-drift-chart-").tempdir()?;
    let helm = if base.chart.is_empty() { base.helm.in_dir(empty.path()) } else { base.helm.clone() };
    let chart_version = helm.chart_version(&chart, &chart_flags).await?;
    notes.push(format!(
        "values from its valuesTemplate, executed by Helm's engine (Go text/template and Sprig, as CAAPH's); chart {chart} {chart_version}; applied as CAAPH's Helm 3 SDK applies (three-way merge)"
    ));
    let fleet = Fleet { mgmt, settings, base, proxy, proxies, chart, chart_flags, chart_version, helm, from_file };
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(FLEET_SECONDS);
    for cluster in &clusters {
        out.push(ClusterPlan { cluster: id(cluster), outcome: within(deadline, fleet.selected(cluster)).await });
    }
    if !fleet.proxy.install_once {
        let selected: Vec<String> = clusters.iter().map(id).collect();
        for orphan in fleet.proxies.iter().filter(|p| !selected.contains(&p.cluster)) {
            let outcome = within(deadline, fleet.orphan(orphan)).await;
            out.push(ClusterPlan { cluster: orphan.cluster.clone(), outcome });
        }
    }
    Ok(FleetPlan { proxy: fleet.proxy.id(), source: from, clusters: out, notes })
}

/// The longest one HelmChartProxy's plan takes over all its clusters (each helm run is bounded
/// too): the clusters left when it is spent are not planned, and said.
const FLEET_SECONDS: u64 = 1800;

/// One cluster's plan, unless the fleet's time is spent first (its helm is stopped then).
async fn within(
    deadline: tokio::time::Instant,
    plan: impl std::future::Future<Output = ClusterOutcome>,
) -> ClusterOutcome {
    tokio::time::timeout_at(deadline, plan).await.unwrap_or_else(|_| {
        ClusterOutcome::NotRun(NotRun(format!(
            "not planned: the plan's time ({FLEET_SECONDS} s for every cluster of the HelmChartProxy) was spent first"
        )))
    })
}

/// `namespace/name` of an object.
fn id(object: &Value) -> String {
    format!("{}/{}", text(object, "/metadata/namespace"), text(object, "/metadata/name"))
}

/// The text at `pointer`, empty when none.
fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// The chart to plan: the one given (a checkout's), else the proxy's own (`oci://repo/name`,
/// or `name` of the repository `repoURL`), at the proxy's version.
fn chart_of(proxy: &ChartProxy, base: &PlanRequest) -> (String, Vec<String>, Vec<String>) {
    let mut flags: Vec<String> = proxy.version.iter().map(|v| format!("--version={v}")).collect();
    if !base.chart.is_empty() {
        let note = format!("the chart given ({}) stands for {} of {}", base.chart, proxy.chart_name, proxy.repo_url);
        return (base.chart.clone(), flags, vec![note]);
    }
    if proxy.repo_url.starts_with("oci://") {
        return (format!("{}/{}", proxy.repo_url.trim_end_matches('/'), proxy.chart_name), flags, Vec::new());
    }
    flags.push(format!("--repo={}", proxy.repo_url));
    (proxy.chart_name.clone(), flags, Vec::new())
}

impl Fleet<'_> {
    /// What CAAPH does on one selected Cluster.
    async fn selected(&self, cluster: &Value) -> ClusterOutcome {
        let paused = cluster.pointer(&format!("/metadata/annotations/{}", PAUSED.replace('/', "~1"))).is_some()
            || cluster.pointer("/spec/paused") == Some(&Value::Bool(true));
        if self.proxy.paused || paused {
            return ClusterOutcome::Skipped("paused (cluster.x-k8s.io/paused): CAAPH does not reconcile it".into());
        }
        if cluster.pointer("/metadata/deletionTimestamp").is_some() {
            return ClusterOutcome::Skipped("the Cluster is being deleted".into());
        }
        let existing = self.proxies.iter().find(|p| p.cluster == id(cluster));
        if self.proxy.install_once && existing.is_some_and(|e| e.installed) {
            return ClusterOutcome::Untouched(
                "reconcileStrategy InstallOnce: installed once, CAAPH never upgrades it (today's drift stays)".into(),
            );
        }
        let reinstall = existing.is_some_and(|e| !self.proxy.install_once && self.changes_identity(e));
        // CAAPH executes the values template first: a template that fails stops it there.
        let values = match self.values(cluster).await {
            Ok(values) => values,
            Err(outcome) => return outcome,
        };
        let status = cluster.get("status").cloned().unwrap_or(Value::Null);
        if !crate::inventory::control_plane_ready(&status) {
            return ClusterOutcome::Skipped("its control plane is not initialized: CAAPH installs once it is".into());
        }
        let release_namespace = match existing.filter(|_| !reinstall) {
            Some(e) if !e.release_namespace.is_empty() => e.release_namespace.clone(),
            _ => self.proxy.release_namespace.clone(),
        };
        let (namespace, name) = (text(cluster, "/metadata/namespace"), text(cluster, "/metadata/name"));
        match Workload::connect(self, namespace, name, &release_namespace).await {
            Ok(m) => m.plan(self, existing, reinstall, &values).await,
            Err(outcome) => outcome,
        }
    }

    /// The values CAAPH writes for `cluster`: its values template executed over the Cluster,
    /// and the control plane and infrastructure objects it refers to (CAAPH fails when one
    /// cannot be read).
    async fn values(&self, cluster: &Value) -> Result<String, ClusterOutcome> {
        let mut data = serde_json::json!({ "Cluster": cluster });
        let namespace = text(cluster, "/metadata/namespace");
        for (key, pointer) in [("ControlPlane", "/spec/controlPlaneRef"), ("InfraCluster", "/spec/infrastructureRef")] {
            let Some(reference) = cluster.pointer(pointer).filter(|r| !text(r, "/name").is_empty()) else { continue };
            match reads::referenced(self.mgmt.client(), namespace, reference).await {
                Ok(object) => data[key] = object,
                Err(e) => return Err(ClusterOutcome::Fails(format!("error getting its {key} object: {e}"))),
            }
        }
        template::execute(&self.base.helm, &self.proxy.values_template, &data).await.map_err(|e| match e {
            template::TemplateError::Fails(_) => ClusterOutcome::Fails(e.to_string()),
            _ => ClusterOutcome::NotRun(NotRun(e.to_string())),
        })
    }

    /// CAAPH's rule for a reinstall: the chart name, repository, release name (one it named)
    /// or release namespace of the proxy differ from the HelmReleaseProxy's.
    fn changes_identity(&self, e: &reads::ReleaseProxy) -> bool {
        let p = &self.proxy;
        let name = p.release_name.clone().unwrap_or_default();
        e.chart_name != p.chart_name
            || e.repo_url != p.repo_url
            || (e.generated_name && !name.is_empty())
            || (!e.generated_name && e.release_name != name)
            || e.release_namespace != p.release_namespace
    }

    /// A release CAAPH made on a cluster the proxy no longer selects: uninstalled.
    async fn orphan(&self, orphan: &reads::ReleaseProxy) -> ClusterOutcome {
        let Some((namespace, name)) = orphan.cluster.split_once('/') else {
            return ClusterOutcome::NotRun(NotRun(format!("HelmReleaseProxy {} names no Cluster", orphan.name)));
        };
        match Workload::connect(self, namespace, name, &orphan.release_namespace).await {
            Ok(m) => m.uninstall(orphan).await,
            Err(outcome) => outcome,
        }
    }
}

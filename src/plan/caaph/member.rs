//! One workload cluster of a HelmChartProxy's plan: reached through its Cluster's kubeconfig
//! Secret (for helm-drift and for helm, written to a private file for the plan's life), its
//! release's record read there, CAAPH's decision taken (install, upgrade, leave, reinstall,
//! uninstall) and its upgrade planned by `plan` as the Helm 3 SDK applies it.

use super::proxy::ChartProxy;
use super::reads::ReleaseProxy;
use crate::engine::Session;
use crate::helm::HelmBinary;
use crate::model::{Apply, ClusterOutcome, NotRun, PlanReport, PlannedChange, ProxyAction};
use crate::plan::{ApplyFlags, PlanRequest, ValueFlags};
use crate::release::SourceError;
use crate::settings::Settings;
use serde_json::Value;

/// What every cluster's plan shares.
pub(super) struct Fleet<'a> {
    pub(super) mgmt: &'a Session,
    pub(super) settings: &'a Settings,
    pub(super) base: &'a PlanRequest,
    pub(super) proxy: ChartProxy,
    pub(super) proxies: Vec<ReleaseProxy>,
    /// The chart and the flags that name it (`--version`, `--repo`).
    pub(super) chart: String,
    pub(super) chart_flags: Vec<String>,
    /// Its version (`helm show chart`).
    pub(super) chart_version: String,
    /// The helm every cluster's plan runs (in an empty directory for the proxy's own chart).
    pub(super) helm: HelmBinary,
    /// The file the proxy was read from (a pull request's): its values never render with the
    /// planner's rights.
    pub(super) from_file: Option<String>,
}

/// A workload cluster, reached.
pub(super) struct Workload {
    session: Session,
    settings: Settings,
    helm: HelmBinary,
    /// Holds the kubeconfig helm reads and the values file, removed when the plan is done.
    dir: tempfile::TempDir,
}

fn not_run(why: impl std::fmt::Display) -> ClusterOutcome {
    ClusterOutcome::NotRun(NotRun(crate::errors::chain(&anyhow::anyhow!("{why}"))))
}

impl Workload {
    /// Cluster `namespace/name` of the management cluster, through its kubeconfig Secret, its
    /// session's namespace `release_namespace`.
    pub(super) async fn connect(
        fleet: &Fleet<'_>,
        namespace: &str,
        name: &str,
        release_namespace: &str,
    ) -> Result<Workload, ClusterOutcome> {
        let kubeconfig = crate::inventory::reach(fleet.mgmt.client(), namespace, name).await.map_err(not_run)?;
        let dir = tempfile::Builder::new().prefix("helm-drift-member-").tempdir().map_err(not_run)?;
        let path = dir.path().join("kubeconfig");
        let text = serde_yaml::to_string(&kubeconfig).map_err(not_run)?;
        std::fs::write(&path, text).map_err(not_run)?;
        // The member's own settings (its writer pins too), in the release's namespace.
        let member = fleet.settings.for_member(&format!("{namespace}/{name}"), kubeconfig);
        let settings = Settings { namespace: Some(release_namespace.to_string()), ..member };
        let session = Session::open(&settings).await.map_err(|e| not_run(crate::errors::chain(&e)))?;
        Ok(Workload { session, settings, helm: fleet.helm.for_cluster(&path), dir })
    }

    /// What CAAPH does to the release of `existing` (none yet: the proxy's) with `values`;
    /// `reinstall` when the proxy's identity of it changed.
    pub(super) async fn plan(
        self,
        fleet: &Fleet<'_>,
        existing: Option<&ReleaseProxy>,
        reinstall: bool,
        values: &str,
    ) -> ClusterOutcome {
        let p = &fleet.proxy;
        let (release, namespace) = match existing.filter(|e| !reinstall && !e.release_name.is_empty()) {
            Some(e) if !e.release_namespace.is_empty() => (e.release_name.clone(), e.release_namespace.clone()),
            Some(e) => (e.release_name.clone(), p.release_namespace.clone()),
            None => (p.release_name.clone().unwrap_or_else(|| generated(&p.chart_name)), p.release_namespace.clone()),
        };
        let parsed = {
            let mut budget = crate::yaml::Budget::for_manifest(values.len());
            match crate::yaml::to_json_within(values, &mut budget) {
                Ok(v) => v,
                Err(e) => return ClusterOutcome::Fails(format!("its values template printed no YAML map: {e}")),
            }
        };
        let action = match self.record(&release, &namespace, &fleet.chart_version, &parsed).await {
            Err(outcome) => return outcome,
            Ok(_) if reinstall => ProxyAction::Reinstall,
            Ok(None) => ProxyAction::Install,
            Ok(Some(true)) => {
                return ClusterOutcome::Untouched(format!(
                    "release {namespace}/{release} has chart version {} and these values already: CAAPH makes no upgrade (today's drift stays)",
                    fleet.chart_version
                ));
            }
            Ok(Some(false)) => ProxyAction::Upgrade,
        };
        let file = self.dir.path().join("values.yaml");
        if let Err(e) = std::fs::write(&file, values) {
            return not_run(e);
        }
        let request = self.request(fleet, &release, &namespace, &file, action);
        let mut plan = match crate::plan::plan(&self.session, &self.settings, &request).await {
            Ok(plan) => plan,
            Err(e) => return not_run(crate::errors::chain(&e)),
        };
        if let (ProxyAction::Reinstall, Some(e)) = (action, existing) {
            match self.uninstalled(e).await {
                Ok(Some(old)) => plan = reinstalled(old, plan),
                Ok(None) => {}
                Err(outcome) => return outcome,
            }
        }
        ClusterOutcome::Planned { action, plan: Box::new(plan) }
    }

    /// Whether the release's newest record already has `version` and `values` (`Some(true)`:
    /// CAAPH makes no upgrade), as CAAPH compares them (a failed release is upgraded); `None`
    /// when there is no release.
    async fn record(
        &self,
        release: &str,
        namespace: &str,
        version: &str,
        values: &Value,
    ) -> Result<Option<bool>, ClusterOutcome> {
        let storage = self.session.storage();
        let index = match storage.history(namespace, release).await {
            Ok(index) => index,
            Err(SourceError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(not_run(crate::errors::chain(&e.into()))),
        };
        let Some(newest) = index.newest() else { return Ok(None) };
        if newest.status == "failed" {
            return Ok(Some(false));
        }
        let selected = storage.select(&index, Some(newest.revision)).await.map_err(|e| not_run(e.to_string()))?;
        let recorded = selected.release.user_values().map_err(not_run)?;
        let chart = selected.release.chart.as_ref().map(|c| c.metadata.version.as_str());
        Ok(Some(chart == Some(version) && same_values(&recorded, values)))
    }

    /// The request of CAAPH's upgrade (or install) of `release`: its values file, the proxy's
    /// Helm options, applied as the Helm 3 SDK applies.
    fn request(
        &self,
        fleet: &Fleet<'_>,
        release: &str,
        namespace: &str,
        file: &std::path::Path,
        action: ProxyAction,
    ) -> PlanRequest {
        let p = &fleet.proxy;
        let file = file.to_string_lossy().into_owned();
        let mut flags = vec![format!("--values={file}")];
        flags.extend(fleet.chart_flags.iter().cloned());
        let switches = [
            ("/upgrade/resetValues", "--reset-values"),
            ("/upgrade/reuseValues", "--reuse-values"),
            ("/upgrade/resetThenReuseValues", "--reset-then-reuse-values"),
            ("/takeOwnership", "--take-ownership"),
            ("/disableHooks", "--no-hooks"),
            ("/skipCRDs", "--skip-crds"),
            ("/disableOpenAPIValidation", "--disable-openapi-validation"),
        ];
        flags.extend(switches.iter().filter(|(o, _)| p.option(o)).map(|(_, f)| f.to_string()));
        if p.creates_namespace() && action != ProxyAction::Upgrade {
            flags.push("--create-namespace".into());
        }
        let note = format!("CAAPH's {} of HelmChartProxy {}: release {release} in {namespace}", action.word(), p.id());
        PlanRequest {
            release: release.to_string(),
            chart: fleet.chart.clone(),
            flags,
            helm: self.helm.clone(),
            take_ownership: p.option("/takeOwnership"),
            apply: ApplyFlags { server_side: Some(Apply::ClientSide), force_conflicts: false, always_force: false },
            install: true,
            values: ValueFlags {
                reuse_values: p.option("/upgrade/reuseValues"),
                reset_values: p.option("/upgrade/resetValues"),
                reset_then_reuse_values: p.option("/upgrade/resetThenReuseValues"),
                sets: false,
                files: vec![file],
            },
            stored: Some(namespace.to_string()),
            target: Some(namespace.to_string()),
            values_read_in: None,
            from_file: fleet.from_file.clone(),
            notes: vec![note],
            post_render: None,
        }
    }

    /// The uninstall of the release of `e` (a reinstall's first step, or a cluster no longer
    /// selected): `None` when it is gone already.
    async fn uninstalled(&self, e: &ReleaseProxy) -> Result<Option<PlanReport>, ClusterOutcome> {
        let note = format!("CAAPH deletes HelmReleaseProxy {}: release {} is uninstalled", e.name, e.release_name);
        let plan =
            crate::plan::uninstall(&self.session, &self.settings, &e.release_name, &e.release_namespace, vec![note]);
        match plan.await {
            Ok(plan) => Ok(Some(plan)),
            Err(err) if matches!(err.downcast_ref(), Some(SourceError::NotFound { .. })) => Ok(None),
            Err(err) => Err(not_run(crate::errors::chain(&err))),
        }
    }

    /// The outcome of the release of `e` on a cluster the proxy no longer selects.
    pub(super) async fn uninstall(self, e: &ReleaseProxy) -> ClusterOutcome {
        match self.uninstalled(e).await {
            Ok(Some(plan)) => ClusterOutcome::Planned { action: ProxyAction::Uninstall, plan: Box::new(plan) },
            Ok(None) => ClusterOutcome::Untouched(format!(
                "no longer selected: CAAPH deletes HelmReleaseProxy {}, whose release {} is gone already",
                e.name, e.release_name
            )),
            Err(outcome) => outcome,
        }
    }
}

/// A reinstall: the old release's objects deleted, then the new one's created (an object of
/// both is deleted and created again).
fn reinstalled(old: PlanReport, mut new: PlanReport) -> PlanReport {
    let mut objects = Vec::new();
    for o in old.objects {
        match new.objects.iter().position(|n| n.id == o.id) {
            Some(at) => {
                let mut again = new.objects.remove(at);
                again.change = PlannedChange::Create;
                again.fields.clear();
                again.note = Some("deleted by the uninstall, created again by the install".into());
                objects.push(again);
            }
            None => objects.push(o),
        }
    }
    objects.append(&mut new.objects);
    new.objects = objects;
    new.notes.splice(0..0, old.notes);
    new
}

/// The release name Helm generates for CAAPH when the proxy names none (`chart-<seconds>`).
fn generated(chart: &str) -> String {
    let base = chart.rsplit('/').next().unwrap_or(chart);
    let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("{base}-{seconds}")
}

/// Whether two values trees are the same as CAAPH compares them (both printed as YAML: numbers
/// by value, no values the same as an empty map).
fn same_values(a: &Value, b: &Value) -> bool {
    let empty = |v: &Value| v.is_null() || v.as_object().is_some_and(|m| m.is_empty());
    (empty(a) && empty(b)) || equal(a, b)
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| equal(v, w)),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_compared_as_caaph_compares_them() {
        assert!(same_values(&json!({"a": 1, "b": [1.0, "x"]}), &json!({"b": [1, "x"], "a": 1.0})));
        assert!(same_values(&Value::Null, &json!({})), "no values is an empty map");
        assert!(!same_values(&json!({"a": 1}), &json!({"a": "1"})));
        assert!(!same_values(&json!({"a": {}}), &json!({"a": null})), "only the top is empty either way");
        assert!(generated("oci://r/charts/cilium").starts_with("cilium-"));
    }
}

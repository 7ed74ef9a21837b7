//! `check`: compare the selected releases with the cluster; with `--explain`, say which value of
//! each release produced every modified field; with `--rerender`, also compare the chart as it
//! renders now with the cluster; over several clusters at once, a fleet.

use crate::desired;
use crate::engine::{Selection, Session, evaluate_selected, scan};
use crate::helm::{ChartFiles, HelmBinary};
use crate::model::{ClusterReport, DriftReport, FleetReport, Outcome, Progress, Rerender, RunReport};
use crate::release::Selected;
use crate::settings::Settings;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// What runs the chart again: `--explain` and `--rerender`.
#[derive(Clone, Debug)]
pub struct Rendering {
    pub helm: HelmBinary,
    /// The chart's source, for charts with subcharts (which Helm does not store).
    pub chart: Option<PathBuf>,
    pub explain: bool,
    pub rerender: bool,
}

/// Checks every release `selection` names; `progress` is told as releases finish.
pub async fn run(
    settings: &Settings,
    selection: &Selection,
    rendering: Option<&Rendering>,
    progress: &Progress,
) -> Result<RunReport> {
    let session = Session::open(settings).await?;
    let mut run = scan(&session, settings, selection, progress).await?;
    if settings.baseline.is_none() {
        unused_baselines(&session, selection, &mut run).await;
    }
    guards(&session, &mut run).await;
    let Some(rendering) = rendering else { return Ok(run) };
    let cluster = session.capabilities().await?;
    for outcome in &mut run.outcomes {
        let Outcome::Checked(report) = outcome else { continue };
        let modified = report.objects.iter().any(|o| o.fields.iter().any(|f| f.recorded.is_some() && f.live.is_some()));
        let explain = rendering.explain && modified;
        if !rendering.rerender && !explain {
            continue;
        }
        let what = |doing: &str| format!("cannot {doing} release {:?}", report.release);
        let index = session.storage.history(&report.namespace, &report.release).await?;
        let selected = session.storage.select(&index, Some(report.revision)).await?;
        let files = ChartFiles::write(&selected.release, &selected.record, rendering.chart.as_deref())?;
        if explain {
            report.explanations = crate::explain::explain(&rendering.helm, &selected.release, &files, &cluster, report)
                .await
                .with_context(|| what("explain the drift of"))?;
        }
        if rendering.rerender {
            let rerender =
                rerender(&session, settings, rendering, selected, &files).await.with_context(|| what("render"))?;
            report.rerender = Some(Box::new(rerender));
        }
    }
    Ok(run)
}

/// Clusters checked at once in a fleet check.
const FLEET_AT_ONCE: usize = 4;

/// Checks `selection` in each cluster (`(name, settings)`, in that order), a few at once. A
/// cluster that cannot be checked (unreachable, forbidden, its storage unreadable) is an error
/// for that cluster only.
pub async fn fleet(clusters: &[(String, Settings)], selection: &Selection) -> FleetReport {
    use futures::StreamExt;
    let reports = futures::stream::iter(clusters.iter().map(|(cluster, settings)| async move {
        let run = match run(settings, selection, None, &Progress::none()).await {
            Ok(run) => run,
            Err(e) => {
                let namespace = if selection.all_namespaces { "" } else { settings.namespace.as_deref().unwrap_or("") };
                RunReport::unchecked(&selection.releases, namespace, &crate::errors::chain(&e))
            }
        };
        ClusterReport { cluster: cluster.clone(), run }
    }))
    .buffered(FLEET_AT_ONCE)
    .collect()
    .await;
    FleetReport { clusters: reports }
}

/// The mode of the admission guard covering each release. Guards that cannot be read (an
/// identity without `list` on ValidatingAdmissionPolicies, an older API server) say nothing.
async fn guards(session: &Session, run: &mut RunReport) {
    let Ok(written) = crate::live::admission::guards(&session.cluster.client, crate::guard::LABEL).await else {
        return;
    };
    let written = crate::guard::GuardInfo::all(&written);
    for outcome in &mut run.outcomes {
        let Outcome::Checked(r) = outcome else { continue };
        r.guard = crate::guard::covering(&written, &r.namespace, &r.release);
    }
}

/// Releases with a baseline ConfigMap that this run does not use (no `--baseline cluster`):
/// a finding each, so that accepted drift is not silently reported again.
async fn unused_baselines(session: &Session, selection: &Selection, run: &mut RunReport) {
    let scope = (!selection.all_namespaces).then_some(session.namespace.as_str());
    let found = crate::baseline::configmaps(&session.cluster.client, scope).await;
    for outcome in &mut run.outcomes {
        let Outcome::Checked(r) = outcome else { continue };
        if found.iter().any(|(ns, release)| *ns == r.namespace && *release == r.release) {
            r.findings.push(format!(
                "a cluster baseline exists (ConfigMap {}/{}) but is not used: --baseline cluster applies it",
                r.namespace,
                crate::baseline::configmap_name(&r.release)
            ));
        }
    }
}

/// The chart as it renders now (a server-side dry-run upgrade with the stored values), against
/// the stored manifest and against the cluster.
async fn rerender(
    session: &Session,
    settings: &Settings,
    rendering: &Rendering,
    selected: Selected,
    files: &ChartFiles,
) -> Result<Rerender> {
    let manifest = rendering.helm.render_now(&selected.release, files).await?;
    let (documents, changed) = desired::diff_documents(&selected.release.manifest, &manifest);
    let mut now = selected;
    now.release.manifest = manifest;
    now.record = format!("{} rendered now", now.record);
    now.newest = None;
    let against_live: DriftReport = evaluate_selected(session, settings, now).await?.report;
    Ok(Rerender { documents, changed, against_live })
}

//! `repair --upgrade`: repair through Helm itself, a `helm upgrade` of the chart rebuilt from the
//! record with the stored values (a new revision with the same content, hooks included).

use crate::engine::{Session, evaluate_selected};
use crate::helm::{ChartFiles, HelmBinary};
use crate::model::UpgradeReport;
use crate::model::{DriftReport, HelmWriter, Refusal};
use crate::settings::Settings;
use anyhow::{Result, bail};
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub(super) struct UpgradeRequest {
    pub(crate) release: String,
    /// The chart's source, for charts with subcharts (which Helm does not store).
    pub(crate) chart: Option<PathBuf>,
    pub(crate) helm: HelmBinary,
    pub(crate) dry_run: bool,
}

pub(super) async fn run(settings: &Settings, request: &UpgradeRequest) -> Result<UpgradeReport> {
    let mut session = Session::open(settings).await?;
    let index = session.history(&request.release).await?;
    if let Some(pending) = index.newest().filter(|r| r.status.starts_with("pending")) {
        bail!(
            "release {:?} has a pending operation (revision {} is {}): wait for it to finish, or roll back, before repairing through helm upgrade",
            request.release,
            pending.revision,
            pending.status
        );
    }
    let selected = session.storage().select(&index, None).await?;
    let release = &selected.release;
    // Before any helm call: the upgrade runs the record's templates and hooks as the person.
    if !settings.trust.namespaces.trusts(release.stored_in()) {
        return Err(Refusal::ChartNotRun {
            record: selected.record.clone(),
            namespace: release.stored_in().to_string(),
            release: release.name().to_string(),
        }
        .into());
    }
    let files = ChartFiles::write(release, &selected.record, request.chart.as_deref())?;
    // The helm command writes as `helm`: a controller's release is handed back to it after.
    let writer = evaluate_selected(&session, settings, selected.clone(), None).await?.writer;
    let helm_output = request.helm.upgrade(release, &files, request.dry_run).await?;
    let after = if request.dry_run {
        None
    } else {
        Some(handed_back(&mut session, settings, &request.release, &writer).await?)
    };
    Ok(UpgradeReport {
        release: release.name().to_string(),
        namespace: release.namespace().to_string(),
        from_revision: release.revision(),
        helm_output,
        dry_run: request.dry_run,
        after,
    })
}

/// The release after the upgrade, judged as its writer's; when that is not the helm command, the
/// fields the upgrade wrote as `helm` are first handed to it (else its next upgrade would conflict
/// with `helm`).
async fn handed_back(
    session: &mut Session,
    settings: &Settings,
    release: &str,
    writer: &HelmWriter,
) -> Result<DriftReport> {
    let index = session.history(release).await?;
    let selected = session.storage().select(&index, None).await?;
    let after = evaluate_selected(session, settings, selected.clone(), Some(writer)).await?;
    if writer.is_helm_command() {
        return Ok(after.report);
    }
    let failed = crate::repair::hand_over(session.client(), &after).await;
    if !failed.is_empty() {
        let what: Vec<String> = failed.iter().map(|(id, e)| format!("{id}: {e}")).collect();
        bail!(
            "helm upgrade made revision {}, but the fields it wrote as helm could not all be handed to {} (the release's writer: it {}), whose next upgrade may now conflict with helm: {}",
            after.report.revision,
            writer.manager,
            writer.why(),
            what.join("; ")
        );
    }
    session.forget_live();
    let mut report = evaluate_selected(session, settings, selected, Some(writer)).await?.report;
    report
        .notes
        .push(format!("the fields helm upgrade wrote as helm were handed to {}, the release's writer", writer.manager));
    Ok(report)
}

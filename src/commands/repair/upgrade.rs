//! `repair --upgrade`: repair through Helm itself, a `helm upgrade` of the chart rebuilt from the
//! record with the stored values (a new revision with the same content, hooks included).

use crate::engine::{Session, evaluate};
use crate::helm::{ChartFiles, HelmBinary};
use crate::model::UpgradeReport;
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
    let session = Session::open(settings).await?;
    let index = session.history(&request.release).await?;
    if let Some(pending) = index.newest().filter(|r| r.status.starts_with("pending")) {
        bail!(
            "release {:?} has a pending operation (revision {} is {}): wait for it to finish, or roll back, before repairing through helm upgrade",
            request.release,
            pending.revision,
            pending.status
        );
    }
    let selected = session.storage.select(&index, None).await?;
    let release = &selected.release;
    let files = ChartFiles::write(release, &selected.record, request.chart.as_deref())?;
    let helm_output = request.helm.upgrade(release, &files, request.dry_run).await?;
    let after = if request.dry_run {
        None
    } else {
        let index = session.history(&request.release).await?;
        Some(evaluate(&session, settings, &index, None).await?.report)
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

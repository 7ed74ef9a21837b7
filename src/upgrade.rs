//! `repair --upgrade`: repair through Helm itself, a `helm upgrade` of the chart rebuilt from the
//! record with the stored values (a new revision with the same content, hooks included).

use crate::check::{self, DriftReport, Session};
use crate::settings::Settings;
use anyhow::{Context, Result, bail};
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct UpgradeRequest {
    pub release: String,
    /// The chart's source, for charts with subcharts (which Helm does not store).
    pub chart: Option<PathBuf>,
    pub helm: PathBuf,
    pub dry_run: bool,
}

#[derive(Debug)]
pub struct UpgradeReport {
    pub release: String,
    pub namespace: String,
    pub from_revision: u32,
    /// What helm printed.
    pub helm_output: String,
    pub dry_run: bool,
    /// The check of the new revision.
    pub after: Option<DriftReport>,
}

impl UpgradeReport {
    pub fn exit_code(&self) -> u8 {
        match &self.after {
            Some(r) if r.errors() > 0 => 1,
            Some(r) if r.drifted() > 0 => 2,
            _ => 0,
        }
    }
}

pub async fn run(settings: &Settings, request: &UpgradeRequest) -> Result<UpgradeReport> {
    let session = Session::open(settings).await?;
    let index = session.find(&request.release).await?;
    if let Some(pending) = index.records.iter().max_by_key(|r| r.revision).filter(|r| r.status.starts_with("pending")) {
        bail!(
            "release {:?} has a pending operation (revision {} is {}): wait for it to finish, or roll back, before repairing through helm upgrade",
            request.release,
            pending.revision,
            pending.status
        );
    }
    let selected = session.storage.select(&index, None).await?;
    let release = &selected.release;
    let work = tempfile::Builder::new().prefix("helm-drift-upgrade-").tempdir()?;
    let chart = match &request.chart {
        Some(c) => c.clone(),
        None => crate::render::write_chart(release, &work.path().join("chart"))
            .with_context(|| format!("cannot rebuild the chart from {}", selected.record))?,
    };
    let values = crate::render::write_values(release, work.path())?;
    let mut cmd = std::process::Command::new(&request.helm);
    cmd.arg("upgrade")
        .arg(&release.name)
        .arg(&chart)
        .args(["--namespace", &release.namespace, "--reset-values", "--values"])
        .arg(&values);
    if request.dry_run {
        cmd.arg("--dry-run=client");
    }
    if release.apply_method.as_deref() == Some("ssa") {
        // Helm 4 applies this release server-side: take back fields edited by other managers.
        cmd.arg("--force-conflicts");
    }
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await?
        .with_context(|| format!("cannot run {}", request.helm.display()))?;
    let helm_output = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        bail!("{} upgrade failed: {}", request.helm.display(), helm_output.trim());
    }
    let after = if request.dry_run {
        None
    } else {
        let index = session.find(&request.release).await?;
        Some(check::evaluate(&session, settings, &index, None).await?.report)
    };
    Ok(UpgradeReport {
        release: release.name.clone(),
        namespace: release.namespace.clone(),
        from_revision: release.version,
        helm_output,
        dry_run: request.dry_run,
        after,
    })
}

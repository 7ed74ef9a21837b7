//! `check`: compare the selected releases with the cluster; with `--explain`, say which value of
//! each release produced every modified field.

use crate::engine::{Selection, Session, scan};
use crate::helm::{ChartFiles, HelmBinary};
use crate::model::{Outcome, RunReport};
use crate::settings::Settings;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// What `--explain` needs: the helm binary, and the chart's source for charts with subcharts.
#[derive(Clone, Debug)]
pub struct Explain {
    pub helm: HelmBinary,
    pub chart: Option<PathBuf>,
}

/// Checks every release `selection` names; `progress(done, total)` is called as releases finish.
pub async fn run(
    settings: &Settings,
    selection: &Selection,
    explain: Option<&Explain>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<RunReport> {
    let session = Session::open(settings).await?;
    let mut run = scan(&session, settings, selection, progress).await?;
    if let Some(explain) = explain {
        let cluster = session.capabilities().await?;
        for outcome in &mut run.outcomes {
            let Outcome::Checked(report) = outcome else { continue };
            if !report.objects.iter().any(|o| o.fields.iter().any(|f| f.recorded.is_some() && f.live.is_some())) {
                continue;
            }
            let index = session.storage.history(&report.namespace, &report.release).await?;
            let selected = session.storage.select(&index, Some(report.revision)).await?;
            let files = ChartFiles::write(&selected.release, &selected.record, explain.chart.as_deref())?;
            report.explanations = crate::explain::explain(&explain.helm, &selected.release, &files, &cluster, report)
                .await
                .with_context(|| format!("cannot explain the drift of release {:?}", report.release))?;
        }
    }
    Ok(run)
}

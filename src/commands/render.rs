//! `render`: rebuilds the chart from a release record and renders it again with `helm template`,
//! to find documents whose rendering changed since Helm stored the release (`lookup`, random
//! functions, `.Capabilities`).

use super::runtime::runtime;
use super::settings::{Shown, settings};
use crate::cli::{CompareArgs, Global, RenderArgs};
use crate::desired;
use crate::engine::Session;
use crate::helm::{ChartFiles, HelmBinary};
use crate::model::{ExitStatus, RenderReport};
use crate::report::Terminal;
use crate::settings::Settings;
use anyhow::Result;
use std::path::PathBuf;

/// `render`, resolved.
pub(crate) struct RenderSettings {
    settings: Settings,
    request: RenderRequest,
    shown: Shown,
}

impl RenderSettings {
    pub(crate) fn resolve(g: &Global, a: RenderArgs) -> Result<RenderSettings> {
        let RenderArgs { release, revision, chart, show_secrets, output } = a;
        let shown = Shown::resolve(&CompareArgs { show_secrets, ..CompareArgs::default() }, &output);
        let request = RenderRequest { release, revision, chart, helm: HelmBinary::from_env() };
        Ok(RenderSettings { settings: settings(g)?, request, shown })
    }
}

/// Runs `render` and prints its report.
pub(crate) fn execute(s: RenderSettings, printer: &mut Terminal) -> Result<ExitStatus> {
    s.shown.apply(&mut printer.style);
    let report = runtime()?.block_on(run(&s.settings, &s.request))?;
    printer.render(&report);
    Ok(report.exit_status())
}

/// What `render` asks for.
#[derive(Clone, Debug)]
struct RenderRequest {
    release: String,
    revision: Option<u32>,
    /// The chart's source, for charts with subcharts (which Helm does not store).
    chart: Option<PathBuf>,
    helm: HelmBinary,
}

/// Renders the release's chart again and compares it with the stored manifest.
async fn run(settings: &Settings, request: &RenderRequest) -> Result<RenderReport> {
    let session = Session::open(settings).await?;
    let index = session.history(&request.release).await?;
    let selected = session.storage().select(&index, request.revision).await?;
    let release = &selected.release;
    let files = ChartFiles::write(release, &selected.record, request.chart.as_deref())?;

    let cluster = session.capabilities().await?;
    let rendered = request.helm.template(release, &files, &cluster, &[]).await?;
    let (documents, diffs) = desired::diff_documents(&release.manifest, &rendered);
    Ok(RenderReport {
        release: release.name().to_string(),
        namespace: release.namespace().to_string(),
        revision: release.revision(),
        kube_version: cluster.kube_version,
        documents,
        diffs,
    })
}

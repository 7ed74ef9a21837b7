//! `render`: rebuilds the chart from a release record and renders it again with `helm template`,
//! to find documents whose rendering changed since Helm stored the release (`lookup`, random
//! functions, `.Capabilities`).

use crate::desired;
use crate::engine::Session;
use crate::helm::{ChartFiles, HelmBinary};
use crate::model::RenderReport;
use crate::settings::Settings;
use anyhow::Result;
use std::path::PathBuf;

/// What `render` asks for.
#[derive(Clone, Debug)]
pub struct RenderRequest {
    pub release: String,
    pub revision: Option<u32>,
    /// The chart's source, for charts with subcharts (which Helm does not store).
    pub chart: Option<PathBuf>,
    pub helm: HelmBinary,
}

/// Renders the release's chart again and compares it with the stored manifest.
pub async fn run(settings: &Settings, request: &RenderRequest) -> Result<RenderReport> {
    let session = Session::open(settings).await?;
    let index = session.history(&request.release).await?;
    let selected = session.storage.select(&index, request.revision).await?;
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

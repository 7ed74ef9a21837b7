//! Re-render: rebuilds the chart from a release record and renders it again with
//! `$HELM_BIN template`, to find documents whose rendering changed since Helm stored the release
//! (`lookup`, random functions, `.Capabilities`).

use crate::desired;
use crate::release::Release;
use crate::settings::Settings;
use anyhow::{Context, Result, bail};
use std::path::{Component, Path, PathBuf};

/// What `render` asks for.
#[derive(Clone, Debug)]
pub struct RenderRequest {
    pub release: String,
    pub revision: Option<u32>,
    /// The chart's source, for charts with subcharts (which Helm does not store).
    pub chart: Option<PathBuf>,
    /// The helm binary (`HELM_BIN` when run by Helm).
    pub helm: PathBuf,
}

/// How one document differs between the stored manifest and the new rendering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DocChange {
    Changed { stored: String, rendered: String },
    OnlyStored(String),
    OnlyRendered(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocDiff {
    /// `# Source:` path (with `#N` when a template renders several documents).
    pub source: String,
    pub change: DocChange,
}

#[derive(Debug)]
pub struct RenderReport {
    pub release: String,
    pub namespace: String,
    pub revision: u32,
    pub kube_version: String,
    pub documents: usize,
    pub diffs: Vec<DocDiff>,
}

/// Renders the release's chart again and compares it with the stored manifest.
pub async fn run(settings: &Settings, request: &RenderRequest) -> Result<RenderReport> {
    let session = crate::check::Session::open(settings).await?;
    let index = session.find(&request.release).await?;
    let selected = session.storage.select(&index, request.revision).await?;
    let release = &selected.release;
    let cluster = &session.cluster;

    let work = tempfile::Builder::new().prefix("helm-drift-render-").tempdir()?;
    let chart_dir = match &request.chart {
        Some(dir) => dir.clone(),
        None => write_chart(release, &work.path().join("chart"))
            .with_context(|| format!("cannot rebuild the chart from {}", selected.record))?,
    };
    let values = write_values(release, work.path())?;

    let version = cluster.client.apiserver_version().await.context("reading the cluster's version")?.git_version;
    let mut api_versions = Vec::new();
    for group in session.discovery.groups() {
        for v in group.versions() {
            let gv = if group.name().is_empty() { v.to_string() } else { format!("{}/{v}", group.name()) };
            for (ar, _) in group.versioned_resources(v) {
                api_versions.push(format!("{gv}/{}", ar.kind));
            }
            api_versions.push(gv);
        }
    }

    let mut cmd = std::process::Command::new(&request.helm);
    cmd.arg("template")
        .arg(&release.name)
        .arg(&chart_dir)
        .args(["--namespace", &release.namespace, "--no-hooks", "--kube-version", &version])
        .arg("--api-versions")
        .arg(api_versions.join(","))
        .arg("--values")
        .arg(&values);
    // Revision 1 was rendered by an install; later revisions by an upgrade (or rollback).
    if release.version > 1 {
        cmd.arg("--is-upgrade");
    }
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await?
        .with_context(|| format!("cannot run {}", request.helm.display()))?;
    if !out.status.success() {
        bail!("{} template failed: {}", request.helm.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    let rendered = String::from_utf8_lossy(&out.stdout);
    let (documents, diffs) = compare(&release.manifest, &rendered);
    Ok(RenderReport {
        release: release.name.clone(),
        namespace: release.namespace.clone(),
        revision: release.version,
        kube_version: version,
        documents,
        diffs,
    })
}

/// Writes the stored chart (metadata, values, schema, templates, files) as a chart directory.
/// Charts with subcharts cannot be rebuilt: Helm does not store them with the release.
pub fn write_chart(release: &Release, dir: &Path) -> Result<PathBuf> {
    let Some(chart) = &release.chart else { bail!("the record holds no chart") };
    if chart.metadata.has_dependencies() {
        bail!(
            "chart {} declares dependencies (subcharts), which Helm does not store with the release: pass --chart PATH with the chart's source",
            chart.metadata.name
        );
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("Chart.yaml"), serde_yaml::to_string(&chart.metadata)?)?;
    let values = chart.values.clone().filter(|v| !v.is_null()).unwrap_or_else(|| serde_json::json!({}));
    std::fs::write(dir.join("values.yaml"), serde_yaml::to_string(&values)?)?;
    if let Some(schema) = &chart.schema {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD.decode(schema).context("values schema: bad base64")?;
        std::fs::write(dir.join("values.schema.json"), bytes)?;
    }
    for file in chart.templates.iter().flatten().chain(chart.files.iter().flatten()) {
        let rel = Path::new(&file.name);
        if rel.is_absolute() || rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            bail!("chart file {:?}: not a relative path inside the chart", file.name);
        }
        let bytes = file.bytes().with_context(|| format!("chart file {:?}: bad base64", file.name))?;
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    Ok(dir.to_path_buf())
}

/// Writes the release's user-supplied values (`helm install -f/--set`) to `dir/user-values.yaml`.
pub fn write_values(release: &Release, dir: &Path) -> Result<PathBuf> {
    let values = dir.join("user-values.yaml");
    let user = release.config.clone().filter(|c| !c.is_null()).unwrap_or_else(|| serde_json::json!({}));
    std::fs::write(&values, serde_yaml::to_string(&user)?)?;
    Ok(values)
}

/// Documents keyed by source path (and position among that template's documents).
fn documents(manifest: &str) -> Vec<(String, String)> {
    let mut seen = std::collections::HashMap::new();
    desired::split(manifest)
        .into_iter()
        .map(|d| {
            let source = d.source.unwrap_or("(no source)").to_string();
            let n = seen.entry(source.clone()).and_modify(|n| *n += 1).or_insert(1);
            let key = if *n == 1 { source } else { format!("{source}#{n}") };
            let body: String = d.body.lines().filter(|l| !l.starts_with("# Source: ")).collect::<Vec<_>>().join("\n");
            (key, body.trim().to_string())
        })
        .collect()
}

/// The number of stored documents and every document that differs.
pub fn compare(stored: &str, rendered: &str) -> (usize, Vec<DocDiff>) {
    let a = documents(stored);
    let b = documents(rendered);
    let mut diffs = Vec::new();
    for (source, text) in &a {
        match b.iter().find(|(s, _)| s == source) {
            Some((_, other)) if other == text => {}
            Some((_, other)) => diffs.push(DocDiff {
                source: source.clone(),
                change: DocChange::Changed { stored: text.clone(), rendered: other.clone() },
            }),
            None => diffs.push(DocDiff { source: source.clone(), change: DocChange::OnlyStored(text.clone()) }),
        }
    }
    for (source, text) in &b {
        if !a.iter().any(|(s, _)| s == source) {
            diffs.push(DocDiff { source: source.clone(), change: DocChange::OnlyRendered(text.clone()) });
        }
    }
    (a.len(), diffs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_changed_added_and_removed_documents() {
        let stored = "---\n# Source: c/templates/a.yaml\nkind: A\nx: 1\n---\n# Source: c/templates/b.yaml\nkind: B\n---\n# Source: c/templates/b.yaml\nkind: B2\n";
        let rendered = "---\n# Source: c/templates/a.yaml\nkind: A\nx: 2\n---\n# Source: c/templates/b.yaml\nkind: B\n---\n# Source: c/templates/c.yaml\nkind: C\n";
        let (n, diffs) = compare(stored, rendered);
        assert_eq!(n, 3);
        let sources: Vec<_> = diffs.iter().map(|d| d.source.as_str()).collect();
        assert_eq!(sources, ["c/templates/a.yaml", "c/templates/b.yaml#2", "c/templates/c.yaml"]);
        assert!(matches!(diffs[1].change, DocChange::OnlyStored(_)));
        assert!(compare(stored, stored).1.is_empty());
    }
}

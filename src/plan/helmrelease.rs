//! `plan --helmrelease`: the upgrade Flux's helm-controller will make of a HelmRelease, from the
//! cluster or a changed one from a file (a pull request): its release name and namespaces, its
//! values composed as helm-controller composes them (`valuesFrom` in order, each merged, or set
//! at its `targetPath` by Helm's own `--set` parser, `optional` ones skipped when absent; then
//! `spec.values`), and how it applies (server-side as `spec.upgrade.serverSideApply` says,
//! conflicts always forced; ownership taken unless `disableTakeOwnership`; values reset unless
//! `preserveValues`).

use super::values_from::{self, Reference, ValuesError};
use crate::helm::HelmBinary;
use crate::model::Apply;
use serde_json::Value;
use std::path::PathBuf;

/// Where the HelmRelease is read from.
#[derive(Clone, Debug)]
pub(crate) enum HelmReleaseSource {
    /// `--helmrelease NAME`: the cluster's, in the session's namespace.
    Cluster(String),
    /// `--helmrelease-file FILE` (with `--helmrelease NAME` to pick one of several).
    File { path: PathBuf, name: Option<String> },
}

/// A HelmRelease that cannot be planned, and why.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HelmReleaseError {
    #[error("HelmRelease {namespace}/{name} cannot be read: {why}")]
    Unreadable { namespace: String, name: String, why: String },
    #[error("{path}: {why}")]
    File { path: String, why: FileError },
    #[error("HelmRelease {hr}: {source}")]
    PostRenderers { hr: String, source: super::kustomize::Unplannable },
    #[error("HelmRelease {hr}: {source}")]
    Values { hr: String, source: Box<ValuesError> },
}

/// The upgrade helm-controller will make of one HelmRelease.
#[derive(Clone, Debug)]
pub(crate) struct FluxUpgrade {
    /// `namespace/name` of the HelmRelease.
    pub(crate) helm_release: String,
    /// The release name (`spec.releaseName`, else `[targetNamespace-]name`, shortened as Flux
    /// shortens it past 53 characters).
    pub(crate) release: String,
    /// Where its record is stored and where it installs.
    pub(crate) storage: String,
    pub(crate) target: String,
    /// The values helm-controller passes.
    pub(crate) values: Value,
    /// `spec.upgrade.preserveValues`: the record's values are reused under them.
    pub(crate) preserve_values: bool,
    /// `spec.upgrade.serverSideApply` (`None`: auto).
    pub(crate) server_side: Option<Apply>,
    pub(crate) take_ownership: bool,
    /// Whether someone other than the planner wrote some of the values (the HelmRelease read
    /// from the cluster, or a `valuesFrom` object): the namespace they were read from.
    pub(crate) values_read_in: Option<String>,
    /// How the values were composed, for the plan's notes.
    pub(crate) said: Vec<String>,
    /// What helm-controller sets on every object after Helm renders.
    pub(crate) post_render: super::PostRender,
    /// The source its chart comes from, or why it names none.
    pub(crate) chart: Result<super::flux_chart::ChartSource, super::flux_chart::Unfetched>,
}

/// Reads the HelmRelease and composes the upgrade it asks for.
pub(crate) async fn resolve(
    client: &kube::Client,
    helm: &HelmBinary,
    source: &HelmReleaseSource,
    namespace: &str,
) -> Result<FluxUpgrade, HelmReleaseError> {
    let (hr, from_cluster) = match source {
        HelmReleaseSource::Cluster(name) => {
            let read = values_from::helm_release(client, namespace, name).await;
            let unreadable = |e: crate::api::ApiError| HelmReleaseError::Unreadable {
                namespace: namespace.into(),
                name: name.clone(),
                why: e.to_string(),
            };
            (read.map_err(unreadable)?, true)
        }
        HelmReleaseSource::File { path, name } => (from_file(path, name.as_deref(), namespace)?, false),
    };
    let text = |pointer: &str| hr.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty());
    let name = text("/metadata/name").unwrap_or_default().to_string();
    let own = text("/metadata/namespace").unwrap_or(namespace).to_string();
    let id = format!("{own}/{name}");
    let kustomize = super::kustomize::kustomizations(hr.pointer("/spec/postRenderers"))
        .map_err(|source| HelmReleaseError::PostRenderers { hr: id.clone(), source })?;
    let target = text("/spec/targetNamespace").unwrap_or(&own).to_string();
    let storage = text("/spec/storageNamespace").unwrap_or(&own).to_string();
    let release = crate::model::flux_release_name(&hr).unwrap_or_default();
    let references =
        Reference::all(&hr).map_err(|source| HelmReleaseError::Values { hr: id.clone(), source: Box::new(source) })?;
    let spec_values = hr.pointer("/spec/values").cloned().unwrap_or_else(|| Value::Object(Default::default()));
    let composed = values_from::compose(client, helm, &own, &spec_values, &references)
        .await
        .map_err(|source| HelmReleaseError::Values { hr: id.clone(), source: Box::new(source) })?;
    let server_side = match text("/spec/upgrade/serverSideApply") {
        Some("enabled") => Some(Apply::ServerSide),
        Some("disabled") => Some(Apply::ClientSide),
        _ => None,
    };
    let flag = |pointer: &str| hr.pointer(pointer).and_then(Value::as_bool).unwrap_or(false);
    let read_from_cluster = from_cluster || !references.is_empty();
    Ok(FluxUpgrade {
        helm_release: id,
        release,
        storage,
        target,
        values: composed.values,
        preserve_values: flag("/spec/upgrade/preserveValues"),
        server_side,
        take_ownership: !flag("/spec/upgrade/disableTakeOwnership"),
        post_render: super::PostRender::flux(&own, &name, hr.pointer("/spec/commonMetadata"), kustomize),
        chart: super::flux_chart::named(&hr, &own).and_then(|c| c.within(&own, from_cluster)),
        values_read_in: read_from_cluster.then_some(own),
        said: composed.said,
    })
}

/// The plan request of helm-controller's upgrade of the HelmRelease `source` names, from `base`
/// (the chart, the helm, any `--version`), with its values written to a file that lives as long
/// as the returned directory.
pub(crate) async fn request(
    client: &kube::Client,
    namespace: &str,
    base: &super::PlanRequest,
    source: &HelmReleaseSource,
) -> anyhow::Result<(super::PlanRequest, tempfile::TempDir)> {
    let upgrade = resolve(client, &base.helm, source, namespace).await?;
    let dir = tempfile::Builder::new().prefix("helm-drift-flux-").tempdir()?;
    let (chart, helm, chart_flags, chart_said) = chart(client, base, &upgrade, dir.path()).await?;
    let file = dir.path().join("values.json");
    std::fs::write(&file, serde_json::to_string(&upgrade.values)?)?;
    let file = file.to_string_lossy().into_owned();
    let keep = upgrade.preserve_values;
    let mut flags = vec![format!("--values={file}"), if keep { "--reuse-values" } else { "--reset-values" }.into()];
    if upgrade.take_ownership {
        flags.push("--take-ownership".into());
    }
    flags.extend(base.flags.iter().filter(|f| chart_flags.is_empty() || !f.starts_with("--version=")).cloned());
    flags.extend(chart_flags);
    let from: Vec<&str> = upgrade.said.iter().map(String::as_str).collect();
    let values = match from.is_empty() {
        true => "spec.values".to_string(),
        false => format!("valuesFrom ({}), then spec.values", from.join("; ")),
    };
    let note = format!(
        "helm-controller's upgrade of HelmRelease {}: release {} in {} (record in {}), values: {values}; server-side applies forced{}",
        upgrade.helm_release,
        upgrade.release,
        upgrade.target,
        upgrade.storage,
        if upgrade.take_ownership { ", objects taken over" } else { "" }
    );
    let request = super::PlanRequest {
        release: upgrade.release.clone(),
        flags,
        take_ownership: upgrade.take_ownership,
        apply: super::ApplyFlags { server_side: upgrade.server_side, force_conflicts: false, always_force: true },
        install: true,
        values: super::ValueFlags { reuse_values: keep, reset_values: !keep, files: vec![file], ..Default::default() },
        stored: Some(upgrade.storage),
        target: Some(upgrade.target),
        values_read_in: upgrade.values_read_in,
        from_file: match source {
            HelmReleaseSource::File { path, .. } => Some(path.display().to_string()),
            HelmReleaseSource::Cluster(_) => None,
        },
        notes: vec![note, chart_said],
        post_render: Some(upgrade.post_render),
        chart,
        helm,
    };
    Ok((request, dir))
}

/// The chart to preview: the one given (it stands for the HelmRelease's, said so), else the
/// HelmRelease's own as its source serves it, fetched by a helm run in an empty directory of
/// `dir` (its name is never taken for a local path); helm, the chart's flags and what was said.
async fn chart(
    client: &kube::Client,
    base: &super::PlanRequest,
    upgrade: &FluxUpgrade,
    dir: &std::path::Path,
) -> anyhow::Result<(String, HelmBinary, Vec<String>, String)> {
    let version = base.flags.iter().find_map(|f| f.strip_prefix("--version="));
    if !base.chart.is_empty() {
        let theirs = match &upgrade.chart {
            Ok(source) => format!(
                "chart {} at version {} of {} {}/{}",
                source.chart.as_deref().unwrap_or("(its artifact)"),
                source.version.as_deref().unwrap_or("(its reference)"),
                source.kind,
                source.namespace,
                source.name
            ),
            Err(_) => "its chart".to_string(),
        };
        let picked = version.map_or(String::new(), |v| format!(", at --version {v}"));
        let said = format!(
            "the chart given ({}{picked}) stands for the HelmRelease's {theirs}: helm-controller installs the version its source resolves",
            base.chart
        );
        return Ok((base.chart.clone(), base.helm.clone(), Vec::new(), said));
    }
    let empty = dir.join("chart");
    std::fs::create_dir(&empty)?;
    let helm = base.helm.in_dir(&empty);
    let found = super::flux_chart::find(client, &helm, &upgrade.helm_release, upgrade.chart.as_ref(), version).await?;
    Ok((found.chart, helm, found.flags, found.said))
}

/// The HelmRelease of a file: the one named, or the only one, of `namespace`.
fn from_file(path: &std::path::Path, name: Option<&str>, namespace: &str) -> Result<Value, HelmReleaseError> {
    let (kinds, flag) = (("HelmRelease", "HelmReleases"), "--helmrelease");
    one_of_file(path, kinds, name, flag, namespace)
        .map_err(|why| HelmReleaseError::File { path: path.display().to_string(), why })
}

/// The object of kind `kinds` (`(singular, plural)`) a file holds: the one named, or the only
/// one (`flag` names one); why not, in words. A file is someone else's word (a pull request's),
/// planned with the planner's rights: its object is planned in `namespace`, the one named on the
/// command line, where what it refers to is read, never one the file names instead.
pub(super) fn one_of_file(
    path: &std::path::Path,
    (kind, kinds): (&str, &str),
    name: Option<&str>,
    flag: &str,
    namespace: &str,
) -> Result<Value, FileError> {
    let text = std::fs::read_to_string(path).map_err(|e| FileError(e.to_string()))?;
    let mut found = Vec::new();
    for doc in crate::desired::split(&text) {
        let mut budget = crate::yaml::Budget::for_manifest(doc.body.len());
        let value = crate::yaml::to_json_within(doc.body, &mut budget).map_err(|e| FileError(e.to_string()))?;
        if value.get("kind").and_then(Value::as_str) == Some(kind) {
            found.push(value);
        }
    }
    let names: Vec<String> =
        found.iter().map(|h| h.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_string()).collect();
    let bad = |why: String| Err(FileError(why));
    let at = match name {
        Some(n) => match names.iter().position(|have| have == n) {
            Some(at) => at,
            None => return bad(format!("no {kind} named {n}")),
        },
        None if found.len() == 1 => 0,
        None if found.is_empty() => return bad(format!("no {kind} in it")),
        None => return bad(format!("several {kinds} ({}): name one with {flag}", names.join(", "))),
    };
    let chosen = found.swap_remove(at);
    match chosen.pointer("/metadata/namespace").and_then(Value::as_str).filter(|n| !n.is_empty()) {
        Some(other) if other != namespace => bad(format!(
            "its {kind} is in namespace {other}, not {namespace}: a file's {kind} is planned only in the namespace \
             named on the command line, where what it refers to is read (-n {other} plans it there)"
        )),
        _ => Ok(chosen),
    }
}

/// Why a file holds no one object of the kind asked for.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct FileError(String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_names_its_helmrelease() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hr.yaml");
        let hr =
            |n: &str| format!("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {n}\n");
        std::fs::write(&path, format!("{}---\nkind: HelmRepository\n---\n{}", hr("a"), hr("b"))).unwrap();
        let several = from_file(&path, None, "ns").unwrap_err().to_string();
        assert!(several.contains("several HelmReleases (a, b)"), "{several}");
        assert_eq!(from_file(&path, Some("b"), "ns").unwrap()["metadata"]["name"], "b");
        assert!(from_file(&path, Some("c"), "ns").unwrap_err().to_string().contains("no HelmRelease named c"));
    }

    #[test]
    fn a_files_helmrelease_is_planned_only_in_the_namespace_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hr.yaml");
        let hr = |ns: &str| format!("kind: HelmRelease\nmetadata:\n  name: a\n  namespace: {ns}\n");
        std::fs::write(&path, hr("apps")).unwrap();
        assert_eq!(from_file(&path, None, "apps").unwrap()["metadata"]["name"], "a");
        let other = from_file(&path, None, "ci").unwrap_err().to_string();
        assert!(other.contains("namespace apps, not ci") && other.contains("-n apps"), "{other}");
        std::fs::write(&path, "kind: HelmRelease\nmetadata: {name: a}\n").unwrap();
        assert!(from_file(&path, None, "ci").is_ok(), "a file naming no namespace is the one named");
    }
}

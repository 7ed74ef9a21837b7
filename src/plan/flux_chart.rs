//! The chart a HelmRelease names, found as source-controller finds it, for a preview:
//! `spec.chart.spec` (a chart of a HelmRepository, HTTP or OCI, at `version`: a semver range,
//! `*` by default, resolved against the repository by Helm, whose resolver source-controller
//! shares), or `spec.chartRef` (an OCIRepository's artifact at its tag or semver range). What
//! helm-drift cannot fetch as the controller would (a GitRepository or Bucket, credentials, a
//! digest) is refused with the argument that gives the chart, never replaced by another chart.

use crate::api::ApiError;
use crate::helm::HelmBinary;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use serde_json::Value;

/// The source a HelmRelease names for its chart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ChartSource {
    /// `HelmRepository`, `OCIRepository`, `GitRepository`, `Bucket`, `HelmChart`.
    pub(crate) kind: String,
    pub(crate) namespace: String,
    pub(crate) name: String,
    /// `spec.chart.spec.chart` (none for `spec.chartRef`).
    pub(crate) chart: Option<String>,
    /// `spec.chart.spec.version`, `*` when unset (none for `spec.chartRef`).
    pub(crate) version: Option<String>,
    /// `spec.chart.spec.valuesFiles`: the chart's own files merged into its values.
    pub(crate) values_files: bool,
}

/// The chart to preview: what helm takes (`name` with `--repo`, or `oci://...`), its flags, and
/// how it was found, in words.
#[derive(Clone, Debug)]
pub(crate) struct FoundChart {
    pub(crate) chart: String,
    pub(crate) flags: Vec<String>,
    pub(crate) said: String,
}

/// Why the HelmRelease's chart is not previewed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ChartSourceError {
    #[error(
        "HelmRelease {hr}: {why}; give the chart helm-controller will install as the CHART argument (a path of your checkout, repo/name or oci://...) and --version"
    )]
    Unfetchable { hr: String, why: String },
}

/// Why a HelmRelease's chart cannot be fetched as the controller would, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unfetched(pub(crate) String);

impl From<&str> for Unfetched {
    fn from(why: &str) -> Unfetched {
        Unfetched(why.to_string())
    }
}

/// The source `hr` (of namespace `own`) names, or why it names none.
pub(crate) fn named(hr: &Value, own: &str) -> Result<ChartSource, Unfetched> {
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(String::from);
    if let Some(reference) = hr.pointer("/spec/chartRef") {
        return Ok(ChartSource {
            kind: text(reference, "kind").ok_or("spec.chartRef names no kind")?,
            namespace: text(reference, "namespace").unwrap_or_else(|| own.to_string()),
            name: text(reference, "name").ok_or("spec.chartRef names no source")?,
            chart: None,
            version: None,
            values_files: false,
        });
    }
    let spec = hr.pointer("/spec/chart/spec").ok_or("it names no chart (spec.chart.spec or spec.chartRef)")?;
    let source = spec.get("sourceRef").ok_or("spec.chart.spec names no sourceRef")?;
    let chart = text(spec, "chart").ok_or("spec.chart.spec names no chart")?;
    Ok(ChartSource {
        kind: text(source, "kind").unwrap_or_else(|| "HelmRepository".into()),
        namespace: text(source, "namespace").unwrap_or_else(|| own.to_string()),
        name: text(source, "name").ok_or("spec.chart.spec.sourceRef names no source")?,
        chart: Some(chart),
        version: Some(text(spec, "version").unwrap_or_else(|| "*".into())),
        values_files: spec.get("valuesFiles").and_then(Value::as_array).is_some_and(|f| !f.is_empty()),
    })
}

impl ChartSource {
    /// The source, for a HelmRelease from a file (a pull request's: anyone may write it) only
    /// when it lies in the namespace the planner named (`own`): a file's word never makes the
    /// planner read another namespace with their rights.
    pub(crate) fn within(self, own: &str, from_cluster: bool) -> Result<ChartSource, Unfetched> {
        if from_cluster || self.namespace == own {
            return Ok(self);
        }
        Err(Unfetched(format!(
            "its chart comes from {} {}/{}, and a HelmRelease from a file is read only in namespace {own} (-n)",
            self.kind, self.namespace, self.name
        )))
    }

    /// Why helm cannot fetch it as source-controller does, unless it is a chart of a
    /// HelmRepository or an OCIRepository's artifact.
    fn fetchable(&self) -> Result<(), Unfetched> {
        match (self.kind.as_str(), &self.chart) {
            ("HelmRepository", Some(_)) | ("OCIRepository", None) => Ok(()),
            _ => Err(Unfetched(format!(
                "its chart comes from {} {}/{}, which helm-drift cannot fetch as source-controller does",
                self.kind, self.namespace, self.name
            ))),
        }
    }

    /// `Kind namespace/name`.
    fn id(&self) -> String {
        format!("{} {}/{}", self.kind, self.namespace, self.name)
    }

    /// The chart helm fetches for this source (`object` its source read from the cluster), at
    /// the version helm resolves; why not, in words.
    pub(crate) fn chart(&self, object: &Value) -> Result<(String, Vec<String>), Unfetched> {
        self.fetchable()?;
        let spec = object.get("spec").cloned().unwrap_or(Value::Null);
        let text = |k: &str| spec.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        let id = self.id();
        for (field, what) in [
            ("secretRef", "credentials"),
            ("certSecretRef", "a client certificate"),
            ("verify", "signature verification"),
        ] {
            if spec.get(field).is_some_and(|v| !v.is_null()) {
                return Err(Unfetched(format!("{id} needs {what} (spec.{field}), which helm-drift does not read")));
            }
        }
        if text("provider").is_some_and(|p| p != "generic") {
            return Err(Unfetched(format!(
                "{id} signs in with a cloud provider (spec.provider), which helm-drift does not do"
            )));
        }
        let url = text("url").ok_or_else(|| Unfetched(format!("{id} has no spec.url")))?;
        if url.starts_with('-') || url.chars().any(char::is_whitespace) {
            return Err(Unfetched(format!("{id}: spec.url {url:?} is not a URL")));
        }
        // A chart of a HelmRepository, else an OCIRepository's artifact ([`Self::fetchable`]).
        match &self.chart {
            Some(chart) => {
                let plain = !chart.is_empty()
                    && !chart.starts_with(['-', '.'])
                    && chart.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
                if !plain {
                    return Err(Unfetched(format!("spec.chart.spec.chart {chart:?} is not a chart's name")));
                }
                let version = format!("--version={}", self.version.as_deref().unwrap_or("*"));
                match text("type") == Some("oci") || url.starts_with("oci://") {
                    true => Ok((format!("{}/{chart}", url.trim_end_matches('/')), vec![version])),
                    false => Ok((chart.clone(), vec![version, format!("--repo={url}")])),
                }
            }
            None => {
                let reference = spec.get("ref").cloned().unwrap_or(Value::Null);
                let get = |k: &str| reference.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
                if let Some(digest) = get("digest") {
                    return Err(Unfetched(format!(
                        "{id} pins a digest ({digest}), which helm-drift does not fetch by"
                    )));
                }
                let version = get("semver").or(get("tag")).unwrap_or("latest");
                Ok((url.to_string(), vec![format!("--version={version}")]))
            }
        }
    }
}

/// The chart of the HelmRelease `hr` as helm-controller would install it: its source read from
/// the cluster, the version resolved by helm (in `empty`, so that no local path is taken for
/// its name).
pub(crate) async fn find(
    client: &kube::Client,
    helm: &HelmBinary,
    hr: &str,
    source: Result<&ChartSource, &Unfetched>,
    asked: Option<&str>,
) -> Result<FoundChart, ChartSourceError> {
    let unfetchable = |why: String| ChartSourceError::Unfetchable { hr: hr.to_string(), why };
    let source = source.map_err(|why| unfetchable(why.0.clone()))?;
    source.fetchable().map_err(|e| unfetchable(e.0))?;
    let object =
        source_object(client, source).await.map_err(|e| unfetchable(format!("{} cannot be read: {e}", source.id())))?;
    let (chart, mut flags) = source.chart(&object).map_err(|e| unfetchable(e.0))?;
    if let Some(version) = asked {
        // --version given: the person's pick, said as such.
        flags.retain(|f| !f.starts_with("--version="));
        flags.push(format!("--version={version}"));
    }
    let resolved = helm
        .chart_version(&chart, &flags)
        .await
        .map_err(|e| unfetchable(format!("its chart cannot be fetched from {}: {e}", source.id())))?;
    let requested = flags.iter().find_map(|f| f.strip_prefix("--version=")).unwrap_or("*").to_string();
    flags.retain(|f| !f.starts_with("--version="));
    flags.push(format!("--version={resolved}"));
    let by = if asked.is_some() { "--version" } else { "the HelmRelease's version" };
    let mut said = format!("chart {chart} {resolved} from {} ({by} {requested})", source.id());
    if source.values_files {
        said.push_str("; its spec.chart.spec.valuesFiles are not merged into the values here");
    }
    Ok(FoundChart { chart, flags, said })
}

/// The source object (source.toolkit.fluxcd.io/v1) a HelmRelease names, as JSON.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn source_object(client: &kube::Client, source: &ChartSource) -> Result<Value, ApiError> {
    // Both kinds end in "Repository" ([`ChartSource::fetchable`]).
    let plural = format!("{}ies", source.kind.to_lowercase().trim_end_matches('y'));
    let gvk = GroupVersionKind::gvk("source.toolkit.fluxcd.io", "v1", &source.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, &plural);
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &source.namespace, &resource);
    let found = api.get(&source.name).await.map_err(|e| ApiError::from_kube(&e, "get", &plural))?;
    serde_json::to_value(found).map_err(|e| ApiError::Other { message: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn source(hr: Value) -> ChartSource {
        named(&hr, "apps").unwrap()
    }

    #[test]
    fn a_files_source_in_another_namespace_is_not_read() {
        let hr = json!({"spec": {"chart": {"spec": {"chart": "web", "sourceRef": {"name": "charts", "namespace": "flux-system"}}}}});
        let why = named(&hr, "apps").unwrap().within("apps", false).unwrap_err().0;
        assert!(why.contains("HelmRepository flux-system/charts") && why.contains("namespace apps (-n)"), "{why}");
        assert!(
            named(&hr, "apps").unwrap().within("apps", true).is_ok(),
            "the cluster's HelmRelease, as helm-controller reads it"
        );
        let own = json!({"spec": {"chart": {"spec": {"chart": "web", "sourceRef": {"name": "charts"}}}}});
        assert!(named(&own, "apps").unwrap().within("apps", false).is_ok());
    }

    #[test]
    fn the_chart_a_helmrelease_names_as_helm_takes_it() {
        let repo = source(
            json!({"spec": {"chart": {"spec": {"chart": "web", "version": "1.x", "sourceRef": {"kind": "HelmRepository", "name": "charts", "namespace": "flux-system"}}}}}),
        );
        assert_eq!((repo.namespace.as_str(), repo.version.as_deref()), ("flux-system", Some("1.x")));
        let http = json!({"spec": {"url": "http://127.0.0.1:8080"}});
        assert_eq!(
            repo.chart(&http).unwrap(),
            ("web".into(), vec!["--version=1.x".into(), "--repo=http://127.0.0.1:8080".into()])
        );
        let oci = json!({"spec": {"url": "oci://ghcr.io/org/charts/", "type": "oci"}});
        assert_eq!(repo.chart(&oci).unwrap().0, "oci://ghcr.io/org/charts/web");
        let any = source(json!({"spec": {"chart": {"spec": {"chart": "web", "sourceRef": {"name": "charts"}}}}}));
        assert_eq!(
            (any.kind.as_str(), any.namespace.as_str(), any.version.as_deref()),
            ("HelmRepository", "apps", Some("*"))
        );

        let by_ref = source(json!({"spec": {"chartRef": {"kind": "OCIRepository", "name": "web"}}}));
        let tagged = json!({"spec": {"url": "oci://ghcr.io/org/web", "ref": {"tag": "1.2.3"}}});
        assert_eq!(by_ref.chart(&tagged).unwrap(), ("oci://ghcr.io/org/web".into(), vec!["--version=1.2.3".into()]));
        let ranged = json!({"spec": {"url": "oci://ghcr.io/org/web", "ref": {"semver": ">=1.0.0 <2.0.0", "tag": "x"}}});
        assert_eq!(by_ref.chart(&ranged).unwrap().1, ["--version=>=1.0.0 <2.0.0"]);
    }

    #[test]
    fn what_cannot_be_fetched_as_the_controller_would_is_refused() {
        let git = source(
            json!({"spec": {"chart": {"spec": {"chart": "./charts/web", "sourceRef": {"kind": "GitRepository", "name": "repo"}}}}}),
        );
        assert!(
            git.chart(&Value::Null).unwrap_err().0.contains("GitRepository apps/repo, which helm-drift cannot fetch")
        );
        let repo = source(json!({"spec": {"chart": {"spec": {"chart": "web", "sourceRef": {"name": "charts"}}}}}));
        let private = json!({"spec": {"url": "https://charts.example", "secretRef": {"name": "creds"}}});
        assert!(repo.chart(&private).unwrap_err().0.contains("needs credentials (spec.secretRef)"));
        let cloud = json!({"spec": {"url": "oci://x", "provider": "aws"}});
        assert!(repo.chart(&cloud).unwrap_err().0.contains("cloud provider"));
        let flag = json!({"spec": {"url": "--kubeconfig=/x"}});
        assert!(repo.chart(&flag).unwrap_err().0.contains("is not a URL"));
        let sly = source(
            json!({"spec": {"chart": {"spec": {"chart": "--post-renderer=x", "sourceRef": {"name": "charts"}}}}}),
        );
        assert!(sly.chart(&json!({"spec": {"url": "https://c"}})).unwrap_err().0.contains("is not a chart's name"));
        let pinned = source(json!({"spec": {"chartRef": {"kind": "OCIRepository", "name": "web"}}}));
        let digest = json!({"spec": {"url": "oci://r/web", "ref": {"digest": "sha256:ab"}}});
        assert!(pinned.chart(&digest).unwrap_err().0.contains("pins a digest"));
        assert_eq!(
            named(&json!({"spec": {}}), "apps").unwrap_err().0,
            "it names no chart (spec.chart.spec or spec.chartRef)"
        );
    }
}

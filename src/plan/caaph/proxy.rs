//! A Cluster API Helm add-on provider `HelmChartProxy` as CAAPH reads it: which Clusters it
//! selects, the chart and release it installs on each, its values template, its reconcile
//! strategy and the Helm options that decide what its upgrade renders and applies.

use serde_json::Value;
use std::path::PathBuf;

/// Where the HelmChartProxy is read from.
#[derive(Clone, Debug)]
pub(crate) enum ChartProxySource {
    /// `--helmchartproxy NAME`: the management cluster's, in the session's namespace.
    Cluster(String),
    /// `--helmchartproxy-file FILE` (with `--helmchartproxy NAME` to pick one of several).
    File { path: PathBuf, name: Option<String> },
}

/// A HelmChartProxy that cannot be planned, and why.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProxyError {
    #[error("HelmChartProxy {namespace}/{name} cannot be read: {why}")]
    Unreadable { namespace: String, name: String, why: String },
    #[error("{path}: {why}")]
    File { path: String, why: crate::plan::helmrelease::FileError },
    #[error("HelmChartProxy {proxy}: {why}")]
    Spec { proxy: String, why: String },
}

/// The label CAAPH puts on each HelmReleaseProxy: its HelmChartProxy's name.
pub(crate) const PROXY_LABEL: &str = "helmreleaseproxy.addons.cluster.x-k8s.io/helmchartproxy-name";
/// The annotation CAAPH puts on a HelmReleaseProxy whose release name Helm generated.
pub(crate) const NAME_GENERATED: &str = "helmreleaseproxy.addons.cluster.x-k8s.io/is-release-name-generated";
/// The annotation CAAPH puts on a HelmReleaseProxy once its release installed.
pub(crate) const INSTALLED: &str = "helmreleaseproxy.addons.cluster.x-k8s.io/release-successfully-installed";
/// Cluster API's pause annotation.
pub(crate) const PAUSED: &str = "cluster.x-k8s.io/paused";

/// Why a `clusterSelector` selects nothing the API server would take the same way.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct SelectorError(String);

/// The parts of a HelmChartProxy a plan needs.
#[derive(Clone, Debug)]
pub(crate) struct ChartProxy {
    pub(crate) namespace: String,
    pub(crate) name: String,
    /// `spec.clusterSelector` as a label selector (`""` selects every Cluster).
    pub(crate) selector: String,
    pub(crate) chart_name: String,
    pub(crate) repo_url: String,
    /// `spec.releaseName`; Helm generates one when empty.
    pub(crate) release_name: Option<String>,
    /// `spec.namespace` (CAAPH's webhook defaults it to `default`).
    pub(crate) release_namespace: String,
    pub(crate) version: Option<String>,
    pub(crate) values_template: String,
    /// `spec.reconcileStrategy: InstallOnce`: installed once, never upgraded or uninstalled.
    pub(crate) install_once: bool,
    pub(crate) paused: bool,
    /// `spec.options`.
    pub(crate) options: Value,
}

impl ChartProxy {
    /// `namespace/name`.
    pub(crate) fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// A HelmChartProxy's fields (its namespace `namespace` when it names none: one from a
    /// file).
    pub(crate) fn from_json(object: &Value, namespace: &str) -> Result<ChartProxy, ProxyError> {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty());
        let name = text("/metadata/name").unwrap_or_default().to_string();
        let namespace = text("/metadata/namespace").unwrap_or(namespace).to_string();
        let bad = |why: String| ProxyError::Spec { proxy: format!("{namespace}/{name}"), why };
        let chart_name = text("/spec/chartName").ok_or_else(|| bad("spec.chartName is empty".into()))?;
        // CAAPH fetches chartName from repoURL: a path would be a chart on the planner's disk.
        let path = chart_name.starts_with('.') || chart_name.contains(['/', '\\']) || chart_name.contains(':');
        if path {
            return Err(bad(format!("spec.chartName {chart_name:?} is a path: it names a chart of spec.repoURL")));
        }
        if text("/spec/repoURL").is_none() {
            return Err(bad("spec.repoURL is empty: CAAPH fetches spec.chartName from it".into()));
        }
        let selector = object.pointer("/spec/clusterSelector").cloned().unwrap_or(Value::Null);
        let annotations = object.pointer("/metadata/annotations");
        Ok(ChartProxy {
            selector: label_selector(&selector).map_err(|why| bad(format!("spec.clusterSelector: {why}")))?,
            chart_name: chart_name.to_string(),
            repo_url: text("/spec/repoURL").unwrap_or_default().to_string(),
            release_name: text("/spec/releaseName").map(str::to_string),
            release_namespace: text("/spec/namespace").unwrap_or("default").to_string(),
            version: text("/spec/version").map(str::to_string),
            values_template: text("/spec/valuesTemplate").unwrap_or_default().to_string(),
            install_once: text("/spec/reconcileStrategy") == Some("InstallOnce"),
            paused: annotations.and_then(|a| a.get(PAUSED)).is_some(),
            options: object.pointer("/spec/options").cloned().unwrap_or(Value::Null),
            namespace,
            name,
        })
    }

    /// An option of `spec.options` (`/upgrade/resetValues`), false when not set.
    pub(crate) fn option(&self, pointer: &str) -> bool {
        self.options.pointer(pointer).and_then(Value::as_bool).unwrap_or(false)
    }

    /// `options.install.createNamespace`: the CRD defaults it to true once `install` is given;
    /// CAAPH's own default is also true.
    pub(crate) fn creates_namespace(&self) -> bool {
        self.options.pointer("/install/createNamespace").and_then(Value::as_bool).unwrap_or(true)
    }
}

/// A metav1 LabelSelector as the label selector text the API server takes: `matchLabels` as
/// `k=v`, `matchExpressions` as `k in (a,b)`, `k notin (a,b)`, `k`, `!k`. Keys and values
/// must be label text (a comma or parenthesis would change what it selects).
pub(crate) fn label_selector(selector: &Value) -> Result<String, SelectorError> {
    let label = |s: &str, what: &str| -> Result<(), SelectorError> {
        let ok = s.len() <= 316 && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
        if ok { Ok(()) } else { Err(SelectorError(format!("{what} {s:?} is not label text"))) }
    };
    let mut parts = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (key, value) in labels {
            let value = value.as_str().ok_or_else(|| SelectorError(format!("matchLabels {key:?} is not a string")))?;
            label(key, "key")?;
            label(value, "value")?;
            parts.push(format!("{key}={value}"));
        }
    }
    for e in selector.get("matchExpressions").and_then(Value::as_array).into_iter().flatten() {
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        label(key, "key")?;
        let values: Vec<&str> =
            e.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        for v in &values {
            label(v, "value")?;
        }
        let operator = e.get("operator").and_then(Value::as_str).unwrap_or_default();
        let listed = || format!("({})", values.join(","));
        parts.push(match operator {
            "In" | "NotIn" if values.is_empty() => {
                return Err(SelectorError(format!("{operator} on {key:?} lists no value")));
            }
            "In" => format!("{key} in {}", listed()),
            "NotIn" => format!("{key} notin {}", listed()),
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                return Err(SelectorError(format!("{operator} on {key:?} takes no value")));
            }
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            other => {
                return Err(SelectorError(format!("operator {other:?} is not In, NotIn, Exists or DoesNotExist")));
            }
        });
    }
    Ok(parts.join(","))
}

/// The HelmChartProxy of a file: the one named, or the only one, of `namespace`.
pub(crate) fn from_file(path: &std::path::Path, name: Option<&str>, namespace: &str) -> Result<Value, ProxyError> {
    let (kinds, flag) = (("HelmChartProxy", "HelmChartProxies"), "--helmchartproxy");
    crate::plan::helmrelease::one_of_file(path, kinds, name, flag, namespace)
        .map_err(|why| ProxyError::File { path: path.display().to_string(), why })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cluster_selector_is_label_selector_text() {
        let s = json!({"matchLabels": {"fleet": "runtime"}, "matchExpressions": [
            {"key": "env", "operator": "In", "values": ["prod", "stage"]},
            {"key": "tier", "operator": "NotIn", "values": ["edge"]},
            {"key": "cni", "operator": "Exists"},
            {"key": "legacy", "operator": "DoesNotExist"}]});
        assert_eq!(label_selector(&s).unwrap(), "fleet=runtime,env in (prod,stage),tier notin (edge),cni,!legacy");
        assert_eq!(label_selector(&json!({})).unwrap(), "", "an empty selector selects every Cluster");
        let forged = json!({"matchLabels": {"fleet": "a,env!=prod"}});
        assert!(label_selector(&forged).unwrap_err().to_string().contains("is not label text"));
        let empty_in = json!({"matchExpressions": [{"key": "env", "operator": "In"}]});
        assert!(label_selector(&empty_in).unwrap_err().to_string().contains("lists no value"));
    }

    #[test]
    fn a_proxy_is_read_with_caaph_defaults() {
        let p = ChartProxy::from_json(
            &json!({"metadata": {"name": "cni", "annotations": {PAUSED: ""}}, "spec": {"chartName": "basic",
                "repoURL": "oci://r/c", "clusterSelector": {"matchLabels": {"a": "b"}}, "options": {"upgrade": {"resetValues": true}}}}),
            "fleet",
        )
        .unwrap();
        assert_eq!(
            (p.id().as_str(), p.release_namespace.as_str(), p.selector.as_str()),
            ("fleet/cni", "default", "a=b")
        );
        assert!(p.paused && !p.install_once && p.option("/upgrade/resetValues") && p.creates_namespace());
        let none = ChartProxy::from_json(&json!({"metadata": {"name": "x"}, "spec": {}}), "fleet").unwrap_err();
        assert_eq!(none.to_string(), "HelmChartProxy fleet/x: spec.chartName is empty");
        for path in ["./charts/evil", "../evil", "/tmp/evil", "charts/evil", ".evil", "file:evil", "c:\\evil"] {
            let spec =
                json!({"metadata": {"name": "x"}, "spec": {"chartName": path, "repoURL": "https://charts.example"}});
            let why = ChartProxy::from_json(&spec, "fleet").unwrap_err().to_string();
            assert!(why.contains("is a path"), "{path}: {why}");
        }
        let bare = json!({"metadata": {"name": "x"}, "spec": {"chartName": "cilium"}});
        assert!(ChartProxy::from_json(&bare, "fleet").unwrap_err().to_string().contains("spec.repoURL is empty"));
    }
}

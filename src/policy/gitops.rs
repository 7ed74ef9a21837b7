//! Rules people already keep in Git: a Flux `HelmRelease` (`spec.driftDetection`) or an Argo CD
//! `Application` (`spec.ignoreDifferences`) read as they are, for the release they describe.
//! What is not understood is named in a warning, never dropped silently.

use crate::policy::ignore::{IgnoreError, IgnoreRule, Selector};
use crate::policy::jq::PathQuery;
use serde_json::Value;
use std::sync::Arc;

/// What one document contributes.
#[derive(Debug, Default)]
pub(crate) struct Imported {
    pub(crate) rules: Vec<IgnoreRule>,
    pub(crate) warnings: Vec<String>,
    /// The documents read, `(what, release)`: `("apps.yaml (Application web)", "web")`.
    pub(crate) describes: Vec<(String, String)>,
}

/// Which GitOps object a document is, if any.
pub(crate) fn kind_of(doc: &Value) -> Option<&'static str> {
    let api = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    match doc.get("kind").and_then(Value::as_str) {
        Some("HelmRelease") if api.starts_with("helm.toolkit.fluxcd.io/") => Some("HelmRelease"),
        Some("Application") if api.starts_with("argoproj.io/") => Some("Application"),
        _ => None,
    }
}

/// Reads a Flux HelmRelease or an Argo CD Application; `origin` names the file.
pub(crate) fn import(doc: &Value, origin: &str) -> Result<Imported, IgnoreError> {
    match kind_of(doc) {
        Some("HelmRelease") => flux(doc, origin),
        Some("Application") => argo(doc, origin),
        _ => Ok(Imported::default()),
    }
}

fn text<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// Flux: the release is `spec.releaseName`, else `[targetNamespace-]name`; its rules are read
/// as from the cluster ([`super::flux`]), an invalid one an error of the file.
fn flux(doc: &Value, origin: &str) -> Result<Imported, IgnoreError> {
    let name = text(doc, "/metadata/name").unwrap_or_default();
    let release = crate::model::flux_release_name(doc).unwrap_or_else(|| name.to_string());
    let at = format!("{origin} (HelmRelease {name})");
    let mut out = Imported::default();
    let Some(drift) = doc.pointer("/spec/driftDetection") else { return Ok(out) };
    let read = super::flux::drift_rules(drift, &at);
    // `mode` says what helm-controller does about drift (`disabled`, its default: nothing); it
    // changes nothing here, as when the HelmRelease is read from the cluster.
    for rule in read.rules {
        let mut r = rule?;
        r.release = Some(release.clone());
        out.rules.push(r);
    }
    out.warnings = read.left_out.into_iter().map(|w| format!("{at}: {w} is not supported and was left out")).collect();
    out.describes.push((at, release));
    Ok(out)
}

/// Argo CD: the release is `spec.source.helm.releaseName`, else the Application's name.
fn argo(doc: &Value, origin: &str) -> Result<Imported, IgnoreError> {
    let name = text(doc, "/metadata/name").unwrap_or_default();
    let release = text(doc, "/spec/source/helm/releaseName").unwrap_or(name).to_string();
    let at = format!("{origin} (Application {name})");
    let mut out = Imported::default();
    for (i, entry) in doc.pointer("/spec/ignoreDifferences").and_then(Value::as_array).into_iter().flatten().enumerate()
    {
        let prefix = format!("spec.ignoreDifferences[{i}]");
        let known =
            ["group", "kind", "name", "namespace", "jsonPointers", "jqPathExpressions", "managedFieldsManagers"];
        out.warnings.extend(super::flux::unknown(entry, &known, &prefix));
        let list = |k: &str| -> Vec<String> {
            entry
                .get(k)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        let group = entry.get("group").and_then(Value::as_str);
        let selector = Selector::exact(group, text(entry, "/kind"), text(entry, "/name"), text(entry, "/namespace"));
        let mut r = IgnoreRule::new(list("jsonPointers"), selector, &format!("{at} {prefix}"));
        for expr in list("jqPathExpressions") {
            let q = PathQuery::new(&expr)
                .map_err(|e| IgnoreError::Rule { rule: format!("{at} {prefix}"), why: e.to_string() })?;
            r.jq.push(Arc::new(q));
        }
        r.managers = list("managedFieldsManagers");
        r.release = Some(release.clone());
        out.rules.push(r);
    }
    out.warnings = out.warnings.into_iter().map(|w| format!("{at}: {w} is not supported and was left out")).collect();
    out.describes.push((at, release));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ignore::{ObjectRef, managers_for, paths_for};
    use serde_json::json;

    fn deployment() -> ObjectRef<'static> {
        ObjectRef {
            group: "apps",
            version: "v1",
            kind: "Deployment",
            name: "web",
            namespace: Some("apps"),
            metadata: None,
        }
    }

    #[test]
    fn flux_helm_release() {
        let doc: Value = serde_yaml::from_str(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web}\nspec:\n  targetNamespace: apps\n  driftDetection:\n    mode: enabled\n    ignore:\n      - paths: [/spec/replicas]\n        target: {kind: Deployment, labelSelector: a=b}\n",
        )
        .unwrap();
        let got = import(&doc, "hr.yaml").unwrap();
        assert_eq!(got.rules[0].release.as_deref(), Some("apps-web"));
        let meta = json!({"labels": {"a": "b"}});
        let labelled = ObjectRef { metadata: Some(&meta), ..deployment() };
        assert_eq!(paths_for(&got.rules, &labelled, "apps-web", &json!({}))[0].0, "/spec/replicas");
        assert!(paths_for(&got.rules, &deployment(), "apps-web", &json!({})).is_empty(), "its label selector");
        assert!(paths_for(&got.rules, &labelled, "other", &json!({})).is_empty(), "for its release only");
        assert!(got.warnings.is_empty(), "{:?}", got.warnings);
        let off: Value = serde_yaml::from_str("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: web}\nspec: {releaseName: w, driftDetection: {mode: disabled}}\n").unwrap();
        let off = import(&off, "hr.yaml").unwrap();
        assert!(off.rules.is_empty() && off.warnings.is_empty(), "mode: disabled turns nothing off: {off:?}");
        assert_eq!(off.describes[0].1, "w");
    }

    #[test]
    fn argo_application() {
        let doc: Value = serde_yaml::from_str(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web}\nspec:\n  ignoreDifferences:\n    - group: apps\n      kind: Deployment\n      jsonPointers: [/spec/replicas]\n      jqPathExpressions: ['.metadata.labels.team']\n      managedFieldsManagers: [kube-controller-manager]\n      extra: 1\n",
        )
        .unwrap();
        let got = import(&doc, "app.yaml").unwrap();
        let live = json!({"metadata": {"labels": {"team": "x"}}});
        let paths: Vec<String> =
            paths_for(&got.rules, &deployment(), "web", &live).into_iter().map(|(p, _)| p).collect();
        assert_eq!(paths, ["/spec/replicas", "/metadata/labels/team"]);
        assert_eq!(managers_for(&got.rules, &deployment(), "web")[0].0, "kube-controller-manager");
        let other =
            ObjectRef { group: "", version: "v1", kind: "Deployment", name: "web", namespace: None, metadata: None };
        assert!(paths_for(&got.rules, &other, "web", &live).is_empty(), "groups match exactly");
        assert_eq!(got.warnings.len(), 1, "{:?}", got.warnings);
    }
}

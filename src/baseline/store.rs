//! Where a baseline is kept: a YAML file (`./.helm-drift-baseline.yaml` by default) or a
//! ConfigMap per release (next to it, or where the operator named); read, parsed, rendered and
//! written here, judged in the parent.

use super::document::{
    Baseline, BaselineError, CONFIGMAP_KEY, CONFIGMAP_LABEL, CONFIGMAP_PREFIX, Place, parse, render,
};

/// The label on a baseline kept where the operator named: the release's namespace.
const NAMESPACE_LABEL: &str = "helm-drift.io/baseline-namespace";

/// Reads a baseline file (an empty baseline when it does not exist).
pub(crate) fn read_file(path: &std::path::Path) -> Result<Baseline, BaselineError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, &path.display().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => parse("", ""),
        Err(e) => Err(BaselineError::Read { at: path.display().to_string(), why: e.to_string() }),
    }
}

/// Writes a baseline file (through a temporary file, so a reader never sees half of it).
pub(crate) fn write_file(path: &std::path::Path, b: &Baseline) -> Result<(), BaselineError> {
    let err = |e: std::io::Error| BaselineError::Write { at: path.display().to_string(), why: e.to_string() };
    let tmp = path.with_extension("yaml.tmp");
    std::fs::write(&tmp, render(b)).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// The name of the ConfigMap holding a release's baseline.
pub(crate) fn configmap_name(release: &str) -> String {
    format!("{CONFIGMAP_PREFIX}{release}")
}

/// Reads a release's baseline from its ConfigMap at `place` (an empty baseline when there is
/// none).
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn read_configmap(client: &kube::Client, place: &Place) -> Result<Baseline, BaselineError> {
    use k8s_openapi::api::core::v1::ConfigMap;
    let at = place.to_string();
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), &place.namespace);
    let found = crate::api::retry(|| api.get_opt(&place.name)).await.map_err(|e| BaselineError::Read {
        at: at.clone(),
        why: crate::api::ApiError::from_kube(&e, "get", "configmaps").to_string(),
    })?;
    let text = found.and_then(|c| c.data).and_then(|mut d| d.remove(CONFIGMAP_KEY)).unwrap_or_default();
    parse(&text, &at)
}

/// Whether a ConfigMap is at `place` (its metadata only: a baseline not taken is never parsed).
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn exists(client: &kube::Client, place: &Place) -> bool {
    use k8s_openapi::api::core::v1::ConfigMap;
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), &place.namespace);
    matches!(crate::api::retry(|| api.get_metadata_opt(&place.name)).await, Ok(Some(_)))
}

/// The releases (`(namespace, release)`) that have a baseline ConfigMap in scope (one
/// namespace, or every one); empty when they cannot be listed.
pub(crate) async fn configmaps(client: &kube::Client, namespace: Option<&str>) -> Vec<(String, String)> {
    use k8s_openapi::api::core::v1::ConfigMap;
    let api: kube::Api<ConfigMap> = match namespace {
        Some(ns) => kube::Api::namespaced(client.clone(), ns),
        None => kube::Api::all(client.clone()),
    };
    let lp = kube::api::ListParams::default().labels(CONFIGMAP_LABEL);
    let Ok(list) = crate::api::list_all_metadata(&api, &lp).await else { return Vec::new() };
    list.into_iter()
        .filter_map(|m| {
            let release = m.metadata.labels?.remove(CONFIGMAP_LABEL)?;
            (m.metadata.name? == configmap_name(&release)).then_some((m.metadata.namespace?, release))
        })
        .collect()
}

/// Writes a release's baseline (`release` of `namespace`) to its ConfigMap at `place`
/// (server-side apply as `helm-drift`), labelled so that it is found, and never one of Helm's
/// own records.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn write_configmap(
    client: &kube::Client,
    place: &Place,
    (namespace, release): (&str, &str),
    b: &Baseline,
) -> Result<(), BaselineError> {
    use k8s_openapi::api::core::v1::ConfigMap;
    let mut labels = serde_json::json!({CONFIGMAP_LABEL: release});
    if place.named {
        labels[NAMESPACE_LABEL] = namespace.into();
    }
    let body = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": place.name, "namespace": place.namespace, "labels": labels},
        "data": {CONFIGMAP_KEY: render(b)},
    });
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), &place.namespace);
    let params = kube::api::PatchParams::apply("helm-drift").force();
    let patched = api.patch(&place.name, &params, &kube::api::Patch::Apply(&body)).await;
    patched.map(|_| ()).map_err(|e| BaselineError::Write {
        at: place.to_string(),
        why: crate::api::ApiError::from_kube(&e, "patch", "configmaps").to_string(),
    })
}

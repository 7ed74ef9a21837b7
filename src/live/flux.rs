//! Flux HelmReleases (helm.toolkit.fluxcd.io/v2), each cut to what helm-drift needs of it
//! ([`FluxInstaller`]: the release it installs and its drift rules) as its page is read.

use crate::api::ApiError;
use crate::model::FluxInstaller;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::GroupVersionKind;
use kube::discovery::ApiResource;

/// The most HelmReleases one listing keeps (past them, one is not found: its release is judged
/// without its rules, which reports more, never less).
pub(crate) const MOST_HELM_RELEASES: usize = 4096;

/// The HelmReleases of `namespace` (every namespace: `None`), as kept; none when the kind is not
/// served; an error when the reader may not list them (or the server fails).
pub(crate) async fn helm_releases(
    client: &kube::Client,
    namespace: Option<&str>,
) -> Result<Vec<FluxInstaller>, ApiError> {
    let gvk = GroupVersionKind::gvk("helm.toolkit.fluxcd.io", "v2", "HelmRelease");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "helmreleases");
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let mut kept = 0;
    let read = crate::api::list_kept(client, &api, &ListParams::default(), |hr: DynamicObject| {
        let listed_in = hr.metadata.namespace.clone().unwrap_or_default();
        let found = serde_json::to_value(hr).ok().and_then(|v| FluxInstaller::of(&v, &listed_in))?;
        kept += 1;
        (kept <= MOST_HELM_RELEASES).then_some(found)
    })
    .await;
    match read {
        Ok(found) => Ok(found),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Vec::new()),
        Err(e) => Err(ApiError::from_kube(&e, "list", "helmreleases.helm.toolkit.fluxcd.io")),
    }
}

//! When a record stored in one namespace speaks for a release in another: Flux stores a
//! HelmRelease's record in its own namespace (`spec.storageNamespace`'s default) while the
//! objects go to `spec.targetNamespace`. Such a record is taken when the operator trusts the
//! storage namespace, or when a HelmRelease there installs it (its spec: the target, the
//! storage, the release name as helm-controller gives it). The HelmRelease, its status
//! included, is the storage namespace's own word (its editors may write the status
//! subresource: Flux's `flux-edit` role grants `*` on its group), so it only names the claim:
//! what the record lists in the other namespace is judged or written only where the objects
//! there carry that HelmRelease's origin labels ([`crate::model::Home::claimed`]). Otherwise the
//! record is refused.

use crate::model::{Trust, Vouch};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use serde_json::Value;

/// HelmReleases read from one namespace a page at a time, and at most this many pages (a
/// namespace flooded with large ones costs a page at a time; one past them is not found).
const PAGE: u32 = 16;
const MOST: usize = 256;

/// Why the record of `release` stored in `stored` may speak for `namespace`: `Ok(None)` when
/// nothing does, `Err` when the HelmReleases of `stored` could not be read.
pub(crate) async fn vouch(
    client: &kube::Client,
    trust: &Trust,
    stored: &str,
    namespace: &str,
    release: &str,
) -> Result<Option<Vouch>, crate::api::ApiError> {
    if trust.trusts(stored) {
        return Ok(Some(Vouch::Trusted));
    }
    let found = helm_releases(client, stored).await?;
    Ok(found.iter().find_map(|hr| vouched_by(hr, stored, namespace, release)))
}

/// Whether one HelmRelease (as JSON) of namespace `stored` installs `release` into `namespace`
/// with its record in `stored`, as its spec says (its status is no more than its spec: the same
/// editors write it).
fn vouched_by(hr: &Value, stored: &str, namespace: &str, release: &str) -> Option<Vouch> {
    let text = |pointer: &str| hr.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty());
    let name = text("/metadata/name")?;
    let own = text("/metadata/namespace").unwrap_or(stored);
    let target = text("/spec/targetNamespace").unwrap_or(own);
    let storage = text("/spec/storageNamespace").unwrap_or(own);
    if own != stored || target != namespace || storage != stored {
        return None;
    }
    if crate::model::flux_release_name(hr).as_deref() != Some(release) {
        return None;
    }
    let service_account = text("/spec/serviceAccountName").map(String::from);
    Some(Vouch::HelmRelease { name: name.to_string(), service_account })
}

/// The HelmReleases of `namespace` (helm.toolkit.fluxcd.io/v2), read a page at a time; none when
/// the kind is not served; an error when the reader may not list them (or the server fails).
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn helm_releases(client: &kube::Client, namespace: &str) -> Result<Vec<Value>, crate::api::ApiError> {
    let gvk = GroupVersionKind::gvk("helm.toolkit.fluxcd.io", "v2", "HelmRelease");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "helmreleases");
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    let mut found = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut params = ListParams::default().limit(PAGE);
        params.continue_token = token.take();
        let list = match api.list(&params).await {
            Ok(list) => list,
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(found),
            Err(e) => return Err(crate::api::ApiError::from_kube(&e, "list", "helmreleases.helm.toolkit.fluxcd.io")),
        };
        found.extend(list.items.into_iter().filter_map(|o| serde_json::to_value(o).ok()));
        match list.metadata.continue_.filter(|t| !t.is_empty()) {
            Some(next) if found.len() < MOST => token = Some(next),
            _ => return Ok(found),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hr(spec: Value, status: Value) -> Value {
        json!({"metadata": {"name": "podinfo", "namespace": "flux-system"}, "spec": spec, "status": status})
    }

    fn reconciled() -> Value {
        json!({"storageNamespace": "flux-system", "history": [{"name": "apps-podinfo", "namespace": "apps", "version": 2}]})
    }

    #[test]
    fn a_helmrelease_names_the_claim_by_its_spec_and_its_status_adds_nothing() {
        let spec = json!({"targetNamespace": "apps", "releaseName": "apps-podinfo", "serviceAccountName": "deployer"});
        let v = vouched_by(&hr(spec.clone(), reconciled()), "flux-system", "apps", "apps-podinfo");
        assert_eq!(v, Some(Vouch::HelmRelease { name: "podinfo".into(), service_account: Some("deployer".into()) }));
        // The status is its editors' word as much as the spec: the spec alone names the claim.
        let bare = vouched_by(&hr(spec.clone(), json!({})), "flux-system", "apps", "apps-podinfo");
        assert_eq!(bare, v);
        // The default release name, as helm-controller gives it.
        let default = json!({"targetNamespace": "apps"});
        assert!(vouched_by(&hr(default, json!({})), "flux-system", "apps", "apps-podinfo").is_some());
        // A status naming another release, target or storage changes nothing either way.
        let forged = json!({"storageNamespace": "x", "history": [{"name": "other", "namespace": "kube-system"}]});
        assert_eq!(vouched_by(&hr(spec.clone(), forged.clone()), "flux-system", "apps", "apps-podinfo"), v);
        assert_eq!(vouched_by(&hr(spec.clone(), forged), "flux-system", "kube-system", "other"), None);
        // Another release, another namespace, a record stored elsewhere.
        assert_eq!(vouched_by(&hr(spec.clone(), reconciled()), "flux-system", "apps", "other"), None);
        assert_eq!(vouched_by(&hr(spec.clone(), reconciled()), "flux-system", "kube-system", "apps-podinfo"), None);
        let elsewhere = json!({"targetNamespace": "apps", "storageNamespace": "apps"});
        assert_eq!(vouched_by(&hr(elsewhere, reconciled()), "flux-system", "apps", "apps-podinfo"), None);
        let moved = json!({"targetNamespace": "kube-system", "releaseName": "apps-podinfo"});
        assert_eq!(vouched_by(&hr(moved, reconciled()), "flux-system", "apps", "apps-podinfo"), None);
        // A HelmRelease of another namespace (a list answers its own only; a forged one too).
        let mut other = hr(spec, reconciled());
        other["metadata"]["namespace"] = json!("tenant");
        assert_eq!(vouched_by(&other, "flux-system", "apps", "apps-podinfo"), None);
    }
}

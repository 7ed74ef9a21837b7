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

use crate::model::{FluxInstaller, Trust, Vouch};

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
    let found = crate::live::flux::helm_releases(client, Some(stored)).await?;
    Ok(found.iter().find_map(|hr| vouched_by(hr, stored, namespace, release)))
}

/// Whether one HelmRelease of namespace `stored` installs `release` into `namespace` with its
/// record in `stored`, as its spec says (its status is no more than its spec: the same editors
/// write it).
fn vouched_by(hr: &FluxInstaller, stored: &str, namespace: &str, release: &str) -> Option<Vouch> {
    hr.installs(stored, namespace, release)
        .then(|| Vouch::HelmRelease { name: hr.name.clone(), service_account: hr.service_account.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn hr(spec: Value, status: Value) -> FluxInstaller {
        let hr = json!({"metadata": {"name": "podinfo", "namespace": "flux-system"}, "spec": spec, "status": status});
        FluxInstaller::of(&hr, "flux-system").unwrap()
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
        other.namespace = "tenant".into();
        assert_eq!(vouched_by(&other, "flux-system", "apps", "apps-podinfo"), None);
    }
}

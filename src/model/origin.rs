//! What names an object's release where the object lives: Helm's ownership annotations and the
//! origin labels Flux's helm-controller puts on everything it installs, and the release name
//! helm-controller gives a HelmRelease. Only whoever may write the object can put them there,
//! so they are the evidence of the object's namespace (a record's claim is the word of its own).

use serde_json::Value;

/// Helm's ownership annotations, set on every object it applies.
pub(crate) const RELEASE_NAME_ANNOTATION: &str = "meta.helm.sh/release-name";
pub(crate) const RELEASE_NAMESPACE_ANNOTATION: &str = "meta.helm.sh/release-namespace";
/// helm-controller's origin labels (its post-renderer, always on): the HelmRelease that
/// installed the object, by name and namespace.
pub(crate) const FLUX_NAME_LABEL: &str = "helm.toolkit.fluxcd.io/name";
pub(crate) const FLUX_NAMESPACE_LABEL: &str = "helm.toolkit.fluxcd.io/namespace";

/// One string of an object's `metadata.labels` or `metadata.annotations`.
fn meta<'a>(object: &'a Value, map: &str, key: &str) -> Option<&'a str> {
    object.get("metadata")?.get(map)?.get(key)?.as_str()
}

/// The release (namespace, name) Helm's ownership annotations on `object` give it to.
pub(crate) fn helm_owner(object: &Value) -> Option<(&str, &str)> {
    let name = meta(object, "annotations", RELEASE_NAME_ANNOTATION)?;
    Some((meta(object, "annotations", RELEASE_NAMESPACE_ANNOTATION)?, name))
}

/// The HelmRelease (namespace, name) Flux's origin labels on `object` name.
pub(crate) fn flux_origin(object: &Value) -> Option<(&str, &str)> {
    Some((meta(object, "labels", FLUX_NAMESPACE_LABEL)?, meta(object, "labels", FLUX_NAME_LABEL)?))
}

/// The release a Flux HelmRelease (as JSON) installs, as helm-controller names it:
/// `spec.releaseName`, else `[spec.targetNamespace-]metadata.name`, shortened past Helm's 53
/// characters; `None` without a name.
pub(crate) fn flux_release_name(hr: &Value) -> Option<String> {
    let text = |pointer: &str| hr.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty());
    let name = text("/metadata/name")?;
    let release = match (text("/spec/releaseName"), text("/spec/targetNamespace")) {
        (Some(r), _) => r.to_string(),
        (None, Some(target)) => format!("{target}-{name}"),
        (None, None) => name.to_string(),
    };
    Some(shorten(&release))
}

/// A release name past Helm's 53 characters as helm-controller shortens it: its first 40
/// bytes, a dash and the first 12 hex digits of its SHA-256.
pub(crate) fn shorten(name: &str) -> String {
    if name.len() <= 53 {
        return name.to_string();
    }
    let sum = crate::digest::sha256_hex(name, 6);
    // The first 40 bytes, as Go slices them (a name is ASCII where Kubernetes takes it).
    let mut at = 40;
    while !name.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}-{sum}", &name[..at])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_long_release_name_is_shortened_as_flux_does() {
        assert_eq!(shorten("apps-podinfo"), "apps-podinfo");
        let long = "a-very-long-target-namespace-for-the-team-apps-and-the-podinfo-release";
        let short = shorten(long);
        assert_eq!(short.len(), 53);
        assert!(short.starts_with(&long[..40]) && short.as_bytes()[40] == b'-', "{short}");
    }

    #[test]
    fn a_helmrelease_names_its_release_as_helm_controller_does() {
        let hr = |spec: Value| json!({"metadata": {"name": "podinfo", "namespace": "flux-system"}, "spec": spec});
        assert_eq!(flux_release_name(&hr(json!({}))).as_deref(), Some("podinfo"));
        assert_eq!(flux_release_name(&hr(json!({"targetNamespace": "apps"}))).as_deref(), Some("apps-podinfo"));
        let named = json!({"targetNamespace": "apps", "releaseName": "web"});
        assert_eq!(flux_release_name(&hr(named)).as_deref(), Some("web"));
        assert_eq!(flux_release_name(&json!({"spec": {}})), None);
    }

    #[test]
    fn owners_are_read_from_the_objects_own_metadata() {
        let o = json!({"metadata": {
            "labels": {FLUX_NAME_LABEL: "web", FLUX_NAMESPACE_LABEL: "flux-system"},
            "annotations": {RELEASE_NAME_ANNOTATION: "web", RELEASE_NAMESPACE_ANNOTATION: "apps"}}});
        assert_eq!(flux_origin(&o), Some(("flux-system", "web")));
        assert_eq!(helm_owner(&o), Some(("apps", "web")));
        let half =
            json!({"metadata": {"labels": {FLUX_NAME_LABEL: "web"}, "annotations": {RELEASE_NAME_ANNOTATION: 1}}});
        assert_eq!((flux_origin(&half), helm_owner(&half)), (None, None));
    }
}

//! A Flux HelmRelease as helm-drift keeps it: which release it installs (its name, target and
//! storage namespaces, as helm-controller gives them), whom it writes as, and its drift rules
//! (`spec.driftDetection`, bounded), cut from the object as it is read. It is its namespace's
//! word (whoever edits HelmReleases there writes its spec and its status alike).

use serde_json::Value;

/// The most bytes of one HelmRelease's `spec.driftDetection` kept; past it, its rules are named
/// as too large and none of them is applied (so more is reported, never less).
pub(crate) const DRIFT_BYTES: usize = 64 * 1024;

/// A HelmRelease, what helm-drift needs of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FluxInstaller {
    /// Its own namespace and name.
    pub(crate) namespace: String,
    pub(crate) name: String,
    /// The release it installs ([`super::flux_release_name`]).
    pub(crate) release: String,
    /// `spec.targetNamespace` and `spec.storageNamespace`, else its own namespace.
    pub(crate) target: String,
    pub(crate) storage: String,
    /// `spec.serviceAccountName`, of its own namespace.
    pub(crate) service_account: Option<String>,
    pub(crate) drift: DriftSpec,
}

/// Its `spec.driftDetection`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DriftSpec {
    Absent,
    Stated(Value),
    /// Longer than [`DRIFT_BYTES`] (its length).
    TooLarge(usize),
}

impl FluxInstaller {
    /// What is kept of a HelmRelease (as JSON) listed in `listed_in`; `None` without a name.
    pub(crate) fn of(hr: &Value, listed_in: &str) -> Option<FluxInstaller> {
        let text = |pointer: &str| hr.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty());
        let name = text("/metadata/name")?.to_string();
        let namespace = text("/metadata/namespace").unwrap_or(listed_in).to_string();
        let release = super::flux_release_name(hr)?;
        let drift = match hr.pointer("/spec/driftDetection") {
            None | Some(Value::Null) => DriftSpec::Absent,
            Some(d) => match serde_json::to_string(d).map_or(usize::MAX, |t| t.len()) {
                n if n > DRIFT_BYTES => DriftSpec::TooLarge(n),
                _ => DriftSpec::Stated(d.clone()),
            },
        };
        Some(FluxInstaller {
            target: text("/spec/targetNamespace").unwrap_or(&namespace).to_string(),
            storage: text("/spec/storageNamespace").unwrap_or(&namespace).to_string(),
            service_account: text("/spec/serviceAccountName").map(String::from),
            name,
            namespace,
            release,
            drift,
        })
    }

    /// Whether it is the HelmRelease of namespace `stored` that installs `release` into
    /// `namespace` with its record in `stored`, as its spec says (helm-controller finds the
    /// release it manages the same way): a HelmRelease of another namespace never is.
    pub(crate) fn installs(&self, stored: &str, namespace: &str, release: &str) -> bool {
        self.namespace == stored && self.storage == stored && self.target == namespace && self.release == release
    }

    /// `namespace/name`.
    pub(crate) fn id(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_is_kept_and_whom_it_installs() {
        let hr = json!({"metadata": {"name": "web", "namespace": "flux-system"},
            "spec": {"targetNamespace": "apps", "values": {"big": "x"}, "driftDetection": {"mode": "enabled"}}});
        let kept = FluxInstaller::of(&hr, "flux-system").unwrap();
        assert_eq!(
            (kept.release.as_str(), kept.target.as_str(), kept.storage.as_str()),
            ("apps-web", "apps", "flux-system")
        );
        assert_eq!(kept.drift, DriftSpec::Stated(json!({"mode": "enabled"})));
        assert!(kept.installs("flux-system", "apps", "apps-web"));
        assert!(!kept.installs("apps", "apps", "apps-web"), "its record is in its own namespace");
        assert!(!kept.installs("flux-system", "apps", "web"));
        let huge = json!({"metadata": {"name": "w"}, "spec": {"driftDetection": {"ignore": [{"paths": ["/".repeat(DRIFT_BYTES)]}]}}});
        assert!(matches!(FluxInstaller::of(&huge, "ns").unwrap().drift, DriftSpec::TooLarge(_)));
        assert_eq!(FluxInstaller::of(&json!({"spec": {}}), "ns"), None);
    }
}

//! Whose word a release record is, and how far it reaches: a record is written by whoever may
//! write Secrets in the namespace it is stored in, so it speaks for that namespace, for the
//! namespace it installs into when a Flux HelmRelease there vouches for it, and beyond only where
//! the operator trusts the storage namespace (`--trust-namespace`).

use super::{ObjectId, Refusal};

/// The namespaces whose release records the operator trusts as their own (`--trust-namespace`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Trust {
    namespaces: Vec<String>,
}

/// Why a record stored in one namespace speaks for a release in another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Vouch {
    /// The operator trusts the storage namespace (`--trust-namespace`).
    Trusted,
    /// A Flux HelmRelease of the storage namespace installs the release there, and its
    /// controller's status names it; `service_account` is the one it names, whom Flux's
    /// multi-tenancy lockdown writes as.
    HelmRelease { name: String, service_account: Option<String> },
}

impl Vouch {
    /// Why, in words (after "stored in NS: ").
    pub(crate) fn why(&self, stored: &str) -> String {
        match self {
            Vouch::Trusted => format!("--trust-namespace {stored}"),
            Vouch::HelmRelease { name, .. } => format!("HelmRelease {stored}/{name} installs it"),
        }
    }

    /// The ServiceAccount (of the storage namespace) the vouching HelmRelease names, whom Flux
    /// writes the release as.
    pub(crate) fn service_account(&self) -> Option<&str> {
        match self {
            Vouch::HelmRelease { service_account, .. } => service_account.as_deref(),
            Vouch::Trusted => None,
        }
    }
}

/// A record stored apart from its release: where, and who vouches for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoredApart {
    /// The namespace of its storage object.
    pub(crate) namespace: String,
    pub(crate) vouch: Vouch,
}

impl StoredApart {
    /// Why it speaks for its release's namespace, in words.
    pub(crate) fn why(&self) -> String {
        self.vouch.why(&self.namespace)
    }

    /// The ServiceAccount (namespace, name) Flux writes the release as, when the HelmRelease that
    /// vouches for it names one (`spec.serviceAccountName`, of the HelmRelease's namespace).
    pub(crate) fn service_account(&self) -> Option<(String, String)> {
        self.vouch.service_account().map(|sa| (self.namespace.clone(), sa.to_string()))
    }
}

/// Where a record is stored and the namespace its release installs into (the same, unless a
/// HelmRelease stores it elsewhere: Flux's `storageNamespace` apart from `targetNamespace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Home<'a> {
    /// The namespace of its storage object: its writer's.
    pub(crate) stored: &'a str,
    /// The release's namespace (the record's `namespace`), where its objects go by default.
    pub(crate) release: &'a str,
}

impl Home<'_> {
    /// Whether `namespace` is one the record speaks for without trust: its own, and the release's.
    fn speaks_for(&self, namespace: Option<&str>) -> bool {
        namespace == Some(self.stored) || namespace == Some(self.release)
    }
}

impl Trust {
    pub(crate) fn new(namespaces: Vec<String>) -> Trust {
        Trust { namespaces }
    }

    /// Whether the records of `namespace` speak beyond it.
    pub(crate) fn trusts(&self, namespace: &str) -> bool {
        self.namespaces.iter().any(|n| n == "*" || n == namespace)
    }

    /// Why an object of a record at `home` living in `object_ns` (`None`: cluster-scoped) is not
    /// compared, or `None` when it may be. The reason never depends on the object itself, so it
    /// says nothing of whether it exists.
    pub(crate) fn outside(&self, home: Home<'_>, object_ns: Option<&str>) -> Option<Refusal> {
        (!home.speaks_for(object_ns) && !self.trusts(home.stored))
            .then(|| Refusal::NotCompared { release_ns: home.stored.to_string() })
    }

    /// Why a person's `repair` does not write `object` (living in `object_ns`, `None` when
    /// cluster-scoped) on the word of a record at `home`, or `None` when it may: the record is
    /// written by whoever may write Secrets where it is stored, and what it lists elsewhere would
    /// be written with the person's rights, not theirs (the release's namespace too, when the
    /// record is stored apart from it: a HelmRelease vouches for what it names, not for what a
    /// Secret writer put in the record).
    pub(crate) fn beyond(&self, home: Home<'_>, object: &ObjectId, object_ns: Option<&str>) -> Option<Refusal> {
        (object_ns != Some(home.stored) && !self.trusts(home.stored)).then(|| Refusal::BeyondRecord {
            object: object.clone(),
            namespace: object_ns.map(String::from),
            release_ns: home.stored.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_persons_repair_writes_outside_the_records_namespace_only_when_trusted() {
        let crb = ObjectId::new("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None, "admin");
        let cm = ObjectId::new("v1", "ConfigMap", Some("kube-system"), "x");
        let own = ObjectId::new("v1", "ConfigMap", Some("demo"), "c");
        let none = Trust::default();
        let demo = Home { stored: "demo", release: "demo" };
        let why = none.beyond(demo, &crb, None).unwrap().to_string();
        assert!(why.contains("is cluster-scoped") && why.contains("--trust-namespace demo"), "{why}");
        assert!(none.beyond(demo, &cm, Some("kube-system")).unwrap().to_string().contains("in namespace kube-system"));
        assert_eq!(none.beyond(demo, &own, Some("demo")), None);
        for trusted in [Trust::new(vec!["demo".into()]), Trust::new(vec!["*".into()])] {
            assert_eq!(trusted.beyond(demo, &crb, None), None);
            assert_eq!(trusted.beyond(demo, &cm, Some("kube-system")), None);
        }
        assert!(Trust::new(vec!["other".into()]).beyond(demo, &crb, None).is_some());
    }

    #[test]
    fn a_record_stored_apart_speaks_for_its_release_namespace_but_writes_there_only_when_trusted() {
        let home = Home { stored: "flux-system", release: "apps" };
        let none = Trust::default();
        assert_eq!(none.outside(home, Some("apps")), None, "compared: the HelmRelease vouched for it");
        assert_eq!(none.outside(home, Some("flux-system")), None);
        let why = none.outside(home, Some("other")).unwrap().to_string();
        assert!(why.contains("--trust-namespace flux-system"), "{why}");
        let cm = ObjectId::new("v1", "ConfigMap", Some("apps"), "c");
        let why = none.beyond(home, &cm, Some("apps")).unwrap().to_string();
        assert!(why.contains("--trust-namespace flux-system"), "{why}");
        let trusted = Trust::new(vec!["flux-system".into()]);
        assert_eq!(trusted.beyond(home, &cm, Some("apps")), None);
        assert_eq!(trusted.outside(home, None), None);
        assert!(Trust::new(vec!["apps".into()]).beyond(home, &cm, Some("apps")).is_some(), "trust follows the storage");
    }
}

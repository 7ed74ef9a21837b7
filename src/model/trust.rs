//! Whose word a release record is, and how far it reaches: a record is written by whoever may
//! write Secrets in the namespace it is stored in, so it speaks for that namespace; elsewhere it
//! is a claim, honoured for an object only by evidence written where the object lives (Helm's
//! ownership annotations naming the release in the storage namespace, or the origin labels of
//! the Flux HelmRelease there that installs it), or by the operator's trust of the storage
//! namespace (`--trust-namespace`). A HelmRelease and its status are the storage namespace's own
//! word (its editors may write the status subresource), so they name the claim, never prove it.

use super::origin::{flux_origin, helm_owner};
use super::{ObjectId, Refusal};
use serde_json::Value;

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
    /// A Flux HelmRelease of the storage namespace installs the release there (its spec says so):
    /// what the record lists in other namespaces is its claim only where the objects carry the
    /// HelmRelease's origin labels. `service_account` is the one it names, whom Flux's
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

    /// The HelmRelease that vouches, whose origin labels mark the objects of its claim.
    pub(crate) fn helm_release(&self) -> Option<&str> {
        match self {
            Vouch::HelmRelease { name, .. } => Some(name),
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
    /// The release's name.
    pub(crate) name: &'a str,
    /// The HelmRelease of the storage namespace that installs a release stored apart, whose
    /// origin labels mark the objects of its claim elsewhere.
    pub(crate) helm_release: Option<&'a str>,
}

impl<'a> Home<'a> {
    /// A record stored in `stored` of release `name` installing into `release`.
    pub(crate) fn new(stored: &'a str, release: &'a str, name: &'a str) -> Home<'a> {
        Home { stored, release, name, helm_release: None }
    }

    /// Whether `namespace` is one the watcher reads for the record without trust: its own, and
    /// the release's (where a HelmRelease's claim lies).
    fn speaks_for(&self, namespace: Option<&str>) -> bool {
        namespace == Some(self.stored) || namespace == Some(self.release)
    }

    /// Whether `live` carries the origin labels of the HelmRelease of the storage namespace that
    /// installs the release: the namespace it lives in gave it to that HelmRelease, whose spec
    /// the storage namespace's editors write (so they decide its content, through
    /// helm-controller, already).
    pub(crate) fn flux_claimed(&self, live: &Value) -> bool {
        self.helm_release.is_some_and(|hr| flux_origin(live) == Some((self.stored, hr)))
    }

    /// Whether `live` is evidence, written where it lives, that it belongs to this record's
    /// release: the HelmRelease's origin labels, or Helm's ownership annotations naming the
    /// release in the storage namespace (for a record stored with its release).
    pub(crate) fn claimed(&self, live: &Value) -> bool {
        self.flux_claimed(live) || (self.stored == self.release && helm_owner(live) == Some((self.stored, self.name)))
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

    /// Why an object of a record at `home`, living in `object_ns` and read as `live`, is not
    /// judged on the record's word, or `None` when it is: outside the storage namespace of a
    /// record the operator does not trust, only evidence written where the object lives puts it
    /// in the record's claim ([`Home::claimed`]). An object that is not there is judged (the
    /// record's claim lists it: it is missing).
    pub(crate) fn unclaimed(&self, home: Home<'_>, object_ns: Option<&str>, live: &Value) -> Option<Refusal> {
        (object_ns != Some(home.stored) && !self.trusts(home.stored) && !home.claimed(live)).then(|| {
            Refusal::OutsideClaim {
                stored: home.stored.to_string(),
                release: home.name.to_string(),
                namespace: object_ns.map(String::from),
                helm_release: home.helm_release.map(String::from),
            }
        })
    }

    /// Why a person's `repair` does not write `object` (living in `object_ns`, `None` when
    /// cluster-scoped; `live` as read, `None` when missing) on the word of a record at `home`, or
    /// `None` when it may: the record is written by whoever may write Secrets where it is stored,
    /// and what it lists elsewhere would be written with the person's rights, not theirs. Only
    /// what carries the origin labels of the HelmRelease that installs a record stored apart is
    /// written there (its namespace gave it to that HelmRelease, whose content the storage
    /// namespace decides already); nothing missing there is created on the record's word.
    pub(crate) fn beyond(
        &self,
        home: Home<'_>,
        object: &ObjectId,
        object_ns: Option<&str>,
        live: Option<&Value>,
    ) -> Option<Refusal> {
        let claimed = live.is_some_and(|l| home.flux_claimed(l));
        (object_ns != Some(home.stored) && !self.trusts(home.stored) && !claimed).then(|| Refusal::BeyondRecord {
            object: object.clone(),
            namespace: object_ns.map(String::from),
            release_ns: home.stored.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FLUX_NAME_LABEL, FLUX_NAMESPACE_LABEL, RELEASE_NAME_ANNOTATION, RELEASE_NAMESPACE_ANNOTATION};
    use serde_json::json;

    fn labelled(hr_ns: &str, hr: &str) -> Value {
        json!({"metadata": {"labels": {FLUX_NAME_LABEL: hr, FLUX_NAMESPACE_LABEL: hr_ns}}})
    }

    fn annotated(ns: &str, release: &str) -> Value {
        json!({"metadata": {"annotations": {RELEASE_NAME_ANNOTATION: release, RELEASE_NAMESPACE_ANNOTATION: ns}}})
    }

    #[test]
    fn a_persons_repair_writes_outside_the_records_namespace_only_when_trusted() {
        let crb = ObjectId::new("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None, "admin");
        let cm = ObjectId::new("v1", "ConfigMap", Some("kube-system"), "x");
        let own = ObjectId::new("v1", "ConfigMap", Some("demo"), "c");
        let none = Trust::default();
        let demo = Home::new("demo", "demo", "web");
        let live = annotated("demo", "web");
        let why = none.beyond(demo, &crb, None, Some(&live)).unwrap().to_string();
        assert!(why.contains("is cluster-scoped") && why.contains("--trust-namespace demo"), "{why}");
        let why = none.beyond(demo, &cm, Some("kube-system"), Some(&live)).unwrap().to_string();
        assert!(why.contains("in namespace kube-system"), "{why}");
        assert_eq!(none.beyond(demo, &own, Some("demo"), None), None);
        for trusted in [Trust::new(vec!["demo".into()]), Trust::new(vec!["*".into()])] {
            assert_eq!(trusted.beyond(demo, &crb, None, None), None);
            assert_eq!(trusted.beyond(demo, &cm, Some("kube-system"), None), None);
        }
        assert!(Trust::new(vec!["other".into()]).beyond(demo, &crb, None, None).is_some());
    }

    #[test]
    fn outside_its_namespace_a_record_judges_only_what_names_its_release_there() {
        let none = Trust::default();
        let demo = Home::new("demo", "demo", "web");
        // Helm's annotations naming the release in the record's namespace: the object's own word.
        assert_eq!(none.unclaimed(demo, Some("kube-system"), &annotated("demo", "web")), None);
        assert_eq!(none.unclaimed(demo, None, &annotated("demo", "web")), None);
        for other in [annotated("kube-system", "web"), annotated("demo", "db"), json!({"metadata": {}})] {
            let why = none.unclaimed(demo, Some("kube-system"), &other).unwrap().to_string();
            assert!(why.contains("outside the claim") && why.contains("--trust-namespace demo"), "{why}");
        }
        // Its own namespace needs no word; trust needs none anywhere.
        assert_eq!(none.unclaimed(demo, Some("demo"), &json!({})), None);
        assert_eq!(Trust::new(vec!["demo".into()]).unclaimed(demo, None, &json!({})), None);
    }

    #[test]
    fn a_record_stored_apart_claims_only_what_carries_its_helmreleases_origin_labels() {
        let home = Home { helm_release: Some("web"), ..Home::new("flux-system", "apps", "apps-web") };
        let none = Trust::default();
        assert_eq!(none.outside(home, Some("apps")), None, "read: its HelmRelease installs there");
        assert_eq!(none.outside(home, Some("flux-system")), None);
        assert!(none.outside(home, Some("other")).unwrap().to_string().contains("--trust-namespace flux-system"));
        // The release namespace's own annotations name the release there, not the record: no word.
        let theirs = annotated("apps", "apps-web");
        assert!(none.unclaimed(home, Some("apps"), &theirs).is_some(), "the victim's own object");
        assert!(none.unclaimed(home, Some("apps"), &labelled("flux-system", "other")).is_some());
        assert!(none.unclaimed(home, Some("apps"), &labelled("tenant", "web")).is_some());
        let ours = labelled("flux-system", "web");
        assert_eq!(none.unclaimed(home, Some("apps"), &ours), None);
        // A person's repair writes there only what carries the labels, and creates nothing.
        let cm = ObjectId::new("v1", "ConfigMap", Some("apps"), "c");
        assert_eq!(none.beyond(home, &cm, Some("apps"), Some(&ours)), None);
        assert!(none.beyond(home, &cm, Some("apps"), Some(&theirs)).is_some());
        let why = none.beyond(home, &cm, Some("apps"), None).unwrap().to_string();
        assert!(why.contains("--trust-namespace flux-system"), "{why}");
        let trusted = Trust::new(vec!["flux-system".into()]);
        assert_eq!(trusted.beyond(home, &cm, Some("apps"), None), None);
        assert_eq!(trusted.unclaimed(home, Some("apps"), &theirs), None);
        assert!(
            Trust::new(vec!["apps".into()]).beyond(home, &cm, Some("apps"), None).is_some(),
            "trust follows the storage"
        );
    }
}

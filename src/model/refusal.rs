//! Why helm-drift itself refuses to compare or write something: each refusal a type, its words
//! in one place ([`Refusal`]'s `Display`). `None` beside one means allowed.

use super::ObjectId;
use super::origin::{FLUX_NAME_LABEL as FLUX_NAME, FLUX_NAMESPACE_LABEL as FLUX_NAMESPACE};
use std::fmt;

/// One of helm-drift's own refusals (the server's are its words, kept as they come).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// An object a record of `release_ns` lists in another namespace (or cluster-scoped) is not
    /// compared: a record speaks only for its own namespace (`--trust-namespace` widens it).
    NotCompared { release_ns: String },
    /// An object a record of the untrusted namespace `stored` lists elsewhere (`namespace`,
    /// `None`: cluster-scoped) is not judged: nothing written where it lives names the release
    /// (`helm_release`: the HelmRelease whose origin labels would).
    OutsideClaim { stored: String, release: String, namespace: Option<String>, helm_release: Option<String> },
    /// `object`, missing in `namespace`, is not created again on the word of a record stored in
    /// the untrusted namespace `stored` (a HelmRelease there, `helm_release`, installs it): only
    /// what carries the HelmRelease's origin labels there is the record's.
    NotCreated { object: ObjectId, namespace: Option<String>, stored: String, helm_release: String },
    /// A write on the word of a record of an untrusted namespace, with no ServiceAccount of that
    /// namespace to write as (a person's repair or self-healing: `acting`).
    Untrusted { namespace: String, acting: super::Acting },
    /// A write, as a ServiceAccount of the untrusted `release_ns`, of `object` outside it.
    OutsideNamespace { object: ObjectId, namespace: Option<String>, release_ns: String },
    /// `repair --upgrade` does not run the chart stored in `record` (of the untrusted
    /// namespace `namespace`, release `release`) with the person's rights.
    ChartNotRun { record: String, namespace: String, release: String },
    /// A change to an object Helm's ownership metadata does not give to the release
    /// (`holder`: the release it names, `None`: it names none).
    NotOwned { release: (String, String), holder: Option<(String, String)> },
}

impl std::error::Error for Refusal {}

/// What a record claiming a release its namespace records itself is called (a storage error's
/// words; a scan's report names it).
pub(crate) const CONFLICTING_CLAIM: &str = "a conflicting claim";

/// How the words of [`Refusal::OutsideClaim`] begin (what reports name by default).
pub(crate) const OUTSIDE_CLAIM: &str = "outside the claim:";

/// Where an object lives, in words.
pub(crate) fn place(namespace: Option<&str>) -> String {
    match namespace {
        None => "cluster-scoped".to_string(),
        Some(ns) => format!("in namespace {ns}"),
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotCompared { release_ns: ns } => write!(
                f,
                "not compared: outside the record's namespace {ns} (a release record is trusted only for its own \
                 namespace; --trust-namespace {ns} trusts its records)"
            ),
            Refusal::OutsideClaim { stored, release, namespace, helm_release } => {
                let names = match helm_release {
                    Some(hr) => format!(
                        "the origin labels of HelmRelease {stored}/{hr} ({FLUX_NAME}={hr}, {FLUX_NAMESPACE}={stored})"
                    ),
                    None => format!("Helm's ownership annotations naming release {stored}/{release}"),
                };
                write!(
                    f,
                    "{OUTSIDE_CLAIM} it is {} and does not carry {names}, and a record stored in namespace \
                     {stored} counts in other namespaces only for the objects marked there as its own; not \
                     compared (--trust-namespace {stored} trusts its records)",
                    place(namespace.as_deref())
                )
            }
            Refusal::NotCreated { object, namespace, stored, helm_release } => write!(
                f,
                "{object} is missing {}, and a record stored in namespace {stored} cannot create objects there by \
                 itself: only the objects carrying the origin labels of HelmRelease {stored}/{helm_release} are its \
                 own (--trust-namespace {stored} creates it)",
                place(namespace.as_deref())
            ),
            Refusal::Untrusted { namespace: ns, acting: super::Acting::Watcher } => write!(
                f,
                "namespace {ns} is not trusted: self-healing repairs its releases only as a \
                 ServiceAccount of the record's namespace (--repair-service-account NAME, impersonated), or as \
                 the watcher where the operator trusts the namespace (--trust-namespace {ns})"
            ),
            Refusal::Untrusted { namespace: ns, acting: super::Acting::Person } => write!(
                f,
                "namespace {ns} is not trusted: its release records can be written by anyone who may write \
                 Secrets there, and repair would write what they say with your rights. Trust it if only \
                 people you trust write there (--trust-namespace {ns}, or once in HELM_DRIFT_TRUST_NAMESPACE), \
                 or write as a ServiceAccount of {ns} (--repair-service-account NAME, impersonated)"
            ),
            Refusal::OutsideNamespace { object, namespace, release_ns: ns } => {
                let place = match namespace {
                    None => "a cluster-scoped object".to_string(),
                    Some(n) => format!("an object in namespace {n}"),
                };
                write!(
                    f,
                    "outside the record's namespace: {object} is {place}, and a record of the untrusted namespace \
                     {ns} is trusted only for its own namespace, and elsewhere only for the objects carrying the origin \
                     labels of the HelmRelease there that installs it (--trust-namespace {ns} trusts it)"
                )
            }
            Refusal::ChartNotRun { record, namespace: ns, release } => write!(
                f,
                "not repaired through helm upgrade: an upgrade runs the chart stored in {record} with your rights \
                 (its lookup calls read the cluster as you, its hooks run), and that record (its templates, values \
                 and hooks) can be written by anyone who may write Secrets in namespace {ns}; nothing was run. \
                 --trust-namespace {ns} trusts its records as your own; `helm drift repair {release}` without \
                 --upgrade writes only the recorded objects of {ns}"
            ),
            Refusal::NotOwned { release: (ns, name), holder } => {
                let holder = match holder {
                    Some((s, n)) => format!("it belongs to release {s}/{n}"),
                    // Helm's ownership annotations (`desired::metadata` writes them).
                    None => "it does not carry meta.helm.sh/release-name and meta.helm.sh/release-namespace".into(),
                };
                write!(
                    f,
                    "not owned by release {ns}/{name}: {holder}, and repair changes only objects Helm's \
                     ownership metadata gives to the release (as helm upgrade does)"
                )
            }
        }
    }
}

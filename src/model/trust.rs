//! Whose word a release record is, and how far it reaches: a record is written by whoever may
//! write Secrets in the namespace it is stored in, so it speaks for that namespace; elsewhere it
//! is a claim, honoured for an object only by evidence written where the object lives (Helm's
//! ownership annotations naming the release in the storage namespace, or the origin labels of
//! the Flux HelmRelease there that installs it), or by the operator's trust of the storage
//! namespace (`--trust-namespace`). A HelmRelease and its status are the storage namespace's own
//! word (its editors may write the status subresource), so they name the claim, never prove it.

use super::origin::{flux_origin, helm_owner};
use serde_json::Value;

/// Who acts on the record's word, and so who reads what helm-drift publishes about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Acting {
    /// A person's command: its report is the person's, read with the person's own rights.
    Person,
    /// The watcher, a privileged agent: what it publishes (Events, metrics, its page,
    /// notifications) is read by the record's namespace, and it heals on its own.
    Watcher,
}

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

    /// Whether `live`, living in `namespace`, carries the origin labels of the HelmRelease of
    /// the storage namespace that installs the release, in the namespace it installs into: that
    /// namespace gave it to the HelmRelease, whose spec the storage namespace's editors write
    /// (so they decide its content, through helm-controller, already). Labels on an object
    /// anywhere else (a third namespace, a cluster-scoped object) are no evidence of its claim.
    pub(crate) fn flux_claimed(&self, namespace: Option<&str>, live: &Value) -> bool {
        namespace == Some(self.release)
            && self.helm_release.is_some_and(|hr| flux_origin(live) == Some((self.stored, hr)))
    }

    /// Whether `live` (living in `namespace`) is evidence, written where it lives, that it
    /// belongs to this record's release: the HelmRelease's origin labels, or Helm's ownership
    /// annotations naming the release in the storage namespace (for a record stored with its
    /// release).
    pub(crate) fn claimed(&self, namespace: Option<&str>, live: &Value) -> bool {
        self.flux_claimed(namespace, live)
            || (self.stored == self.release && helm_owner(live) == Some((self.stored, self.name)))
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
}

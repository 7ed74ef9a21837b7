//! What reading and judging an object need from the run: where to read ([`Reads`]), and for
//! the judge the run's rules with the release's writer ([`Grounds`]).

use crate::compare::provenance::Deployed;
use crate::live::LiveCache;
use crate::live::Scaled;
use crate::model::{HelmWriter, Home};
use crate::settings::CompareOptions;

/// Where one release's objects are read, and which of them may be (the watcher's trust rule).
pub(crate) struct Reads<'a> {
    pub(crate) client: &'a kube::Client,
    pub(crate) cache: &'a LiveCache,
    /// A person's command or the watcher: who reads what is published about the objects.
    pub(crate) acting: crate::model::Acting,
    /// The operator trusts the record's namespace: elsewhere an object outside the record's
    /// namespace is judged only on the evidence where it lives ([`crate::model::decide`]).
    pub(crate) trusted: bool,
    pub(crate) home: Home<'a>,
}

/// What judging an object needs from the run: where to read, and the [`Grounds`].
pub(crate) struct Judge<'a> {
    pub(crate) client: &'a kube::Client,
    pub(crate) cache: &'a LiveCache,
    pub(crate) grounds: Grounds<'a>,
}

/// The run's rules for judging, as data, with the release's writer: what the judge decides
/// from them, the object and what was read (the exact engine also asks the server by dry-runs).
pub(crate) struct Grounds<'a> {
    pub(crate) options: &'a CompareOptions,
    pub(crate) scaled: &'a [Scaled],
    /// The revision compared and how it was applied: server-side (Helm 4 `apply_method: ssa`),
    /// who owns the chart's fields decides whether the next upgrade conflicts; when it was
    /// recorded tells Helm's apply from a later write under its name (the read-only engine).
    pub(crate) deployed: Deployed,
    /// The release's name (rules imported from GitOps tools apply to one release).
    pub(crate) release: &'a str,
    /// The drift rules of the Flux HelmRelease that installs the release, read from the cluster
    /// (its own namespace's word, for the objects its word reaches).
    pub(crate) flux: &'a crate::policy::flux::HelmReleaseRules,
    /// Whose name Helm's writes are under (the writer stage's, [`super::writer`]): what it owns
    /// is Helm's, and the dry-runs write as it.
    pub(crate) writer: &'a HelmWriter,
}

/// What a judge asks the server about one object: the object, where it lives, the chart's
/// fields as compared and the live object.
pub(crate) struct Inquiry<'a> {
    pub(crate) obj: &'a crate::desired::DesiredObject,
    pub(crate) at: &'a crate::live::Location,
    pub(crate) desired: &'a serde_json::Value,
    pub(crate) live: &'a serde_json::Value,
}

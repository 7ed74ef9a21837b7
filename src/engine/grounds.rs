//! What judging an object needs from the run: where to read ([`Judge`]) and the run's rules
//! ([`Grounds`]).

use crate::compare::provenance::Deployed;
use crate::live::LiveCache;
use crate::live::Scaled;
use crate::model::HelmWriter;
use crate::settings::CompareOptions;

/// What judging an object needs from the run: where to read, and the [`Grounds`].
pub(crate) struct Judge<'a> {
    pub(crate) client: &'a kube::Client,
    pub(crate) cache: &'a LiveCache,
    pub(crate) grounds: Grounds<'a>,
}

/// The run's rules for judging, as data: every decision after the reads is a pure function of
/// these, the object and what was read.
pub(crate) struct Grounds<'a> {
    pub(crate) options: &'a CompareOptions,
    pub(crate) scaled: &'a [Scaled],
    /// The revision compared and how it was applied: server-side (Helm 4 `apply_method: ssa`),
    /// who owns the chart's fields decides whether the next upgrade conflicts; when it was
    /// recorded tells Helm's apply from a later write under its name (the read-only engine).
    pub(crate) deployed: Deployed,
    /// The release's name (rules imported from GitOps tools apply to one release).
    pub(crate) release: &'a str,
    /// The release's namespace.
    pub(crate) namespace: &'a str,
    /// Where its record is stored (its writer's namespace: the release's, unless a HelmRelease
    /// stores it apart).
    pub(crate) stored_in: &'a str,
    /// Whose name Helm's writes are under: what it owns is Helm's, and the dry-runs write as it.
    pub(crate) writer: HelmWriter,
}

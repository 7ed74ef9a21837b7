//! The outcome of `accept`: what went into the baseline, and where.

/// Drift recorded as accepted for one release.
#[derive(Clone, Debug)]
pub(crate) struct AcceptReport {
    pub(crate) release: String,
    /// The file or ConfigMap written.
    pub(crate) location: String,
    /// Entries added (or renewed) from the current drift.
    pub(crate) accepted: usize,
    /// Stale entries dropped (`--prune`).
    pub(crate) dropped: usize,
    /// The release's entries now in the baseline.
    pub(crate) entries: usize,
}

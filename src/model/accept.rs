//! The outcome of `accept`: what went into the baseline, and where.

/// Drift recorded as accepted for one release.
#[derive(Clone, Debug)]
pub struct AcceptReport {
    pub release: String,
    /// The file or ConfigMap written.
    pub location: String,
    /// Entries added (or renewed) from the current drift.
    pub accepted: usize,
    /// Stale entries dropped (`--prune`).
    pub dropped: usize,
    /// The release's entries now in the baseline.
    pub entries: usize,
}

//! The outcome of `accept`: what went into the baseline (or would, with `--dry-run`), and where.

/// Drift recorded as accepted for one release.
#[derive(Clone, Debug)]
pub(crate) struct AcceptReport {
    pub(crate) release: String,
    pub(crate) namespace: String,
    /// The file or ConfigMap written (or that would be).
    pub(crate) location: String,
    /// Entries added (or renewed) from the current drift.
    pub(crate) accepted: Vec<AcceptedDrift>,
    /// Stale entries dropped (`--prune`).
    pub(crate) dropped: usize,
    /// The release's entries in the baseline after it.
    pub(crate) entries: usize,
    /// Nothing was written (`--dry-run`).
    pub(crate) dry_run: bool,
}

/// One drift accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AcceptedDrift {
    /// `apiVersion Kind namespace/name`.
    pub(crate) object: String,
    /// The JSON pointer (empty for the whole object).
    pub(crate) path: String,
    /// `modified`, `removed`, `added`, `owned-elsewhere`, `missing` or `unknown`.
    pub(crate) change: String,
    /// When the acceptance ends by itself.
    pub(crate) expires_at: Option<String>,
}

/// A baseline's change word as the reports say it (the file keeps its own words: `modified` is
/// said `changed`, `owned-elsewhere` is `taken over`, as the verdicts are).
pub(crate) fn said(change: &str) -> &str {
    match change {
        "modified" => "changed",
        "owned-elsewhere" => "taken over",
        other => other,
    }
}

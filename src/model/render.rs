//! The outcome of `render`: which documents render differently from the stored manifest.

use super::ExitStatus;

/// How one document differs between the stored manifest and the new rendering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DocChange {
    Changed { stored: String, rendered: String },
    OnlyStored(String),
    OnlyRendered(String),
}

impl DocChange {
    /// The word reports use for it (text and JSON `change`).
    pub(crate) fn word(&self) -> &'static str {
        match self {
            DocChange::Changed { .. } => "changed",
            DocChange::OnlyStored(_) => "gone",
            DocChange::OnlyRendered(_) => "new",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DocDiff {
    /// `# Source:` path (with `#N` when a template renders several documents).
    pub(crate) source: String,
    pub(crate) change: DocChange,
}

#[derive(Clone, Debug)]
pub(crate) struct RenderReport {
    pub(crate) release: String,
    pub(crate) namespace: String,
    pub(crate) revision: u32,
    pub(crate) kube_version: String,
    pub(crate) documents: usize,
    pub(crate) diffs: Vec<DocDiff>,
}

impl RenderReport {
    /// Drift when some document renders differently.
    pub(crate) fn exit_status(&self) -> ExitStatus {
        if self.diffs.is_empty() { ExitStatus::InSync } else { ExitStatus::Drift }
    }
}

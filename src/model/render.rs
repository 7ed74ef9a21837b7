//! The outcome of `render`: which documents render differently from the stored manifest.

use super::ExitStatus;

/// How one document differs between the stored manifest and the new rendering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DocChange {
    Changed { stored: String, rendered: String },
    OnlyStored(String),
    OnlyRendered(String),
}

impl DocChange {
    /// The word reports use for it (text and JSON `change`).
    pub fn word(&self) -> &'static str {
        match self {
            DocChange::Changed { .. } => "changed",
            DocChange::OnlyStored(_) => "gone",
            DocChange::OnlyRendered(_) => "new",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocDiff {
    /// `# Source:` path (with `#N` when a template renders several documents).
    pub source: String,
    pub change: DocChange,
}

#[derive(Clone, Debug)]
pub struct RenderReport {
    pub release: String,
    pub namespace: String,
    pub revision: u32,
    pub kube_version: String,
    pub documents: usize,
    pub diffs: Vec<DocDiff>,
}

impl RenderReport {
    /// Drift when some document renders differently.
    pub fn exit_status(&self) -> ExitStatus {
        if self.diffs.is_empty() { ExitStatus::InSync } else { ExitStatus::Drift }
    }
}

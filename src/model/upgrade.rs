//! The outcome of `repair --upgrade`: what helm said and the check of the new revision.

use super::{DriftReport, ExitStatus};

#[derive(Clone, Debug)]
pub(crate) struct UpgradeReport {
    pub(crate) release: String,
    pub(crate) namespace: String,
    pub(crate) from_revision: u32,
    /// What helm printed.
    pub(crate) helm_output: String,
    pub(crate) dry_run: bool,
    /// The check of the new revision.
    pub(crate) after: Option<DriftReport>,
}

impl UpgradeReport {
    pub(crate) fn exit_status(&self) -> ExitStatus {
        self.after.as_ref().map_or(ExitStatus::InSync, |r| r.verdict().exit_status())
    }
}

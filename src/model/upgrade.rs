//! The outcome of `repair --upgrade`: what helm said and the check of the new revision.

use super::{DriftReport, ExitStatus};

#[derive(Clone, Debug)]
pub struct UpgradeReport {
    pub release: String,
    pub namespace: String,
    pub from_revision: u32,
    /// What helm printed.
    pub helm_output: String,
    pub dry_run: bool,
    /// The check of the new revision.
    pub after: Option<DriftReport>,
}

impl UpgradeReport {
    pub fn exit_status(&self) -> ExitStatus {
        self.after.as_ref().map_or(ExitStatus::InSync, |r| r.verdict().exit_status())
    }
}

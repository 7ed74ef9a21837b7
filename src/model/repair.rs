//! The outcome of `repair`: a plan of typed steps, how far each got, and the check afterwards.

use super::{DriftReport, ExitStatus, FieldPath, ObjectId, ReleaseVerdict};

/// What one step does to one object: everything that object needs, in one change.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Action {
    /// Create the deleted object again.
    Recreate,
    /// Delete the object and create it as recorded: a field that cannot change was changed
    /// (`repair --replace`).
    Replace,
    /// Put an existing object back as recorded.
    Repair {
        /// Recorded values put back (changed or removed fields, list items whose key changed).
        restore: Vec<FieldPath>,
        /// Live-only values removed: list items that took a recorded item's place, fields not in
        /// the release, and (with `--remove-foreign`) fields added outside Helm.
        remove: Vec<FieldPath>,
        /// Managers that own fields the chart sets; Helm takes them back (server-side applied
        /// releases).
        reclaim: Vec<String>,
    },
}

/// How far one step got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StepStatus {
    Planned,
    /// Its server-side dry-run failed, so nothing was applied (the server's reason).
    Refused(String),
    /// helm-drift's own rule refused it before asking the server (whose word the record is,
    /// which objects the release owns), so nothing was applied.
    Withheld(super::Refusal),
    Applied,
    Failed(String),
    /// Not attempted because an earlier step failed.
    NotApplied,
}

impl StepStatus {
    /// Refused, by the server's dry-run or by helm-drift's own rule.
    pub(crate) fn refused(&self) -> bool {
        matches!(self, StepStatus::Refused(_) | StepStatus::Withheld(_))
    }

    /// One word for logs and metrics.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            StepStatus::Planned => "planned",
            StepStatus::Refused(_) | StepStatus::Withheld(_) => "refused",
            StepStatus::Applied => "applied",
            StepStatus::Failed(_) => "failed",
            StepStatus::NotApplied => "not-applied",
        }
    }
}

/// One change to one object.
#[derive(Clone, Debug)]
pub(crate) struct RepairStep {
    pub(crate) object: ObjectId,
    pub(crate) action: Action,
    pub(crate) status: StepStatus,
}

/// A drifted object that gets no step, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Skip {
    /// Fields added outside Helm are kept without `--remove-foreign`.
    ForeignKept,
    /// The object cannot be repaired (kind not served, could not be checked).
    Cannot(String),
    /// helm-drift's own rule keeps it as it is (a missing object a record stored apart only
    /// claims): the rest of the release is repaired all the same.
    Withheld(super::Refusal),
}

impl Skip {
    /// Whether the object keeps its drift (anything but fields added outside Helm, kept).
    pub(crate) fn leaves_drift(&self) -> bool {
        matches!(self, Skip::Cannot(_) | Skip::Withheld(_))
    }
}

#[derive(Clone, Debug)]
pub(crate) struct RepairReport {
    /// The verdicts the plan came from (only the objects selected by `--only`).
    pub(crate) before: DriftReport,
    pub(crate) steps: Vec<RepairStep>,
    pub(crate) skipped: Vec<(ObjectId, Skip)>,
    /// The check after applying (not on dry runs or failures).
    pub(crate) after: Option<DriftReport>,
    /// Repaired objects whose `DriftRepaired` Event could not be recorded, and why.
    pub(crate) events_not_recorded: Vec<(ObjectId, String)>,
    pub(crate) dry_run: bool,
    /// On whose rights its writes go, in words ("your own", "ServiceAccount NS/NAME
    /// (impersonated)"); `None` where no repair was planned.
    pub(crate) rights: Option<String>,
}

impl RepairReport {
    /// Error if a step was refused or failed; else (after applying) drift when drift remains,
    /// the fields added outside Helm it kept included (the exit code never says less than the
    /// report's last line, which names them); a dry run is drift when anything would change.
    pub(crate) fn exit_status(&self) -> ExitStatus {
        if self.steps.iter().any(|s| s.status.refused() || matches!(s.status, StepStatus::Failed(_))) {
            return ExitStatus::Error;
        }
        let cannot = self.skipped.iter().any(|(_, s)| s.leaves_drift());
        match &self.after {
            Some(r) if !self.dry_run => match r.verdict() {
                ReleaseVerdict::Error => ExitStatus::Error,
                _ if r.objects.iter().any(|o| o.is_drift()) => ExitStatus::Drift,
                _ => ExitStatus::InSync,
            },
            _ if !self.steps.is_empty() || cannot => ExitStatus::Drift,
            _ => ExitStatus::InSync,
        }
    }

    pub(crate) fn refused(&self) -> bool {
        self.steps.iter().any(|s| s.status.refused())
    }

    pub(crate) fn failed(&self) -> bool {
        self.steps.iter().any(|s| matches!(s.status, StepStatus::Failed(_)))
    }
}

//! The plan: which objects get which step, and which drifted objects are skipped and why.

use super::patch::{keep_ignored, remove_ops, restore_ops};
use crate::engine::Evaluated;
use crate::live::{Change, Location};
use crate::model::{Action, DriftReport, ObjectDrift, ObjectId, Skip, Step, StepStatus, Verdict};

/// A step with the change that makes it.
pub struct PlannedStep {
    pub step: Step,
    /// Which object of the evaluation it changes.
    pub index: usize,
    pub change: Change,
}

pub struct Plan {
    /// The verdicts of the selected objects.
    pub before: DriftReport,
    pub steps: Vec<PlannedStep>,
    pub skipped: Vec<(ObjectId, Skip)>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("--only {only}: no such object in release {release}")]
    NoSuchObject { only: String, release: String },
}

impl PlannedStep {
    /// The object's name and where it lives (planned objects are always served).
    pub fn target<'a>(&self, e: &'a Evaluated) -> Option<(&'a str, &'a Location)> {
        Some((e.objects[self.index].name.as_str(), e.locations[self.index].as_ref()?))
    }
}

/// The steps that undo the drift of the objects `only` selects (`KIND/NAME` or `NAME`; all when
/// empty). Fields added outside Helm are removed only with `remove_foreign`.
pub fn plan(e: &Evaluated, only: &[String], remove_foreign: bool) -> Result<Plan, PlanError> {
    let ssa = e.release.apply_method.as_deref() == Some("ssa");
    let mut steps = Vec::new();
    let mut skipped = Vec::new();
    let mut selected_objects = Vec::new();
    for (index, o) in e.report.objects.iter().enumerate() {
        if !selected(only, o) {
            continue;
        }
        selected_objects.push(o.clone());
        let mut step = |action: Action, change: Change| {
            let step = Step { object: o.id.clone(), action, status: StepStatus::Planned };
            steps.push(PlannedStep { step, index, change });
        };
        match &o.verdict {
            Verdict::Missing => {
                let desired = e.objects[index].object.clone();
                step(Action::Recreate, if ssa { Change::Apply(desired) } else { Change::Create(desired) });
            }
            Verdict::Modified => {
                if !o.fields.is_empty() {
                    let paths = o.fields.iter().map(|f| f.path.clone()).collect();
                    let change = if ssa {
                        Change::Apply(keep_ignored(&e.objects[index].object, o))
                    } else {
                        Change::Patch(restore_ops(o))
                    };
                    step(Action::Restore(paths), change);
                }
                if !o.added.is_empty() {
                    if remove_foreign {
                        let paths = o.added.iter().map(|a| a.path.clone()).collect();
                        step(Action::RemoveForeign(paths), Change::Patch(remove_ops(o)));
                    } else {
                        skipped.push((o.id.clone(), Skip::ForeignKept));
                    }
                }
            }
            Verdict::Unknown { reason } => skipped.push((o.id.clone(), Skip::Cannot(reason.clone()))),
            Verdict::Error { message } => skipped.push((o.id.clone(), Skip::Cannot(message.clone()))),
            Verdict::InSync | Verdict::Excluded { .. } => {}
        }
    }
    if !only.is_empty() && selected_objects.is_empty() {
        return Err(PlanError::NoSuchObject { only: only.join(", "), release: e.report.release.clone() });
    }
    Ok(Plan { before: e.report.with_objects(selected_objects), steps, skipped })
}

/// Whether `--only KIND/NAME` (kind case-insensitive) or `--only NAME` selects this object.
fn selected(only: &[String], o: &ObjectDrift) -> bool {
    only.is_empty()
        || only.iter().any(|f| match f.split_once('/') {
            Some((kind, name)) => kind.eq_ignore_ascii_case(&o.id.kind) && name == o.id.name,
            None => f == &o.id.name,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_filters_by_kind_and_name() {
        let o = ObjectDrift::new(ObjectId::new("apps/v1", "Deployment", Some("ns"), "web"), None, Verdict::Modified);
        assert!(selected(&[], &o));
        assert!(selected(&["deployment/web".into()], &o));
        assert!(selected(&["web".into()], &o));
        assert!(!selected(&["Service/web".into()], &o));
    }
}

//! The plan: one step per drifted object, with the changes that make it, and the drifted objects
//! that are skipped and why.

use super::patch::{keep_ignored, repair_ops};
use crate::engine::Evaluated;
use crate::live::{Change, Location};
use crate::model::{Action, DriftReport, FieldPath, ObjectId, Skip, Step, StepStatus, Verdict};

/// A step with the changes that make it, in order. The first is validated by a server dry-run
/// together with every other step's before anything is applied; the others only take ownership
/// (their content is the same).
pub struct PlannedStep {
    pub step: Step,
    /// Which object of the evaluation it changes.
    pub index: usize,
    pub changes: Vec<Change>,
    /// After the changes, take the chart's fields away from other managers (server-side apply).
    pub reclaim: bool,
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
/// empty). Fields added outside Helm are removed only with `remove_foreign`, except list items
/// that took the place of a recorded item (a changed key: a renamed container, a changed port).
pub fn plan(e: &Evaluated, only: &[String], remove_foreign: bool) -> Result<Plan, PlanError> {
    let ssa = e.release.apply_method.as_deref() == Some("ssa");
    let mut steps = Vec::new();
    let mut skipped = Vec::new();
    let mut selected_objects = Vec::new();
    for (index, o) in e.report.objects.iter().enumerate() {
        if !o.selected_by(only) {
            continue;
        }
        selected_objects.push(o.clone());
        let desired = &e.objects[index].object;
        let step = |action, changes, reclaim| PlannedStep {
            step: Step { object: o.id.clone(), action, status: StepStatus::Planned },
            index,
            changes,
            reclaim,
        };
        match &o.verdict {
            Verdict::Missing => {
                let change = if ssa { Change::Apply(desired.clone()) } else { Change::Create(desired.clone()) };
                steps.push(step(Action::Recreate, vec![change], false));
            }
            // Fields owned elsewhere with the release's values are not drift by default, but
            // repair still gives them back to Helm (what the report tells the user to run).
            Verdict::InSync if o.disowned.is_empty() => {}
            Verdict::Modified | Verdict::InSync => {
                let restore: Vec<FieldPath> =
                    o.fields.iter().filter(|f| f.recorded.is_some()).map(|f| f.path.clone()).collect();
                let mut remove: Vec<FieldPath> =
                    o.fields.iter().filter(|f| f.recorded.is_none()).map(|f| f.path.clone()).collect();
                let replacing: Vec<&FieldPath> = o.replaced_items().into_iter().map(|(_, took)| took).collect();
                let kept = o.added.iter().filter(|a| !remove_foreign && !replacing.contains(&&a.path)).count();
                remove.extend(
                    o.added.iter().map(|a| &a.path).filter(|p| remove_foreign || replacing.contains(p)).cloned(),
                );
                if kept > 0 {
                    skipped.push((o.id.clone(), Skip::ForeignKept));
                }
                let mut reclaim: Vec<String> = Vec::new();
                for d in &o.disowned {
                    if ssa && !reclaim.contains(&d.manager) {
                        reclaim.push(d.manager.clone());
                    }
                }
                if restore.is_empty() && remove.is_empty() && reclaim.is_empty() {
                    continue;
                }
                let patch = Change::Patch(repair_ops(o, &remove));
                let changes = match (ssa, remove.is_empty()) {
                    (false, _) => vec![patch],
                    (true, true) => vec![Change::Apply(keep_ignored(desired, o))],
                    // Server-side apply cannot drop what another manager owns: remove it with a
                    // guarded patch first, then apply as Helm.
                    (true, false) => vec![patch, Change::Apply(keep_ignored(desired, o))],
                };
                steps.push(step(Action::Repair { restore, remove, reclaim }, changes, ssa));
            }
            Verdict::Unknown { reason } => skipped.push((o.id.clone(), Skip::Cannot(reason.clone()))),
            Verdict::Error { message } => skipped.push((o.id.clone(), Skip::Cannot(message.clone()))),
            Verdict::Excluded { .. } => {}
        }
    }
    if !only.is_empty() && selected_objects.is_empty() {
        return Err(PlanError::NoSuchObject { only: only.join(", "), release: e.report.release.clone() });
    }
    Ok(Plan { before: e.report.with_objects(selected_objects), steps, skipped })
}

//! What the upgrade does to each drift `check` reports today: **wiped** (it writes the chart's
//! value, re-creates the object or deletes it), **adopted** (the new chart writes the live
//! value), **kept** (still drift after it) or **conflicts** (the upgrade fails on it).

use crate::engine::Evaluated;
use crate::model::{DriftFate, Fate, ObjectDrift, PlannedChange, PlannedObject, Verdict};

/// The fate of every drift of today's report.
pub(super) fn of(today: &Evaluated, after: &Evaluated, planned: &[PlannedObject]) -> Vec<DriftFate> {
    let mut out = Vec::new();
    for o in today.report.objects.iter().filter(|o| o.is_drift() || !o.disowned.is_empty()) {
        let plan = planned.iter().find(|p| p.id == o.id);
        let j = after.objects.iter().position(|d| d.id() == o.id);
        let said = |path: &str| format!("{} {path}", o.id);
        if o.verdict == Verdict::Missing {
            let fate = if j.is_some() { Fate::Wiped } else { Fate::Kept };
            out.push(DriftFate { drift: said("(whole object)"), fate });
            continue;
        }
        let paths = o.fields.iter().map(|f| (f.path.pointer(), f.path.to_string()));
        let paths = paths.chain(o.added.iter().map(|a| (a.path.pointer(), a.path.to_string())));
        let paths = paths.chain(o.disowned.iter().map(|d| (d.path.pointer(), d.path.to_string())));
        for (pointer, shown) in paths {
            let fate = fate(&pointer, plan, j.map(|j| (&after.report.objects[j], &after.objects[j].object)));
            out.push(DriftFate { drift: said(&shown), fate });
        }
    }
    out
}

/// The fate of the drift at `pointer`, given the object's plan and its judgement against the
/// new manifest (`None` when the new manifest drops it).
fn fate(pointer: &str, plan: Option<&PlannedObject>, after: Option<(&ObjectDrift, &serde_json::Value)>) -> Fate {
    if plan.is_some_and(|p| p.change == PlannedChange::Delete) {
        return Fate::Wiped;
    }
    // The server's conflict names each field in conflict (`.spec.replicas`).
    if plan.is_some_and(|p| p.conflicts.iter().any(|c| c.is_at(&dotted(pointer)))) {
        return Fate::Conflicts;
    }
    let Some((judged, desired)) = after else { return Fate::Kept };
    let at = |f: &str| f == pointer || f.starts_with(&format!("{pointer}/"));
    let changed = judged.fields.iter().any(|f| at(&f.path.pointer()));
    let removed = plan.is_some_and(|p| p.fields.iter().any(|f| f.live.is_none() && at(&f.path.pointer())));
    match (changed || removed, desired.pointer(pointer).is_some()) {
        (true, _) => Fate::Wiped,
        (false, true) => Fate::Adopted,
        (false, false) => Fate::Kept,
    }
}

/// `.spec.replicas` for `/spec/replicas`, up to the first list position (as the API server
/// names a conflicting field).
fn dotted(pointer: &str) -> String {
    crate::model::path::tokens(pointer)
        .iter()
        .take_while(|t| t.parse::<usize>().is_err())
        .map(|t| format!(".{t}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflict_names_its_field_as_the_server_does() {
        assert_eq!(dotted("/spec/replicas"), ".spec.replicas");
        assert_eq!(dotted("/spec/template/spec/containers/0/image"), ".spec.template.spec.containers");
    }
}

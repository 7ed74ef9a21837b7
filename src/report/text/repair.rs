//! The `repair` and `repair --upgrade` reports: the drift the plan started from, each step and
//! how far it got, and the check afterwards.

use crate::model::{Action, FieldPath, RepairReport, Skip, StepStatus, UpgradeReport};
use crate::report::color::{Tone, paint};
use crate::report::style::Style;
use crate::report::text;
use std::fmt::Write;

/// What is said of the fields added outside Helm a repair keeps.
const KEPT: &str = "fields added outside Helm are kept (use --remove-foreign to remove them)";

/// Whether the repair kept fields added outside Helm on `object`.
fn kept(r: &RepairReport, object: &crate::model::ObjectId) -> bool {
    r.skipped.iter().any(|(o, s)| o == object && *s == Skip::ForeignKept)
}

pub(crate) fn repair(r: &RepairReport, style: &Style) -> String {
    let on = style.color;
    let mut out = String::new();
    text::release(&mut out, &r.before, style);
    if r.steps.is_empty() && r.skipped.is_empty() {
        let _ = writeln!(out, "nothing to repair");
        return out;
    }
    let _ = writeln!(out, "{}:", if r.dry_run { "repair plan (dry run: nothing changed)" } else { "repair" });
    if let Some(rights) = r.rights.as_ref().filter(|_| !r.steps.is_empty()) {
        let _ = writeln!(out, "  writes with {rights}");
    }
    for s in &r.steps {
        let status = match &s.status {
            StepStatus::Planned if r.dry_run => paint(on, Tone::Note, "would apply (server dry-run passed)"),
            StepStatus::Planned if r.refused() => paint(on, Tone::Warn, "not applied (another step was refused)"),
            StepStatus::Planned => paint(on, Tone::Note, "planned"),
            StepStatus::Refused(why) => paint(on, Tone::Bad, &format!("refused by the server dry-run: {why}")),
            StepStatus::Withheld(why) => paint(on, Tone::Bad, &format!("refused: {why}")),
            StepStatus::Applied => paint(on, Tone::Good, "applied"),
            StepStatus::Failed(why) => paint(on, Tone::Alarm, &format!("FAILED: {why}")),
            StepStatus::NotApplied => paint(on, Tone::Warn, "not applied (an earlier step failed)"),
        };
        let verb = match s.action {
            Action::Recreate => "recreate",
            Action::Replace => "replace",
            Action::Repair { .. } => "repair",
        };
        let _ = writeln!(out, "  {verb} {}: {status}", s.object);
        if let Action::Repair { restore, remove, reclaim } = &s.action {
            for (what, paths) in [("restore", restore), ("remove", remove)] {
                if !paths.is_empty() {
                    let _ = writeln!(out, "      {what}: {}", list(paths));
                }
            }
            if !reclaim.is_empty() {
                let _ = writeln!(out, "      take ownership back from: {}", reclaim.join(", "));
            }
        }
        // One object, one entry: what its step kept is said under it (a replacement keeps
        // nothing: it is created as recorded).
        if s.action != Action::Replace && kept(r, &s.object) {
            let _ = writeln!(out, "      {KEPT}");
        }
    }
    for (object, skip) in &r.skipped {
        let why = match skip {
            Skip::ForeignKept if r.steps.iter().any(|s| s.object == *object) => continue,
            Skip::ForeignKept => KEPT.to_string(),
            Skip::Cannot(reason) => format!("cannot repair: {reason}"),
            Skip::Withheld(why) => format!("not repaired: {why}"),
        };
        let _ = writeln!(out, "  skipped {object}: {why}");
    }
    let replaced = |o: &crate::model::ObjectId| r.steps.iter().any(|s| s.object == *o && s.action == Action::Replace);
    if r.skipped.iter().any(|(o, s)| *s == Skip::ForeignKept && !replaced(o)) {
        let _ = writeln!(
            out,
            "kept fields added outside Helm: helm drift check reports them until they are removed (helm drift repair {} --remove-foreign) or accepted (helm drift accept {})",
            r.before.release, r.before.release
        );
    }
    if r.refused() {
        let _ = writeln!(out, "nothing was changed: every step must be allowed and pass its server dry-run first");
    }
    if r.failed() {
        let _ = writeln!(
            out,
            "stopped: the steps marked applied were made, the others were not; run repair again to finish"
        );
    }
    for (object, why) in &r.events_not_recorded {
        let _ = writeln!(out, "  warning: no Event recorded for {object}: {why}");
    }
    if let Some(after) = &r.after {
        let _ = writeln!(out, "after repair:");
        text::release(&mut out, after, &Style { verbose: false, ..style.clone() });
    }
    out
}

/// One cluster's part of a fleet repair: a heading with the cluster and how it ended, then its
/// report (`None`: the repair could not run there; the error is on stderr).
pub(crate) fn in_cluster(cluster: &str, report: Option<&RepairReport>, style: &Style) -> String {
    let (tone, how) = match report.map(RepairReport::exit_status) {
        Some(crate::model::ExitStatus::InSync) if report.is_some_and(|r| !r.steps.is_empty()) => {
            (Tone::Good, "repaired, in sync")
        }
        Some(crate::model::ExitStatus::InSync) => (Tone::Good, "in sync"),
        Some(crate::model::ExitStatus::Drift) if report.is_some_and(|r| r.dry_run) => (Tone::Warn, "would change"),
        Some(crate::model::ExitStatus::Drift) => (Tone::Warn, "drift left"),
        Some(crate::model::ExitStatus::Error | crate::model::ExitStatus::WouldFail) => (Tone::Bad, "error"),
        None => (Tone::Bad, "error (see stderr)"),
    };
    let mut out = format!("{}\n", paint(style.color, tone, &format!("cluster {cluster}: {how}")));
    if let Some(r) = report {
        out.push_str(&repair(r, style));
    }
    out
}

/// Paths as people read them, comma-separated.
fn list(paths: &[FieldPath]) -> String {
    paths.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

pub(crate) fn upgrade(r: &UpgradeReport, style: &Style) -> String {
    let mut out = format!(
        "repair through helm upgrade of {} (namespace {}, from revision {}){}:\n",
        r.release,
        r.namespace,
        r.from_revision,
        if r.dry_run { ", dry run" } else { "" }
    );
    for line in super::secret::mask_helm_output(&r.helm_output, style.show_secrets).lines() {
        let _ = writeln!(out, "  | {line}");
    }
    if let Some(after) = &r.after {
        out.push_str("after repair:\n");
        text::release(&mut out, after, style);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ObjectId, RepairStep};

    fn report(action: Action) -> RepairReport {
        let id = ObjectId::new("v1", "Service", Some("ux"), "web");
        RepairReport {
            before: crate::testing::report("ux", "web", Vec::new()),
            steps: vec![RepairStep { object: id.clone(), action, status: StepStatus::Applied }],
            skipped: vec![(id, Skip::ForeignKept)],
            after: None,
            events_not_recorded: Vec::new(),
            dry_run: false,
            rights: None,
        }
    }

    #[test]
    fn an_object_is_one_entry_of_the_plan() {
        let repaired =
            repair(&report(Action::Repair { restore: vec![], remove: vec![], reclaim: vec![] }), &Style::default());
        assert!(
            repaired.contains("repair Service ux/web: applied\n      fields added outside Helm are kept"),
            "{repaired}"
        );
        assert!(!repaired.contains("skipped Service ux/web"), "{repaired}");
        assert!(repaired.contains("kept fields added outside Helm: helm drift check reports them"), "{repaired}");
        // Replaced: created as recorded, nothing kept, and nothing said to be.
        let replaced = repair(&report(Action::Replace), &Style::default());
        assert!(!replaced.contains("are kept") && !replaced.contains("kept fields"), "{replaced}");
    }
}

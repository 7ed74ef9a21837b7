//! The `repair` report: the drift it started from, each step and how far it got, and the check
//! after applying.

use super::{Style, text};
use crate::repair::{RepairReport, StepStatus};
use owo_colors::OwoColorize;
use std::fmt::Write;

pub fn render(r: &RepairReport, style: &Style) -> String {
    let paint = |s: &str, f: fn(&str) -> String| if style.color { f(s) } else { s.to_string() };
    let mut out = String::new();
    text::render(&mut out, &r.before, style);
    if r.steps.is_empty() && r.skipped.is_empty() {
        let _ = writeln!(out, "nothing to repair");
        return out;
    }
    let _ = writeln!(out, "{}:", if r.dry_run { "repair plan (dry run: nothing changed)" } else { "repair" });
    for s in &r.steps {
        let status = match &s.status {
            StepStatus::Planned if r.dry_run => paint("would apply (server dry-run passed)", |t| t.cyan().to_string()),
            StepStatus::Planned => paint("planned", |t| t.cyan().to_string()),
            StepStatus::Refused(why) => {
                paint(&format!("refused by the server dry-run: {why}"), |t| t.red().to_string())
            }
            StepStatus::Applied => paint("applied", |t| t.green().to_string()),
            StepStatus::Failed(why) => paint(&format!("FAILED: {why}"), |t| t.red().bold().to_string()),
            StepStatus::NotApplied => paint("not applied (an earlier step failed)", |t| t.yellow().to_string()),
        };
        let _ = writeln!(out, "  {} {}: {status}", s.what, s.object);
    }
    for (object, why) in &r.skipped {
        let _ = writeln!(out, "  skipped {object}: {why}");
    }
    if r.steps.iter().any(|s| matches!(s.status, StepStatus::Refused(_))) {
        let _ = writeln!(out, "nothing was changed: every step must pass its server dry-run first");
    }
    if r.steps.iter().any(|s| matches!(s.status, StepStatus::Failed(_))) {
        let _ = writeln!(
            out,
            "stopped: the steps marked applied were made, the others were not; run repair again to finish"
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }
    if let Some(after) = &r.after {
        let _ = writeln!(out, "after repair:");
        text::render(&mut out, after, &Style { verbose: false, ..style.clone() });
    }
    out
}

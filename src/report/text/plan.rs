//! The text report of `plan`: each object the upgrade changes (live → after), why it would
//! fail, what becomes of today's drift, the hooks it would run, and the verdict.

use crate::model::{HIDDEN, PlanReport, PlannedChange};
use crate::report::color::{Tone, paint};
use crate::report::present::shown;
use crate::report::secret;
use crate::report::style::Style;
use std::fmt::Write;

pub(crate) fn plan(r: &PlanReport, style: &Style) -> String {
    let on = style.color;
    let mut out = header(r);
    for note in &r.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    if let Some(why) = &r.failure {
        let _ = writeln!(out, "  {}", paint(on, Tone::Bad, &format!("would fail: helm refuses the upgrade: {why}")));
    }
    for o in &r.objects {
        if o.change == PlannedChange::None && o.failure.is_none() && o.note.is_none() && !style.verbose {
            continue;
        }
        let tone = match o.change {
            PlannedChange::Create => Tone::Good,
            PlannedChange::Delete => Tone::Bad,
            _ => Tone::Warn,
        };
        let _ = writeln!(out, "  {} {}", paint(on, tone, &format!("{:<7}", o.change.word())), o.id);
        for f in &o.fields {
            let pointer = f.path.pointer();
            let value = |v: &Option<serde_json::Value>| match v {
                None => "(removed)".to_string(),
                Some(v) => match secret::mask(&o.id, &pointer, v, style.show_secrets) {
                    serde_json::Value::String(s) if s == HIDDEN => s,
                    masked => shown(&masked),
                },
            };
            let _ = writeln!(out, "      ~ {}: {} -> {}", f.path, value(&f.recorded), value(&f.live));
        }
        if let Some(why) = &o.failure {
            let _ = writeln!(out, "      {}", paint(on, Tone::Bad, &format!("would fail: {why}")));
            for c in &o.conflicts {
                let _ = writeln!(out, "      conflict: {} is {}'s", c.field, c.owner());
            }
            if !o.conflicts.is_empty() {
                let _ = writeln!(
                    out,
                    "      (helm drift repair {} gives the fields back to {}; --force-conflicts takes them)",
                    r.release, r.writer.manager
                );
            }
        }
        if let Some(note) = &o.note {
            let _ = writeln!(out, "      {note}");
        }
    }
    if !r.drift.is_empty() {
        let _ = writeln!(out, "  today's drift:");
        for d in &r.drift {
            let _ = writeln!(out, "      {:<9} {}", d.fate, d.drift);
        }
    }
    if !r.hooks.is_empty() {
        let _ = writeln!(out, "  hooks it would run (not run now): {}", r.hooks.join(", "));
    }
    let tone = match r.exit_status() {
        crate::model::ExitStatus::InSync => Tone::Good,
        crate::model::ExitStatus::Drift => Tone::Warn,
        _ => Tone::Bad,
    };
    let verdict = paint(on, tone, &r.verdict().to_string());
    let _ = writeln!(out, "{}: {verdict}", r.release);
    out
}

/// The first line: the release, whose upgrade to which chart, how it applies, from which
/// revision.
fn header(r: &PlanReport) -> String {
    let apply = r.applied();
    match r.writer.is_helm_command() {
        true => format!(
            "plan {}: helm upgrade to {} ({apply}), from revision {} [namespace {}]\n",
            r.release, r.chart, r.revision, r.namespace
        ),
        false => format!(
            "plan {}: upgrade by {} to {} ({apply}; Helm's writer: it {}), from revision {} [namespace {}]\n",
            r.release,
            r.writer.manager,
            r.chart,
            r.writer.why(),
            r.revision,
            r.namespace
        ),
    }
}

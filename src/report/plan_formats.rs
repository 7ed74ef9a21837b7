//! `plan -o markdown` (for a pull request or a step summary: a table of what changes and why it
//! would fail, today's drift, the text report folded) and `plan -o junit` (a test case per
//! object, a failure per object the upgrade would fail on).

use super::junit::esc;
use super::markdown::{cell, code, fenced};
use super::style::Style;
use crate::model::{PlanReport, PlannedChange};
use std::fmt::Write;

/// GitHub's limit for a comment, with room to spare.
const LIMIT: usize = 60_000;

pub(crate) fn markdown(r: &PlanReport, style: &Style) -> String {
    let verdict = r.verdict();
    let mut out = format!(
        "**helm drift plan: {verdict}** — {} to {} ({}), namespace `{}`\n\n",
        cell(&r.release),
        code(&r.chart),
        r.applied(),
        code(&r.namespace)
    );
    for note in &r.notes {
        let _ = write!(out, "Note: {}\n\n", cell(note));
    }
    if let Some(why) = &r.failure {
        let _ = write!(out, "Helm refuses the upgrade: {}\n\n", cell(why));
    }
    let changed: Vec<_> = r.objects.iter().filter(|o| o.change != PlannedChange::None || o.failure.is_some()).collect();
    if !changed.is_empty() {
        out.push_str("| Object | Change | Fields | Would fail |\n|---|---|---|---|\n");
        for o in changed {
            let fields: Vec<String> = o.fields.iter().map(|f| format!("`{}`", code(&f.path.to_string()))).collect();
            let why = o.failure.as_deref().map_or(String::new(), cell);
            let _ =
                writeln!(out, "| {} | {} | {} | {why} |", cell(&o.id.to_string()), o.change.word(), fields.join(", "));
        }
        out.push('\n');
    }
    if !r.drift.is_empty() {
        out.push_str("| Today's drift | After the upgrade |\n|---|---|\n");
        for d in &r.drift {
            let _ = writeln!(out, "| {} | {} |", cell(&d.drift), d.fate);
        }
        out.push('\n');
    }
    let text = super::text::plan::plan(r, &Style { color: false, ..style.clone() });
    out.push_str("<details><summary>the plan</summary>\n\n");
    out.push_str(&fenced(text.trim_end(), "text"));
    out.push_str("</details>\n");
    if out.len() > LIMIT {
        let mut at = LIMIT;
        while !out.is_char_boundary(at) {
            at -= 1;
        }
        out.truncate(at);
        out.push_str("\n\n_cut to stay under the size limit: `helm drift plan` shows everything._\n");
    }
    out
}

pub(crate) fn junit(r: &PlanReport) -> String {
    let suite = format!("plan/{}/{}", r.namespace, r.release);
    let mut cases = String::new();
    let mut failures = 0;
    if let Some(why) = &r.failure {
        failures += 1;
        let _ = writeln!(
            cases,
            "    <testcase classname=\"{}\" name=\"upgrade\"><failure message=\"{}\" type=\"would-fail\"/></testcase>",
            esc(&suite),
            esc(why)
        );
    }
    for o in &r.objects {
        let name = esc(&format!("{} {}", o.change.word(), o.id));
        let _ = write!(cases, "    <testcase classname=\"{}\" name=\"{name}\">", esc(&suite));
        if let Some(why) = &o.failure {
            failures += 1;
            let _ = write!(cases, "<failure message=\"{}\" type=\"would-fail\"/>", esc(why));
        }
        cases.push_str("</testcase>\n");
    }
    let tests = r.objects.len() + usize::from(r.failure.is_some());
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"helm-drift plan\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">\n  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">\n{cases}  </testsuite>\n</testsuites>\n",
        esc(&suite)
    )
}

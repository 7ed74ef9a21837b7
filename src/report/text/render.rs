//! The `render` report as text: which documents render differently from the stored manifest.

use crate::model::RenderReport;
use crate::report::color::diff_line;
use crate::report::present::sides;
use crate::report::style::Style;
use std::fmt::Write;

pub(crate) fn render(r: &RenderReport, style: &Style) -> String {
    let mut out = String::new();
    let verdict = if r.diffs.is_empty() {
        format!("renders as stored ({} documents)", r.documents)
    } else {
        format!("{} of {} documents render differently", r.diffs.len(), r.documents)
    };
    let _ = writeln!(
        out,
        "{}: {verdict} [namespace {}, revision {}, Kubernetes {}]",
        r.release, r.namespace, r.revision, r.kube_version
    );
    for d in &r.diffs {
        let (label, (stored, rendered)) = (d.change.word(), sides(&d.change, style.show_secrets));
        let _ = writeln!(out, "  {label:<8} {}", d.source);
        let (a, b) = (format!("{stored}\n"), format!("{rendered}\n"));
        let diff = similar::TextDiff::from_lines(&a, &b);
        for line in diff.unified_diff().context_radius(style.context).header("stored", "rendered").to_string().lines() {
            let _ = writeln!(out, "      {}", diff_line(style.color, line));
        }
    }
    out
}

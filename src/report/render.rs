//! The `render` report: which documents render differently from the stored manifest.

use super::Style;
use super::color::diff_line;
use crate::model::{DocChange, RenderReport};
use std::fmt::Write;

pub fn text(r: &RenderReport, style: &Style) -> String {
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

/// Both sides of a change as they may be shown (secret values hidden unless `show`).
fn sides(change: &DocChange, show: bool) -> (String, String) {
    let (stored, rendered) = match change {
        DocChange::Changed { stored, rendered } => (Some(stored.as_str()), Some(rendered.as_str())),
        DocChange::OnlyStored(s) => (Some(s.as_str()), None),
        DocChange::OnlyRendered(s) => (None, Some(s.as_str())),
    };
    super::secret::mask_documents(stored, rendered, show)
}

pub fn json(r: &RenderReport, show: bool) -> String {
    let docs: Vec<_> = r
        .diffs
        .iter()
        .map(|d| {
            let (stored, rendered) = sides(&d.change, show);
            let mut doc = serde_json::json!({"source": d.source, "change": d.change.word()});
            if !matches!(d.change, DocChange::OnlyRendered(_)) {
                doc["stored"] = stored.into();
            }
            if !matches!(d.change, DocChange::OnlyStored(_)) {
                doc["rendered"] = rendered.into();
            }
            doc
        })
        .collect();
    super::json::pretty(&serde_json::json!({
        "schemaVersion": super::json::SCHEMA_VERSION,
        "release": r.release,
        "namespace": r.namespace,
        "revision": r.revision,
        "kubeVersion": r.kube_version,
        "documents": r.documents,
        "differences": docs,
    }))
}

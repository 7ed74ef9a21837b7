//! The text report of `accept`: what went into the baseline (or would), one line per drift.

use crate::model::AcceptReport;

/// `accept`: what went into the baseline (or would), one line per drift.
pub(crate) fn accept(r: &AcceptReport) -> String {
    let n = r.accepted.len();
    let (verb, into) = if r.dry_run { ("would accept", "(dry run: nothing written)") } else { ("accepted", "") };
    let mut out = format!(
        "{}: {verb} {n} drift{} into {} ({} entr{} for this release{}){}{into}\n",
        r.release,
        if n == 1 { "" } else { "s" },
        r.location,
        r.entries,
        if r.entries == 1 { "y" } else { "ies" },
        if r.dropped > 0 { format!(", {} stale dropped", r.dropped) } else { String::new() },
        if r.dry_run { " " } else { "" },
    );
    for a in &r.accepted {
        let path = if a.path.is_empty() { "(whole object)" } else { &a.path };
        let until = a.expires_at.as_ref().map_or(String::new(), |t| format!(", until {t}"));
        out.push_str(&format!("  ✓ {} {path} ({}{until})\n", a.object, crate::model::accept::said(&a.change)));
    }
    out
}

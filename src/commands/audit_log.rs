//! `check --audit-log FILE`: who made each drift, from an API server's audit log file (or
//! stdin), read as a stream that keeps only the writes to the drifted objects.

use crate::audit::{Limits, Window, file};
use crate::engine::{Session, audit};
use crate::model::{Outcome, RunReport};
use anyhow::{Context, Result};
use std::path::Path;

/// Reads the log for the run's drifted objects and attributes their drift.
pub(crate) fn attribute(session: &Session, run: &mut RunReport, path: &Path) -> Result<()> {
    let targets = audit::targets(session.discovery(), run);
    // The whole file is history asked for: no bound in time, only in bytes.
    let limits = Limits { max_age: std::time::Duration::MAX, ..Limits::default() };
    let mut window = Window::new(limits);
    let now = jiff::Timestamp::now();
    let read = if path == Path::new("-") {
        file::read(std::io::stdin().lock(), &targets, &mut window, now)
    } else {
        let f = std::fs::File::open(path).with_context(|| format!("cannot read the audit log {}", path.display()))?;
        file::read(f, &targets, &mut window, now)
    };
    let read = read.with_context(|| format!("cannot read the audit log {}", path.display()))?;
    audit::attribute(session.discovery(), run, &window);
    let Some((line, why)) = read.first_refusal else { return Ok(()) };
    let note = format!(
        "audit log {}: {} of {} lines are not audit.k8s.io/v1 events and were skipped (line {line}: {why})",
        path.display(),
        read.refused,
        read.lines
    );
    for outcome in &mut run.outcomes {
        if let Outcome::Checked(report) = outcome {
            report.notes.push(note.clone());
        }
    }
    Ok(())
}

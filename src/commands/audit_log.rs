//! `check --audit-log FILE...`: who made each drift, from an API server's audit log files (gzipped
//! or not, as the log backend rotates them; or stdin), read as a stream that keeps only the
//! writes to the drifted objects.

use crate::audit::{Window, WindowLimits, file};
use crate::engine::{Session, makers};
use crate::model::{Outcome, RunReport};
use anyhow::{Context, Result};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Reads the logs for the run's drifted objects and attributes their drift.
pub(crate) fn attribute(session: &Session, run: &mut RunReport, paths: &[PathBuf]) -> Result<()> {
    let targets = makers::targets(session.discovery(), run);
    // The whole files are history asked for: no bound in time, only in bytes.
    let limits = WindowLimits { max_age: std::time::Duration::MAX, ..WindowLimits::default() };
    let mut window = Window::new(limits);
    let now = jiff::Timestamp::now();
    let mut notes = Vec::new();
    for path in paths {
        let what = || format!("cannot read the audit log {}", path.display());
        let read = file::read(open(path).with_context(what)?, &targets, &mut window, now).with_context(what)?;
        if let Some((line, why)) = read.first_refusal {
            notes.push(format!(
                "audit log {}: {} of {} lines are not audit.k8s.io/v1 events and were skipped (line {line}: {why})",
                path.display(),
                read.refused,
                read.lines
            ));
        }
    }
    // Said without -v: a forgotten write can make a person's drift read "no audit record".
    let mut findings = Vec::new();
    if window.dropped() > 0 {
        findings.push(format!(
            "audit log: {} writes to the drifted objects were forgotten to stay within {} MiB (the oldest first): an \
             older drift may read \"no audit record\"",
            window.dropped(),
            limits.max_bytes >> 20
        ));
    }
    makers::attribute(session.discovery(), run, &window);
    for outcome in &mut run.outcomes {
        if let Outcome::Checked(report) = outcome {
            report.notes.extend(notes.iter().cloned());
            report.findings.extend(findings.iter().cloned());
        }
    }
    Ok(())
}

/// A log file (`-`: stdin), decompressed when it is gzipped (`--audit-log-compress`).
fn open(path: &Path) -> std::io::Result<Box<dyn Read>> {
    let source: Box<dyn Read> = match path == Path::new("-") {
        true => Box::new(std::io::stdin()),
        false => Box::new(std::fs::File::open(path)?),
    };
    let mut buffered = BufReader::new(source);
    let gzipped = buffered.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    Ok(match gzipped {
        true => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        false => Box::new(buffered),
    })
}

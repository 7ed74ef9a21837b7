//! Report: the one place that writes to stdout and stderr.

mod text;

use crate::check::DriftReport;
use std::io::Write;

/// How reports look; colour is resolved once by the caller.
#[derive(Clone, Debug, Default)]
pub struct Style {
    pub color: bool,
    /// Also in-sync objects, ignored differences, the engine and notes.
    pub verbose: bool,
    /// Print secret values instead of hiding them.
    pub show_secrets: bool,
}

/// Where and how output is written.
pub struct Printer {
    pub style: Style,
}

impl Printer {
    /// Writes the human-readable report of one release to stdout.
    pub fn check(&self, report: &DriftReport) {
        let mut out = String::new();
        text::render(&mut out, report, &self.style);
        write_stdout(&out);
    }

    /// Writes plain text to stdout (help, version).
    pub fn stdout(&self, text: &str) {
        write_stdout(text);
    }

    /// Writes an error (with its causes) to stderr.
    pub fn error(&self, err: &anyhow::Error) {
        let mut msg = format!("Error: {err}");
        for cause in err.chain().skip(1) {
            msg.push_str(&format!(": {cause}"));
        }
        eprintln!("{msg}");
    }

    /// Writes a preformatted message (usage errors) to stderr.
    pub fn stderr(&self, text: &str) {
        eprint!("{text}");
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()).is_err() {
        // Broken pipe or closed stdout: nothing more to say.
    }
}

//! How a report looks: its format, the style flags, and what `--summary-file` writes.

use crate::model::{FleetReport, RunReport};

/// The output formats (which command writes which: the table in `formats.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Format {
    #[default]
    Text,
    Json,
    Junit,
    /// `check` and `plan`.
    Markdown,
    /// `check` only.
    Html,
}

/// How reports look; colour is resolved once by the caller.
#[derive(Clone, Debug)]
pub(crate) struct Style {
    pub(crate) format: Format,
    pub(crate) color: bool,
    /// Also in-sync objects, ignored differences, the engine and notes.
    pub(crate) verbose: bool,
    /// Print secret values instead of hiding them.
    pub(crate) show_secrets: bool,
    /// Lines of context around each change in diffs.
    pub(crate) context: usize,
    /// Only the verdict line of each release.
    pub(crate) summary: bool,
    /// Nothing on stdout; errors still go to stderr.
    pub(crate) quiet: bool,
    /// The time of the report, for "12 min ago" (no ages without it).
    pub(crate) now: Option<k8s_openapi::jiff::Timestamp>,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            format: Format::Text,
            color: false,
            verbose: false,
            show_secrets: false,
            context: 3,
            summary: false,
            quiet: false,
            now: None,
        }
    }
}

/// What `--summary-file` writes: one cluster's run, or a fleet's.
#[derive(Clone, Copy)]
pub(crate) enum Summary<'a> {
    Run(&'a RunReport),
    Fleet(&'a FleetReport),
    Plan(&'a crate::model::PlanReport),
    FleetPlan(&'a crate::model::FleetPlan),
}

//! The formats, in one table: what each writes for `check` (one cluster and a fleet) and for
//! `render`, and its `-o` name. Adding a format is its file and one arm of [`Format::writer`].

use super::style::{Format, Style};
use super::{html, json, junit, markdown, text};
use crate::model::{FleetReport, RenderReport, RunReport};

/// What one format writes: `check` over one cluster and over several, `render` when it has one.
pub(crate) struct Writer {
    /// Its `-o` name.
    pub(crate) name: &'static str,
    pub(crate) run: fn(&RunReport, &Style) -> String,
    pub(crate) fleet: fn(&FleetReport, &Style) -> String,
    pub(crate) render: Option<fn(&RenderReport, &Style) -> String>,
}

impl Format {
    /// Every format, in the order `-o` lists them.
    pub(crate) const ALL: [Format; 5] = [Format::Text, Format::Json, Format::Junit, Format::Markdown, Format::Html];

    /// The format's writers: adding a format is its file and one arm here.
    pub(crate) fn writer(self) -> Writer {
        match self {
            Format::Text => Writer { name: "text", run: text::run, fleet: text::fleet, render: Some(text::render) },
            Format::Json => Writer { name: "json", run: json::run, fleet: json::fleet, render: Some(json::render) },
            // `render -o junit` has no test cases to report: it writes its text.
            Format::Junit => Writer { name: "junit", run: junit::run, fleet: junit::fleet, render: Some(text::render) },
            Format::Markdown => Writer { name: "markdown", run: markdown::run, fleet: markdown::fleet, render: None },
            Format::Html => Writer { name: "html", run: html::run, fleet: html::fleet, render: None },
        }
    }

    /// The format an `-o` name names.
    pub(crate) fn named(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.writer().name == name)
    }
}

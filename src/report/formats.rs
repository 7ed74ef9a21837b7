//! The formats, in one table: what each writes for `check` (one cluster and a fleet), `render`,
//! `plan` and `repair`, its `-o` name and help words; each command's `-o` values and help are
//! made from it. Adding a format is its file and one arm of [`Format::renderers`] (`accept`
//! writes text or its JSON document; `guard` writes text).

use super::style::{Format, Style};
use super::text::{plan as text_plan, repair as text_repair};
use super::{changes_json, fleet_plan, html, json, junit, markdown, plan_formats, text};
use crate::model::{FleetPlan, FleetReport, PlanReport, RenderReport, RepairReport, RunReport};

/// A plan's renderers: one cluster's, and every workload cluster's (`plan --helmchartproxy`).
pub(crate) type PlanRenderers = (fn(&PlanReport, &Style) -> String, fn(&FleetPlan, &Style) -> String);

/// What one format writes: `check` over one cluster and over several, and (`None`: the command
/// does not take the format) `render`, `plan` and `repair` (over several clusters as one
/// document when `repair_fleet` is set, else each cluster's under its name).
pub(crate) struct Renderers {
    /// Its `-o` name.
    pub(crate) name: &'static str,
    /// Said after the name in `-o`'s help (empty: nothing).
    pub(crate) about: &'static str,
    pub(crate) run: fn(&RunReport, &Style) -> String,
    pub(crate) fleet: fn(&FleetReport, &Style) -> String,
    pub(crate) render: Option<fn(&RenderReport, &Style) -> String>,
    pub(crate) plan: Option<PlanRenderers>,
    pub(crate) repair: Option<fn(&RepairReport, &Style) -> String>,
    pub(crate) repair_fleet: Option<fn(&crate::model::FleetRepair, &Style) -> String>,
}

/// The commands whose `-o` takes a subset of the formats (`check` takes each).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Writes {
    Check,
    Render,
    Plan,
    Repair,
}

impl Format {
    /// Every format, in the order `-o` lists them.
    pub(crate) const ALL: [Format; 5] = [Format::Text, Format::Json, Format::Junit, Format::Markdown, Format::Html];

    /// The format's renderers: adding a format is its file and one arm here; the flag's values
    /// and help follow from it ([`Format::names`], [`Format::help`]).
    pub(crate) fn renderers(self) -> Renderers {
        let none = Renderers {
            name: "",
            about: "",
            run: text::run,
            fleet: text::fleet,
            render: None,
            plan: None,
            repair: None,
            repair_fleet: None,
        };
        match self {
            Format::Text => Renderers {
                name: "text",
                render: Some(text::render),
                plan: Some((text_plan::plan, fleet_plan::text)),
                repair: Some(text_repair::repair),
                ..none
            },
            Format::Json => Renderers {
                name: "json",
                run: json::run,
                fleet: json::fleet,
                render: Some(json::render),
                plan: Some((|r, s| changes_json::plan(r, s.show_secrets), fleet_plan::json)),
                repair: Some(changes_json::repair),
                repair_fleet: Some(changes_json::repair_fleet),
                ..none
            },
            Format::Junit => Renderers {
                name: "junit",
                run: junit::run,
                fleet: junit::fleet,
                plan: Some((|r, _| plan_formats::junit(r), fleet_plan::junit)),
                ..none
            },
            Format::Markdown => Renderers {
                name: "markdown",
                about: "(kept under 64 KiB, a GitHub comment)",
                run: markdown::run,
                fleet: markdown::fleet,
                plan: Some((plan_formats::markdown, fleet_plan::markdown)),
                ..none
            },
            Format::Html => Renderers {
                name: "html",
                about: "(one self-contained page)",
                run: html::run,
                fleet: html::fleet,
                ..none
            },
        }
    }

    /// Whether a command writes this format.
    fn written_by(self, command: Writes) -> bool {
        let r = self.renderers();
        match command {
            Writes::Check => true,
            Writes::Render => r.render.is_some(),
            Writes::Plan => r.plan.is_some(),
            Writes::Repair => r.repair.is_some(),
        }
    }

    /// The `-o` names a command takes, in the table's order.
    pub(crate) fn names(command: Writes) -> Vec<&'static str> {
        Format::ALL.into_iter().filter(|f| f.written_by(command)).map(|f| f.renderers().name).collect()
    }

    /// `-o`'s help for a command: `Output format: text, json or markdown (...)`.
    pub(crate) fn help(command: Writes) -> String {
        let words: Vec<String> = Format::ALL
            .into_iter()
            .filter(|f| f.written_by(command))
            .map(|f| f.renderers())
            .map(|r| if r.about.is_empty() { r.name.to_string() } else { format!("{} {}", r.name, r.about) })
            .collect();
        let list = match words.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        format!("Output format: {list}")
    }

    /// The format an `-o` name names.
    pub(crate) fn named(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.renderers().name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each command's `-o` values and help come from the table's rows.
    #[test]
    fn each_command_takes_the_formats_its_rows_give() {
        assert_eq!(Format::names(Writes::Check), ["text", "json", "junit", "markdown", "html"]);
        assert_eq!(Format::names(Writes::Plan), ["text", "json", "junit", "markdown"]);
        assert_eq!(Format::names(Writes::Render), ["text", "json"]);
        assert_eq!(Format::names(Writes::Repair), ["text", "json"]);
        assert_eq!(Format::help(Writes::Render), "Output format: text or json");
        assert!(
            Format::help(Writes::Check)
                .ends_with("markdown (kept under 64 KiB, a GitHub comment) or html (one self-contained page)")
        );
        let plan = |o: &str| <crate::cli::Cli as clap::Parser>::try_parse_from(["helm-drift", "plan", "web", "-o", o]);
        assert!(plan("junit").is_ok(), "{:?}", plan("junit").err());
        assert!(plan("html").is_err(), "plan does not write HTML");
    }
}

//! The formats, in one table: what each writes for `check` (one cluster and a fleet), `render`,
//! `plan` and `repair`, and its `-o` name. Adding a format is its file and one arm of
//! [`Format::renderers`] (`accept` writes text or its JSON document; `guard` writes text).

use super::style::{Format, Style};
use super::text::{plan as text_plan, repair as text_repair};
use super::{changes_json, fleet_plan, html, json, junit, markdown, plan_formats, text};
use crate::model::{FleetPlan, FleetReport, PlanReport, RenderReport, RepairReport, RunReport};

/// What one format writes: `check` over one cluster and over several, `render` when it has one,
/// `plan`, and `repair` (over several clusters too, when it has a document of its own).
pub(crate) struct Renderers {
    /// Its `-o` name.
    pub(crate) name: &'static str,
    pub(crate) run: fn(&RunReport, &Style) -> String,
    pub(crate) fleet: fn(&FleetReport, &Style) -> String,
    pub(crate) render: Option<fn(&RenderReport, &Style) -> String>,
    pub(crate) plan: fn(&PlanReport, &Style) -> String,
    /// `plan --helmchartproxy`: every workload cluster's plan.
    pub(crate) fleet_plan: fn(&FleetPlan, &Style) -> String,
    pub(crate) repair: fn(&RepairReport, &Style) -> String,
    /// `repair` over several clusters as one document (`None`: each cluster's under its name).
    pub(crate) repair_fleet: Option<fn(&crate::model::FleetRepair, &Style) -> String>,
}

impl Format {
    /// Every format, in the order `-o` lists them.
    pub(crate) const ALL: [Format; 5] = [Format::Text, Format::Json, Format::Junit, Format::Markdown, Format::Html];

    /// The format's renderers: adding a format is its file and one arm here.
    pub(crate) fn renderers(self) -> Renderers {
        let (plan, repair) = (text_plan::plan, text_repair::repair);
        let repair_fleet = None;
        match self {
            Format::Text => Renderers {
                name: "text",
                run: text::run,
                fleet: text::fleet,
                render: Some(text::render),
                plan,
                fleet_plan: fleet_plan::text,
                repair,
                repair_fleet,
            },
            Format::Json => Renderers {
                name: "json",
                run: json::run,
                fleet: json::fleet,
                render: Some(json::render),
                plan: |r, s| changes_json::plan(r, s.show_secrets),
                fleet_plan: fleet_plan::json,
                repair: changes_json::repair,
                repair_fleet: Some(changes_json::repair_fleet),
            },
            // `render -o junit` has no test cases to report: it writes its text.
            Format::Junit => Renderers {
                name: "junit",
                run: junit::run,
                fleet: junit::fleet,
                render: Some(text::render),
                plan: |r, _| plan_formats::junit(r),
                fleet_plan: fleet_plan::junit,
                repair,
                repair_fleet,
            },
            Format::Markdown => Renderers {
                name: "markdown",
                run: markdown::run,
                fleet: markdown::fleet,
                render: None,
                plan: plan_formats::markdown,
                fleet_plan: fleet_plan::markdown,
                repair,
                repair_fleet,
            },
            Format::Html => {
                let fleet_plan = fleet_plan::text;
                Renderers {
                    name: "html",
                    run: html::run,
                    fleet: html::fleet,
                    render: None,
                    plan,
                    fleet_plan,
                    repair,
                    repair_fleet,
                }
            }
        }
    }

    /// The format an `-o` name names.
    pub(crate) fn named(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.renderers().name == name)
    }
}

//! `plan --helmchartproxy` in every format: each workload cluster under its Cluster's name with
//! what CAAPH does there (its plan in the format's own words, or why nothing), then the fleet's
//! verdict.

use super::junit::esc;
use super::markdown::cell;
use super::style::Style;
use crate::model::{ClusterOutcome, FleetPlan};
use serde_json::{Value, json};
use std::fmt::Write;

/// Why nothing is planned on a cluster, in words (empty for a plan).
fn reason(outcome: &ClusterOutcome) -> String {
    match outcome {
        ClusterOutcome::Planned { .. } => String::new(),
        ClusterOutcome::Untouched(why) | ClusterOutcome::Skipped(why) => why.clone(),
        ClusterOutcome::Fails(why) => format!("CAAPH's reconcile fails: {why}"),
        ClusterOutcome::NotRun(why) => format!("not planned: {why}"),
    }
}

fn headline(f: &FleetPlan) -> String {
    format!("HelmChartProxy {} (from {}): {}", f.proxy, f.source, f.verdict())
}

pub(crate) fn text(f: &FleetPlan, style: &Style) -> String {
    let mut out = String::new();
    for c in &f.clusters {
        let _ = writeln!(out, "cluster {}: {}", c.cluster, c.outcome.summary());
        match &c.outcome {
            ClusterOutcome::Planned { plan, .. } => {
                for line in super::text::plan::plan(plan, style).lines() {
                    let _ = writeln!(out, "  {line}");
                }
            }
            other => {
                let _ = writeln!(out, "  {}", reason(other));
            }
        }
    }
    for note in &f.notes {
        let _ = writeln!(out, "note: {note}");
    }
    let _ = writeln!(out, "{}", headline(f));
    out
}

pub(crate) fn json(f: &FleetPlan, style: &Style) -> String {
    let clusters: Vec<Value> = f
        .clusters
        .iter()
        .map(|c| {
            let (outcome, plan) = match &c.outcome {
                ClusterOutcome::Planned { action, plan } => {
                    let doc = super::changes_json::plan(plan, style.show_secrets);
                    (action.word(), serde_json::from_str(&doc).unwrap_or(Value::Null))
                }
                ClusterOutcome::Untouched(_) => ("untouched", Value::Null),
                ClusterOutcome::Skipped(_) => ("skipped", Value::Null),
                ClusterOutcome::Fails(_) => ("fails", Value::Null),
                ClusterOutcome::NotRun(_) => ("not-planned", Value::Null),
            };
            let reason = Some(reason(&c.outcome)).filter(|r| !r.is_empty());
            json!({"cluster": c.cluster, "outcome": outcome, "reason": reason,
                "exitCode": c.outcome.exit_status().code(), "plan": plan})
        })
        .collect();
    let (changed, failing, unchanged, unplanned) = f.counts();
    let doc = json!({
        "tool": {"name": "helm-drift", "version": env!("CARGO_PKG_VERSION")},
        "helmChartProxy": f.proxy,
        "source": f.source,
        "verdict": f.verdict(),
        "summary": {"clusters": f.clusters.len(), "changed": changed, "failing": failing, "unchanged": unchanged, "notPlanned": unplanned},
        "exitCode": f.exit_status().code(),
        "notes": f.notes,
        "clusters": clusters,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

pub(crate) fn markdown(f: &FleetPlan, style: &Style) -> String {
    let mut out = format!("**helm drift plan: {}**\n\n", cell(&headline(f)));
    out.push_str("| Cluster | CAAPH will |\n|---|---|\n");
    for c in &f.clusters {
        let _ = writeln!(out, "| {} | {} |", cell(&c.cluster), cell(&c.outcome.summary()));
    }
    out.push('\n');
    for note in &f.notes {
        let _ = write!(out, "Note: {}\n\n", cell(note));
    }
    for c in &f.clusters {
        let _ = write!(out, "#### cluster {}\n\n", cell(&c.cluster));
        match &c.outcome {
            ClusterOutcome::Planned { plan, .. } => out.push_str(&super::plan_formats::markdown(plan, style)),
            other => {
                let _ = writeln!(out, "{}", cell(&reason(other)));
            }
        }
        out.push('\n');
    }
    out
}

pub(crate) fn junit(f: &FleetPlan, _: &Style) -> String {
    let suite = format!("plan/{}", f.proxy);
    let (mut cases, mut failures) = (String::new(), 0);
    for c in &f.clusters {
        let name = esc(&format!("{}: {}", c.cluster, c.outcome.summary()));
        let _ = write!(cases, "    <testcase classname=\"{}\" name=\"{name}\">", esc(&suite));
        let failed = match &c.outcome {
            ClusterOutcome::Planned { plan, .. } if plan.would_fail() => Some(plan.failures().join("; ")),
            ClusterOutcome::Planned { .. } => None,
            other => Some(reason(other)).filter(|_| other.exit_status().code() != 0),
        };
        if let Some(why) = failed {
            failures += 1;
            let _ = write!(cases, "<failure message=\"{}\" type=\"would-fail\"/>", esc(&why));
        }
        cases.push_str("</testcase>\n");
    }
    let tests = f.clusters.len();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"helm-drift plan\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">\n  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">\n{cases}  </testsuite>\n</testsuites>\n",
        esc(&suite)
    )
}

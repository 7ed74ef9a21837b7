//! The JSON documents of the commands that change (or would change) the cluster: `repair -o
//! json` and `plan -o json`.

use super::json::{SCHEMA_VERSION, pretty, release};
use crate::model::{Action, FleetRepair, PlanReport, RepairReport, Skip, StepStatus};
use serde_json::{Value, json};

/// `repair -o json`: the drift it started from, each step (what it does, how far it got), what
/// it left alone, and the check afterwards (`null` for a dry run).
pub(crate) fn repair(r: &RepairReport, style: &super::style::Style) -> String {
    pretty(&json!({
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "helm-drift", "version": env!("CARGO_PKG_VERSION")},
        "repair": repair_doc(r, style.show_secrets),
    }))
}

/// `repair -o json` over several clusters: each cluster's repair, or its error.
pub(crate) fn repair_fleet(fleet: &FleetRepair, style: &super::style::Style) -> String {
    let clusters: Vec<Value> = fleet
        .clusters
        .iter()
        .map(|(cluster, r)| match r {
            Ok(r) => json!({"cluster": cluster, "error": null, "repair": repair_doc(r, style.show_secrets)}),
            Err(e) => json!({"cluster": cluster, "error": e.to_string(), "repair": null}),
        })
        .collect();
    pretty(&json!({
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "helm-drift", "version": env!("CARGO_PKG_VERSION")},
        "clusters": clusters,
    }))
}

fn repair_doc(r: &RepairReport, show_secrets: bool) -> Value {
    let pointers = |paths: &[crate::model::FieldPath]| paths.iter().map(|p| p.pointer()).collect::<Vec<_>>();
    let steps: Vec<Value> = r
        .steps
        .iter()
        .map(|s| {
            let (action, restore, remove, reclaim) = match &s.action {
                Action::Recreate => ("recreate", Vec::new(), Vec::new(), Vec::new()),
                Action::Replace => ("replace", Vec::new(), Vec::new(), Vec::new()),
                Action::Repair { restore, remove, reclaim } => {
                    ("patch", pointers(restore), pointers(remove), reclaim.clone())
                }
            };
            let reason = match &s.status {
                StepStatus::Refused(why) | StepStatus::Failed(why) => Some(why.clone()),
                StepStatus::Withheld(why) => Some(why.to_string()),
                _ => None,
            };
            json!({"object": s.object.to_string(), "action": action, "restore": restore, "remove": remove,
                "reclaim": reclaim, "status": s.status.word(), "reason": reason, "writes_with": r.rights})
        })
        .collect();
    let skipped: Vec<Value> = r
        .skipped
        .iter()
        .map(|(o, skip)| match skip {
            Skip::ForeignKept => json!({"object": o.to_string(), "reason": "fields added outside Helm are kept"}),
            Skip::Cannot(why) => json!({"object": o.to_string(), "reason": format!("cannot repair: {why}")}),
            Skip::Withheld(why) => json!({"object": o.to_string(), "reason": format!("not repaired: {why}")}),
        })
        .collect();
    let events: Vec<Value> =
        r.events_not_recorded.iter().map(|(o, why)| json!({"object": o.to_string(), "reason": why})).collect();
    json!({
        "release": r.before.release,
        "namespace": r.before.namespace,
        "dryRun": r.dry_run,
        "exitCode": r.exit_status().code(),
        "before": release(&r.before, show_secrets),
        "steps": steps,
        "skipped": skipped,
        "after": r.after.as_ref().map(|a| release(a, show_secrets)),
        "eventsNotRecorded": events,
    })
}

/// `plan -o json`: each object with its `change` (create, update, delete, none) and fields (live
/// → after), whether the upgrade `wouldFail` and why, today's drift with its fate, the hooks.
pub(crate) fn plan(r: &PlanReport, show_secrets: bool) -> String {
    let masked = |o: &crate::model::PlannedObject, f: &crate::model::FieldDiff, v: &Option<Value>| {
        v.as_ref().map(|v| super::secret::mask(&o.id, &f.path.pointer(), v, show_secrets))
    };
    let objects: Vec<Value> = r
        .objects
        .iter()
        .map(|o| {
            json!({"apiVersion": o.id.api_version, "kind": o.id.kind, "namespace": o.id.namespace, "name": o.id.name,
                "change": o.change.word(), "failure": o.failure, "note": o.note, "unpredictable": o.unpredictable,
                "conflicts": o.conflicts.iter().map(|c| json!({"field": c.field, "manager": c.manager, "subresource": c.subresource})).collect::<Vec<_>>(),
                "fields": o.fields.iter().map(|f| json!({"path": f.path.pointer(), "live": masked(o, f, &f.recorded), "after": masked(o, f, &f.live)})).collect::<Vec<_>>()})
        })
        .collect();
    pretty(&json!({
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "helm-drift", "version": env!("CARGO_PKG_VERSION")},
        "release": r.release,
        "namespace": r.namespace,
        "revision": r.revision,
        "chart": r.chart,
        "apply": r.apply.word(),
        "switchedFrom": r.switched_from.map(|a| a.word()),
        "writer": super::json::writer(&r.writer),
        "wouldFail": r.would_fail(),
        "failures": r.failures(),
        "objects": objects,
        "drift": r.drift.iter().map(|d| json!({"drift": d.drift, "fate": d.fate.word()})).collect::<Vec<_>>(),
        "hooks": r.hooks,
        "notes": r.notes,
        "exitCode": r.exit_status().code(),
    }))
}

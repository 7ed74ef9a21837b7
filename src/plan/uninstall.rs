//! What deleting a release's objects does: those an upgrade's new manifest drops, or every one
//! of an uninstall (Cluster API's Helm add-on provider uninstalls a release from a cluster its
//! HelmChartProxy no longer selects), each deleted unless `helm.sh/resource-policy: keep` or
//! already gone.

use crate::engine::{Evaluated, Session, evaluate_selected};
use crate::model::{ObjectId, PlanReport, PlannedChange, PlannedObject, Verdict};
use crate::settings::Settings;
use anyhow::Result;
use serde_json::Value;

/// The objects of today's manifest that are deleted: all but those `stays` keeps (the new
/// manifest's), unless `helm.sh/resource-policy: keep` (said with `by`: what drops them) or
/// already gone.
pub(super) fn dropped(today: &Evaluated, stays: impl Fn(&ObjectId) -> bool, by: &str) -> Vec<PlannedObject> {
    let mut out = Vec::new();
    for (i, d) in today.objects.iter().enumerate() {
        let id: ObjectId = d.id();
        if stays(&id) || today.report.objects[i].verdict == Verdict::Missing {
            continue;
        }
        let keep =
            d.object.pointer("/metadata/annotations/helm.sh~1resource-policy").and_then(Value::as_str) == Some("keep");
        out.push(PlannedObject {
            id,
            change: if keep { PlannedChange::None } else { PlannedChange::Delete },
            fields: Vec::new(),
            failure: None,
            conflicts: Vec::new(),
            note: keep.then(|| format!("{by}, kept by helm.sh/resource-policy: keep")),
            unpredictable: false,
        });
    }
    out
}

/// The plan of `helm uninstall RELEASE` in `namespace` (its newest deployed revision's
/// objects), as `notes` say who uninstalls it.
pub(crate) async fn uninstall(
    session: &Session,
    settings: &Settings,
    release: &str,
    namespace: &str,
    notes: Vec<String>,
) -> Result<PlanReport> {
    let index = session.storage().history(namespace, release).await?;
    let selected = session.storage().select(&index, None).await?;
    let today = evaluate_selected(session, settings, selected, None).await?;
    let objects = dropped(&today, |_| false, "uninstalled");
    let drift = today
        .report
        .objects
        .iter()
        .filter(|o| o.verdict != Verdict::InSync)
        .map(|o| crate::model::DriftFate { drift: o.id.to_string(), fate: crate::model::Fate::Wiped })
        .collect();
    Ok(PlanReport {
        release: release.to_string(),
        namespace: namespace.to_string(),
        revision: today.report.revision,
        chart: "(uninstalled)".to_string(),
        apply: today.release.apply(),
        switched_from: None,
        writer: today.writer.clone(),
        objects,
        failure: None,
        drift,
        hooks: Vec::new(),
        notes,
    })
}

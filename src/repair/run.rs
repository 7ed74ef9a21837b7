//! A repair from start to end: the release judged, its plan carried out in Helm's install order,
//! and the release checked again. When a Namespace or a CustomResourceDefinition is re-created,
//! they go first: the rest of the release is judged again once they are served (the objects in
//! that namespace, the objects of that kind), in the same run.

use super::execute::{Carried, RepairRequest, carry_out};
use super::order::is_foundation;
use super::{Authority, DraftStep, draft};
use crate::baseline::Baseline;
use crate::engine::{Evaluated, Session, evaluate_with_baseline, file_baseline};
use crate::model::{Acting, Action, RepairReport, StepStatus};
use crate::release::ReleaseIndex;
use crate::settings::Settings;
use anyhow::Result;
use std::time::Duration;

/// How long re-created CustomResourceDefinitions may take to be served.
const SERVED_WITHIN: Duration = Duration::from_secs(30);

/// Plans, validates and (unless a dry run) applies the repair of the release `index` lists.
pub(crate) async fn execute(
    session: &mut Session,
    settings: &Settings,
    index: &ReleaseIndex,
    request: &RepairRequest,
) -> Result<RepairReport> {
    let write_client = session.client().clone();
    execute_as(session, settings, index, request, &write_client).await
}

/// [`execute`], with every write (dry-runs included) sent through `write_client` (an impersonating
/// client for self-healing as a ServiceAccount); reads and Events use the session's client.
pub(crate) async fn execute_as(
    session: &mut Session,
    settings: &Settings,
    index: &ReleaseIndex,
    request: &RepairRequest,
    write_client: &kube::Client,
) -> Result<RepairReport> {
    // Drift the baseline accepted is kept: it reads as in sync, and a field's accepted value
    // is the one written back (settings without a baseline: --include-accepted).
    let file = file_baseline(settings)?;
    let evaluated = judged(session, settings, index, file.as_ref()).await?;
    // A person's repair acts within the same authority as self-healing: their own rights only
    // for a record they trust, else as a ServiceAccount of the record's namespace.
    let authority = match &request.authority {
        Some(authority) => authority.clone(),
        None => {
            let named = request.service_account.as_deref();
            Authority::of(&evaluated.report, &request.trust, named, Acting::Person)
        }
    };
    let person;
    let (request, write_client) = match &request.authority {
        Some(_) => (request, write_client),
        None => {
            let client = authority.write_client(&settings.connection).await?.unwrap_or_else(|| write_client.clone());
            person = (RepairRequest { authority: Some(authority.clone()), ..request.clone() }, client);
            (&person.0, &person.1)
        }
    };
    // What the record speaks for without the operator's trust decides what it creates.
    let trusted = authority.trusted;
    let planned = draft(&evaluated, &request.only, request.remove_foreign, trusted)?;
    let mut report = RepairReport {
        before: planned.before,
        steps: Vec::new(),
        skipped: planned.skipped,
        after: None,
        events_not_recorded: Vec::new(),
        dry_run: request.dry_run,
        rights: Some(authority.rights().words(authority.acting)),
    };
    let client = session.client().clone();
    let (first, rest): (Vec<DraftStep>, Vec<DraftStep>) =
        planned.steps.into_iter().partition(|s| recreates_a_foundation(&evaluated, s));
    let cannot = report.skipped.iter().any(|(_, s)| s.leaves_drift());
    let staged = !first.is_empty() && (!rest.is_empty() || cannot);
    let done = if staged {
        let laid = carry_out(&client, write_client, &evaluated, first, request).await;
        let ok = record_carried(&mut report, laid);
        if !ok || request.dry_run {
            // What comes after the foundation is planned, not validated: its namespace or kind
            // is not served until the foundation is made.
            let status = if request.dry_run && ok { StepStatus::Planned } else { StepStatus::NotApplied };
            report.steps.extend(rest.into_iter().map(|mut p| {
                p.step.status = status.clone();
                p.step
            }));
            return Ok(report);
        }
        served(session, &evaluated).await;
        session.forget_live();
        let again = judged(session, settings, index, file.as_ref()).await?;
        let second = draft(&again, &request.only, request.remove_foreign, trusted)?;
        report.skipped = second.skipped;
        let carried = carry_out(&client, write_client, &again, second.steps, request).await;
        record_carried(&mut report, carried)
    } else {
        let all: Vec<DraftStep> = first.into_iter().chain(rest).collect();
        let carried = carry_out(&client, write_client, &evaluated, all, request).await;
        record_carried(&mut report, carried)
    };
    if done && !request.dry_run {
        session.forget_live(); // read the repaired objects afresh
        report.after = Some(judged(session, settings, index, file.as_ref()).await?.report);
    }
    Ok(report)
}

/// The release's verdicts with its baseline applied (the run's file, else its ConfigMap).
async fn judged(
    session: &Session,
    settings: &Settings,
    index: &ReleaseIndex,
    file: Option<&Baseline>,
) -> Result<Evaluated> {
    Ok(evaluate_with_baseline(session, settings, index, None, file).await?)
}

/// Whether a step re-creates a Namespace or a CustomResourceDefinition.
fn recreates_a_foundation(e: &Evaluated, s: &DraftStep) -> bool {
    s.step.action == Action::Recreate && is_foundation(&e.objects[s.index].kind)
}

/// Adds carried steps to the report; whether all went through.
fn record_carried(report: &mut RepairReport, carried: Carried) -> bool {
    report.steps.extend(carried.steps);
    report.events_not_recorded.extend(carried.events_not_recorded);
    !carried.refused && !carried.failed
}

/// Waits (a bounded while) until the kinds of the re-created CustomResourceDefinitions are
/// served, reading discovery again.
async fn served(session: &mut Session, e: &Evaluated) {
    let kinds: Vec<(String, String)> = e
        .objects
        .iter()
        .filter(|o| o.kind == "CustomResourceDefinition")
        .filter_map(|o| {
            let spec = o.object.get("spec")?;
            let group = spec.get("group")?.as_str()?;
            let kind = spec.pointer("/names/kind")?.as_str()?;
            let version = spec.get("versions")?.as_array()?.first()?.get("name")?.as_str()?;
            Some((format!("{group}/{version}"), kind.to_string()))
        })
        .collect();
    let deadline = tokio::time::Instant::now() + SERVED_WITHIN;
    loop {
        if let Ok(d) = crate::live::discover(session.client()).await {
            session.rediscovered(d);
        }
        let all = kinds.iter().all(|(v, k)| crate::live::locate(session.discovery(), v, k, None, "default").is_some());
        if all || tokio::time::Instant::now() > deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

//! `plan`: what the next `helm upgrade` would do to the cluster as it is now. Helm renders the
//! chart itself (`upgrade --dry-run=server` with the user's flags); each object it would apply
//! is judged against the live one by the engine `check` uses; every object that exists is then
//! applied as a dry-run the way the release's Helm applies (Helm 4 server-side: not forced, so
//! a conflict with another field manager is the upgrade failing); objects the new manifest drops
//! are deleted unless `helm.sh/resource-policy: keep`; a new object that already exists outside
//! the release makes the upgrade fail unless `--take-ownership`. Today's drift is then wiped,
//! kept, adopted or in conflict ([`fates`]).

mod apply;
mod caaph;
mod dry_run;
mod fates;
mod flux_chart;
mod helmrelease;
mod kustomize;
mod post_render;
mod uninstall;
mod unlooked;
mod values;
mod values_from;

pub(crate) use apply::ApplyFlags;
pub(crate) use caaph::{ChartProxySource, fleet as chart_proxy_fleet};
use dry_run::Applier;
pub(crate) use helmrelease::{HelmReleaseSource, request as helm_release_request};
pub(crate) use post_render::PostRender;
pub(crate) use uninstall::uninstall;
pub(crate) use values::ValueFlags;

use crate::api::ApiError;
use crate::compare::merge;
use crate::desired::DesiredObject;
use crate::engine::{Evaluated, Session, evaluate_selected};
use crate::helm::{DryRun, HelmBinary, Previewed};
use crate::live::{self, LiveState, Location};
use crate::model::{Apply, FieldDiff, ObjectId, PlanReport, PlannedChange, PlannedObject, Verdict};
use crate::release::{Selected, SourceError};
use crate::settings::Settings;
use anyhow::Result;
use serde_json::Value;

/// What `plan` asks for.
#[derive(Clone, Debug)]
pub(crate) struct PlanRequest {
    pub(crate) release: String,
    /// The chart reference or path, as `helm upgrade` takes it.
    pub(crate) chart: String,
    /// `helm upgrade`'s flags that decide what is rendered (`--values`, `--set`...), as given.
    pub(crate) flags: Vec<String>,
    pub(crate) helm: HelmBinary,
    /// `--take-ownership`: objects that exist outside the release are adopted.
    pub(crate) take_ownership: bool,
    /// `--server-side` and `--force-conflicts` (Helm 4): how the upgrade applies.
    pub(crate) apply: ApplyFlags,
    /// `--install`: a release that does not exist is planned as installed.
    pub(crate) install: bool,
    /// The value flags, which decide whether the upgrade takes the record's values.
    pub(crate) values: ValueFlags,
    /// Where the record is read and where the release installs, when not the session's
    /// namespace (a Flux HelmRelease's `storageNamespace` and `targetNamespace`).
    pub(crate) stored: Option<String>,
    pub(crate) target: Option<String>,
    /// The namespace whose writers wrote some of the values given (a HelmRelease read from the
    /// cluster, its `valuesFrom`): the chart reads the cluster only when it is trusted.
    pub(crate) values_read_in: Option<String>,
    /// A file someone else wrote (a pull request's HelmRelease or HelmChartProxy) whose
    /// values render: never with the planner's rights, whatever is trusted.
    pub(crate) from_file: Option<String>,
    /// How the request was made, said first among the plan's notes.
    pub(crate) notes: Vec<String>,
    /// What the controller sets on every object after Helm renders (helm-controller's labels).
    pub(crate) post_render: Option<PostRender>,
}

/// Plans the upgrade of one release (with `--install`, of one that does not exist yet).
pub(crate) async fn plan(session: &Session, settings: &Settings, request: &PlanRequest) -> Result<PlanReport> {
    let stored = request.stored.as_deref().unwrap_or(session.namespace());
    let index = match session.storage().history(stored, &request.release).await {
        Ok(index) => index,
        Err(SourceError::NotFound { .. }) if request.install => return install(session, settings, request).await,
        Err(e) => return Err(e.into()),
    };
    let selected = session.storage().select(&index, None).await?;
    // The record is read once: the upgraded copy shares its content until its manifest is set.
    let mut next = selected.clone();
    let today = evaluate_selected(session, settings, selected, None).await?;
    // The record's values, run as templates by a chart's `tpl`, read the cluster with the
    // reader's rights only when they trust its writers.
    let namespace = today.release.namespace();
    let stored = today.release.stored_in();
    let record = request.values.take_record_values().then_some((stored, today.report.record.as_str()));
    let (against, unlooked) = against(settings, request, record);
    let (mut flags, mut notes) = helm_flags(request).await;
    if stored != namespace {
        // Helm's --namespace is both: a record stored apart is not found there.
        flags.push("--install".into());
        notes.push(format!(
            "rendered as an install into {namespace}: helm cannot read a record stored apart (in {stored}), helm-controller renders an upgrade (a chart that tells them apart may differ)"
        ));
    }
    let preview = request.helm.preview(&request.release, namespace, &request.chart, &flags, against).await?;
    notes.extend(unlooked);
    let preview = match preview {
        Previewed::Ready(p) => p,
        Previewed::Refused(why) => return Ok(PlanReport { notes, ..refused(request, &today, why) }),
    };
    let unlooked = unlooked::Unlooked::of(&preview.json, against);
    next.release.manifest = post_rendered(request, preview.manifest).await?;
    next.record = format!("{} as upgraded to {}", next.record, preview.chart);
    // The upgrade is its writer's: judged and dry-run as today's writer, every field it writes
    // shown (drift rules hide drift, not what an upgrade changes).
    let upgraded = Settings { compare: settings.compare.for_upgrade().into(), ..settings.clone() };
    let after = evaluate_selected(session, &upgraded, next, Some(&today.writer)).await?;
    let was = today.release.apply();
    let apply = request.apply.upgrade(was);
    let mut objects = Vec::new();
    for i in 0..after.objects.len() {
        let mut p = planned(session, request, &today, &after, i, apply).await;
        unlooked.mark(&mut p, after.objects[i].source.as_deref());
        objects.push(p);
    }
    let kept: Vec<ObjectId> = after.objects.iter().map(DesiredObject::id).collect();
    objects.extend(uninstall::dropped(&today, |id| kept.contains(id), "dropped by the new chart"));
    let drift = fates::of(&today, &after, &objects);
    Ok(PlanReport {
        release: request.release.clone(),
        namespace: today.report.namespace.clone(),
        revision: today.report.revision,
        chart: preview.chart,
        apply,
        switched_from: (apply != was).then_some(was),
        writer: today.writer.clone(),
        objects,
        failure: None,
        drift,
        hooks: preview.hooks,
        notes,
    })
}

/// The manifest as the controller applies it: post-rendered when it does.
async fn post_rendered(request: &PlanRequest, manifest: String) -> Result<String> {
    Ok(match &request.post_render {
        Some(post) => post.render(&manifest).await?,
        None => manifest,
    })
}

/// The flags for helm: the user's, and Helm 4's apply flags where the helm takes them (with a
/// note where it does not).
async fn helm_flags(request: &PlanRequest) -> (Vec<String>, Vec<String>) {
    let (apply, note) = request.apply.for_helm(request.helm.major().await);
    let notes = request.notes.iter().cloned().chain(note).collect();
    (request.flags.iter().cloned().chain(apply).collect(), notes)
}

/// How the chart renders: with the cluster (`lookup`, the reader's rights) only when the reader
/// trusts whoever wrote the values it takes: the record's (`record`: where it is stored, its
/// name), and those read from the cluster for the request. Else without, and why, said.
fn against(settings: &Settings, request: &PlanRequest, record: Option<(&str, &str)>) -> (DryRun, Vec<String>) {
    let trust = &settings.trust.namespaces;
    let mut why = Vec::new();
    let unlooked = |whose: String, namespace: &str| {
        format!(
            "rendered without the cluster (lookup answered nothing): {whose}, which is not trusted (a chart's tpl runs \
             them as templates); --trust-namespace {namespace} answers lookup with your rights"
        )
    };
    if let Some((namespace, record)) = record.filter(|(ns, _)| !trust.trusts(ns)) {
        why.push(unlooked(format!("the upgrade takes the values stored in {record}"), namespace));
    }
    if let Some(namespace) = request.values_read_in.as_deref().filter(|ns| !trust.trusts(ns)) {
        why.push(unlooked(format!("the HelmRelease's values were read from namespace {namespace}"), namespace));
    }
    if let Some(file) = &request.from_file {
        why.push(format!(
            "rendered without the cluster (lookup answered nothing): the values come from {file}, written by whoever \
             wrote the file, and a plan from a file never lends them your rights"
        ));
    }
    (if why.is_empty() { DryRun::Server } else { DryRun::Client }, why)
}

/// The plan of an upgrade helm itself refuses: no object planned, helm's reason.
fn refused(request: &PlanRequest, today: &Evaluated, why: String) -> PlanReport {
    let apply = request.apply.upgrade(today.release.apply());
    let mut refused = refusal(request, &today.report.namespace, today.report.revision, apply, why);
    refused.writer = today.writer.clone();
    refused
}

fn refusal(request: &PlanRequest, namespace: &str, revision: u32, apply: Apply, why: String) -> PlanReport {
    PlanReport {
        release: request.release.clone(),
        namespace: namespace.to_string(),
        revision,
        chart: request.chart.clone(),
        apply,
        switched_from: None,
        writer: Default::default(),
        objects: Vec::new(),
        failure: Some(why),
        drift: Vec::new(),
        hooks: Vec::new(),
        notes: Vec::new(),
    }
}

/// `--install` of a release that does not exist: every object is created, and one that exists
/// already makes the install fail (unless `--take-ownership`), as helm itself says.
async fn install(session: &Session, settings: &Settings, request: &PlanRequest) -> Result<PlanReport> {
    let namespace = request.target.clone().unwrap_or_else(|| session.namespace().to_string());
    // No record yet: the values are the user's own, or read from the cluster for the request.
    let (against, unlooked) = against(settings, request, None);
    let (flags, mut notes) = helm_flags(request).await;
    notes.extend(unlooked);
    let preview = request.helm.preview(&request.release, &namespace, &request.chart, &flags, against).await?;
    let preview = match preview {
        Previewed::Ready(p) => p,
        Previewed::Refused(why) => {
            let apply = request.apply.upgrade(Apply::ClientSide);
            return Ok(PlanReport { notes, ..refusal(request, &namespace, 0, apply, why) });
        }
    };
    let mut release = crate::release::printed_by_helm(&preview.json)?;
    release.manifest = post_rendered(request, std::mem::take(&mut release.manifest)).await?;
    let apply = request.apply.upgrade(release.apply());
    let record = format!("helm upgrade --install {} (dry run)", request.chart);
    let upgraded = Settings { compare: settings.compare.for_upgrade().into(), ..settings.clone() };
    let after = evaluate_selected(session, &upgraded, Selected { release, record, newest: None }, None).await?;
    let nothing = Evaluated {
        report: after.report.with_objects(Vec::new()),
        release: after.release.clone(),
        objects: Vec::new(),
        locations: Vec::new(),
        writer: after.writer.clone(),
    };
    let mut objects = Vec::new();
    for i in 0..after.objects.len() {
        objects.push(planned(session, request, &nothing, &after, i, apply).await);
    }
    Ok(PlanReport {
        release: request.release.clone(),
        namespace,
        revision: 0,
        chart: preview.chart,
        apply,
        switched_from: None,
        writer: after.writer.clone(),
        objects,
        failure: None,
        drift: Vec::new(),
        hooks: preview.hooks,
        notes,
    })
}

/// What the upgrade does to object `i` of the new manifest.
async fn planned(
    session: &Session,
    request: &PlanRequest,
    today: &Evaluated,
    after: &Evaluated,
    i: usize,
    apply: Apply,
) -> PlannedObject {
    let (o, desired) = (&after.report.objects[i], &after.objects[i]);
    let mut p = PlannedObject {
        id: o.id.clone(),
        change: PlannedChange::None,
        fields: Vec::new(),
        failure: None,
        conflicts: Vec::new(),
        note: None,
        unpredictable: false,
    };
    let Some(at) = &after.locations[i] else {
        p.failure = o.reason().map(|r| format!("{r}: the upgrade cannot apply it"));
        return p;
    };
    match &o.verdict {
        Verdict::Missing => p.change = PlannedChange::Create,
        Verdict::Error { message } => return unknown(&mut p, &format!("it cannot be read: {message}")),
        _ => {
            let before = today.objects.iter().find(|d| d.id() == o.id);
            if before.is_none() && !request.take_ownership {
                match foreign(session, at, desired, &request.release, today.release.namespace()).await {
                    Ok(failure) => p.failure = failure,
                    Err(why) => {
                        return unknown(&mut p, &format!("whether another release owns it cannot be read: {why}"));
                    }
                }
            }
            // Live → after: the chart's values where they differ, and what the new chart no
            // longer sets (the upgrade removes it).
            p.fields = o.fields.iter().filter(|f| f.recorded.is_some()).map(swapped).collect();
            let live = match session.live().get(session.client(), at, &o.id.name, true).await {
                LiveState::Present(live) => Some(live),
                LiveState::Absent => None,
                LiveState::Failed(e) => return unknown(&mut p, &format!("it cannot be read: {e}")),
            };
            let gone = match (before, &live) {
                (Some(before), Some(live)) => merge::no_longer_set(&before.object, &desired.object, live),
                _ => Vec::new(),
            };
            for f in &gone {
                if !p.fields.iter().any(|had| had.path.pointer() == f.path.pointer()) {
                    p.fields.push(f.clone());
                }
            }
            if !p.fields.is_empty() {
                p.change = PlannedChange::Update;
            }
            if p.failure.is_none() && (p.change == PlannedChange::Update || apply.is_server_side()) {
                let by = Applier {
                    manager: &after.writer.manager,
                    apply,
                    switching: apply.is_server_side() && !today.release.apply().is_server_side(),
                    force: request.apply.forces(apply),
                };
                match dry_run::write(session.client(), at, desired, live.as_ref(), &gone, by).await {
                    Ok(()) => {}
                    // The server refused the write: that is what the upgrade meets.
                    Err(e @ (ApiError::Invalid { .. } | ApiError::Conflict { .. })) => {
                        if let ApiError::Conflict { conflicts, .. } = &e {
                            p.conflicts = conflicts.clone();
                        }
                        p.failure = Some(e.to_string());
                    }
                    // Not allowed to ask, or no answer: the prediction is unknown, not a failure.
                    Err(e) => return unknown(&mut p, &format!("the server did not dry-run the upgrade's write: {e}")),
                }
            }
        }
    }
    p
}

/// An object that could not be read: what the upgrade does to it is unknown (never "no other
/// owner", never "no fields gone").
fn unknown(p: &mut PlannedObject, why: &str) -> PlannedObject {
    p.change = PlannedChange::Unknown;
    p.fields.clear();
    p.note = Some(format!("unknown: {why}"));
    p.clone()
}

/// A field as the plan says it: the live value, then the value after the upgrade.
fn swapped(f: &FieldDiff) -> FieldDiff {
    FieldDiff {
        path: f.path.clone(),
        recorded: f.live.clone(),
        live: f.recorded.clone(),
        changed_by: None,
        provenance: None,
    }
}

/// The upgrade's failure on a new object of the chart that exists and another release (or no
/// release) owns it, as Helm's `meta.helm.sh/release-name` annotation says. An error when it
/// cannot be read (who owns it is then unknown).
async fn foreign(
    session: &Session,
    at: &Location,
    d: &DesiredObject,
    release: &str,
    namespace: &str,
) -> Result<Option<String>, ApiError> {
    let live = match live::get(session.client(), at, &d.name).await {
        LiveState::Present(live) => live,
        LiveState::Absent => return Ok(None),
        LiveState::Failed(e) => return Err(e),
    };
    let note = |k: &str| live.pointer(&format!("/metadata/annotations/meta.helm.sh~1{k}")).and_then(Value::as_str);
    if note("release-name") == Some(release) && note("release-namespace") == Some(namespace) {
        return Ok(None);
    }
    let owner = note("release-name").map_or("no release".to_string(), |r| format!("release {r}"));
    Ok(Some(format!(
        "it exists and belongs to {owner}: the upgrade refuses it (--take-ownership adopts it, Helm 3.17+ and 4)"
    )))
}

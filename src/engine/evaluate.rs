//! One release compared with the cluster: select the record, rebuild the objects Helm applied,
//! place them by discovery, read them live, and judge each.

use super::Session;
use super::judge::{Judge, judge};
use crate::desired::{self, DesiredObject, metadata};
use crate::live::{self, Location, Scaled};
use crate::model::{DriftReport, ObjectDrift, ObjectId, Verdict};
use crate::release::{Release, ReleaseIndex, Selected};
use crate::settings::Settings;
use anyhow::{Context, Result};
use futures::{StreamExt, stream};
use std::collections::{BTreeSet, HashMap};

/// How many objects of a release are judged at once.
const CONCURRENCY: usize = 16;

/// A release compared with the cluster: the report, and what a repair needs.
pub struct Evaluated {
    pub report: DriftReport,
    pub release: Release,
    /// The objects as Helm applied them (release metadata and namespace added), in the order of
    /// `report.objects`.
    pub objects: Vec<DesiredObject>,
    /// Where each object lives (`None` when its kind is not served).
    pub locations: Vec<Option<Location>>,
}

/// A release record holding more objects than `--max-objects`.
#[derive(Debug, thiserror::Error)]
#[error("{record} holds {objects} objects, more than --max-objects {limit}: not checked")]
pub struct TooManyObjects {
    pub record: String,
    pub objects: usize,
    pub limit: usize,
}

/// Reads one release, rebuilds its objects and compares them with the cluster.
pub async fn evaluate(
    session: &Session,
    settings: &Settings,
    index: &ReleaseIndex,
    revision: Option<u32>,
) -> Result<Evaluated> {
    let selected = session
        .storage
        .select(index, revision)
        .await
        .with_context(|| format!("cannot read release {:?}", index.name))?;
    evaluate_selected(session, settings, selected).await
}

/// Compares a release record already read (or one whose manifest was rendered again) with the
/// cluster.
pub async fn evaluate_selected(session: &Session, settings: &Settings, selected: Selected) -> Result<Evaluated> {
    let release = selected.release;
    let mut objects = Vec::new();
    let mut broken = Vec::new();
    for parsed in desired::parse_manifest(&release.manifest) {
        match parsed {
            Ok(o) => objects.push(o),
            Err(e) => broken.push(e),
        }
    }

    let limit =
        if settings.compare.max_objects == 0 { crate::settings::MAX_OBJECTS } else { settings.compare.max_objects };
    if objects.len() > limit {
        return Err(TooManyObjects { record: selected.record, objects: objects.len(), limit }.into());
    }
    let manifest_objects = objects.len();
    if settings.compare.include_crds
        && let Some(chart) = &release.chart
    {
        objects.extend(desired::crds(chart).with_context(|| format!("cannot parse the CRDs of {}", selected.record))?);
    }
    let mut locations = Vec::with_capacity(objects.len());
    for (i, obj) in objects.iter_mut().enumerate() {
        if i < manifest_objects {
            metadata::add_release_metadata(obj, &release.name, &release.namespace);
        }
        let at =
            live::locate(&session.discovery, &obj.api_version, &obj.kind, obj.namespace.as_deref(), &release.namespace);
        if let Some(at) = &at {
            metadata::place(obj, at.namespace.as_deref());
        }
        locations.push(at);
    }

    let mut notes = Vec::new();
    if !release.hooks.is_empty() {
        notes.push(format!("{} hook(s) not checked: hooks and tests are not expected to exist", release.hooks.len()));
    }
    let scaled = if settings.compare.check_hpa_replicas {
        Vec::new()
    } else {
        hpa_scaled(session, &locations, &mut notes).await
    };

    // Kinds with several objects in one namespace are read with a (shared) LIST.
    let group = |at: &Location| (at.resource.plural.clone() + "." + &at.resource.group, at.namespace.clone());
    let mut per_group: HashMap<(String, Option<String>), usize> = HashMap::new();
    for at in locations.iter().flatten() {
        *per_group.entry(group(at)).or_default() += 1;
    }
    let listed = |at: &Location| per_group[&group(at)] >= 2;

    let ctx = Judge {
        client: &session.cluster.client,
        cache: &session.live,
        options: &settings.compare,
        scaled: &scaled,
        server_side: release.apply_method.as_deref() == Some("ssa"),
        release: &release.name,
    };
    let mut verdicts: Vec<ObjectDrift> = stream::iter(
        objects.iter().zip(&locations).map(|(o, at)| judge(&ctx, o, at.as_ref(), at.as_ref().is_some_and(listed))),
    )
    .buffered(CONCURRENCY)
    .collect()
    .await;
    // A kind no longer served at the recorded version: name the version that replaced it.
    for (v, o) in verdicts.iter_mut().zip(&objects) {
        if let Verdict::Unknown { reason } = &mut v.verdict
            && let Some(served) = live::served_replacement(&session.discovery, &o.api_version, &o.kind)
        {
            reason.push_str(&format!(
                "; it serves {served} {kind} instead: the record still names the removed version (the mapkubeapis plugin rewrites it: helm mapkubeapis {} -n {})",
                release.name,
                release.namespace,
                kind = o.kind
            ));
        }
    }
    // Helm installs crds/ once and never upgrades them: a drifted one stays until fixed by hand.
    let mut findings = Vec::new();
    for v in verdicts.iter().skip(manifest_objects).filter(|v| v.is_drift()) {
        findings.push(format!(
            "{} differs from the chart's crds/ copy: Helm never upgrades crds/, so helm upgrade will not change it (apply the chart's CRD by hand, or helm drift repair)",
            v.id
        ));
    }
    // Documents that are not objects are errors of their own; the others are still checked.
    verdicts.extend(broken.into_iter().map(|e| {
        let message = format!("cannot parse the manifest of {}: {e}", selected.record);
        ObjectDrift::new(ObjectId::new("", "Document", None, e.at()), Some(e.at()), Verdict::Error { message })
    }));

    let chart =
        release.chart.as_ref().map(|c| format!("{}-{}", c.metadata.name, c.metadata.version)).unwrap_or_default();
    let report = DriftReport {
        release: release.name.clone(),
        namespace: release.namespace.clone(),
        revision: release.version,
        status: release.info.status.clone(),
        chart,
        record: selected.record,
        newest: selected.newest,
        objects: verdicts,
        notes,
        stale: Vec::new(),
        findings,
        explanations: Vec::new(),
        rerender: None,
    };
    Ok(Evaluated { report, release, objects, locations })
}

/// Every workload an HPA scales, in the namespaces the release's objects live in.
async fn hpa_scaled(session: &Session, locations: &[Option<Location>], notes: &mut Vec<String>) -> Vec<Scaled> {
    let namespaces: BTreeSet<&str> = locations.iter().flatten().filter_map(|at| at.namespace.as_deref()).collect();
    let mut out = Vec::new();
    for ns in namespaces {
        match session.live.hpa_targets(&session.cluster.client, ns).await {
            Ok(found) => out.extend(found),
            Err(e) => notes.push(format!("HPAs in namespace {ns} not read ({e}): replica counts are compared")),
        }
    }
    out
}

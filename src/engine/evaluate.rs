//! One release compared with the cluster: select the record, rebuild the objects Helm applied,
//! place them by discovery, read them live, and judge each.

use super::Session;
use super::error::EvaluateError;
use super::grounds::{Grounds, Judge, Reads};
use super::hooks::{self, Sorted};
use super::judge::{self, Reading, judge};
use super::steps::{self, Desired};
use super::writer;
use crate::desired::{DesiredObject, metadata};
use crate::live::{self, LiveState, Location, Scaled};
use crate::model::{DriftReport, HelmWriter, ObjectDrift};
use crate::release::{Release, ReleaseIndex, Selected};
use crate::settings::Settings;
use anyhow::Result;
use futures::{StreamExt, stream};
use std::collections::BTreeSet;

/// How many objects of a release are judged at once.
const CONCURRENCY: usize = 16;

/// A release compared with the cluster: the report, and what a repair needs.
pub(crate) struct Evaluated {
    pub(crate) report: DriftReport,
    pub(crate) release: Release,
    /// The objects as Helm applied them (release metadata and namespace added), in the order of
    /// `report.objects`.
    pub(crate) objects: Vec<DesiredObject>,
    /// Where each object lives (`None` when its kind is not served).
    pub(crate) locations: Vec<Option<Location>>,
    /// Whose name Helm's writes to the release are under: what repairs and plans write as.
    pub(crate) writer: HelmWriter,
}

/// Reads one release, rebuilds its objects and compares them with the cluster.
pub(crate) async fn evaluate(
    session: &Session,
    settings: &Settings,
    index: &ReleaseIndex,
    revision: Option<u32>,
) -> Result<Evaluated, EvaluateError> {
    let selected = session
        .storage()
        .select(index, revision)
        .await
        .map_err(|source| EvaluateError::Record { release: index.name.clone(), source: Box::new(source) })?;
    let hooks = if settings.compare.hooks {
        let limit = settings.compare.object_limit();
        Some(hooks::kept_hooks(session, index, &selected.release, &selected.record, limit).await?)
    } else {
        None
    };
    evaluate_with_hooks(session, settings, selected, hooks, None).await
}

/// Compares a release record already read (or one whose manifest was rendered again) with the
/// cluster; `writer`: Helm's writer as already learnt for the release (its next upgrade's, for
/// a manifest rendered again), else learnt from these objects.
pub(crate) async fn evaluate_selected(
    session: &Session,
    settings: &Settings,
    selected: Selected,
    writer: Option<&HelmWriter>,
) -> Result<Evaluated, EvaluateError> {
    evaluate_with_hooks(session, settings, selected, None, writer).await
}

/// [`evaluate_selected`], with the kept hooks found (`--hooks`) and what is said of the others.
async fn evaluate_with_hooks(
    session: &Session,
    settings: &Settings,
    selected: Selected,
    hooks: Option<(Sorted, Vec<String>)>,
    writer: Option<&HelmWriter>,
) -> Result<Evaluated, EvaluateError> {
    let Desired { mut objects, from_manifest, mut broken } =
        steps::desired_objects(&selected.release, &selected.record, &settings.compare)?;
    let release = &selected.release;
    let mut notes = steps::notes(release, hooks.as_ref().map(|(_, notes)| notes.as_slice()));
    if let Some((sorted, _)) = &hooks {
        let (kept, unparsed) = steps::hook_objects(sorted, release, &selected.record, &settings.compare)?;
        objects.extend(kept);
        broken.extend(unparsed);
    }
    let mut locations = Vec::with_capacity(objects.len());
    for (i, obj) in objects.iter_mut().enumerate() {
        if i < from_manifest {
            metadata::add_release_metadata(obj, release.name(), release.namespace());
        }
        let at = live::locate(
            session.discovery(),
            &obj.api_version,
            &obj.kind,
            obj.namespace.as_deref(),
            release.namespace(),
        );
        if let Some(at) = &at {
            metadata::place(obj, at.namespace.as_deref());
        }
        locations.push(at);
    }
    // The listings of their kinds keep these objects (and no object nobody names).
    session.live().want(objects.iter().zip(&locations).filter_map(|(o, at)| Some((at.as_ref()?, o.name.as_str()))));
    let scaled = if settings.compare.check_hpa_replicas {
        Vec::new()
    } else {
        hpa_scaled(session, &locations, release.home(), settings, &mut notes).await
    };
    // What an upgrade writes is judged without drift rules: no HelmRelease is read for it.
    let trusted = settings.trust.namespaces.trusts(release.stored_in());
    let flux = match settings.compare.upgrade {
        true => Default::default(),
        false => super::flux_rules::read(session, release.home(), trusted, &mut notes).await,
    };
    let reads = read_all(session, settings, release, (&objects, &locations), from_manifest).await;
    let (client, cache) = (session.client(), session.live());
    let deployed = release.deployed();
    let writer = writer::decide(&objects, &reads, &deployed, writer, settings.helm_manager.for_release(release.home()));
    notes.extend(writer::notes(&writer, present(&reads)));
    let ctx = Judge {
        client,
        cache,
        grounds: Grounds {
            options: &settings.compare,
            scaled: &scaled,
            deployed,
            release: release.name(),
            flux: &flux,
            writer: &writer,
        },
    };
    // The futures are collected before they are streamed, here and below: a stream over a
    // borrowing closure is not `Send` (rust-lang/rust#64552), and the fleet runs watchers as tasks.
    let judging: Vec<_> = objects.iter().zip(reads).map(|(o, read)| judge(&ctx, o, read)).collect();
    let mut verdicts: Vec<ObjectDrift> = stream::iter(judging).buffered(CONCURRENCY).collect().await;
    steps::name_replacements(&mut verdicts, &objects, release, |v, k| {
        live::served_replacement(session.discovery(), v, k)
    });
    let mut findings = steps::crd_findings(&verdicts, from_manifest);
    findings.extend(steps::outside_findings(&verdicts, release.home(), &settings.trust));
    verdicts.extend(steps::broken_documents(broken, &selected.record));
    let mut report = steps::report(&selected, verdicts, notes, findings);
    report.writer = writer.clone();
    Ok(Evaluated { report, release: selected.release, objects, locations, writer })
}

/// Every object read where it lives (the shared LIST of its kind where one serves several), or
/// its verdict reached without it (a kind not served, outside the trust rule or the claim).
async fn read_all<'a>(
    session: &Session,
    settings: &Settings,
    release: &Release,
    (objects, locations): (&[DesiredObject], &'a [Option<Location>]),
    from_manifest: usize,
) -> Vec<Reading<'a>> {
    let listed = steps::shared_lists(locations);
    let trust = &settings.trust;
    let from = Reads {
        client: session.client(),
        cache: session.live(),
        acting: trust.acting(),
        trusted: trust.namespaces.trusts(release.stored_in()),
        home: release.home(),
    };
    // The chart's crds/ (`--include-crds`) and kept hooks (`--hooks`) carry no ownership of
    // Helm's: judged on the record's word, as asked (never written outside a trusted record's
    // namespace, and the watcher reads none there); but helm-controller labels them too, so a
    // record stored apart claims them as it claims the rest.
    let apart = release.home().helm_release.is_some();
    let claimed = |i: usize| i < from_manifest || apart;
    let reads: Vec<_> = objects
        .iter()
        .zip(locations)
        .zip(listed)
        .enumerate()
        .map(|(i, ((o, at), listed))| judge::read(&from, o, at.as_ref(), (listed, claimed(i))))
        .collect();
    stream::iter(reads).buffered(CONCURRENCY).collect().await
}

/// How many objects were read present.
fn present(reads: &[Reading]) -> usize {
    reads.iter().filter(|r| matches!(r, Reading::Live(LiveState::Present(_), _))).count()
}

/// Every workload an HPA scales, in the namespaces the release's objects live in.
/// A confined release (the watcher's trust rule) reads them in its own namespace only.
async fn hpa_scaled(
    session: &Session,
    locations: &[Option<Location>],
    home: crate::model::Home<'_>,
    settings: &Settings,
    notes: &mut Vec<String>,
) -> Vec<Scaled> {
    let trust = &settings.trust;
    let trusted = trust.namespaces.trusts(home.stored);
    let readable = |ns: &str| {
        let id = crate::model::ObjectId::new("v1", "Namespace", None, ns);
        let q = crate::model::Question {
            acting: trust.acting(),
            home,
            trusted,
            object: &id,
            namespace: Some(ns),
            live: None,
            owned: true,
        };
        crate::model::decide(&q, crate::model::Deed::Read, &crate::model::Rights::Nobody).is_ok()
    };
    let namespaces: BTreeSet<&str> =
        locations.iter().flatten().filter_map(|at| at.namespace.as_deref()).filter(|ns| readable(ns)).collect();
    let mut out = Vec::new();
    for ns in namespaces {
        match session.live().hpa_targets(session.client(), ns).await {
            Ok(found) => out.extend(found),
            Err(e) => notes.push(format!("HPAs in namespace {ns} not read ({e}): replica counts are compared")),
        }
    }
    out
}

//! A scan: every release a [`Selection`] names, evaluated concurrently into one [`RunReport`].

use super::{Evaluated, Session, evaluate};
use crate::baseline::{self, Baseline, Place, Store};
use crate::errors;
use crate::model::{Outcome, Progress, ReleaseError, RunReport, Strictness, Tick};
use crate::release::{ReleaseIndex, SourceError};
use crate::settings::Settings;
use anyhow::{Context, Result};
use futures::{StreamExt, stream};
use std::sync::atomic::{AtomicUsize, Ordering};

/// From this many releases on, release records are read with one LIST.
const PREFETCH_AT: usize = 4;

/// From this many namespaces on, a scan of every namespace lists each kind once across all of
/// them rather than once per namespace. Below, a list per namespace reads only the releases'
/// namespaces: a cluster's add-ons in five namespaces are not read beside every other Secret
/// of the cluster (a management cluster's kubeconfigs, an application's certificates).
const WIDE_AT: usize = 8;

/// Reads every deployed record in scope with one LIST when there are enough releases for it to
/// beat a GET each.
pub(crate) async fn prefetch_records(
    storage: &crate::release::Storage,
    releases: usize,
    namespace: Option<&str>,
    selector: Option<&str>,
) -> Result<(), SourceError> {
    if releases >= PREFETCH_AT {
        storage.prefetch_deployed(namespace, selector).await?;
    }
    Ok(())
}

/// Whether a run over these releases should list kinds across every namespace.
pub(crate) fn lists_every_namespace(selection: &Selection, indexes: &[ReleaseIndex]) -> bool {
    let namespaces: std::collections::BTreeSet<&str> = indexes.iter().map(|i| i.namespace.as_str()).collect();
    selection.all_namespaces && namespaces.len() >= WIDE_AT
}

/// Which releases a run looks at.
#[derive(Clone, Debug, Default)]
pub(crate) struct Selection {
    /// Release names; empty means every release in scope (`--all`, `-A` or `-l`).
    pub(crate) releases: Vec<String>,
    pub(crate) all_namespaces: bool,
    /// A label selector on the storage records (`helm list -l`).
    pub(crate) selector: Option<String>,
    /// This revision instead of the latest deployed one.
    pub(crate) revision: Option<u32>,
    /// How many releases are evaluated at once.
    pub(crate) concurrency: usize,
}

/// Evaluates one release and applies its baseline: `file` when one was read for the run, else
/// the release's ConfigMap when the settings ask for the cluster store.
pub(crate) async fn evaluate_with_baseline(
    session: &Session,
    settings: &Settings,
    index: &ReleaseIndex,
    revision: Option<u32>,
    file: Option<&Baseline>,
) -> Result<Evaluated, super::EvaluateError> {
    let mut evaluated = evaluate(session, settings, index, revision).await?;
    let report = &mut evaluated.report;
    match (file, &settings.baseline) {
        (Some(b), _) => baseline::apply(report, b, Strictness::of_flag(settings.compare.strict)),
        (None, Some(Store::Cluster { home })) => {
            let client = session.client();
            let place = Place::of(home.as_deref(), &report.namespace, &report.release);
            if !place.named && !settings.trust.namespaces.trusts(&report.namespace) {
                if baseline::exists(client, &place).await {
                    report.findings.push(untrusted(&place));
                }
                return Ok(evaluated);
            }
            let read = baseline::read_configmap(client, &place).await;
            let b = read.map_err(|e| super::EvaluateError::Other(e.into()))?;
            baseline::apply(report, &b, Strictness::of_flag(settings.compare.strict));
        }
        _ => {}
    }
    Ok(evaluated)
}

/// Why a baseline next to a release is not taken: whoever may write ConfigMaps in its namespace
/// wrote it, and nothing says they may accept drift.
fn untrusted(place: &Place) -> String {
    format!(
        "baseline {place} ignored: whoever may write ConfigMaps in {ns} could have written it; \
         --trust-namespace {ns} takes it, or keep baselines where you name (--baseline cluster=NAMESPACE)",
        ns = place.namespace
    )
}

/// The baseline file the settings name, read once for a run (`None` for the cluster store).
pub(crate) fn file_baseline(settings: &Settings) -> Result<Option<Baseline>> {
    Ok(match &settings.baseline {
        Some(Store::File(path)) => Some(baseline::read_file(path)?),
        _ => None,
    })
}

/// The releases a selection names in `namespace` (every namespace: `None`): one listing,
/// narrowed by `-l`, when it names none; else one per name (`name=N` on the server). Names that
/// match no release are returned apart, for the caller to say so. Shared by `check` and `watch`.
pub(crate) async fn select(
    storage: &crate::release::Storage,
    selection: &Selection,
    namespace: Option<&str>,
) -> Result<(Vec<ReleaseIndex>, Vec<String>), SourceError> {
    if selection.releases.is_empty() {
        return Ok((storage.releases(namespace, selection.selector.as_deref()).await?, Vec::new()));
    }
    let (mut found, mut missing) = (Vec::new(), Vec::new());
    for name in &selection.releases {
        let selector = match &selection.selector {
            Some(s) => format!("name={name},{s}"),
            None => format!("name={name}"),
        };
        let named = storage.releases(namespace, Some(&selector)).await?;
        if named.is_empty() {
            missing.push(name.clone());
        }
        found.extend(named);
    }
    Ok((found, missing))
}

/// Evaluates every release `selection` names; `progress` is told as releases finish.
pub(crate) async fn scan(
    session: &Session,
    settings: &Settings,
    selection: &Selection,
    progress: &Progress,
) -> Result<RunReport> {
    let storage = session.storage();
    let scope_ns = (!selection.all_namespaces).then_some(session.namespace());
    let at = || format!("cannot list Helm releases on cluster {}", session.cluster().server);

    let (indexes, missing) = select(storage, selection, scope_ns).await.with_context(at)?;
    let mut outcomes = Vec::new();
    for name in missing {
        let hint = match scope_ns {
            Some(_) => storage.elsewhere(&name, selection.selector.as_deref()).await,
            None => String::new(),
        };
        let err = SourceError::NotFound {
            release: name.clone(),
            namespace: scope_ns.map_or("(all namespaces)".to_string(), str::to_string),
            driver: storage.driver().name(),
            hint,
        };
        outcomes.push(Outcome::Failed(ReleaseError {
            namespace: scope_ns.unwrap_or("").to_string(),
            message: format!("cannot read release {name:?}: {err}"),
            release: name,
            refused: false,
        }));
    }
    let total = indexes.len();
    if lists_every_namespace(selection, &indexes) {
        session.live().list_every_namespace();
    }
    // Many releases: read every deployed record with one LIST rather than a GET each.
    if selection.revision.is_none() {
        let selector = if selection.releases.is_empty() { selection.selector.as_deref() } else { None };
        prefetch_records(storage, total, scope_ns, selector).await.with_context(at)?;
    }
    // A baseline file is read once; ConfigMap baselines per release, next to it.
    let file_baseline = file_baseline(settings)?;
    let done = AtomicUsize::new(0);
    let evaluated: Vec<Outcome> = stream::iter(indexes.iter().map(|index| async {
        let checked = async {
            Ok::<_, anyhow::Error>(
                evaluate_with_baseline(session, settings, index, selection.revision, file_baseline.as_ref())
                    .await?
                    .report,
            )
        };
        match checked.await {
            Ok(report) => {
                let objects = report.objects.len();
                progress.tell(Tick::Release { done: done.fetch_add(1, Ordering::Relaxed) + 1, total, objects });
                Outcome::Checked(report)
            }
            Err(e) => {
                progress.tell(Tick::Release { done: done.fetch_add(1, Ordering::Relaxed) + 1, total, objects: 0 });
                // A bad record the user did not name is refused, not an error of the run.
                let bad = e
                    .downcast_ref::<crate::engine::EvaluateError>()
                    .is_some_and(|e| e.failure() == crate::engine::Failure::BadRecord);
                Outcome::Failed(ReleaseError {
                    namespace: index.namespace.clone(),
                    release: index.name.clone(),
                    message: errors::chain(&e),
                    refused: bad && selection.releases.is_empty(),
                })
            }
        }
    }))
    .buffer_unordered(selection.concurrency.max(1))
    .collect()
    .await;
    outcomes.extend(evaluated);
    outcomes.sort_by(|a, b| a.key().cmp(&b.key()));
    Ok(RunReport { outcomes })
}

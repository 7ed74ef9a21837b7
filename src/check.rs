//! The `check` command: runs the pipeline for one release and returns its [`DriftReport`].

use crate::cluster;
use crate::compare::{self, Engine, ObjectDrift, Verdict, managed, subset};
use crate::desired::{self, DesiredObject, helm};
use crate::ignore::{self, ObjectRef};
use crate::live::{self, DryRunError, LiveState, Scaled, Target};
use crate::release::{ReleaseIndex, Storage};
use crate::settings::{CompareOptions, Settings};
use anyhow::{Context, Result};
use futures::{StreamExt, stream};
use std::collections::BTreeSet;

/// How many objects are checked at once.
const CONCURRENCY: usize = 16;
/// From this many releases on, release records are read with one LIST.
const PREFETCH_AT: usize = 4;

/// All verdicts for one release.
#[derive(Debug)]
pub struct DriftReport {
    pub release: String,
    pub namespace: String,
    pub revision: u32,
    pub status: String,
    pub chart: String,
    /// The storage object the revision was read from.
    pub record: String,
    /// The newest revision when it is not the one checked (e.g. a failed upgrade).
    pub newest: Option<(u32, String)>,
    pub objects: Vec<ObjectDrift>,
    /// Things worth saying about the run (hooks not checked, HPAs not readable...).
    pub notes: Vec<String>,
}

impl DriftReport {
    pub fn drifted(&self) -> usize {
        self.objects.iter().filter(|o| o.is_drift()).count()
    }

    pub fn errors(&self) -> usize {
        self.objects.iter().filter(|o| o.is_error()).count()
    }

    /// The engine summary: exact unless some object fell back to the read-only comparison.
    pub fn engine(&self) -> Engine {
        self.objects
            .iter()
            .find_map(|o| match &o.engine {
                Some(e @ Engine::ReadOnly { .. }) => Some(e.clone()),
                _ => None,
            })
            .unwrap_or(Engine::Exact)
    }
}

/// What a check asks for.
#[derive(Clone, Debug, Default)]
pub struct CheckRequest {
    /// Release names; empty with `all`/`all_namespaces`/`selector` means every release in scope.
    pub releases: Vec<String>,
    /// Every release in the namespace.
    pub all: bool,
    pub all_namespaces: bool,
    /// A label selector on the storage records (`helm list -l`).
    pub selector: Option<String>,
    pub revision: Option<u32>,
    /// How many releases are checked at once.
    pub concurrency: usize,
}

/// One release's outcome.
#[derive(Debug)]
pub enum Outcome {
    Checked(DriftReport),
    Failed(ReleaseError),
}

/// A release that could not be checked (corrupt record, forbidden, not found...).
#[derive(Debug)]
pub struct ReleaseError {
    pub namespace: String,
    pub release: String,
    pub message: String,
}

/// Everything one run found, releases sorted by namespace and name.
#[derive(Debug, Default)]
pub struct RunReport {
    pub outcomes: Vec<Outcome>,
}

impl RunReport {
    /// 1 if anything failed (an error outranks drift), 2 if anything drifted, else 0.
    pub fn exit_code(&self) -> u8 {
        let failed = self.outcomes.iter().any(|o| match o {
            Outcome::Failed(_) => true,
            Outcome::Checked(r) => r.errors() > 0,
        });
        let drifted = self.outcomes.iter().any(|o| matches!(o, Outcome::Checked(r) if r.drifted() > 0));
        if failed {
            1
        } else if drifted {
            2
        } else {
            0
        }
    }
}

/// A connection for a run: the cluster, Helm's storage, and discovery, made once.
pub struct Session {
    pub cluster: cluster::Cluster,
    pub storage: Storage,
    pub discovery: kube::Discovery,
    /// The namespace from `-n` / `HELM_NAMESPACE`, else the kubeconfig context's.
    pub namespace: String,
    /// Live objects read for this run.
    pub live: live::LiveCache,
}

impl Session {
    pub async fn open(settings: &Settings) -> Result<Session> {
        let cluster = cluster::connect(&settings.connection).await?;
        let namespace = settings.namespace.clone().unwrap_or_else(|| cluster.default_namespace.clone());
        let storage =
            Storage::open(cluster.client.clone(), settings.driver, settings.sql_connection.as_deref()).await?;
        let discovery = live::discover(&cluster.client).await.with_context(|| {
            let timeout = settings.connection.timeout.map_or(String::new(), |t| format!(", {t:?} per request"));
            format!("cannot reach the cluster at {} (API discovery failed, retried{timeout})", cluster.server)
        })?;
        Ok(Session { cluster, storage, discovery, namespace, live: Default::default() })
    }

    /// The stored revisions of one release in the session's namespace.
    pub async fn find(&self, release: &str) -> Result<ReleaseIndex> {
        self.storage
            .find(&self.namespace, release)
            .await
            .with_context(|| format!("cannot read release {release:?} (cluster {})", self.cluster.server))
    }
}

/// A release compared with the cluster: the report, and what a repair needs.
pub struct Evaluated {
    pub report: DriftReport,
    pub release: crate::release::Release,
    /// The objects as Helm applied them (release metadata and namespace added).
    pub objects: Vec<DesiredObject>,
    pub targets: Vec<Option<Target>>,
}

/// Checks every release the request names; `progress(done, total)` is called as releases finish.
pub async fn run(
    settings: &Settings,
    request: &CheckRequest,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<RunReport> {
    let session = Session::open(settings).await?;
    let storage = &session.storage;
    let scope_ns = (!request.all_namespaces).then_some(session.namespace.as_str());
    let at = || format!("cannot list Helm releases on cluster {}", session.cluster.server);

    let mut outcomes = Vec::new();
    let mut indexes = Vec::new();
    if request.releases.is_empty() {
        indexes = storage.list(scope_ns, request.selector.as_deref()).await.with_context(at)?;
    } else {
        for name in &request.releases {
            let selector = match &request.selector {
                Some(s) => format!("name={name},{s}"),
                None => format!("name={name}"),
            };
            let found = storage.list(scope_ns, Some(&selector)).await.with_context(at)?;
            if found.is_empty() {
                let err = crate::release::SourceError::NotFound {
                    release: name.clone(),
                    namespace: scope_ns.map_or("(all namespaces)".to_string(), str::to_string),
                    driver: storage.driver().name(),
                };
                outcomes.push(Outcome::Failed(ReleaseError {
                    namespace: scope_ns.unwrap_or("").to_string(),
                    release: name.clone(),
                    message: format!("cannot read release {name:?}: {err}"),
                }));
            }
            indexes.extend(found);
        }
    }
    let total = indexes.len();
    // Many releases: read every deployed record with one LIST rather than a GET each.
    if total >= PREFETCH_AT && request.revision.is_none() {
        let selector = if request.releases.is_empty() { request.selector.as_deref() } else { None };
        storage.prefetch_deployed(scope_ns, selector).await.with_context(at)?;
    }
    let done = std::sync::atomic::AtomicUsize::new(0);
    let checked: Vec<Outcome> = stream::iter(indexes.iter().map(|index| async {
        let outcome = match evaluate(&session, settings, index, request.revision).await {
            Ok(e) => Outcome::Checked(e.report),
            Err(e) => Outcome::Failed(ReleaseError {
                namespace: index.namespace.clone(),
                release: index.name.clone(),
                message: format!("{e:#}"),
            }),
        };
        progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, total);
        outcome
    }))
    .buffer_unordered(request.concurrency.max(1))
    .collect()
    .await;
    outcomes.extend(checked);
    outcomes.sort_by(|a, b| key(a).cmp(&key(b)));
    Ok(RunReport { outcomes })
}

fn key(o: &Outcome) -> (&str, &str) {
    match o {
        Outcome::Checked(r) => (&r.namespace, &r.release),
        Outcome::Failed(e) => (&e.namespace, &e.release),
    }
}

/// Reads one release, rebuilds its objects and compares them with the cluster.
pub async fn evaluate(
    session: &Session,
    settings: &Settings,
    index: &ReleaseIndex,
    revision: Option<u32>,
) -> Result<Evaluated> {
    let client = &session.cluster.client;
    let selected = session
        .storage
        .select(index, revision)
        .await
        .with_context(|| format!("cannot read release {:?}", index.name))?;
    let release = selected.release;
    let mut objects = Vec::new();
    let mut broken = Vec::new();
    for parsed in desired::parse_manifest(&release.manifest) {
        match parsed {
            Ok(o) => objects.push(o),
            Err(e) => broken.push(e),
        }
    }

    let manifest_objects = objects.len();
    if settings.compare.include_crds
        && let Some(chart) = &release.chart
    {
        objects.extend(desired::crds(chart).with_context(|| format!("cannot parse the CRDs of {}", selected.record))?);
    }
    let mut targets = Vec::with_capacity(objects.len());
    for (i, obj) in objects.iter_mut().enumerate() {
        if i < manifest_objects {
            helm::add_release_metadata(obj, &release.name, &release.namespace);
        }
        let target = live::resolve(
            &session.discovery,
            &obj.api_version,
            &obj.kind,
            obj.namespace.as_deref(),
            &release.namespace,
        );
        if let Some(t) = &target {
            helm::place(obj, t.namespace.as_deref());
        }
        targets.push(target);
    }

    let mut notes = Vec::new();
    if !release.hooks.is_empty() {
        notes.push(format!("{} hook(s) not checked: hooks and tests are not expected to exist", release.hooks.len()));
    }
    let scaled =
        if settings.compare.check_hpa_replicas { Vec::new() } else { hpa_scaled(session, &targets, &mut notes).await };

    // Kinds with several objects in one namespace are read with a (shared) LIST.
    let mut per_group: std::collections::HashMap<(String, Option<String>), usize> = Default::default();
    for t in targets.iter().flatten() {
        *per_group.entry((t.resource.plural.clone() + "." + &t.resource.group, t.namespace.clone())).or_default() += 1;
    }
    let listed =
        |t: &Target| per_group[&(t.resource.plural.clone() + "." + &t.resource.group, t.namespace.clone())] >= 2;

    let ctx = Ctx { client, cache: &session.live, options: &settings.compare, scaled: &scaled };
    let mut verdicts: Vec<ObjectDrift> = stream::iter(
        objects.iter().zip(&targets).map(|(o, t)| judge(&ctx, o, t.as_ref(), t.as_ref().is_some_and(listed))),
    )
    .buffered(CONCURRENCY)
    .collect()
    .await;
    // Documents that are not objects are errors of their own; the others are still checked.
    verdicts.extend(broken.into_iter().map(|e| {
        let message = format!("cannot parse the manifest of {}: {e}", selected.record);
        ObjectDrift::new("", "Document", None, e.at(), Some(e.at()), Verdict::Error { message })
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
    };
    Ok(Evaluated { report, release, objects, targets })
}

/// Every workload an HPA scales, in the namespaces the release's objects live in.
async fn hpa_scaled(session: &Session, targets: &[Option<Target>], notes: &mut Vec<String>) -> Vec<Scaled> {
    let namespaces: BTreeSet<&str> = targets.iter().flatten().filter_map(|t| t.namespace.as_deref()).collect();
    let mut out = Vec::new();
    for ns in namespaces {
        match session.live.hpa_targets(&session.cluster.client, ns).await {
            Ok(found) => out.extend(found),
            Err(e) => notes.push(format!("HPAs in namespace {ns} not read ({e}): replica counts are compared")),
        }
    }
    out
}

struct Ctx<'a> {
    client: &'a kube::Client,
    cache: &'a live::LiveCache,
    options: &'a CompareOptions,
    scaled: &'a [Scaled],
}

/// The verdict for one object.
async fn judge(ctx: &Ctx<'_>, obj: &DesiredObject, target: Option<&Target>, listed: bool) -> ObjectDrift {
    let mut drift = ObjectDrift::new(
        &obj.api_version,
        &obj.kind,
        obj.namespace.as_deref(),
        &obj.name,
        obj.source.as_deref(),
        Verdict::InSync,
    );
    let Some(target) = target else {
        drift.verdict =
            Verdict::Unknown { reason: format!("the cluster does not serve {} {}", obj.api_version, obj.kind) };
        return drift;
    };
    let live = match ctx.cache.get(ctx.client, target, &obj.name, listed).await {
        LiveState::Present(v) => v,
        LiveState::Absent => {
            drift.verdict = Verdict::Missing;
            return drift;
        }
        LiveState::Failed(message) => {
            drift.verdict = Verdict::Error { message };
            return drift;
        }
    };

    let (disabled, mut ignores) = ignore::from_annotations(&[&obj.object, &live]);
    if let Some(reason) = disabled {
        drift.verdict = Verdict::Excluded { reason };
        return drift;
    }
    let me = ObjectRef {
        group: obj.group(),
        version: obj.version(),
        kind: &obj.kind,
        name: &obj.name,
        namespace: obj.namespace.as_deref(),
    };
    ignores.extend(ignore::paths_for(&ctx.options.rules, &me));
    if let Some(s) = ctx.scaled.iter().find(|s| {
        Some(s.namespace.as_str()) == me.namespace && s.group == me.group && s.kind == me.kind && s.name == me.name
    }) {
        ignores.push(("/spec/replicas".into(), format!("HorizontalPodAutoscaler {} manages replicas", s.hpa)));
    }

    let desired = subset::comparable(&obj.object);
    let mut fields = subset::compare(&desired, &live);
    let added = managed::foreign(&desired, &live);
    let candidate = fields.iter().any(|f| !ignores.iter().any(|(prefix, _)| compare::path::under(&f.path, prefix)));
    let engine = if ctx.options.read_only {
        Engine::ReadOnly { reason: "--read-only".into() }
    } else if candidate {
        match live::dry_run_apply(ctx.client, target, &obj.name, &obj.object).await {
            Ok(after) => {
                fields = compare::diff::compare(&after, &live);
                Engine::Exact
            }
            Err(DryRunError::Forbidden(why)) => {
                Engine::ReadOnly { reason: format!("server-side dry-run forbidden: {why}") }
            }
            Err(DryRunError::Refused(why)) => {
                Engine::ReadOnly { reason: format!("server-side dry-run refused: {why}") }
            }
        }
    } else {
        Engine::Exact
    };
    let (fields, added, ignored) = compare::set_aside(fields, added, &ignores);
    drift.verdict = if fields.is_empty() && added.is_empty() { Verdict::InSync } else { Verdict::Modified };
    drift.fields = fields;
    drift.added = added;
    drift.ignored = ignored;
    drift.engine = Some(engine);
    if drift.verdict == Verdict::Modified {
        let mut live = live;
        compare::diff::strip_server_fields(&mut live);
        drift.live = Some(live);
    }
    drift
}

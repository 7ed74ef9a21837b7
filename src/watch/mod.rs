//! `watch`: continuous drift detection. A full check at start, then event-driven: Helm's storage
//! and the kinds of the watched releases are watched, and only the releases a change touches are
//! evaluated again (debounced), with a full resync every `--resync`. Verdicts go to metrics, to
//! Events and notifications once per drift signature, and, for releases that opt in, to
//! `repair`. With `--leader-elect` only the replica holding the Lease acts.

mod events;
mod heal;
mod key;
mod leader;
mod log;
mod metrics;
mod notify;
mod server;
mod signature;
mod sources;
mod state;
mod tracker;

pub use heal::Policy;
pub use log::Log;
pub use notify::Format;

use crate::engine::{Evaluated, Selection, Session, evaluate_with_baseline, file_baseline};
use crate::model::{ObjectDrift, ObjectId, StepStatus};
use crate::release::{ReleaseIndex, SourceError};
use crate::repair::RepairRequest;
use crate::settings::{Driver, Settings};
use anyhow::Result;
use futures::StreamExt;
use metrics::Metrics;
use server::Health;
use sources::{Sink, Touch, WatchKey};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tracker::{ReleaseKey, Tracker, Transition};

/// How long a watch's connection may stay silent: longer than the server keeps a watch open.
const WATCH_READ_TIMEOUT: Duration = Duration::from_secs(330);

/// How `watch` runs.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    pub selection: Selection,
    pub resync: Duration,
    pub debounce: Duration,
    pub metrics_address: String,
    pub notify: Vec<String>,
    pub notify_format: Format,
    pub log: Log,
    pub repair: Option<RepairOptions>,
    pub leader: Option<leader::LeaderOptions>,
    /// The Secret (in the watcher's namespace) holding the key of drift signatures.
    pub signature_key_secret: String,
}

pub use leader::LeaderOptions;

/// `--repair`: which releases heal themselves, and how.
#[derive(Clone, Debug)]
pub struct RepairOptions {
    /// A label selector on the releases' storage records; the releases it matches opt in.
    pub selector: String,
    pub remove_foreign: bool,
    pub policy: Policy,
    /// Repair as this ServiceAccount of the release's namespace (impersonated).
    pub service_account: Option<String>,
    /// Namespaces whose releases may repair objects outside them.
    pub trusted_namespaces: Vec<String>,
}

impl RepairOptions {
    /// The authority a repair of a release in `namespace` acts within.
    fn authority(&self, namespace: &str, release: &str) -> crate::repair::Authority {
        crate::repair::Authority {
            namespace: namespace.to_string(),
            release: release.to_string(),
            trusted: self.trusted_namespaces.iter().any(|n| n == namespace),
            service_account: self.service_account.clone(),
        }
    }
}

/// Runs until SIGINT or SIGTERM.
pub async fn run(settings: &Settings, options: WatchOptions) -> Result<()> {
    let log = options.log;
    let shutdown = shutdown();
    futures::pin_mut!(shutdown);
    let metrics = Arc::new(Metrics::new());
    let health = Arc::new(Health { metrics: metrics.clone(), ready: Default::default(), missing: Default::default() });
    let bound = server::serve(&options.metrics_address, health.clone()).await?;
    log.info("serving /metrics, /healthz and /readyz", &[("address", &bound)]);
    let session = tokio::select! {
        s = Session::open(settings) => s?,
        _ = &mut shutdown => return Ok(()),
    };
    let Some(lease) = &options.leader else {
        metrics.leader.set(1);
        let mut watcher = Watcher::new(session, settings, &options, metrics, health, None).await?;
        return watcher.run(shutdown).await;
    };
    let mut elected = leader::elect(&session.cluster.client, lease, &session.namespace).await?;
    let mut session = Some(session);
    loop {
        health.ready.store(true, Ordering::Relaxed); // a standby is ready: it serves health
        log.info("standing by for the lease", &[("lease", &lease.name), ("identity", &lease.identity)]);
        tokio::select! {
            _ = &mut shutdown => {
                elected.resign().await;
                return Ok(());
            }
            got = elected.acquired() => got?,
        }
        log.info("leading: acting on drift", &[("lease", &lease.name), ("identity", &lease.identity)]);
        metrics.leader.set(1);
        health.ready.store(false, Ordering::Relaxed);
        let s = match session.take() {
            Some(s) => s,
            None => Session::open(settings).await?,
        };
        let guard = leader::Guard::new(&s.cluster.client, lease, &s.namespace);
        let mut watcher = Watcher::new(s, settings, &options, metrics.clone(), health.clone(), Some(guard)).await?;
        tokio::select! {
            r = watcher.run(&mut shutdown) => {
                elected.resign().await;
                return r;
            }
            _ = elected.lost() => {
                log.warn("lost the lease: standing by", &[("lease", &lease.name)]);
                watcher.stop();
                metrics.leader.set(0);
                metrics.forget_all();
            }
        }
    }
}

/// Resolves on SIGINT or SIGTERM, or, run as a Helm plugin, when helm is gone: helm does not
/// pass a SIGTERM on to its plugin, which would otherwise keep running on its own.
async fn shutdown() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
            _ = helm_gone() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

/// The process that started this one, as it was at the very start: helm, when run as a plugin.
static PARENT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

/// Remembers the parent process; called first thing in `main`, so that a helm killed while this
/// process was still starting is noticed too (read later, the parent would already be init).
pub fn note_parent() {
    #[cfg(unix)]
    PARENT.get_or_init(std::os::unix::process::parent_id);
}

/// Resolves when the helm process that started this plugin has ended (never when not run by helm).
#[cfg(unix)]
async fn helm_gone() {
    if std::env::var_os("HELM_PLUGIN_DIR").is_none() {
        return std::future::pending().await;
    }
    let parent = *PARENT.get_or_init(std::os::unix::process::parent_id);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        if std::os::unix::process::parent_id() != parent {
            return;
        }
    }
}

/// What the watcher keeps of one evaluation: the verdicts and where each object lives. The
/// release record and the desired objects (a record's whole manifest) are let go as soon as the
/// evaluation ends, not when the whole batch has, so that a batch of large records never sits in
/// memory together.
struct Verdicts {
    report: crate::model::DriftReport,
    /// Each object's name and location, in the order of `report.objects`.
    placed: Vec<(String, Option<crate::live::Location>)>,
}

impl From<Evaluated> for Verdicts {
    fn from(e: Evaluated) -> Verdicts {
        let placed = e.objects.iter().zip(&e.locations).map(|(o, at)| (o.name.clone(), at.clone())).collect();
        let Evaluated { report, release, objects, .. } = e;
        // Freeing a release's objects takes a while: not on the way to the next decision.
        tokio::task::spawn_blocking(move || drop((release, objects)));
        Verdicts { report, placed }
    }
}

struct Watcher<'a> {
    session: Session,
    /// The client the watches use: no read timeout shorter than a watch lasts.
    streams: kube::Client,
    settings: &'a Settings,
    options: &'a WatchOptions,
    metrics: Arc<Metrics>,
    health: Arc<Health>,
    log: Log,
    tracker: Tracker,
    notifier: notify::Notifier,
    state: state::State,
    watches: BTreeMap<WatchKey, tokio::task::JoinHandle<()>>,
    storage: Option<tokio::task::JoinHandle<()>>,
    sink: Sink,
    touches: tokio::sync::mpsc::UnboundedReceiver<Touch>,
    healer: Option<heal::Healer>,
    /// Releases that opted in to self-healing (read at each full check).
    healing: HashSet<ReleaseKey>,
    /// Clients that impersonate a ServiceAccount for repairs, by user.
    writers: HashMap<String, kube::Client>,
    /// With leader election: checked right before each write and notification.
    guard: Option<leader::Guard>,
}

impl<'a> Watcher<'a> {
    async fn new(
        session: Session,
        settings: &'a Settings,
        options: &'a WatchOptions,
        metrics: Arc<Metrics>,
        health: Arc<Health>,
        guard: Option<leader::Guard>,
    ) -> Result<Watcher<'a>> {
        let log = options.log;
        let client = session.cluster.client.clone();
        // A watch is a request that stays open (the server ends it after about 5 minutes): the
        // per-request --timeout must not cut it.
        let mut long = settings.connection.clone();
        long.timeout = Some(WATCH_READ_TIMEOUT);
        let scope = (!options.selection.all_namespaces).then_some(session.namespace.as_str());
        let (streams, earlier, (key, source)) = tokio::join!(
            crate::api::connect(&long),
            events::unresolved(&client, scope),
            key::load(&client, &session.namespace, &options.signature_key_secret)
        );
        let streams = streams?.client;
        if let key::Source::Process(why) = source {
            log.warn(
                "no signature key in the cluster: drift signatures hold for this process only (drift reported before is reported again)",
                &[("error", &why)],
            );
            metrics.error("signature-key");
        }
        let seeds = match earlier {
            Ok(e) => {
                if e.rejected > 0 {
                    log.warn(
                        "Events not written by helm-drift or malformed were not taken",
                        &[("events", &e.rejected)],
                    );
                    metrics.rejected("event", e.rejected as u64);
                }
                e.unresolved
            }
            Err(e) => {
                log.warn(
                    "cannot read earlier drift Events: drift already reported may be reported again",
                    &[("error", &e)],
                );
                metrics.error(e.reason());
                HashMap::new()
            }
        };
        let notifier = notify::Notifier::start(options.notify.clone(), options.notify_format, metrics.clone(), log)?;
        let (tx, touches) = tokio::sync::mpsc::unbounded_channel();
        let sink = Sink { tx, metrics: metrics.clone(), log };
        let healer = options.repair.as_ref().map(|r| heal::Healer::new(r.policy.clone()));
        Ok(Watcher {
            session,
            streams,
            settings,
            options,
            metrics,
            health,
            log,
            tracker: Tracker::seeded(seeds, signature::Signer::new(&key)),
            notifier,
            state: state::State::default(),
            watches: BTreeMap::new(),
            storage: None,
            sink,
            touches,
            healer,
            healing: HashSet::new(),
            writers: HashMap::new(),
            guard,
        })
    }

    /// Whether this replica may act now: always without leader election, else only while it
    /// holds the Lease (read again: a leader cut off from the API server must not write).
    async fn leading(&self, what: &str) -> bool {
        let Some(guard) = &self.guard else { return true };
        if guard.holds().await {
            return true;
        }
        self.metrics.error("not-leading");
        self.log.warn("not holding the Lease: not acting", &[("action", &what)]);
        false
    }

    fn scope(&self) -> Option<String> {
        (!self.options.selection.all_namespaces).then(|| self.session.namespace.clone())
    }

    async fn run(&mut self, shutdown: impl std::future::Future<Output = ()>) -> Result<()> {
        futures::pin_mut!(shutdown);
        let started = k8s_openapi::jiff::Timestamp::now();
        // SIGTERM is heard during the first full check too: it retries while the API server is
        // away, which can last.
        tokio::select! {
            checked = self.full_check() => checked?,
            _ = &mut shutdown => {
                self.log.info("stopping", &[]);
                return Ok(());
            }
        }
        self.health.ready.store(true, Ordering::Relaxed);
        self.metrics.ready.set(1);
        let (releases, drifted) = self.state.counts();
        self.log.info("ready: first full check done", &[("releases", &releases), ("drifted", &drifted)]);
        // The watches start after the first check (records and objects written since it began
        // are looked at again), once /readyz says ready: their first lists are the busiest moment.
        self.reconcile_watches(started);
        let kind = match self.settings.driver {
            Driver::Secrets => Some(sources::StorageKind::Secrets),
            Driver::ConfigMaps => Some(sources::StorageKind::ConfigMaps),
            Driver::Sql => None,
        };
        self.storage = match kind {
            Some(kind) => {
                let (scope, selector) = (self.scope(), self.options.selection.selector.as_deref());
                Some(sources::storage(&self.streams, kind, scope.as_deref(), selector, started, self.sink.clone()))
            }
            None => {
                self.log.warn("the sql driver cannot be watched: new revisions are seen at each resync", &[]);
                None
            }
        };
        if self.storage.is_some() {
            self.metrics.watches.inc();
        }

        let mut resync =
            tokio::time::interval_at(tokio::time::Instant::now() + self.options.resync, self.options.resync);
        let mut dirty: BTreeSet<ReleaseKey> = BTreeSet::new();
        let mut deadline: Option<tokio::time::Instant> = None;
        loop {
            let wait = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = &mut shutdown => {
                    self.log.info("stopping", &[]);
                    self.stop();
                    return Ok(());
                }
                Some(touch) = self.touches.recv() => {
                    dirty.extend(self.releases_of(&touch));
                    if !dirty.is_empty() && deadline.is_none() {
                        deadline = Some(tokio::time::Instant::now() + self.options.debounce);
                    }
                }
                _ = wait => {
                    deadline = None;
                    let batch = std::mem::take(&mut dirty);
                    self.evaluate(batch).await;
                }
                _ = resync.tick() => {
                    let at = k8s_openapi::jiff::Timestamp::now();
                    let checked = self.full_check().await;
                    self.reconcile_watches(at);
                    if let Err(e) = checked {
                        self.metrics.error("resync");
                        self.log.error("resync failed", &[("error", &crate::errors::chain(&e))]);
                    }
                }
            }
        }
    }

    /// Stops every watch.
    fn stop(&mut self) {
        for (_, w) in std::mem::take(&mut self.watches) {
            w.abort();
        }
        if let Some(s) = self.storage.take() {
            s.abort();
        }
    }

    /// The releases a change concerns.
    fn releases_of(&self, touch: &Touch) -> Vec<ReleaseKey> {
        self.state.releases_of(touch, &self.options.selection.releases)
    }

    /// Every selected release, evaluated again; releases gone from storage are forgotten.
    async fn full_check(&mut self) -> Result<()> {
        let selection = &self.options.selection;
        let scope = self.scope();
        let storage = &self.session.storage;
        let mut found = storage.releases(scope.as_deref(), selection.selector.as_deref()).await?;
        if !selection.releases.is_empty() {
            found.retain(|i| selection.releases.contains(&i.name));
        }
        self.say_missing(&found);
        self.metrics.selected.set(found.len() as i64);
        crate::engine::prefetch_records(storage, found.len(), scope.as_deref(), selection.selector.as_deref()).await?;
        if let Some(r) = &self.options.repair {
            let opted = storage.releases(scope.as_deref(), Some(&r.selector)).await?;
            self.healing = opted.into_iter().map(|i| (i.namespace, i.name)).collect();
        }
        let keys: BTreeSet<ReleaseKey> = found.iter().map(|i| (i.namespace.clone(), i.name.clone())).collect();
        for k in self.state.gone(&keys) {
            self.forget(&k);
        }
        // An install, upgrade or rollback under way is judged when Helm is done with it (its
        // record changes then), never halfway: its previous revision is not the one to heal to.
        found.retain(|i| !i.in_progress());
        let wide = crate::engine::lists_every_namespace(selection, &found);
        self.evaluate_indexes(found, wide).await;
        Ok(())
    }

    /// Names asked for that match no release: a warning when that changes, and in `/readyz` (a
    /// typo in a deployment's arguments would otherwise watch nothing and look healthy).
    fn say_missing(&self, found: &[ReleaseIndex]) {
        let missing: Vec<String> =
            self.options.selection.releases.iter().filter(|n| !found.iter().any(|i| &i.name == *n)).cloned().collect();
        let Ok(mut known) = self.health.missing.lock() else { return };
        if *known == missing {
            return;
        }
        if !missing.is_empty() {
            let scope = self.scope().unwrap_or_else(|| "every namespace".into());
            self.log.warn(
                "no release by these names: nothing is watched for them",
                &[("releases", &missing.join(" ")), ("namespace", &scope)],
            );
        }
        *known = missing;
    }

    /// Releases touched by changes, evaluated again.
    async fn evaluate(&mut self, batch: BTreeSet<ReleaseKey>) {
        let mut indexes = Vec::new();
        for key in batch {
            match self.session.storage.history(&key.0, &key.1).await {
                Ok(index) if index.newest().is_some_and(|r| r.status == "uninstalled") => self.forget(&key),
                // An install, upgrade or rollback under way: its objects are changing. Looked at
                // again when its record says it is done (or at the next resync).
                Ok(index) if index.in_progress() => {}
                Ok(index) => indexes.push(index),
                Err(SourceError::NotFound { .. }) => self.forget(&key),
                Err(e) => {
                    self.metrics.error("storage");
                    self.log.error("cannot read the release", &[("release", &key_text(&key)), ("error", &e)]);
                }
            }
        }
        self.opt_in(&indexes).await;
        self.evaluate_indexes(indexes, false).await;
        self.reconcile_watches(k8s_openapi::jiff::Timestamp::now());
    }

    /// With --repair: whether each of these releases opts in now (a release installed or
    /// labelled while watching need not wait for the resync).
    async fn opt_in(&mut self, indexes: &[ReleaseIndex]) {
        let Some(repair) = &self.options.repair else { return };
        for index in indexes {
            let key = (index.namespace.clone(), index.name.clone());
            let selector = format!("name={},{}", index.name, repair.selector);
            match self.session.storage.releases(Some(&index.namespace), Some(&selector)).await {
                Ok(found) if found.is_empty() => {
                    self.healing.remove(&key);
                }
                Ok(_) => {
                    self.healing.insert(key);
                }
                Err(e) => {
                    self.metrics.error("storage");
                    self.log.error(
                        "cannot read whether the release opts in to repair",
                        &[("release", &key_text(&key)), ("error", &e)],
                    );
                }
            }
        }
    }

    /// Evaluates releases with fresh live reads (`wide`: listing kinds across every namespace).
    async fn evaluate_indexes(&mut self, indexes: Vec<ReleaseIndex>, wide: bool) {
        self.session.forget_live();
        if wide {
            self.session.live.list_every_namespace();
        }
        let baseline = match file_baseline(self.settings) {
            Ok(b) => b,
            Err(e) => {
                self.metrics.error("baseline");
                self.log.error("cannot read the baseline", &[("error", &crate::errors::chain(&e))]);
                return;
            }
        };
        let (session, settings) = (&self.session, self.settings);
        let concurrency = self.options.selection.concurrency.max(1);
        let results: Vec<_> = futures::stream::iter(indexes.into_iter().map(|index| {
            let baseline = baseline.as_ref();
            async move {
                let started = Instant::now();
                let r = evaluate_with_baseline(session, settings, &index, None, baseline).await.map(Verdicts::from);
                (index, r, started.elapsed())
            }
        }))
        .buffer_unordered(concurrency)
        .collect()
        .await;
        for (index, result, took) in results {
            let key = (index.namespace.clone(), index.name.clone());
            match result {
                Ok(verdicts) => self.absorb(&verdicts, took).await,
                Err(e) => {
                    let uninstalled = e.downcast_ref::<SourceError>().is_some_and(
                        |s| matches!(s, SourceError::NotDeployed { status, .. } if status == "uninstalled"),
                    );
                    if uninstalled {
                        self.forget(&key);
                        continue;
                    }
                    let bad = e.downcast_ref::<SourceError>().is_some_and(SourceError::is_bad_record)
                        || e.downcast_ref::<crate::engine::TooManyObjects>().is_some();
                    if bad {
                        self.metrics.rejected("record", 1);
                    }
                    self.metrics.error("evaluate");
                    self.log.error(
                        "cannot check the release",
                        &[("release", &key_text(&key)), ("error", &crate::errors::chain(&e))],
                    );
                }
            }
        }
    }

    /// A release's new verdicts: metrics, the object index, Events and notifications for new or
    /// resolved drift, and self-healing.
    async fn absorb(&mut self, evaluated: &Verdicts, took: Duration) {
        let report = &evaluated.report;
        let key: ReleaseKey = (report.namespace.clone(), report.release.clone());
        self.metrics.record(report, took.as_secs_f64());
        let drifted = report.drifted() > 0;
        if self.state.absorb(&key, report.revision, drifted, &evaluated.placed) {
            let verdict = report.verdict().word();
            self.log.info(
                "release checked",
                &[
                    ("release", &key_text(&key)),
                    ("revision", &report.revision),
                    ("verdict", &verdict),
                    ("drifted_objects", &report.drifted()),
                ],
            );
        }
        let transitions = self.tracker.update(report);
        for t in &transitions {
            self.announce(report, t).await;
        }
        if let Some(h) = self.healer.as_mut() {
            h.observe(report);
        }
        if drifted && self.healing.contains(&key) {
            self.heal(&evaluated.report).await;
        }
    }

    /// Records the Event for a transition and, when it is news, notifies.
    async fn announce(&self, report: &crate::model::DriftReport, t: &Transition) {
        let key = (report.namespace.clone(), report.release.clone());
        let (reason, id, signature, drifted): (&str, _, _, Option<&ObjectDrift>) = match t {
            Transition::Detected { object, signature } => (events::DETECTED, &object.id, signature, Some(object)),
            Transition::Resolved { object, signature } => (events::RESOLVED, object, signature, None),
        };
        let message = match drifted {
            Some(o) => detected_message(report, o),
            None => format!(
                "{id} is back in sync with release {}/{} revision {}",
                report.namespace, report.release, report.revision
            ),
        };
        let paths = drifted.map(signature::paths).unwrap_or_default().join(" ");
        let release = key_text(&key);
        let short: String = signature.chars().take(16).collect();
        let mut fields: Vec<(&str, &dyn ToString)> =
            vec![("release", &release), ("object", id), ("reason", &reason), ("signature", &short)];
        if drifted.is_some() && !paths.is_empty() {
            fields.push(("paths", &paths));
        }
        if self.record(report, id, reason, signature, &message).await {
            self.log.info(if drifted.is_some() { "drift detected" } else { "drift resolved" }, &fields);
            self.notifier.send(crate::report::json::notification(reason, report, signature, drifted, id));
        }
    }

    /// Records the Event about `id` (only while leading) and says whether it is news: anything but
    /// an Event helm-drift itself already recorded for this signature (one it could not record, or
    /// one of that name someone else wrote, is news all the same).
    async fn record(
        &self,
        report: &crate::model::DriftReport,
        id: &ObjectId,
        reason: &str,
        signature: &str,
        message: &str,
    ) -> bool {
        if !self.leading("record an Event").await {
            return false;
        }
        let key = (report.namespace.clone(), report.release.clone());
        let client = &self.session.cluster.client;
        match events::record(client, &subject(report, id), &key, reason, signature, message).await {
            Ok(events::Recorded::Created) => {
                self.metrics.event(reason);
                true
            }
            Ok(events::Recorded::Existing) => false,
            Ok(events::Recorded::Foreign) => {
                self.metrics.rejected("event", 1);
                self.log.warn(
                    "an Event helm-drift did not write holds this drift's name: notified all the same",
                    &[("object", id)],
                );
                true
            }
            Err(e) => {
                self.metrics.error(e.reason());
                self.log.warn("cannot record the Event", &[("object", id), ("error", &e)]);
                true
            }
        }
    }

    /// Self-healing of one release: repair what the policy allows, abandon what fights back.
    async fn heal(&mut self, report: &crate::model::DriftReport) {
        let Some(healer) = self.healer.as_mut() else { return };
        let key: ReleaseKey = (report.namespace.clone(), report.release.clone());
        let decision = healer.decide(report, Instant::now());
        for (id, manager) in &decision.abandoned {
            self.metrics.repair("abandoned");
            let message = format!(
                "helm-drift stopped repairing {id} of release {}: it drifted again after each of {} repairs; {manager} keeps changing it",
                key_text(&key),
                self.options.repair.as_ref().map_or(0, |r| r.policy.fight_limit)
            );
            self.log.warn(
                "repair abandoned: something keeps changing the object",
                &[("release", &key_text(&key)), ("object", id), ("manager", manager)],
            );
            self.announce_repair(report, id, events::ABANDONED, &message).await;
        }
        if let Some(at) = decision.later {
            self.metrics.repair("rate-limited");
            self.log.info("repair postponed (rate limit)", &[("release", &key_text(&key))]);
            let tx = self.sink.tx.clone();
            tokio::spawn(async move {
                tokio::time::sleep_until(at.into()).await;
                let _ = tx.send(Touch::Release(key));
            });
            return;
        }
        if decision.repair.is_empty() {
            return;
        }
        let options = self.options.repair.as_ref().expect("healing needs repair options");
        // The history read again right before acting: an upgrade that started since the
        // release was judged is never undone.
        let fresh = match self.session.storage.history(&key.0, &key.1).await {
            Ok(fresh) => fresh,
            Err(e) => {
                self.metrics.repair("failed");
                self.log.error("repair failed", &[("release", &key_text(&key)), ("error", &e)]);
                return;
            }
        };
        if let Some(why) = heal::superseded(&fresh, report.revision) {
            self.metrics.repair("superseded");
            self.log.info(
                "repair skipped: the release changed since it was checked",
                &[("release", &key_text(&key)), ("reason", &why)],
            );
            return;
        }
        let authority = options.authority(&key.0, &key.1);
        let writer = match self.writer(&authority).await {
            Ok(w) => w,
            Err(e) => {
                self.metrics.repair("failed");
                self.log.error("repair failed", &[("release", &key_text(&key)), ("error", &crate::errors::chain(&e))]);
                return;
            }
        };
        let request = RepairRequest {
            release: report.release.clone(),
            only: decision.repair.clone(),
            remove_foreign: options.remove_foreign,
            dry_run: false,
            authority: Some(authority),
        };
        if !self.leading("repair").await {
            return;
        }
        self.session.forget_live();
        let result = crate::repair::execute_as(&mut self.session, self.settings, &fresh, &request, &writer).await;
        let applied: Vec<ObjectId> = match &result {
            Ok(r) => r.steps.iter().filter(|s| s.status == StepStatus::Applied).map(|s| s.object.clone()).collect(),
            Err(_) => Vec::new(),
        };
        if let Some(h) = self.healer.as_mut() {
            h.repaired(report, &applied, Instant::now());
        }
        match result {
            Ok(repair) => {
                let outcome = repair_result(&repair.steps.iter().map(|s| &s.status).collect::<Vec<_>>());
                self.metrics.repair(outcome);
                let release = key_text(&key);
                for s in &repair.steps {
                    let result = s.status.word();
                    let mut fields: Vec<(&str, &dyn ToString)> =
                        vec![("release", &release), ("object", &s.object), ("result", &result)];
                    if let StepStatus::Refused(why) | StepStatus::Failed(why) = &s.status {
                        fields.push(("reason", why));
                    }
                    self.log.info("repair", &fields);
                    if let StepStatus::Refused(why) = &s.status {
                        let message = format!("helm-drift did not repair {} of release {release}: {why}", s.object);
                        self.announce_repair(report, &s.object, events::REFUSED, &message).await;
                    }
                }
                if let Some(after) = &repair.after {
                    self.metrics.record(after, 0.0);
                    if let Some(h) = self.healer.as_mut() {
                        h.observe(after);
                    }
                    let transitions = self.tracker.update(after);
                    for t in &transitions {
                        self.announce(after, t).await;
                    }
                }
            }
            Err(e) => {
                self.metrics.repair("failed");
                self.log.error("repair failed", &[("release", &key_text(&key)), ("error", &crate::errors::chain(&e))]);
            }
        }
    }

    /// An Event and a notification about a repair not made (abandoned, refused), once per drift
    /// signature of the object.
    async fn announce_repair(&self, report: &crate::model::DriftReport, id: &ObjectId, reason: &str, message: &str) {
        let key = (report.namespace.clone(), report.release.clone());
        let object = report.objects.iter().find(|o| &o.id == id);
        let signature = object.and_then(|o| self.tracker.signer().of(&key, o)).unwrap_or_else(|| "0".repeat(64));
        if !self.record(report, id, reason, &signature, message).await {
            return;
        }
        let mut note = crate::report::json::notification(reason, report, &signature, object, id);
        note["message"] = serde_json::Value::String(message.to_string());
        self.notifier.send(note);
    }

    /// The client repairs write through: the watcher's own, or one impersonating the release
    /// namespace's ServiceAccount (kept per namespace).
    async fn writer(&mut self, authority: &crate::repair::Authority) -> Result<kube::Client> {
        let Some(user) = authority.impersonated_user() else { return Ok(self.session.cluster.client.clone()) };
        if let Some(c) = self.writers.get(&user) {
            return Ok(c.clone());
        }
        let mut connection = self.settings.connection.clone();
        connection.as_user = Some(user.clone());
        connection.as_groups = Vec::new();
        let client = crate::api::connect(&connection).await?.client;
        self.writers.insert(user, client.clone());
        Ok(client)
    }

    /// Forgets an uninstalled (or no longer selected) release: its series go away.
    fn forget(&mut self, key: &ReleaseKey) {
        if self.state.forget(key) {
            self.log.info("release gone: its series are dropped", &[("release", &key_text(key))]);
        }
        self.metrics.forget(&key.0, &key.1);
        self.tracker.forget(key);
    }

    /// Starts the watches the releases need and stops those no release needs: one per kind,
    /// namespaced when all its objects are in one namespace, else cluster-wide.
    fn reconcile_watches(&mut self, since: k8s_openapi::jiff::Timestamp) {
        let wanted = self.state.wanted_watches();
        self.watches.retain(|k, handle| {
            let keep = wanted.contains_key(k);
            if !keep {
                handle.abort();
            }
            keep
        });
        for (key, resource) in wanted {
            if !self.watches.contains_key(&key) {
                let handle = sources::kind(&self.streams, &resource, &key, since, self.sink.clone());
                self.watches.insert(key, handle);
            }
        }
        self.metrics.watches.set((self.watches.len() + usize::from(self.storage.is_some())) as i64);
    }
}

/// What an Event about object `id` of a release is recorded on: the object when it lives in the
/// release's namespace, else the release's storage record, so that a record (which anyone who
/// may write Secrets there can forge) never makes the watcher write Events into other
/// namespaces. The message names the object either way.
fn subject(report: &crate::model::DriftReport, id: &ObjectId) -> ObjectId {
    if id.namespace.as_deref() == Some(report.namespace.as_str()) {
        return id.clone();
    }
    let record = report.record.split_once(' ').and_then(|(kind, at)| Some((kind, at.split_once('/')?)));
    match record {
        Some((kind @ ("Secret" | "ConfigMap"), (ns, name))) if ns == report.namespace => {
            ObjectId::new("v1", kind, Some(ns), name)
        }
        _ => id.clone(),
    }
}

/// `namespace/name`.
fn key_text(key: &ReleaseKey) -> String {
    format!("{}/{}", key.0, key.1)
}

/// The Event message of a new drift: the verdict, the paths and who changed them (no values).
fn detected_message(report: &crate::model::DriftReport, o: &ObjectDrift) -> String {
    let paths = signature::paths(o);
    let by: BTreeSet<&str> = o.writers().map(|a| a.manager.as_str()).collect();
    let by = if by.is_empty() {
        String::new()
    } else {
        format!(" (changed by {})", by.into_iter().collect::<Vec<_>>().join(", "))
    };
    let at = if paths.is_empty() { String::new() } else { format!(": {}", paths.join(", ")) };
    format!(
        "{} drifted from release {}/{} revision {} ({}){at}{by}",
        o.id,
        report.namespace,
        report.release,
        report.revision,
        o.kind().label()
    )
}

/// One word for a repair's outcome (a metric label).
fn repair_result(steps: &[&StepStatus]) -> &'static str {
    if steps.iter().any(|s| matches!(s, StepStatus::Refused(_))) {
        "refused"
    } else if steps.iter().any(|s| matches!(s, StepStatus::Failed(_) | StepStatus::NotApplied)) {
        "failed"
    } else {
        "applied"
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{DriftReport, ObjectId};

    #[test]
    fn events_about_objects_beyond_the_release_namespace_go_on_its_record() {
        let mut report = DriftReport::sample("tenant", "evil", Vec::new());
        report.record = "Secret tenant/sh.helm.release.v1.evil.v1".into();
        let own = ObjectId::new("v1", "ConfigMap", Some("tenant"), "c");
        assert_eq!(super::subject(&report, &own), own);
        let record = ObjectId::new("v1", "Secret", Some("tenant"), "sh.helm.release.v1.evil.v1");
        for beyond in [
            ObjectId::new("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None, "admin"),
            ObjectId::new("v1", "ConfigMap", Some("kube-system"), "x"),
        ] {
            assert_eq!(super::subject(&report, &beyond), record);
        }
        report.record = "SQL row tenant/sh.helm.release.v1.evil.v1".into();
        let crb = ObjectId::new("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None, "admin");
        assert_eq!(super::subject(&report, &crb), crb, "no Kubernetes object to record it on");
    }
}

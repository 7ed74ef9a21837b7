//! `watch`: continuous drift detection. A full check at start, then event-driven: Helm's storage
//! and the kinds of the watched releases are watched, and only the releases a change touches are
//! evaluated again (debounced), with a full resync every `--resync`. Verdicts go to metrics, to
//! Events and notifications once per drift signature, and, for releases that opt in, to
//! `repair`. With `--leader-elect` only the replica holding the Lease acts.
//!
//! The rooms: `state` (what the watcher knows, pure), `looping` (the event loop), `checks`
//! (full checks and touched releases), `announce` (Events, notifications, log lines), `healing`
//! (self-healing, with the pure policy in `heal`), `tracker` and `signature` (what was reported),
//! `sources` (the watches), `leader`, `server`, `metrics`, `notify`, `log`. This file holds the
//! options, the watcher's fields and its start.

mod announce;
mod checks;
mod events;
mod heal;
mod healing;
mod key;
mod leader;
mod log;
mod looping;
mod metrics;
mod notify;
mod refused;
mod scheduler;
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
use crate::settings::Settings;
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
    /// `--max-releases-per-namespace`.
    pub max_releases_per_namespace: usize,
    pub metrics_address: String,
    pub notify: Vec<String>,
    pub notify_format: Format,
    /// The cluster's name, put on every notification (`--cluster`).
    pub cluster: Option<String>,
    /// `--ui`: the page at `/`.
    pub ui: bool,
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
    /// The namespaces whose records the operator trusts (`--trust-namespace`).
    pub trust: crate::settings::Trust,
}

impl RepairOptions {
    /// The authority a repair of a release in `namespace` acts within.
    fn authority(&self, namespace: &str, release: &str) -> crate::repair::Authority {
        crate::repair::Authority {
            namespace: namespace.to_string(),
            release: release.to_string(),
            trusted: self.trust.trusts(namespace),
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
    let board = options.ui.then(Default::default);
    let health =
        Arc::new(Health { metrics: metrics.clone(), ready: Default::default(), missing: Default::default(), board });
    let bound = server::serve(&options.metrics_address, health.clone()).await?;
    let serving =
        if options.ui { "serving /, /metrics, /healthz and /readyz" } else { "serving /metrics, /healthz and /readyz" };
    log.info(serving, &[("address", &bound)]);
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
        let lease_check = leader::LeaseCheck::new(&s.cluster.client, lease, &s.namespace);
        let mut watcher =
            Watcher::new(s, settings, &options, metrics.clone(), health.clone(), Some(lease_check)).await?;
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
                if let Some(Ok(mut b)) = health.board.as_ref().map(|b| b.lock()) {
                    b.clear();
                }
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
    /// Touches with the moment each was seen; coalesced into a set of releases (one entry per
    /// release however many changes) as soon as the loop reads them.
    touches: tokio::sync::mpsc::UnboundedReceiver<(Touch, tokio::time::Instant)>,
    /// When what is compared: batches, resyncs, postponed repairs.
    schedule: scheduler::Scheduler<ReleaseKey>,
    healer: Option<heal::Healer>,
    /// Releases that opted in to self-healing (read at each full check).
    healing: HashSet<ReleaseKey>,
    /// Clients that impersonate a ServiceAccount for repairs, by user.
    writers: HashMap<String, kube::Client>,
    /// With leader election: checked right before each write and notification.
    lease: Option<leader::LeaseCheck>,
    /// The admission guards written (`helm drift guard`, the chart's), read again before each
    /// round of comparisons; `None` while they cannot be read.
    admission: Option<Vec<crate::guard::GuardInfo>>,
    /// Whether the last read of the guards failed (said once in the log).
    guards_unreadable: bool,
    /// When the guards were last read.
    guards_read: Option<Instant>,
    /// What the watcher refuses to look at (bad records, releases past a namespace's bound),
    /// each said once.
    refused: refused::Refused,
}

impl<'a> Watcher<'a> {
    async fn new(
        session: Session,
        settings: &'a Settings,
        options: &'a WatchOptions,
        metrics: Arc<Metrics>,
        health: Arc<Health>,
        lease: Option<leader::LeaseCheck>,
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
        let notifier = notify::Notifier::start(
            options.notify.clone(),
            options.notify_format,
            options.cluster.clone(),
            metrics.clone(),
            log,
        )?;
        let (tx, touches) = tokio::sync::mpsc::unbounded_channel();
        let sink = Sink { tx: sources::TouchSender(tx), metrics: metrics.clone(), log };
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
            schedule: scheduler::Scheduler::new(options.debounce, options.resync),
            healer,
            healing: HashSet::new(),
            writers: HashMap::new(),
            lease,
            admission: None,
            guards_unreadable: false,
            guards_read: None,
            refused: Default::default(),
        })
    }

    /// Whether this replica may act now: always without leader election, else only while it
    /// holds the Lease (read again: a leader cut off from the API server must not write).
    async fn leading(&self, what: &str) -> bool {
        let Some(lease) = &self.lease else { return true };
        if lease.holds().await {
            return true;
        }
        self.metrics.error("not-leading");
        self.log.warn("not holding the Lease: not acting", &[("action", &what)]);
        false
    }

    fn scope(&self) -> Option<String> {
        (!self.options.selection.all_namespaces).then(|| self.session.namespace.clone())
    }
}

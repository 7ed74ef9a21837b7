//! The reconciler: the watcher that wires the parts together. This file holds its start and its
//! event loop (touches debounced into batches, resyncs, shutdown; the watches the state wants
//! started and stopped); `checks` the full checks and the touched releases, `guards` the cache
//! of admission guards read between them.

mod checks;
mod guards;

use crate::engine::Session;
use crate::settings::Settings;
use crate::watch::caaph::Proxies;
use crate::watch::healing::{Healing, Reach};
use crate::watch::keys::{ReleaseKey, ReleaseObject, Touch};
use crate::watch::lease::LeaseCheck;
use crate::watch::options::WatchOptions;
use crate::watch::outputs::metrics::Metrics;
use crate::watch::outputs::server::Health;
use crate::watch::outputs::{Outputs, drift_events, notify};
use crate::watch::scheduler::Due;
use crate::watch::scheduler::Scheduler;
use crate::watch::sources::watches::Watches;
use crate::watch::sources::{Sink, TouchSender};
use crate::watch::store::State;
use crate::watch::store::refused::RefusedReleases;
use crate::watch::store::signature::Signer;
use crate::watch::store::signing_key;
use crate::watch::store::tracker::Tracker;
use anyhow::Result;
use guards::GuardCache;
use k8s_openapi::jiff::Timestamp;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

/// How long a watch's connection may stay silent: longer than the server keeps a watch open.
pub(crate) const WATCH_READ_TIMEOUT: Duration = Duration::from_secs(330);

/// One watcher of one cluster. Everything it knows and runs is its own (two in one process
/// share nothing but the settings they were given).
pub(crate) struct Watcher<'a> {
    session: Session,
    settings: &'a Settings,
    options: &'a WatchOptions,
    outputs: Outputs,
    /// What it knows of the watched releases.
    state: State,
    /// What it reported, by drift signature.
    tracker: Tracker,
    /// What it refuses to look at (bad records, releases past a namespace's bound), said once.
    refused: RefusedReleases,
    watches: Watches,
    /// Touches with the moment each was seen; coalesced into a set of releases (one entry per
    /// release however many changes) as soon as the loop reads them.
    touches: UnboundedReceiver<(Touch, crate::watch::clock::Instant)>,
    /// When what is compared: batches, resyncs, postponed repairs.
    schedule: Scheduler<ReleaseKey>,
    healing: Option<Healing>,
    guards: GuardCache,
    /// The audit feed that names who made each drift (`--audit-address`).
    audit: Option<crate::watch::receiver::Link>,
    /// Told once the first full check is done (a fleet member's).
    started: Option<tokio::sync::oneshot::Sender<()>>,
    /// The fleet's places for judging (a fleet member's, after its first check).
    judging: Option<Arc<tokio::sync::Semaphore>>,
    /// The first full check is done: the watcher is ready, and a fleet member now judges in the
    /// fleet's places (its first check held a starting place).
    first_check_done: bool,
}

/// What a watcher starts from, read from its cluster by [`Watcher::new`].
pub(crate) struct WatcherStart {
    pub(crate) session: Session,
    /// The client the watches use: no read timeout shorter than a watch lasts.
    pub(crate) streams: kube::Client,
    /// Signatures earlier watchers reported and never resolved (from their Events).
    pub(crate) seeds: HashMap<ReleaseObject, String>,
    /// The key drift signatures are made with.
    pub(crate) key: Vec<u8>,
}

/// What a fleet member's watcher is given from the management cluster.
pub(crate) struct FromFleet {
    /// The key drift signatures are made with (the fleet's, for this member).
    pub(crate) key: Vec<u8>,
    /// The member's releases installed by CAAPH, by their HelmReleaseProxy.
    pub(crate) proxies: Option<Arc<Proxies>>,
    /// The management cluster's client, where pauses are read (with `--repair`).
    pub(crate) pauses: Option<kube::Client>,
    /// Told once the first full check is done (the fleet then lets another member start).
    pub(crate) started: Option<tokio::sync::oneshot::Sender<()>>,
    /// The fleet's places for members judging releases after their first check.
    pub(crate) judging: Option<Arc<tokio::sync::Semaphore>>,
}

/// What a watcher is given by whoever runs it: the run's settings and options, the metrics and
/// health it serves through, and the Lease it acts under (with leader election).
pub(crate) struct Given<'a> {
    pub(crate) settings: &'a Settings,
    pub(crate) options: &'a WatchOptions,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) health: Arc<Health>,
    pub(crate) lease: Option<LeaseCheck>,
    /// What a fleet gives its member's watcher (none outside a fleet).
    pub(crate) fleet: Option<FromFleet>,
    /// The audit hub's feed of this watcher.
    pub(crate) audit: Option<crate::watch::receiver::Subscription>,
}

impl<'a> Watcher<'a> {
    /// Connects the watcher's parts to its cluster: the watch client, the earlier Events, the
    /// signature key.
    pub(crate) async fn new(session: Session, given: Given<'a>) -> Result<Watcher<'a>> {
        let (settings, options, metrics, log) = (given.settings, given.options, &given.metrics, &given.options.log);
        let client = session.client().clone();
        // A watch is a request that stays open (the server ends it after about 5 minutes): the
        // per-request --timeout must not cut it.
        let mut long = settings.connection.clone();
        long.timeout = Some(WATCH_READ_TIMEOUT);
        let scope = (!options.selection.all_namespaces).then_some(session.namespace());
        let given_key = given.fleet.as_ref().map(|f| f.key.clone());
        let key = async {
            match (given_key, &options.home) {
                (Some(key), _) => (key, signing_key::KeyOrigin::Secret),
                (None, Some(home)) => signing_key::load(&client, home, &options.signature_key_secret).await,
                (None, None) => (
                    signing_key::for_process(),
                    signing_key::KeyOrigin::Process(signing_key::KeyError::Unnamed {
                        namespace: session.namespace().into(),
                    }),
                ),
            }
        };
        // A fleet member's client carries its watches on the one connection it keeps alive
        // (api/member_client.rs): no second one.
        let streams = async {
            match settings.connection.given {
                Some(_) => Ok(client.clone()),
                None => crate::api::connect(&long).await.map(|c| c.client),
            }
        };
        let (streams, earlier, (key, source)) = tokio::join!(streams, drift_events::unresolved(&client, scope), key);
        let streams = streams?;
        if let signing_key::KeyOrigin::Process(why) = source {
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
                // When each was reported survives a restart in its Event: the timeline starts there.
                if let Ok(mut t) = given.health.timeline.lock() {
                    t.reported_before(log.cluster.as_deref().unwrap_or_default(), e.reported);
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
        Watcher::assemble(WatcherStart { session, streams, seeds, key }, given)
    }

    /// Puts the parts together, reading and starting nothing.
    pub(crate) fn assemble(start: WatcherStart, given: Given<'a>) -> Result<Watcher<'a>> {
        let Given { settings, options, metrics, health, lease, fleet, audit } = given;
        let (proxies, pauses, started, judging) =
            fleet.map(|f| (f.proxies, f.pauses, f.started, f.judging)).unwrap_or_default();
        let in_fleet = options.fleet.is_some();
        let log = &options.log;
        let notifier = notify::Notifier::start(
            options.notify.clone(),
            options.notify_format,
            options.cluster.clone(),
            metrics.clone(),
            log.clone(),
        )?;
        let (tx, touches) = tokio::sync::mpsc::unbounded_channel();
        let audit = audit.map(|feed| feed.link(TouchSender(tx.clone())));
        let sink = Sink { tx: TouchSender(tx), metrics: metrics.clone(), log: log.clone() };
        let client = start.session.client().clone();
        for (key, p) in proxies.iter().flat_map(|p| p.all()) {
            metrics.proxy(&key.namespace, &key.name, &p.name, p.chart_proxy.as_deref().unwrap_or(""));
        }
        let mut outputs = Outputs::new(metrics, health, log.clone(), notifier, client, lease, proxies);
        outputs.publish_names = options.audit.as_ref().is_some_and(|a| a.publish_names);
        // A fleet member's home is in the management cluster, not the member it writes Events to.
        outputs.home = options.home.clone().filter(|_| !in_fleet);
        Ok(Watcher {
            session: start.session,
            settings,
            options,
            outputs,
            state: State::default(),
            tracker: Tracker::seeded(start.seeds, Signer::new(&start.key)),
            refused: RefusedReleases::default(),
            watches: Watches::new(start.streams, sink),
            touches,
            schedule: Scheduler::new(options.debounce, options.resync),
            healing: options.repair.as_ref().map(|r| Healing::new(r, options.cluster.clone(), pauses.clone())),
            guards: GuardCache::default(),
            audit,
            started,
            judging,
            first_check_done: false,
        })
    }

    /// The namespace watched, unless every namespace is.
    fn scope(&self) -> Option<String> {
        (!self.options.selection.all_namespaces).then(|| self.session.namespace().to_string())
    }
}

impl Watcher<'_> {
    pub(crate) async fn run(&mut self, shutdown: impl std::future::Future<Output = ()>) -> Result<()> {
        futures::pin_mut!(shutdown);
        let started = Timestamp::now();
        self.announce().await;
        // SIGTERM is heard during the first full check too: it retries while the API server is
        // away, which can last.
        // The checks' futures are boxed: their state is large and held only while they run, and
        // a fleet's thousand watchers at rest would each keep room for it (30 KiB a member).
        tokio::select! {
            checked = Box::pin(self.full_check()) => checked?,
            _ = &mut shutdown => {
                self.outputs.log.info("stopping", &[]);
                return Ok(());
            }
        }
        let state = &self.state;
        self.tracker.settle(|release| state.watches(release));
        self.outputs.health.serving();
        self.outputs.metrics.ready(1);
        let (releases, drifted) = self.state.counts();
        self.outputs.log.info("ready: first full check done", &[("releases", &releases), ("drifted", &drifted)]);
        self.first_check_done = true;
        if let Some(started) = self.started.take() {
            let _ = started.send(());
        }
        // The watches start after the first check (records and objects written since it began
        // are looked at again), once /readyz says ready: their first lists are the busiest moment.
        self.reconcile_watches(started);
        let (scope, selector) = (self.scope(), self.options.selection.selector.as_deref());
        if !self.watches.watch_storage(self.settings.driver, scope.as_deref(), selector, started) {
            self.outputs.log.warn("the sql driver cannot be watched: new revisions are seen at each resync", &[]);
        }
        self.outputs.metrics.watches(self.watches.running() as i64);
        self.schedule.resync_from_now();
        loop {
            tokio::select! {
                _ = &mut shutdown => {
                    self.outputs.log.info("stopping", &[]);
                    self.stop();
                    return Ok(());
                }
                Some((touch, seen)) = self.touches.recv() => {
                    let keys = self.releases_of(&touch);
                    self.schedule.touched(keys, seen);
                    self.outputs.metrics.pending(self.schedule.pending() as i64);
                }
                due = self.schedule.next() => Box::pin(self.due(due)).await,
            }
        }
    }

    /// A batch or a resync is due.
    async fn due(&mut self, due: Due) {
        match due {
            Due::Batch => {
                // Changes already queued join this batch (they would only wait for the next).
                let queued = queued(&mut self.touches, |t| self.state.releases_of(t, &self.options.selection.releases));
                self.schedule.join(queued);
                let batch = self.schedule.take_batch();
                self.evaluate(batch).await;
                self.outputs.metrics.pending(self.schedule.pending() as i64);
            }
            Due::Resync => {
                let at = Timestamp::now();
                let checked = self.full_check().await;
                self.reconcile_watches(at);
                self.announce().await;
                if let Err(e) = checked {
                    self.outputs.metrics.error("resync");
                    self.outputs.log.error("resync failed", &[("error", &crate::errors::chain(&e))]);
                }
            }
        }
    }

    /// A healing watcher of one cluster says where it reads pauses (`pause::announce`),
    /// renewed at each full check; a fleet's members leave it to the fleet.
    async fn announce(&self) {
        let Some(healing) = self.healing.as_ref().filter(|h| !h.is_member()) else { return };
        let session = &self.session;
        let home = healing.named_pauses().unwrap_or(session.namespace());
        // Pauses in a namespace the operator did not name hold only its own releases.
        let everywhere = self.options.selection.all_namespaces && healing.named_pauses().is_some();
        let namespace = if everywhere { "*" } else { session.namespace() };
        let lease = self.options.leader.as_ref().map_or("helm-drift", |l| l.name.as_str());
        let watcher = format!("{lease}|{namespace}|{}", self.options.cluster.as_deref().unwrap_or(""));
        let reach = Reach {
            watcher: &watcher,
            namespaces: vec![namespace.to_string()],
            fleet: false,
            every: self.options.resync,
        };
        let outputs = &self.outputs;
        crate::watch::healing::announce(session.client(), home, reach, &outputs.metrics, &outputs.log).await;
    }

    /// Stops every watch.
    pub(crate) fn stop(&mut self) {
        self.watches.stop();
    }

    /// The releases a change concerns.
    fn releases_of(&self, touch: &Touch) -> Vec<ReleaseKey> {
        self.state.releases_of(touch, &self.options.selection.releases)
    }

    /// Starts the watches the releases need and stops those no release needs: one per kind,
    /// namespaced when all its objects are in one namespace, else cluster-wide.
    pub(super) fn reconcile_watches(&mut self, since: Timestamp) {
        let running = self.watches.reconcile(self.state.wanted_watches(), since);
        self.outputs.metrics.watches(running as i64);
    }
}

/// The releases of every touch already queued, taken without waiting.
fn queued<T>(
    touches: &mut UnboundedReceiver<(Touch, T)>,
    releases_of: impl Fn(&Touch) -> Vec<ReleaseKey>,
) -> Vec<ReleaseKey> {
    let mut out = Vec::new();
    while let Ok((touch, _)) = touches.try_recv() {
        out.extend(releases_of(&touch));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touches_already_queued_join_the_batch_and_nothing_waits_for_more() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for name in ["a", "b", "a"] {
            tx.send((Touch::Release(ReleaseKey::new("apps", name)), ())).unwrap();
        }
        let found = queued(&mut rx, |t| match t {
            Touch::Release(k) => vec![k.clone()],
            _ => Vec::new(),
        });
        assert_eq!(found, [ReleaseKey::new("apps", "a"), ReleaseKey::new("apps", "b"), ReleaseKey::new("apps", "a")]);
        assert!(queued(&mut rx, |_| vec![ReleaseKey::new("x", "y")]).is_empty(), "returns at once when none is queued");
    }
}

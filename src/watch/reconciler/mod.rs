//! The reconciler: the watcher that wires the parts together. `looping` is its event loop
//! (touches, batches, resyncs, shutdown), `checks` the full checks and the touched releases,
//! `guards` the cache of admission guards read between them.

mod audited;
mod checks;
mod guards;
mod looping;
mod proxied;

use crate::engine::Session;
use crate::settings::Settings;
use crate::watch::heal::Healing;
use crate::watch::keys::{ReleaseKey, ReleaseObject, Touch};
use crate::watch::lease::LeaseCheck;
use crate::watch::options::WatchOptions;
use crate::watch::outputs::metrics::Metrics;
use crate::watch::outputs::proxies::Proxies;
use crate::watch::outputs::server::Health;
use crate::watch::outputs::{Outputs, drift_events, notify};
use crate::watch::scheduler::Scheduler;
use crate::watch::sources::watches::Watches;
use crate::watch::sources::{Sink, TouchSender};
use crate::watch::store::State;
use crate::watch::store::refused::Refused;
use crate::watch::store::signature::Signer;
use crate::watch::store::signing_key;
use crate::watch::store::tracker::Tracker;
use anyhow::Result;
use guards::GuardCache;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

/// How long a watch's connection may stay silent: longer than the server keeps a watch open.
const WATCH_READ_TIMEOUT: Duration = Duration::from_secs(330);

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
    refused: Refused,
    watches: Watches,
    /// Touches with the moment each was seen; coalesced into a set of releases (one entry per
    /// release however many changes) as soon as the loop reads them.
    touches: UnboundedReceiver<(Touch, tokio::time::Instant)>,
    /// When what is compared: batches, resyncs, postponed repairs.
    schedule: Scheduler<ReleaseKey>,
    healing: Option<Healing>,
    guards: GuardCache,
    /// The audit feed that names who made each drift (`--audit-address`).
    audit: Option<crate::watch::audit::Link>,
}

/// What a watcher starts from, read from its cluster by [`Watcher::new`].
pub(crate) struct Start {
    pub(crate) session: Session,
    /// The client the watches use: no read timeout shorter than a watch lasts.
    pub(crate) streams: kube::Client,
    /// Signatures earlier watchers reported and never resolved (from their Events).
    pub(crate) seeds: HashMap<ReleaseObject, String>,
    /// The key drift signatures are made with.
    pub(crate) key: Vec<u8>,
}

/// What a watcher is given by whoever runs it: the run's settings and options, the metrics and
/// health it serves through, and the Lease it acts under (with leader election).
pub(crate) struct Given<'a> {
    pub(crate) settings: &'a Settings,
    pub(crate) options: &'a WatchOptions,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) health: Arc<Health>,
    pub(crate) lease: Option<LeaseCheck>,
    /// The key drift signatures are made with, when the runner read it (a fleet's, from its
    /// management cluster); else it is read from the watched cluster.
    pub(crate) key: Option<Vec<u8>>,
    /// A fleet member's releases installed by CAAPH, by their HelmReleaseProxy.
    pub(crate) proxies: Option<Arc<Proxies>>,
    /// A fleet member's management cluster, where pauses are read.
    pub(crate) pauses: Option<kube::Client>,
    /// The audit hub and the name of this watcher's feed in it.
    pub(crate) audit: Option<(Arc<crate::watch::audit::Hub>, String)>,
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
        let given_key = given.key.clone();
        let key = async {
            match (given_key, &options.home) {
                (Some(key), _) => (key, signing_key::Source::Secret),
                (None, Some(home)) => signing_key::load(&client, home, &options.signature_key_secret).await,
                (None, None) => {
                    (signing_key::random(), signing_key::Source::Process(signing_key::unnamed(session.namespace())))
                }
            }
        };
        let (streams, earlier, (key, source)) =
            tokio::join!(crate::api::connect(&long), drift_events::unresolved(&client, scope), key);
        let streams = streams?.client;
        if let signing_key::Source::Process(why) = source {
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
        Watcher::assemble(Start { session, streams, seeds, key }, given)
    }

    /// Puts the parts together, reading and starting nothing.
    pub(crate) fn assemble(start: Start, given: Given<'a>) -> Result<Watcher<'a>> {
        let Given { settings, options, metrics, health, lease, proxies, pauses, audit, .. } = given;
        let log = &options.log;
        let notifier = notify::Notifier::start(
            options.notify.clone(),
            options.notify_format,
            options.cluster.clone(),
            metrics.clone(),
            log.clone(),
        )?;
        let (tx, touches) = tokio::sync::mpsc::unbounded_channel();
        let audit = audit.map(|(hub, feed)| crate::watch::audit::Link { hub, feed, touches: TouchSender(tx.clone()) });
        let sink = Sink { tx: TouchSender(tx), metrics: metrics.clone(), log: log.clone() };
        let client = start.session.client().clone();
        for (key, p) in proxies.iter().flat_map(|p| p.all()) {
            metrics.proxy(&key.namespace, &key.name, &p.name, p.chart_proxy.as_deref().unwrap_or(""));
        }
        let mut outputs = Outputs::new(metrics, health, log.clone(), notifier, client, lease, proxies);
        outputs.publish_names = options.audit.as_ref().is_some_and(|a| a.publish_names);
        Ok(Watcher {
            session: start.session,
            settings,
            options,
            outputs,
            state: State::default(),
            tracker: Tracker::seeded(start.seeds, Signer::new(&start.key)),
            refused: Refused::default(),
            watches: Watches::new(start.streams, sink),
            touches,
            schedule: Scheduler::new(options.debounce, options.resync),
            healing: options.repair.as_ref().map(|r| Healing::new(r, options.cluster.clone(), pauses.clone())),
            guards: GuardCache::default(),
            audit,
        })
    }

    /// The namespace watched, unless every namespace is.
    fn scope(&self) -> Option<String> {
        (!self.options.selection.all_namespaces).then(|| self.session.namespace().to_string())
    }
}

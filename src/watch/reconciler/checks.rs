//! Checking: every selected release at a full check, the releases a change touched in
//! between; each verdict goes into the state, the metrics and the tracker.

use super::Watcher;
use crate::engine::{Evaluated, Failure, evaluate_with_baseline, file_baseline};
use crate::release::{ReleaseIndex, SourceError};
use crate::watch::clock::Instant;
use crate::watch::healing::Hands;
use crate::watch::keys::ReleaseKey;
use anyhow::Result;
use futures::StreamExt;
use std::collections::BTreeSet;
use std::time::Duration;

impl Watcher<'_> {
    /// Every selected release, evaluated again; releases gone from storage are forgotten.
    pub(super) async fn full_check(&mut self) -> Result<()> {
        self.guards.expire();
        let selection = &self.options.selection;
        let scope = self.scope();
        let storage = self.session.storage();
        let (mut found, missing) = crate::engine::select(storage, selection, scope.as_deref()).await?;
        self.outputs.say_missing(missing, scope.as_deref());
        let (per_namespace, total) = (self.options.max_releases_per_namespace, self.options.max_releases);
        for (namespace, (count, names)) in self.refused.bound(&mut found, per_namespace, total) {
            self.outputs.metrics.rejected("record", count as u64);
            self.outputs.log.warn(
                "more releases in the namespace than --max-releases-per-namespace (or its share of --max-releases): the rest are not watched",
                &[
                    ("namespace", &namespace),
                    ("left_out", &count),
                    ("max", &per_namespace),
                    ("total", &total),
                    ("first", &names.join(" ")),
                ],
            );
        }
        self.outputs.metrics.selected(found.len() as i64);
        crate::engine::prefetch_records(storage, found.len(), scope.as_deref(), selection.selector.as_deref()).await?;
        if let Some(healing) = &mut self.healing {
            let opted = storage.releases(scope.as_deref(), Some(healing.selector())).await?;
            healing.opted(opted.into_iter().map(|i| ReleaseKey { namespace: i.namespace, name: i.name }));
            for (window, selector) in healing.window_selectors() {
                let matched = storage.releases(scope.as_deref(), Some(&selector)).await?;
                healing
                    .windowed(window, matched.into_iter().map(|i| ReleaseKey { namespace: i.namespace, name: i.name }));
            }
        }
        if let Some(h) = &mut self.healing {
            h.follow(self.outputs.proxies.as_deref());
        }
        let keys: BTreeSet<ReleaseKey> = found.iter().map(|i| ReleaseKey::new(&i.namespace, &i.name)).collect();
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

    /// Releases touched by changes, evaluated again.
    pub(super) async fn evaluate(&mut self, batch: BTreeSet<ReleaseKey>) {
        // Each release's history, read `concurrency` at once (a storm of edits touches many).
        let storage = self.session.storage();
        let concurrency = self.options.selection.concurrency.max(1);
        let batch = batch.into_iter().filter(|k| !self.refused.is_crowded(k));
        // Collected first: a stream over a borrowing closure would not be `Send`.
        let reads: Vec<_> = batch
            .map(|key| async move {
                let read = storage.history(&key.namespace, &key.name).await;
                (key, read)
            })
            .collect();
        let histories: Vec<_> = futures::stream::iter(reads).buffered(concurrency).collect().await;
        let mut indexes = Vec::new();
        for (key, read) in histories {
            match history(read) {
                History::Gone => self.forget(&key),
                History::Busy => {}
                History::Judge(index) => indexes.push(index),
                History::Unreadable(e) => {
                    self.outputs.metrics.error("storage");
                    self.outputs.log.error("cannot read the release", &[("release", &key), ("error", &e)]);
                }
            }
        }
        if let Some(h) = &mut self.healing {
            h.read_opt_ins(self.session.storage(), &indexes, &self.outputs).await;
        }
        self.evaluate_indexes(indexes, false).await;
        self.reconcile_watches(k8s_openapi::jiff::Timestamp::now());
    }

    /// Evaluates releases with fresh live reads (`wide`: listing kinds across every namespace).
    pub(super) async fn evaluate_indexes(&mut self, indexes: Vec<ReleaseIndex>, wide: bool) {
        let _place = self.place().await;
        self.session.forget_live();
        if !indexes.is_empty() {
            self.guards.refresh(self.session.client(), self.outputs.log.clone()).await;
        }
        let baseline = match file_baseline(self.settings) {
            Ok(b) => b,
            Err(e) => {
                self.outputs.metrics.error("baseline");
                self.outputs.log.error("cannot read the baseline", &[("error", &crate::errors::chain(&e))]);
                return;
            }
        };
        let concurrency = self.options.selection.concurrency.max(1);
        // Absorbed a batch at a time as evaluations complete, not all at the end: metrics and
        // Events come early in a large first check, and a batch's verdicts are let go once
        // absorbed. The live listings stay shared by every batch (one LIST per kind).
        let mut queue = indexes.into_iter();
        loop {
            let batch: Vec<ReleaseIndex> = queue.by_ref().take(concurrency * BATCH_PER_WORKER).collect();
            if batch.is_empty() {
                self.say_over_budget();
                // What the check read is let go now, not at the next check: a member at rest
                // keeps no listings.
                self.session.forget_live();
                if let Some(a) = &self.audit {
                    a.watching(self.state.objects());
                }
                return;
            }
            // Healing in an earlier batch starts a fresh cache (it reads after its writes).
            if wide {
                self.session.live().list_every_namespace();
            }
            self.evaluate_batch(batch, baseline.as_ref(), concurrency).await;
        }
    }

    /// A fleet member past its first check judges in one of the fleet's places, so that an
    /// edit every member sees (or a resync of them all) holds a few evaluations in memory at a
    /// time, not one per member; it waits at most [`PLACE_WAIT`] for one (a slow member holding
    /// a place delays no other longer), then judges without.
    async fn place(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let places = self.judging.clone().filter(|_| self.first_check_done)?;
        tokio::time::timeout(PLACE_WAIT, places.acquire_owned()).await.ok()?.ok()
    }

    /// Objects the listings of this check did not keep for their byte budget (each read alone
    /// when asked for): counted and said.
    fn say_over_budget(&self) {
        let over = self.session.live().over_budget();
        if over > 0 {
            self.outputs.metrics.rejected("listing", over as u64);
            let budget = format!("{} MiB", crate::live::KEPT_BYTES >> 20);
            self.outputs.log.warn(
                "listed objects past the listings' budget were not kept (each is read alone if a release asks)",
                &[("objects", &over), ("budget", &budget)],
            );
        }
    }

    /// Evaluates a batch of releases, `concurrency` at once, then absorbs their verdicts.
    async fn evaluate_batch(
        &mut self,
        batch: Vec<ReleaseIndex>,
        baseline: Option<&crate::baseline::Baseline>,
        concurrency: usize,
    ) {
        let (session, settings, proxies) = (&self.session, self.settings, self.outputs.proxies.as_deref());
        let evaluations: Vec<_> = batch
            .into_iter()
            .map(|index| async move {
                let started = Instant::now();
                // CAAPH's release: the revision it recorded is the one judged.
                let key = ReleaseKey::new(&index.namespace, &index.name);
                let revision = proxies.and_then(|p| p.of(&key)).and_then(|p| p.revision);
                let r = evaluate_with_baseline(session, settings, &index, revision, baseline).await.map(Verdicts::from);
                (index, r, started.elapsed())
            })
            .collect();
        let results: Vec<_> = futures::stream::iter(evaluations).buffer_unordered(concurrency).collect().await;
        for (index, result, took) in results {
            let key = ReleaseKey::new(&index.namespace, &index.name);
            match result {
                Ok(mut verdicts) => {
                    self.refused.clear(&key);
                    self.schedule.recovered(&key);
                    if let Some(a) = &self.audit {
                        a.attribute(&mut verdicts.report, self.session.discovery());
                    }
                    self.outputs.unrecorded_revision(&index, verdicts.report.revision).await;
                    let r = &mut verdicts.report;
                    r.guard = self.guards.covering(&r.namespace, &r.release);
                    self.absorb(&verdicts, took).await
                }
                Err(e) => match e.failure() {
                    Failure::Gone => self.forget(&key),
                    Failure::BadRecord => {
                        // Input, not an outage: counted and said once per revision, never judged.
                        let revision = index.deployed().map_or(0, |r| r.revision);
                        if self.refused.record(&key, revision) {
                            // A verdict it had before (of a record now unreadable) no longer holds.
                            self.forget(&key);
                            self.outputs.metrics.rejected("record", 1);
                            self.outputs.log.warn(
                                "release record rejected: not compared",
                                &[("release", &key), ("error", &crate::errors::one_line(&e))],
                            );
                        }
                    }
                    Failure::Conflict => {
                        // Loud, and what was known of the release stays (its series, its drift).
                        let revision = index.deployed().map_or(0, |r| r.revision);
                        if self.refused.record(&key, revision) {
                            self.outputs.metrics.rejected("record", 1);
                            self.outputs.log.error(
                                "release record conflicts with the claimed namespace's own: not compared",
                                &[("release", &key), ("error", &crate::errors::one_line(&e))],
                            );
                            self.outputs.conflict(&key, revision, &crate::errors::one_line(&e)).await;
                        }
                        self.outputs.metrics.error("evaluate");
                    }
                    Failure::Outage => {
                        self.outputs.metrics.error("evaluate");
                        let fields: [(&str, &(dyn ToString + Sync)); 2] =
                            [("release", &key), ("error", &crate::errors::one_line(&e))];
                        self.outputs.log.error("cannot check the release", &fields);
                        self.schedule.failed(key);
                    }
                },
            }
        }
    }

    /// A release's new verdicts: metrics, the object index, Events and notifications for new or
    /// resolved drift, and self-healing.
    async fn absorb(&mut self, evaluated: &Verdicts, took: Duration) {
        let report = &evaluated.report;
        let key: ReleaseKey = ReleaseKey::of(report);
        self.outputs.metrics.record(report, took.as_secs_f64());
        // Whether a guard covers it is known only while the guards can be read: otherwise no
        // series, rather than a `none` that would not be true.
        let mode = self.guards.metric(report.guard.as_deref());
        self.outputs.metrics.guard(&key.namespace, &key.name, mode);
        self.outputs.show(report);
        let drifted = report.drifted() > 0;
        if self.state.absorb(&key, report.revision, drifted, &evaluated.placed) {
            let verdict = report.verdict().word();
            self.outputs.log.info(
                "release checked",
                &[
                    ("release", &key),
                    ("revision", &report.revision),
                    ("verdict", &verdict),
                    ("drifted_objects", &report.drifted()),
                ],
            );
        }
        let transitions = self.tracker.update(report);
        {
            let ender = crate::watch::receiver::ender(self.audit.as_ref(), &self.session, &report.namespace);
            self.outputs.chronicle(report, &transitions, false, ender.as_ref().map(|e| e as _));
        }
        for t in &transitions {
            self.outputs.announce(report, t).await;
        }
        // An acceptance that ends: judged again at that moment, when its drift counts again.
        if let Some(until) = report.accepted_until {
            self.schedule.later(key.clone(), crate::watch::healing::instant(until));
        }
        let Some(healing) = &mut self.healing else { return };
        healing.observe(report);
        // Whether it opts in is healing's to decide, with the rest.
        if drifted {
            let hands = Hands {
                session: &mut self.session,
                settings: self.settings,
                outputs: &self.outputs,
                tracker: &mut self.tracker,
                audit: self.audit.as_ref(),
            };
            if let Some(at) = healing.heal(report, hands).await {
                self.schedule.later(key, at);
            }
        }
    }

    /// Forgets an uninstalled (or no longer selected) release: its series go away, and every
    /// part of the watcher lets go of what it kept about it (its entry in the store, healing's,
    /// the scheduler's, what was said of it). A bad record's refusal is kept: it is said once per
    /// revision, and a release refused is never in the store, so it is "forgotten" at each check.
    fn forget(&mut self, key: &ReleaseKey) {
        self.schedule.recovered(key);
        if self.state.forget(key) {
            self.outputs.log.info("release gone: its series are dropped", &[("release", &key)]);
        }
        self.outputs.forget(key);
        self.tracker.forget(key);
        if let Some(healing) = self.healing.as_mut() {
            healing.forget(key);
        }
    }
}

/// What a touched release's history, read again, asks for.
#[derive(Debug)]
enum History {
    /// Uninstalled, or its records are gone: forgotten.
    Gone,
    /// An install, upgrade or rollback under way: its objects are changing. Looked at again when
    /// its record says it is done (or at the next resync), never judged halfway.
    Busy,
    Judge(ReleaseIndex),
    Unreadable(SourceError),
}

fn history(read: Result<ReleaseIndex, SourceError>) -> History {
    match read {
        Ok(index) if index.newest().is_some_and(|r| r.status == "uninstalled") => History::Gone,
        Ok(index) if index.in_progress() => History::Busy,
        Ok(index) => History::Judge(index),
        Err(SourceError::NotFound { .. }) => History::Gone,
        Err(e) => History::Unreadable(e),
    }
}

/// Releases per batch of a full check, per concurrent evaluation.
const BATCH_PER_WORKER: usize = 4;

/// The longest a fleet member waits for a place to judge in ([`Watcher::place`]).
const PLACE_WAIT: Duration = Duration::from_secs(5);

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
        // Freeing a release's objects takes a while: not on the way to the next decision (off
        // the runtime when there is one; here, when there is none).
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => _ = runtime.spawn_blocking(move || drop((release, objects))),
            Err(_) => drop((release, objects)),
        }
        Verdicts { report, placed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::Record;

    fn index(statuses: &[(u32, &str)]) -> ReleaseIndex {
        let records = statuses
            .iter()
            .map(|(v, s)| Record {
                object: format!("sh.helm.release.v1.web.v{v}"),
                revision: *v,
                status: s.to_string(),
                written: None,
            })
            .collect();
        ReleaseIndex { namespace: "apps".into(), name: "web".into(), records }
    }

    #[test]
    fn a_touched_release_is_judged_only_when_helm_is_done_with_it() {
        let judged = |s: &[(u32, &str)]| matches!(history(Ok(index(s))), History::Judge(_));
        assert!(judged(&[(1, "superseded"), (2, "deployed")]));
        assert!(judged(&[(1, "deployed"), (2, "failed")]), "a failed upgrade leaves revision 1 to judge");
        for busy in ["pending-upgrade", "pending-rollback", "pending-install", "uninstalling"] {
            assert!(matches!(history(Ok(index(&[(1, "deployed"), (2, busy)]))), History::Busy), "{busy}");
        }
        assert!(matches!(history(Ok(index(&[(1, "uninstalled")]))), History::Gone));
        let gone = SourceError::NotFound {
            release: "web".into(),
            namespace: "apps".into(),
            driver: "secrets",
            hint: "".into(),
        };
        assert!(matches!(history(Err(gone)), History::Gone));
        let bad = SourceError::NoData { record: "sh.helm.release.v1.web.v1".into() };
        assert!(matches!(history(Err(bad)), History::Unreadable(_)));
    }

    /// Two watchers in one process (one per cluster, as a fleet runs them) share nothing: one's
    /// verdicts, series, page and schedule are not the other's.
    #[tokio::test]
    async fn two_watchers_in_one_process_keep_their_own_state() {
        use crate::watch::outputs::metrics::Metrics;
        use crate::watch::outputs::server::Health;
        use std::sync::Arc;
        let settings = crate::settings::Settings {
            connection: Default::default(),
            namespace: Some("apps".into()),
            driver: crate::release::Driver::Secrets,
            sql_connection: None,
            debug: false,
            compare: Default::default(),
            said: Default::default(),
            trust: Default::default(),
            helm_manager: Default::default(),
            baseline: None,
        };
        let options = crate::watch::options::WatchOptions {
            selection: Default::default(),
            resync: Duration::from_secs(300),
            debounce: Duration::from_secs(1),
            max_releases_per_namespace: 100,
            max_releases: 10_000,
            metrics_address: "127.0.0.1:0".into(),
            notify: Vec::new(),
            notify_format: crate::watch::Payload::Json,
            cluster: None,
            ui: true,
            log: crate::watch::outputs::log::Log { json: true, cluster: None },
            fleet: None,
            audit: None,
            repair: None,
            leader: None,
            signature_key_secret: "key".into(),
            home: None,
        };
        let mut watchers = Vec::new();
        for server in ["https://127.0.0.1:1", "https://127.0.0.1:2"] {
            // Nothing listens there: putting a watcher together reads nothing.
            let client = kube::Client::try_from(kube::Config::new(server.parse().unwrap())).unwrap();
            let storage = crate::release::Storage::open(client.clone(), settings.driver, None).await.unwrap();
            let cluster =
                crate::api::Cluster { client: client.clone(), default_namespace: "apps".into(), server: server.into() };
            let session = crate::engine::Session::from_parts(cluster, storage, kube::Discovery::new(client.clone()));
            let start =
                super::super::WatcherStart { session, streams: client, seeds: Default::default(), key: vec![7; 32] };
            let metrics = Arc::new(Metrics::new());
            let board = Some(Default::default());
            let health = Arc::new(Health::new(metrics.clone(), board));
            let given = super::super::Given {
                settings: &settings,
                options: &options,
                metrics,
                health,
                lease: None,
                fleet: None,
                audit: None,
            };
            watchers.push(Watcher::assemble(start, given).unwrap());
        }
        let report = crate::testing::report("apps", "web", Vec::new());
        let verdicts = Verdicts { report, placed: Vec::new() };
        watchers[0].absorb(&verdicts, Duration::from_millis(5)).await;
        watchers[0].schedule.touched(vec![ReleaseKey::new("apps", "web")], crate::watch::clock::Instant::now());
        let (a, b) = (&watchers[0], &watchers[1]);
        assert_eq!((a.state.counts(), b.state.counts()), ((1, 0), (0, 0)));
        let series = r#"helm_drift_release_drifted{namespace="apps",release="web"}"#;
        assert!(a.outputs.metrics.encode().contains(series));
        assert!(!b.outputs.metrics.encode().contains(series), "the other watcher's series");
        let shown = |w: &Watcher| w.outputs.health.board.as_ref().unwrap().lock().unwrap().len();
        assert_eq!((shown(a), shown(b)), (1, 0));
        assert_eq!((a.schedule.pending(), b.schedule.pending()), (1, 0));
    }
}

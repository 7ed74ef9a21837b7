//! Checking: every selected release at a full check, the releases a change touched in
//! between; each verdict goes into the state, the metrics and the tracker.

use super::*;

impl Watcher<'_> {
    /// Every selected release, evaluated again; releases gone from storage are forgotten.
    pub(super) async fn full_check(&mut self) -> Result<()> {
        self.guards_read = None;
        let selection = &self.options.selection;
        let scope = self.scope();
        let storage = &self.session.storage;
        let (mut found, missing) = crate::engine::select(storage, selection, scope.as_deref()).await?;
        self.say_missing(missing);
        for (namespace, (count, names)) in self.refused.bound(&mut found, self.options.max_releases_per_namespace) {
            self.metrics.rejected("record", count as u64);
            self.log.warn(
                "more releases in the namespace than --max-releases-per-namespace: the rest are not watched",
                &[
                    ("namespace", &namespace),
                    ("left_out", &count),
                    ("max", &self.options.max_releases_per_namespace),
                    ("first", &names.join(" ")),
                ],
            );
        }
        self.metrics.selected.set(found.len() as i64);
        crate::engine::prefetch_records(storage, found.len(), scope.as_deref(), selection.selector.as_deref()).await?;
        if let Some(r) = &self.options.repair {
            let opted = storage.releases(scope.as_deref(), Some(&r.selector)).await?;
            self.healing = opted.into_iter().map(|i| ReleaseKey { namespace: i.namespace, name: i.name }).collect();
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

    /// Names asked for that match no release: a warning when that changes, and in `/readyz` (a
    /// typo in a deployment's arguments would otherwise watch nothing and look healthy).
    pub(super) fn say_missing(&self, missing: Vec<String>) {
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
    pub(super) async fn evaluate(&mut self, batch: BTreeSet<ReleaseKey>) {
        // Each release's history, read `concurrency` at once (a storm of edits touches many).
        let storage = &self.session.storage;
        let concurrency = self.options.selection.concurrency.max(1);
        let batch = batch.into_iter().filter(|k| !self.refused.is_crowded(k));
        let histories: Vec<_> = futures::stream::iter(batch.map(|key| async move {
            let read = storage.history(&key.namespace, &key.name).await;
            (key, read)
        }))
        .buffered(concurrency)
        .collect()
        .await;
        let mut indexes = Vec::new();
        for (key, read) in histories {
            match read {
                Ok(index) if index.newest().is_some_and(|r| r.status == "uninstalled") => self.forget(&key),
                // An install, upgrade or rollback under way: its objects are changing. Looked at
                // again when its record says it is done (or at the next resync).
                Ok(index) if index.in_progress() => {}
                Ok(index) => indexes.push(index),
                Err(SourceError::NotFound { .. }) => self.forget(&key),
                Err(e) => {
                    self.metrics.error("storage");
                    self.log.error("cannot read the release", &[("release", &key), ("error", &e)]);
                }
            }
        }
        self.opt_in(&indexes).await;
        self.evaluate_indexes(indexes, false).await;
        self.reconcile_watches(k8s_openapi::jiff::Timestamp::now());
    }

    /// With --repair: whether each of these releases opts in now (a release installed or
    /// labelled while watching need not wait for the resync).
    pub(super) async fn opt_in(&mut self, indexes: &[ReleaseIndex]) {
        let Some(repair) = &self.options.repair else { return };
        for index in indexes {
            let key = ReleaseKey::new(&index.namespace, &index.name);
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
                        &[("release", &key), ("error", &e)],
                    );
                }
            }
        }
    }

    /// Evaluates releases with fresh live reads (`wide`: listing kinds across every namespace).
    pub(super) async fn evaluate_indexes(&mut self, indexes: Vec<ReleaseIndex>, wide: bool) {
        self.session.forget_live();
        // Read again at each full check, and between them at most every GUARDS_EVERY (a storm
        // of edits must not add a LIST per batch).
        let stale = self.guards_read.is_none_or(|at| at.elapsed() >= GUARDS_EVERY);
        if !indexes.is_empty() && stale {
            self.read_guards().await;
            self.guards_read = Some(Instant::now());
        }
        let baseline = match file_baseline(self.settings) {
            Ok(b) => b,
            Err(e) => {
                self.metrics.error("baseline");
                self.log.error("cannot read the baseline", &[("error", &crate::errors::chain(&e))]);
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
                return;
            }
            // Healing in an earlier batch starts a fresh cache (it reads after its writes).
            if wide {
                self.session.live.list_every_namespace();
            }
            self.evaluate_batch(batch, baseline.as_ref(), concurrency).await;
        }
    }

    /// Evaluates a batch of releases, `concurrency` at once, then absorbs their verdicts.
    async fn evaluate_batch(
        &mut self,
        batch: Vec<ReleaseIndex>,
        baseline: Option<&crate::baseline::Baseline>,
        concurrency: usize,
    ) {
        let (session, settings) = (&self.session, self.settings);
        let results: Vec<_> = futures::stream::iter(batch.into_iter().map(|index| async move {
            let started = Instant::now();
            let r = evaluate_with_baseline(session, settings, &index, None, baseline).await.map(Verdicts::from);
            (index, r, started.elapsed())
        }))
        .buffer_unordered(concurrency)
        .collect()
        .await;
        for (index, result, took) in results {
            let key = ReleaseKey::new(&index.namespace, &index.name);
            match result {
                Ok(mut verdicts) => {
                    self.refused.clear(&key);
                    let r = &mut verdicts.report;
                    r.guard =
                        self.admission.as_deref().and_then(|g| crate::guard::covering(g, &r.namespace, &r.release));
                    self.absorb(&verdicts, took).await
                }
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
                        // Input, not an outage: counted and said once per revision, never judged.
                        let revision = index.deployed().map_or(0, |r| r.revision);
                        if self.refused.record(&key, revision) {
                            self.metrics.rejected("record", 1);
                            self.log.warn(
                                "release record rejected: not compared",
                                &[("release", &key), ("error", &crate::errors::chain(&e))],
                            );
                        }
                        continue;
                    }
                    self.metrics.error("evaluate");
                    self.log
                        .error("cannot check the release", &[("release", &key), ("error", &crate::errors::chain(&e))]);
                }
            }
        }
    }

    /// A release's new verdicts: metrics, the object index, Events and notifications for new or
    /// resolved drift, and self-healing.
    async fn absorb(&mut self, evaluated: &Verdicts, took: Duration) {
        let report = &evaluated.report;
        let key: ReleaseKey = ReleaseKey::of(report);
        self.metrics.record(report, took.as_secs_f64());
        // Whether a guard covers it is known only while the guards can be read: otherwise no
        // series, rather than a `none` that would not be true.
        let mode = self.admission.as_ref().map(|_| report.guard.as_deref().unwrap_or("none"));
        self.metrics.guard(&report.namespace, &report.release, mode);
        if let Some(board) = &self.health.board {
            let now = k8s_openapi::jiff::Timestamp::now();
            let entry = crate::model::BoardRelease::of(report, format!("{now:.0}"));
            if let Ok(mut b) = board.lock() {
                b.insert((key.namespace.clone(), key.name.clone()), entry);
            }
        }
        let drifted = report.drifted() > 0;
        if self.state.absorb(&key, report.revision, drifted, &evaluated.placed) {
            let verdict = report.verdict().word();
            self.log.info(
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

    /// The admission guards, read again (one LIST). Not readable (no `list` right on
    /// ValidatingAdmissionPolicies, an API server without them): said once, then unknown.
    async fn read_guards(&mut self) {
        match crate::live::admission::guards(&self.session.cluster.client, crate::guard::LABEL).await {
            Ok(g) => {
                self.admission = Some(crate::guard::GuardInfo::all(&g));
                self.guards_unreadable = false;
            }
            Err(e) => {
                if !self.guards_unreadable {
                    self.log.info("the admission guards cannot be read: no guard is reported", &[("error", &e)]);
                }
                self.guards_unreadable = true;
                self.admission = None;
            }
        }
    }

    /// Forgets an uninstalled (or no longer selected) release: its series go away.
    pub(super) fn forget(&mut self, key: &ReleaseKey) {
        if self.state.forget(key) {
            self.log.info("release gone: its series are dropped", &[("release", &key)]);
        }
        self.metrics.forget(&key.namespace, &key.name);
        if let Some(Ok(mut b)) = self.health.board.as_ref().map(|b| b.lock()) {
            b.remove(&(key.namespace.clone(), key.name.clone()));
        }
        self.tracker.forget(key);
    }
}

/// How often the admission guards are read again between full checks.
const GUARDS_EVERY: Duration = Duration::from_secs(10);

/// Releases per batch of a full check, per concurrent evaluation.
const BATCH_PER_WORKER: usize = 4;

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

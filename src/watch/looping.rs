//! The event loop: touches debounced into batches, resyncs, shutdown; the watches the state
//! wants started and stopped.

use super::*;

impl Watcher<'_> {
    pub(super) async fn run(&mut self, shutdown: impl std::future::Future<Output = ()>) -> Result<()> {
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
        let (scope, selector) = (self.scope(), self.options.selection.selector.as_deref());
        let driver = self.settings.driver;
        self.storage = sources::storage(&self.streams, driver, scope.as_deref(), selector, started, self.sink.clone());
        if self.storage.is_none() {
            self.log.warn("the sql driver cannot be watched: new revisions are seen at each resync", &[]);
        }
        if self.storage.is_some() {
            self.metrics.watches.inc();
        }

        self.schedule.resync_from_now();
        loop {
            tokio::select! {
                _ = &mut shutdown => {
                    self.log.info("stopping", &[]);
                    self.stop();
                    return Ok(());
                }
                Some((touch, seen)) = self.touches.recv() => {
                    let keys = self.releases_of(&touch);
                    self.schedule.touched(keys, seen);
                    self.metrics.pending.set(self.schedule.pending() as i64);
                }
                due = self.schedule.next() => match due {
                    scheduler::Due::Batch => {
                        // Changes already queued join this batch (they would only wait for the next).
                        while let Ok((touch, _)) = self.touches.try_recv() {
                            let keys = self.releases_of(&touch);
                            self.schedule.join(keys);
                        }
                        let batch = self.schedule.take();
                        self.evaluate(batch).await;
                        self.metrics.pending.set(self.schedule.pending() as i64);
                    }
                    scheduler::Due::Resync => {
                        let at = k8s_openapi::jiff::Timestamp::now();
                        let checked = self.full_check().await;
                        self.reconcile_watches(at);
                        if let Err(e) = checked {
                            self.metrics.error("resync");
                            self.log.error("resync failed", &[("error", &crate::errors::chain(&e))]);
                        }
                    }
                },
            }
        }
    }

    /// Stops every watch.
    pub(super) fn stop(&mut self) {
        for (_, w) in std::mem::take(&mut self.watches) {
            w.abort();
        }
        if let Some(s) = self.storage.take() {
            s.abort();
        }
    }

    /// The releases a change concerns.
    pub(super) fn releases_of(&self, touch: &Touch) -> Vec<ReleaseKey> {
        self.state.releases_of(touch, &self.options.selection.releases)
    }

    /// Starts the watches the releases need and stops those no release needs: one per kind,
    /// namespaced when all its objects are in one namespace, else cluster-wide.
    pub(super) fn reconcile_watches(&mut self, since: k8s_openapi::jiff::Timestamp) {
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

//! The event loop: touches debounced into batches, resyncs, shutdown; the watches the state
//! wants started and stopped.

use super::Watcher;
use crate::watch::keys::{ReleaseKey, Touch};
use crate::watch::scheduler::Due;
use anyhow::Result;
use k8s_openapi::jiff::Timestamp;
use tokio::sync::mpsc::UnboundedReceiver;

impl Watcher<'_> {
    pub(crate) async fn run(&mut self, shutdown: impl std::future::Future<Output = ()>) -> Result<()> {
        futures::pin_mut!(shutdown);
        let started = Timestamp::now();
        self.announce().await;
        // SIGTERM is heard during the first full check too: it retries while the API server is
        // away, which can last.
        tokio::select! {
            checked = self.full_check() => checked?,
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
                due = self.schedule.next() => self.due(due).await,
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
                let batch = self.schedule.take();
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
        let said = (vec![namespace.to_string()], false, self.options.resync);
        let outputs = &self.outputs;
        crate::watch::heal::announce(session.client(), home, &watcher, said, &outputs.metrics, &outputs.log).await;
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
            Touch::Object(_) => Vec::new(),
        });
        assert_eq!(found, [ReleaseKey::new("apps", "a"), ReleaseKey::new("apps", "b"), ReleaseKey::new("apps", "a")]);
        assert!(queued(&mut rx, |_| vec![ReleaseKey::new("x", "y")]).is_empty(), "returns at once when none is queued");
    }
}

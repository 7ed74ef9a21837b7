//! The watches running for the watcher, owned: started when the releases need them, stopped
//! when none does, and every one stopped when the watcher stops or is dropped.

use super::Sink;
use crate::release::Driver;
use crate::watch::keys::WatchKey;
use k8s_openapi::jiff::Timestamp;
use kube::api::ApiResource;
use std::collections::BTreeMap;
use tokio::task::JoinHandle;

pub(crate) struct Watches {
    /// The client the watches use: no read timeout shorter than a watch lasts.
    streams: kube::Client,
    sink: Sink,
    kinds: BTreeMap<WatchKey, JoinHandle<()>>,
    storage: Option<JoinHandle<()>>,
}

impl Watches {
    pub(crate) fn new(streams: kube::Client, sink: Sink) -> Watches {
        Watches { streams, sink, kinds: BTreeMap::new(), storage: None }
    }

    /// Starts the watch of Helm's records; false for the SQL driver, which has none.
    pub(crate) fn watch_storage(
        &mut self,
        driver: Driver,
        scope: Option<&str>,
        selector: Option<&str>,
        since: Timestamp,
    ) -> bool {
        if let Some(old) = self.storage.take() {
            old.abort();
        }
        self.storage = super::storage(&self.streams, driver, scope, selector, since, self.sink.clone());
        self.storage.is_some()
    }

    /// Starts the watches wanted and stops the others; the number running after.
    pub(crate) fn reconcile(&mut self, wanted: BTreeMap<WatchKey, ApiResource>, since: Timestamp) -> usize {
        self.kinds.retain(|k, handle| {
            let keep = wanted.contains_key(k);
            if !keep {
                handle.abort();
            }
            keep
        });
        for (key, resource) in wanted {
            if !self.kinds.contains_key(&key) {
                let handle = super::kind(&self.streams, &resource, &key, since, self.sink.clone());
                self.kinds.insert(key, handle);
            }
        }
        self.running()
    }

    pub(crate) fn running(&self) -> usize {
        self.kinds.len() + usize::from(self.storage.is_some())
    }

    /// Stops every watch.
    pub(crate) fn stop(&mut self) {
        for (_, w) in std::mem::take(&mut self.kinds) {
            w.abort();
        }
        if let Some(s) = self.storage.take() {
            s.abort();
        }
    }
}

impl Drop for Watches {
    fn drop(&mut self) {
        self.stop();
    }
}

//! What the watcher says: Events on the drifted objects, notifications, metrics, JSON log
//! lines and the page at `/`, each written here and nowhere else.

mod announce;
mod chronicle;
pub(crate) mod drift_events;
pub(crate) mod log;
pub(crate) mod metrics;
pub(crate) mod notify;
pub(crate) mod proxies;
pub(crate) mod server;

use crate::model::DriftReport;
use crate::watch::keys::ReleaseKey;
use crate::watch::lease::LeaseCheck;
use log::Log;
use metrics::Metrics;
use proxies::Proxies;
use server::Health;
use std::sync::Arc;

/// The outputs of one watcher: its metrics and health, its log, its notifier, and the client
/// its Events are written with (only while it holds the Lease, with leader election).
pub(crate) struct Outputs {
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) health: Arc<Health>,
    pub(crate) log: Log,
    notifier: notify::Notifier,
    events: kube::Client,
    lease: Option<LeaseCheck>,
    /// A fleet member's CAAPH releases.
    pub(crate) proxies: Option<Arc<Proxies>>,
    /// `--audit-publish-names`: who made a drift is named in Events and notifications too.
    pub(crate) publish_names: bool,
}

impl Outputs {
    pub(crate) fn new(
        metrics: Arc<Metrics>,
        health: Arc<Health>,
        log: Log,
        notifier: notify::Notifier,
        events: kube::Client,
        lease: Option<LeaseCheck>,
        proxies: Option<Arc<Proxies>>,
    ) -> Outputs {
        Outputs { metrics, health, log, notifier, events, lease, proxies, publish_names: false }
    }

    /// Whether this replica may act now: always without leader election, else only while it
    /// holds the Lease (read again: a leader cut off from the API server must not write).
    pub(crate) async fn leading(&self, what: &str) -> bool {
        let Some(lease) = &self.lease else { return true };
        if lease.holds().await {
            return true;
        }
        self.metrics.error("not-leading");
        self.log.warn("not holding the Lease: not acting", &[("action", &what)]);
        false
    }

    /// Names asked for that match no release: a warning when that changes, and in `/readyz` (a
    /// typo in a deployment's arguments would otherwise watch nothing and look healthy).
    pub(crate) fn say_missing(&self, missing: Vec<String>, scope: Option<&str>) {
        let Ok(mut known) = self.health.missing.lock() else { return };
        if *known == missing {
            return;
        }
        if !missing.is_empty() {
            let scope = scope.unwrap_or("every namespace");
            self.log.warn(
                "no release by these names: nothing is watched for them",
                &[("releases", &missing.join(" ")), ("namespace", &scope)],
            );
        }
        *known = missing;
    }

    /// A release's verdicts on the page at `/` (with `--ui`).
    pub(crate) fn show(&self, report: &DriftReport) {
        let Some(board) = &self.health.board else { return };
        let now = k8s_openapi::jiff::Timestamp::now();
        let entry = crate::model::BoardRelease::of(report, format!("{now:.0}"));
        if let Ok(mut b) = board.lock() {
            b.insert((report.namespace.clone(), report.release.clone()), entry);
        }
    }

    /// A release gone: its series and its place on the page.
    pub(crate) fn forget(&self, key: &ReleaseKey) {
        self.metrics.forget(&key.namespace, &key.name);
        self.chronicle_forget(key);
        if let Some(Ok(mut b)) = self.health.board.as_ref().map(|b| b.lock()) {
            b.remove(&(key.namespace.clone(), key.name.clone()));
        }
    }
}

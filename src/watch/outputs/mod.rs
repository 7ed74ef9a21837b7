//! What the watcher says: Events on the drifted objects, notifications, metrics, JSON log
//! lines and the page at `/`, each written here and nowhere else. This file also keeps the
//! timeline of each drift as verdicts and transitions come: a drift seen opens (or learns its
//! makers), a resolution ends it with what ended it and who (asked of the audit through `ender`:
//! the last write to the object since the drift was reported), and the metrics of how long
//! drifts live follow.

mod announce;
pub(crate) mod drift_events;
pub(crate) mod log;
pub(crate) mod metrics;
pub(crate) mod notify;
pub(crate) mod server;

use crate::model::{Actor, DriftKind, DriftReport, ObjectId};
use crate::watch::caaph::Proxies;
use crate::watch::keys::ReleaseKey;
use crate::watch::lease::LeaseCheck;
use crate::watch::store::timeline::{End, How, SETTLE_SECONDS};
use crate::watch::store::tracker::Transition;
use jiff::Timestamp;
use log::Log;
use metrics::Metrics;
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
    /// The watcher's own namespace in the cluster it writes Events to, as the operator named
    /// it: what only the operator should read (a conflicting claim) is said there.
    pub(crate) home: Option<String>,
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
        Outputs { metrics, health, log, notifier, events, lease, proxies, publish_names: false, home: None }
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

    /// A conflicting claim of `key`, said once per revision in the watcher's own namespace, on
    /// its Pod: where its operator looks, and no tenant (a conflict's existence tells whether the
    /// claimed namespace holds a record of that name). Nothing without a named home.
    pub(crate) async fn conflict(&self, key: &ReleaseKey, revision: u32, message: &str) {
        let Some(home) = &self.home else { return };
        if !self.leading("conflict event").await {
            return;
        }
        let object = ObjectId::new("v1", "Pod", Some(home), &pod_name());
        let tag = format!("{key}@{revision}");
        let signature = crate::digest::sha256_hex(&tag, 32);
        let said = format!("release {key}, revision {revision}: {message}");
        if let Err(e) =
            drift_events::record(&self.events, (&object, None), key, drift_events::CONFLICT, &signature, &said).await
        {
            self.metrics.error("event");
            self.log.warn("cannot record the conflict Event", &[("release", key), ("error", &e)]);
        }
    }

    /// A release's verdicts on the page at `/` (with `--ui`).
    pub(crate) fn show(&self, report: &DriftReport) {
        let Some(board) = &self.health.board else { return };
        let now = k8s_openapi::jiff::Timestamp::now();
        let entry = crate::model::BoardRelease::of(&report.published(), format!("{now:.0}"));
        if let Ok(mut b) = board.lock() {
            b.insert((report.stored_in().to_string(), report.release.clone()), entry);
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

/// This replica's Pod (`POD_NAME`, else the host name).
pub(crate) fn pod_name() -> String {
    std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_string()))
        .unwrap_or_else(|| "helm-drift".into())
}

/// Who last wrote an object between two moments, as far as the audit kept.
pub(crate) type Ender<'a> = &'a dyn Fn(&ObjectId, (Timestamp, Timestamp)) -> Option<Actor>;

/// The watcher's own name as the ender of its repairs.
const WATCHER: &str = "helm-drift watch";

impl Outputs {
    /// A release's verdicts and transitions into the timeline; `healed`: the transitions follow
    /// the watcher's own repair.
    /// `ender`: who last wrote an object, from the audit (none without one).
    pub(crate) fn chronicle(
        &self,
        report: &DriftReport,
        transitions: &[Transition],
        healed: bool,
        ender: Option<Ender<'_>>,
    ) {
        let now = Timestamp::now();
        let key = ReleaseKey::of(report);
        let cluster = self.member();
        // The page and /drifts.json show it: nothing of what a record stored apart only claims.
        let published = report.published();
        let report = published.as_ref();
        let Ok(mut timeline) = self.health.timeline.lock() else { return };
        for o in report.objects.iter().filter(|o| o.is_drift()) {
            if timeline.seen(&cluster, &key, report.revision, o, now) {
                let by = o.makers().join(", ");
                self.log.info("drift attributed", &[("release", &key), ("object", &o.id), ("made_by", &by)]);
            }
        }
        for t in transitions {
            let Transition::Resolved { object, .. } = t else { continue };
            let Some((revision, detected)) = timeline.revision(&cluster, &key, object) else { continue };
            let after = report.objects.iter().find(|o| o.id == *object);
            let how = match after {
                _ if healed => How::Healed,
                _ if report.revision != revision => How::Revision(report.revision),
                None => How::Left,
                Some(o) if o.drift_kind() == DriftKind::Accepted => How::Accepted,
                Some(_) => How::Undone,
            };
            let (how, by) = settle(how, ender.and_then(|e| e(object, (detected, now))));
            timeline.end(&cluster, &key, object, End { at: now, how, by });
        }
        // A lifetime is counted once what ended it is settled: at once without the audit, else
        // when the audit told who ended it (its batch comes after the watcher saw the object
        // back in sync) or it could not in time.
        for life in timeline.uncounted(&cluster, &key) {
            let Some(end) = life.ended.as_mut() else { continue };
            if let (None, Some(ender)) = (&end.by, ender) {
                if let Some(actor) = ender(&life.object, (life.detected, end.at)) {
                    (end.how, end.by) = settle(end.how, Some(actor));
                } else if now.as_second() - end.at.as_second() <= SETTLE_SECONDS {
                    continue;
                }
            }
            let lived = end.at.as_millisecond().saturating_sub(life.appeared.as_millisecond());
            self.metrics.drift_ended(end.how.word(), lived as f64 / 1000.0);
            life.counted = true;
        }
        self.metrics.oldest_drift(&key.namespace, &key.name, timeline.oldest(&cluster, &key));
    }

    /// Something happened to an open drift (a repair refused or waiting, a pause).
    pub(crate) fn chronicle_step(&self, report: &DriftReport, id: &ObjectId, what: String) {
        let cluster = self.member();
        if let Ok(mut t) = self.health.timeline.lock() {
            t.step(&cluster, &ReleaseKey::of(report), id, what, Timestamp::now());
        }
    }

    /// The fleet member this watcher is (empty for a watcher of one cluster): the timeline's key.
    fn member(&self) -> String {
        self.log.cluster.as_deref().unwrap_or_default().to_string()
    }

    /// A release gone: its open drifts with it.
    pub(crate) fn chronicle_forget(&self, key: &ReleaseKey) {
        let cluster = self.member();
        if let Ok(mut t) = self.health.timeline.lock() {
            t.forget(&cluster, key);
        }
        self.metrics.oldest_drift(&key.namespace, &key.name, None);
    }
}

/// What ended a drift and who, from the last write the audit kept since it was reported: a
/// write by `helm drift repair` (its client) is a repair.
fn settle(how: How, last: Option<Actor>) -> (How, Option<String>) {
    match (how, last) {
        (How::Healed, _) => (How::Healed, Some(WATCHER.to_string())),
        (How::Undone, Some(a)) if a.user_agent.starts_with("helm-drift") => (How::Repaired, Some(a.named())),
        (how, last) => (how, last.map(|a| a.named())),
    }
}

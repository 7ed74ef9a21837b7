//! The series families a process exports, registered once, shared by the watchers it runs.

use super::labels::{
    ClusterLabel, ENDED, GuardLabels, INPUT, KEPT, ObjectLabels, ProxyLabels, REASON, RESULT, ReleaseLabels,
    VerbLabels, Word,
};
use crate::api::requests;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

type Per<L> = Family<(ClusterLabel, L), Gauge>;
type Counted<const K: u8> = Family<(ClusterLabel, Word<K>), Counter>;
type Level = Family<ClusterLabel, Gauge>;
/// A release's series holding a moment (Unix time, fractional).
pub(super) type Moments = Family<(ClusterLabel, ReleaseLabels), Gauge<f64, AtomicU64>>;

/// Every series family the process exports, shared by the watchers it runs.
pub(super) struct Families {
    pub(super) registry: Registry,
    pub(super) drifted: Per<ReleaseLabels>,
    pub(super) unknown: Per<ReleaseLabels>,
    pub(super) revision: Per<ReleaseLabels>,
    pub(super) objects: Per<ObjectLabels>,
    pub(super) last_check: Family<(ClusterLabel, ReleaseLabels), Gauge<f64, AtomicU64>>,
    pub(super) guarded: Per<GuardLabels>,
    pub(super) duration: Histogram,
    pub(super) api_requests: Family<VerbLabels, Counter>,
    /// Request counts already added to `api_requests`.
    pub(super) api_seen: Mutex<[u64; requests::VERBS.len()]>,
    pub(super) errors: Counted<REASON>,
    pub(super) repairs: Counted<RESULT>,
    pub(super) notifications: Counted<RESULT>,
    pub(super) events: Counted<REASON>,
    pub(super) rejected: Counted<INPUT>,
    pub(super) ready: Level,
    pub(super) selected: Level,
    pub(super) leader: Level,
    pub(super) watches: Level,
    pub(super) pending: Level,
    pub(super) cluster_up: Family<ClusterLabel, Gauge>,
    pub(super) proxied: Per<ProxyLabels>,
    pub(super) window: Moments,
    pub(super) paused: Moments,
    /// When the oldest open drift of a release appeared.
    pub(super) oldest_drift: Moments,
    /// How long drifts lived, by what ended them.
    pub(super) drift_lived: Family<(ClusterLabel, Word<ENDED>), Histogram, fn() -> Histogram>,
    /// The audit events kept, and their bytes (every cluster's).
    pub(super) audit_kept: Family<Word<KEPT>, Gauge>,
    /// The proxies each cluster has series for.
    pub(super) proxies: Mutex<BTreeMap<ClusterLabel, BTreeSet<ProxyLabels>>>,
    /// The releases each cluster has series for (to drop or mark them all at once).
    pub(super) known: Mutex<BTreeMap<ClusterLabel, BTreeSet<(String, String)>>>,
}

impl Families {
    /// The families, not yet registered ([`super::table::families`] registers them).
    pub(super) fn new() -> Families {
        Families {
            drifted: Family::default(),
            unknown: Family::default(),
            revision: Family::default(),
            objects: Family::default(),
            last_check: Family::default(),
            guarded: Family::default(),
            duration: Histogram::new(exponential_buckets(0.01, 2.0, 12)),
            api_requests: Family::default(),
            api_seen: Mutex::new([0; requests::VERBS.len()]),
            errors: Family::default(),
            repairs: Family::default(),
            notifications: Family::default(),
            events: Family::default(),
            rejected: Family::default(),
            ready: Family::default(),
            selected: Family::default(),
            leader: Family::default(),
            watches: Family::default(),
            pending: Family::default(),
            cluster_up: Family::default(),
            proxied: Family::default(),
            window: Family::default(),
            paused: Family::default(),
            oldest_drift: Family::default(),
            drift_lived: Family::new_with_constructor(lived),
            audit_kept: Family::default(),
            proxies: Mutex::default(),
            known: Mutex::default(),
            registry: Registry::with_prefix("helm_drift"),
        }
    }
}

/// Minutes to weeks: how long drifts live.
fn lived() -> Histogram {
    Histogram::new([10.0, 60.0, 300.0, 900.0, 3600.0, 4.0 * 3600.0, 86_400.0, 7.0 * 86_400.0])
}

/// What ends a drift (`helm_drift_drift_lifetime_seconds{ended_by}`).
pub(super) const ENDINGS: [&str; 6] = ["watcher", "repair", "revision", "hand", "accepted", "left"];

/// What a self-healing repair can come to.
pub(super) const REPAIR_RESULTS: [&str; 8] =
    ["applied", "refused", "failed", "rate-limited", "abandoned", "superseded", "waiting", "paused"];
/// Why the watcher counts an error.
pub(super) const ERROR_REASONS: [&str; 12] = [
    "watch",
    "storage",
    "evaluate",
    "resync",
    "baseline",
    "signature-key",
    "not-leading",
    "forbidden",
    "inventory",
    "leases",
    "announce",
    "member",
];
pub(super) const NOTIFICATION_RESULTS: [&str; 3] = ["sent", "failed", "dropped"];
pub(super) const EVENT_REASONS: [&str; 5] =
    ["DriftDetected", "DriftResolved", "DriftRepaired", "DriftRepairRefused", "DriftRepairAbandoned"];
pub(super) const INPUTS: [&str; 4] = ["event", "record", "inventory", "audit"];

/// The values of `release_guard`'s `mode` (a guard's mode, or none).
pub(super) const GUARD_MODES: [&str; 5] = ["warn", "audit", "deny", "unknown", "none"];

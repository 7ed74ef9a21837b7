//! The watcher's Prometheus metrics (OpenMetrics text on `/metrics`). Label sets stay bounded:
//! release and namespace names, verdict words, verbs, reasons and results; never paths or values.

use crate::api::requests;
use crate::model::{DriftKind, DriftReport};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReleaseLabels {
    pub(crate) namespace: String,
    pub(crate) release: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ObjectLabels {
    pub(crate) namespace: String,
    pub(crate) release: String,
    pub(crate) verdict: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct GuardLabels {
    pub(crate) namespace: String,
    pub(crate) release: String,
    pub(crate) mode: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct VerbLabels {
    pub(crate) verb: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReasonLabels {
    pub(crate) reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct InputLabels {
    pub(crate) input: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ResultLabels {
    pub(crate) result: String,
}

/// Every metric the watcher exports.
pub(crate) struct Metrics {
    registry: Registry,
    drifted: Family<ReleaseLabels, Gauge>,
    revision: Family<ReleaseLabels, Gauge>,
    objects: Family<ObjectLabels, Gauge>,
    last_check: Family<ReleaseLabels, Gauge<f64, AtomicU64>>,
    guarded: Family<GuardLabels, Gauge>,
    duration: Histogram,
    api_requests: Family<VerbLabels, Counter>,
    /// Request counts already added to `api_requests`.
    api_seen: Mutex<[u64; requests::VERBS.len()]>,
    errors: Family<ReasonLabels, Counter>,
    repairs: Family<ResultLabels, Counter>,
    notifications: Family<ResultLabels, Counter>,
    events: Family<ReasonLabels, Counter>,
    rejected: Family<InputLabels, Counter>,
    pub(crate) ready: Gauge,
    /// Releases the selection matched at the last full check.
    pub(crate) selected: Gauge,
    pub(crate) leader: Gauge,
    pub(crate) watches: Gauge,
    /// Releases changed and waiting for their debounce (a set: changes coalesce).
    pub(crate) pending: Gauge,
}

/// What a self-healing repair can come to.
const REPAIR_RESULTS: [&str; 6] = ["applied", "refused", "failed", "rate-limited", "abandoned", "superseded"];
/// Why the watcher counts an error.
const ERROR_REASONS: [&str; 8] =
    ["watch", "storage", "evaluate", "resync", "baseline", "signature-key", "not-leading", "forbidden"];

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("helm_drift");
        let m = Metrics {
            drifted: Family::default(),
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
            ready: Gauge::default(),
            selected: Gauge::default(),
            leader: Gauge::default(),
            watches: Gauge::default(),
            pending: Gauge::default(),
            registry: Registry::default(),
        };
        m.register(&mut registry);
        m.seed();
        Metrics { registry, ..m }
    }

    /// Every series family, named and described.
    fn register(&self, registry: &mut Registry) {
        let m = self;
        registry.register(
            "release_drifted",
            "Whether the release has drifted from its deployed revision (1) or not (0)",
            m.drifted.clone(),
        );
        registry.register(
            "release_revision",
            "The deployed revision the release was compared with",
            m.revision.clone(),
        );
        registry.register("objects", "Objects of the release by verdict", m.objects.clone());
        registry.register(
            "last_check_timestamp_seconds",
            "When the release was last compared with the cluster (Unix time)",
            m.last_check.clone(),
        );
        registry.register(
            "release_guard",
            "The admission guard covering the release (helm drift guard): 1 for its mode (warn, audit, deny, unknown), or for none",
            m.guarded.clone(),
        );
        registry.register("check_duration_seconds", "How long one release's comparison took", m.duration.clone());
        registry.register(
            "api_requests",
            "Requests sent to the Kubernetes API server, by verb",
            m.api_requests.clone(),
        );
        registry.register("errors", "Errors, by reason", m.errors.clone());
        registry.register("repairs", "Self-healing repairs, by result", m.repairs.clone());
        registry.register(
            "notifications",
            "Notifications sent to --notify receivers, by result",
            m.notifications.clone(),
        );
        registry.register("events", "Kubernetes Events recorded, by reason", m.events.clone());
        registry.register(
            "rejected_inputs",
            "Untrusted input read from the cluster and not acted on (event, record, repair), by kind",
            m.rejected.clone(),
        );
        registry.register("ready", "Whether the first full check is done (1)", m.ready.clone());
        registry.register(
            "pending_releases",
            "Releases changed and waiting for the debounce before their comparison (changes coalesce)",
            m.pending.clone(),
        );
        registry.register("leader", "Whether this replica acts (1) or stands by (0)", m.leader.clone());
        registry.register(
            "selected_releases",
            "Releases the selection matched at the last full check (0: nothing is watched)",
            m.selected.clone(),
        );
        registry.register("watches", "Watches open on the API server", m.watches.clone());
    }

    /// Every known label value starts at 0, so that a dashboard's increase() sees the first
    /// repair, notification, Event or error, and its panels have series from the start.
    fn seed(&self) {
        let m = self;
        for result in REPAIR_RESULTS {
            let _ = m.repairs.get_or_create(&ResultLabels { result: result.into() });
        }
        for result in ["sent", "failed", "dropped"] {
            let _ = m.notifications.get_or_create(&ResultLabels { result: result.into() });
        }
        for reason in ERROR_REASONS {
            let _ = m.errors.get_or_create(&ReasonLabels { reason: reason.into() });
        }
        for reason in ["DriftDetected", "DriftResolved", "DriftRepaired", "DriftRepairRefused", "DriftRepairAbandoned"]
        {
            let _ = m.events.get_or_create(&ReasonLabels { reason: reason.into() });
        }
        for input in ["event", "record"] {
            let _ = m.rejected.get_or_create(&InputLabels { input: input.into() });
        }
    }

    /// A release's verdicts, after each comparison.
    pub(crate) fn record(&self, report: &DriftReport, seconds: f64) {
        let labels = release_labels(&report.namespace, &report.release);
        self.drifted.get_or_create(&labels).set(i64::from(report.drifted() > 0));
        self.revision.get_or_create(&labels).set(i64::from(report.revision));
        for (word, kind) in DriftKind::all() {
            let n = report.objects.iter().filter(|o| o.drift_kind() == kind).count();
            self.objects.get_or_create(&object_labels(&labels, word)).set(n as i64);
        }
        let now = k8s_openapi::jiff::Timestamp::now().as_millisecond() as f64 / 1000.0;
        self.last_check.get_or_create(&labels).set(now);
        self.duration.observe(seconds);
    }

    /// The admission guard covering a release: 1 for its mode (`none` when no guard covers it);
    /// no series when that is not known (`None`: the guards cannot be read).
    pub(crate) fn guard(&self, namespace: &str, release: &str, mode: Option<&str>) {
        let labels = release_labels(namespace, release);
        for word in GUARD_MODES {
            let l = guard_labels(&labels, word);
            if Some(word) == mode {
                self.guarded.get_or_create(&l).set(1);
            } else {
                self.guarded.remove(&l);
            }
        }
    }

    /// Drops every series of a release (uninstalled, or no longer selected).
    pub(crate) fn forget(&self, namespace: &str, release: &str) {
        let labels = release_labels(namespace, release);
        self.drifted.remove(&labels);
        self.revision.remove(&labels);
        self.last_check.remove(&labels);
        for (word, _) in DriftKind::all() {
            self.objects.remove(&object_labels(&labels, word));
        }
        self.guard(namespace, release, None);
    }

    /// Drops every release series (a replica that lost the lease).
    pub(crate) fn forget_all(&self) {
        self.drifted.clear();
        self.revision.clear();
        self.last_check.clear();
        self.objects.clear();
        self.guarded.clear();
    }

    pub(crate) fn error(&self, reason: &str) {
        self.errors.get_or_create(&ReasonLabels { reason: reason.into() }).inc();
    }

    pub(crate) fn repair(&self, result: &str) {
        self.repairs.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    pub(crate) fn notification(&self, result: &str) {
        self.notifications.get_or_create(&ResultLabels { result: result.into() }).inc();
    }

    pub(crate) fn event(&self, reason: &str) {
        self.events.get_or_create(&ReasonLabels { reason: reason.into() }).inc();
    }

    /// The exposition text (OpenMetrics).
    pub(crate) fn rejected(&self, input: &str, n: u64) {
        self.rejected.get_or_create(&InputLabels { input: input.into() }).inc_by(n);
    }

    pub(crate) fn encode(&self) -> String {
        let counts = requests::counts();
        {
            let mut seen = self.api_seen.lock().expect("metrics lock");
            for (i, verb) in requests::VERBS.iter().enumerate() {
                let new = counts[i].saturating_sub(seen[i]);
                self.api_requests.get_or_create(&VerbLabels { verb: (*verb).into() }).inc_by(new);
                seen[i] = counts[i];
            }
        }
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry).expect("writing to a String");
        out
    }
}

fn release_labels(namespace: &str, release: &str) -> ReleaseLabels {
    ReleaseLabels { namespace: namespace.into(), release: release.into() }
}

/// The values of `release_guard`'s `mode` (a guard's mode, or none).
const GUARD_MODES: [&str; 5] = ["warn", "audit", "deny", "unknown", "none"];

fn guard_labels(r: &ReleaseLabels, mode: &str) -> GuardLabels {
    GuardLabels { namespace: r.namespace.clone(), release: r.release.clone(), mode: mode.into() }
}

fn object_labels(r: &ReleaseLabels, verdict: &str) -> ObjectLabels {
    ObjectLabels { namespace: r.namespace.clone(), release: r.release.clone(), verdict: verdict.into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ObjectDrift, ObjectId, Verdict};

    fn report(verdict: Verdict) -> DriftReport {
        DriftReport::sample(
            "apps",
            "web",
            vec![ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some("apps"), "c"), None, verdict)],
        )
    }

    #[test]
    fn drifted_gauge_objects_by_verdict_and_forget() {
        let m = Metrics::new();
        m.record(&report(Verdict::Missing), 0.2);
        let text = m.encode();
        assert!(text.contains(r#"helm_drift_release_drifted{namespace="apps",release="web"} 1"#), "{text}");
        assert!(text.contains(r#"helm_drift_objects{namespace="apps",release="web",verdict="missing"} 1"#), "{text}");
        assert!(text.contains("helm_drift_check_duration_seconds_count 1"), "{text}");
        m.record(&report(Verdict::InSync), 0.2);
        assert!(m.encode().contains(r#"helm_drift_release_drifted{namespace="apps",release="web"} 0"#));
        m.guard("apps", "web", Some("none"));
        m.guard("apps", "web", Some("deny"));
        let text = m.encode();
        assert!(text.contains(r#"helm_drift_release_guard{namespace="apps",release="web",mode="deny"} 1"#), "{text}");
        assert!(!text.contains(r#"mode="none""#), "one mode at a time: {text}");
        m.guard("apps", "web", None);
        assert!(!m.encode().contains("helm_drift_release_guard{"), "not known: no series");
        m.forget("apps", "web");
        assert!(!m.encode().contains(r#"release="web""#));
    }

    #[test]
    fn fields_owned_elsewhere_are_their_own_series_not_drift() {
        use crate::model::{FieldPath, Ownership};
        let m = Metrics::new();
        let mut r = report(Verdict::InSync);
        let path = FieldPath::from_pointer("/data/greeting");
        r.objects[0].disowned.push(Ownership { path, manager: "kubectl-patch".into(), shared: false });
        m.record(&r, 0.1);
        let text = m.encode();
        assert!(text.contains(r#"helm_drift_release_drifted{namespace="apps",release="web"} 0"#), "{text}");
        assert!(
            text.contains(r#"helm_drift_objects{namespace="apps",release="web",verdict="owned-elsewhere"} 1"#),
            "{text}"
        );
    }
}

#[cfg(test)]
mod dashboard {
    use super::*;
    use crate::model::{ObjectDrift, ObjectId, Verdict};

    /// Every metric the chart's Grafana dashboard queries is one the watcher exports (a metric
    /// renamed here fails this, not a person's dashboard).
    #[test]
    fn the_dashboard_queries_only_exported_metrics() {
        let m = Metrics::new();
        let o = ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some("apps"), "c"), None, Verdict::Missing);
        m.record(&DriftReport::sample("apps", "web", vec![o]), 0.1);
        m.guard("apps", "web", Some("none"));
        let exported: Vec<String> = m
            .encode()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split(['{', ' ']).next().unwrap().to_string())
            .collect();
        let json = include_str!("../../../charts/helm-drift/dashboards/helm-drift.json");
        let used = regex::Regex::new(r"helm_drift_[a-z_]+").unwrap();
        let names: std::collections::BTreeSet<&str> = used.find_iter(json).map(|m| m.as_str()).collect();
        assert!(names.len() >= 12, "{names:?}");
        for name in names {
            assert!(
                exported.iter().any(|e| e == name),
                "the dashboard queries {name}, which is not exported: {exported:?}"
            );
        }
    }
}

//! The watcher's Prometheus metrics (OpenMetrics text on `/metrics`). One set of families serves
//! a process: a watcher of one cluster writes its series without a `cluster` label, each member
//! of a fleet with its own (`Metrics::member`), so one scrape sees the fleet.

mod families;
mod labels;
mod lives;
mod table;

use crate::api::requests;
use crate::model::{DriftKind, DriftReport};
use families::{
    ERROR_REASONS, EVENT_REASONS, Families, GUARD_MODES, INPUTS, Moments, NOTIFICATION_RESULTS, REPAIR_RESULTS,
};
use labels::{ClusterLabel, ProxyLabels, VerbLabels, Word, guard_labels, object_labels, release_labels};
use std::sync::Arc;

/// The metrics one watcher writes: the process's families, under its cluster's label.
#[derive(Clone)]
pub(crate) struct Metrics {
    families: Arc<Families>,
    cluster: ClusterLabel,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// The metrics of a watcher of one cluster: no `cluster` label.
    pub(crate) fn new() -> Metrics {
        let m = Metrics::fleet();
        m.seed();
        m
    }

    /// The families of a fleet, with no member yet (see [`Metrics::member`]).
    pub(crate) fn fleet() -> Metrics {
        let f = table::families();
        Metrics { families: Arc::new(f), cluster: ClusterLabel::default() }
    }

    /// The metrics of one member of a fleet: the same families, its series labelled with its
    /// name, seeded at 0.
    pub(crate) fn member(&self, cluster: &str) -> Metrics {
        let m = Metrics { families: self.families.clone(), cluster: ClusterLabel(Some(cluster.into())) };
        m.seed();
        m
    }

    /// Every known label value starts at 0, so that a dashboard's increase() sees the first
    /// repair, notification, Event or error, and its panels have series from the start.
    fn seed(&self) {
        let f = &*self.families;
        let c = || self.cluster.clone();
        for result in REPAIR_RESULTS {
            let _ = f.repairs.get_or_create(&(c(), Word(result.into())));
        }
        for result in NOTIFICATION_RESULTS {
            let _ = f.notifications.get_or_create(&(c(), Word(result.into())));
        }
        for reason in ERROR_REASONS {
            let _ = f.errors.get_or_create(&(c(), Word(reason.into())));
        }
        for reason in EVENT_REASONS {
            let _ = f.events.get_or_create(&(c(), Word(reason.into())));
        }
        for input in INPUTS {
            let _ = f.rejected.get_or_create(&(c(), Word(input.into())));
        }
        for level in [&f.ready, &f.selected, &f.leader, &f.watches, &f.pending] {
            let _ = level.get_or_create(&c());
        }
        self.seed_lives();
    }

    fn key<L>(&self, labels: L) -> (ClusterLabel, L) {
        (self.cluster.clone(), labels)
    }

    /// A release's verdicts, after each comparison.
    pub(crate) fn record(&self, report: &DriftReport, seconds: f64) {
        let f = &*self.families;
        // Keyed where the record is stored, as the watcher keys the release (and forgets it).
        let namespace = report.stored_in();
        let labels = release_labels(namespace, &report.release);
        if let Ok(mut known) = f.known.lock() {
            known.entry(self.cluster.clone()).or_default().insert((namespace.to_string(), report.release.clone()));
        }
        f.unknown.remove(&self.key(labels.clone()));
        f.drifted.get_or_create(&self.key(labels.clone())).set(i64::from(report.drifted() > 0));
        f.revision.get_or_create(&self.key(labels.clone())).set(i64::from(report.revision));
        for (word, kind) in DriftKind::all() {
            let n = report.objects.iter().filter(|o| o.drift_kind() == kind).count();
            f.objects.get_or_create(&self.key(object_labels(&labels, word))).set(n as i64);
        }
        let now = k8s_openapi::jiff::Timestamp::now().as_millisecond() as f64 / 1000.0;
        f.last_check.get_or_create(&self.key(labels)).set(now);
        f.duration.observe(seconds);
    }

    /// The admission guard covering a release: 1 for its mode (`none` when no guard covers it);
    /// no series when that is not known (`None`: the guards cannot be read).
    pub(crate) fn guard(&self, namespace: &str, release: &str, mode: Option<&str>) {
        let labels = release_labels(namespace, release);
        for word in GUARD_MODES {
            let l = self.key(guard_labels(&labels, word));
            if Some(word) == mode {
                self.families.guarded.get_or_create(&l).set(1);
            } else {
                self.families.guarded.remove(&l);
            }
        }
    }

    /// Drops every series of a release (uninstalled, or no longer selected).
    pub(crate) fn forget(&self, namespace: &str, release: &str) {
        let f = &*self.families;
        let labels = release_labels(namespace, release);
        f.drifted.remove(&self.key(labels.clone()));
        f.unknown.remove(&self.key(labels.clone()));
        f.revision.remove(&self.key(labels.clone()));
        f.last_check.remove(&self.key(labels.clone()));
        f.window.remove(&self.key(labels.clone()));
        f.paused.remove(&self.key(labels.clone()));
        f.oldest_drift.remove(&self.key(labels.clone()));
        for (word, _) in DriftKind::all() {
            f.objects.remove(&self.key(object_labels(&labels, word)));
        }
        self.guard(namespace, release, None);
        if let Ok(mut known) = f.known.lock()
            && let Some(set) = known.get_mut(&self.cluster)
        {
            set.remove(&(namespace.to_string(), release.to_string()));
        }
    }

    /// The releases this watcher has series for.
    fn known(&self) -> Vec<(String, String)> {
        let known = self.families.known.lock();
        known.map(|k| k.get(&self.cluster).map(|s| s.iter().cloned().collect()).unwrap_or_default()).unwrap_or_default()
    }

    /// Drops every release series of this watcher (a replica that lost the lease).
    pub(crate) fn forget_all(&self) {
        for (namespace, release) in self.known() {
            self.forget(&namespace, &release);
        }
    }

    /// Whether this fleet member's API server answers. While it does not, its releases'
    /// verdicts are not known: `release_unknown` 1 and no `release_drifted` (never "in sync").
    pub(crate) fn cluster_up(&self, up: bool) {
        let f = &*self.families;
        f.cluster_up.get_or_create(&self.cluster).set(i64::from(up));
        if up {
            return;
        }
        for (namespace, release) in self.known() {
            let labels = release_labels(&namespace, &release);
            f.drifted.remove(&self.key(labels.clone()));
            f.unknown.get_or_create(&self.key(labels)).set(1);
        }
    }

    /// A drifted release waiting for its repair window: when it opens (`None`: not waiting).
    pub(crate) fn window(&self, namespace: &str, release: &str, opens: Option<jiff::Timestamp>) {
        self.moment(&self.families.window, namespace, release, opens);
    }

    /// A drifted release held by a pause: when the first of its pauses ends (`None`: none).
    pub(crate) fn paused(&self, namespace: &str, release: &str, until: Option<jiff::Timestamp>) {
        self.moment(&self.families.paused, namespace, release, until);
    }

    /// A release's series holding a moment (Unix time), or none.
    fn moment(&self, family: &Moments, namespace: &str, release: &str, at: Option<jiff::Timestamp>) {
        let key = self.key(release_labels(namespace, release));
        match at {
            Some(at) => {
                family.get_or_create(&key).set(at.as_millisecond() as f64 / 1000.0);
            }
            None => {
                family.remove(&key);
            }
        }
    }

    /// A release CAAPH installed on this member: 1, with its HelmReleaseProxy's name (and its
    /// HelmChartProxy's), to join with the release's other series.
    pub(crate) fn proxy(&self, namespace: &str, release: &str, proxy: &str, chart_proxy: &str) {
        let labels = ProxyLabels {
            namespace: namespace.into(),
            release: release.into(),
            helmreleaseproxy: proxy.into(),
            helmchartproxy: chart_proxy.into(),
        };
        self.families.proxied.get_or_create(&self.key(labels.clone())).set(1);
        if let Ok(mut p) = self.families.proxies.lock() {
            p.entry(self.cluster.clone()).or_default().insert(labels);
        }
    }

    /// A member gone from the fleet: every series of it.
    pub(crate) fn forget_cluster(&self) {
        let f = &*self.families;
        self.forget_all();
        if let Some(gone) = f.proxies.lock().ok().and_then(|mut p| p.remove(&self.cluster)) {
            for labels in gone {
                f.proxied.remove(&self.key(labels));
            }
        }
        f.cluster_up.remove(&self.cluster);
        for level in [&f.ready, &f.selected, &f.leader, &f.watches, &f.pending] {
            level.remove(&self.cluster);
        }
        let c = || self.cluster.clone();
        for result in REPAIR_RESULTS {
            f.repairs.remove(&(c(), Word(result.into())));
        }
        for result in NOTIFICATION_RESULTS {
            f.notifications.remove(&(c(), Word(result.into())));
        }
        for reason in ERROR_REASONS {
            f.errors.remove(&(c(), Word(reason.into())));
        }
        for reason in EVENT_REASONS {
            f.events.remove(&(c(), Word(reason.into())));
        }
        for input in INPUTS {
            f.rejected.remove(&(c(), Word(input.into())));
        }
        self.forget_lives();
        if let Ok(mut known) = f.known.lock() {
            known.remove(&self.cluster);
        }
    }

    pub(crate) fn error(&self, reason: &str) {
        self.families.errors.get_or_create(&self.key(Word(reason.into()))).inc();
    }

    pub(crate) fn repair(&self, result: &str) {
        self.families.repairs.get_or_create(&self.key(Word(result.into()))).inc();
    }

    pub(crate) fn notification(&self, result: &str) {
        self.families.notifications.get_or_create(&self.key(Word(result.into()))).inc();
    }

    pub(crate) fn event(&self, reason: &str) {
        self.families.events.get_or_create(&self.key(Word(reason.into()))).inc();
    }

    pub(crate) fn rejected(&self, input: &str, n: u64) {
        self.families.rejected.get_or_create(&self.key(Word(input.into()))).inc_by(n);
    }

    /// Whether the first full check is done (1).
    pub(crate) fn ready(&self, v: i64) {
        self.families.ready.get_or_create(&self.cluster).set(v);
    }

    /// Releases the selection matched at the last full check.
    pub(crate) fn selected(&self, v: i64) {
        self.families.selected.get_or_create(&self.cluster).set(v);
    }

    /// Whether this replica acts (1) or stands by (0).
    pub(crate) fn leader(&self, v: i64) {
        self.families.leader.get_or_create(&self.cluster).set(v);
    }

    pub(crate) fn watches(&self, v: i64) {
        self.families.watches.get_or_create(&self.cluster).set(v);
    }

    /// Releases changed and waiting for their debounce (a set: changes coalesce).
    pub(crate) fn pending(&self, v: i64) {
        self.families.pending.get_or_create(&self.cluster).set(v);
    }

    /// The exposition text (OpenMetrics).
    pub(crate) fn encode(&self) -> String {
        let f = &*self.families;
        let counts = requests::counts();
        {
            let mut seen = f.api_seen.lock().expect("metrics lock");
            for (i, verb) in requests::VERBS.iter().enumerate() {
                let new = counts[i].saturating_sub(seen[i]);
                f.api_requests.get_or_create(&VerbLabels { verb: (*verb).into() }).inc_by(new);
                seen[i] = counts[i];
            }
        }
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &f.registry).expect("writing to a String");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ObjectDrift, ObjectId, Verdict};

    fn report(verdict: Verdict) -> DriftReport {
        crate::testing::report(
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
    fn a_fleet_labels_each_member_and_an_unreachable_one_is_unknown_never_in_sync() {
        let fleet = Metrics::fleet();
        let (eu, us) = (fleet.member("fleet/eu"), fleet.member("fleet/us"));
        eu.record(&report(Verdict::Missing), 0.1);
        us.record(&report(Verdict::InSync), 0.1);
        eu.cluster_up(true);
        us.cluster_up(true);
        let text = fleet.encode();
        assert!(
            text.contains(r#"helm_drift_release_drifted{cluster="fleet/eu",namespace="apps",release="web"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"helm_drift_release_drifted{cluster="fleet/us",namespace="apps",release="web"} 0"#),
            "{text}"
        );
        assert!(text.contains(r#"helm_drift_ready{cluster="fleet/us"} 0"#), "seeded per member: {text}");
        assert!(!text.contains("helm_drift_ready 0"), "a fleet has no unlabelled series: {text}");
        us.cluster_up(false);
        let text = fleet.encode();
        assert!(text.contains(r#"helm_drift_cluster_up{cluster="fleet/us"} 0"#), "{text}");
        assert!(!text.contains(r#"helm_drift_release_drifted{cluster="fleet/us""#), "not known: no verdict: {text}");
        assert!(text.contains(r#"helm_drift_release_unknown{cluster="fleet/us",namespace="apps",release="web"} 1"#));
        assert!(text.contains(r#"helm_drift_release_drifted{cluster="fleet/eu",namespace="apps",release="web"} 1"#));
        us.record(&report(Verdict::InSync), 0.1);
        assert!(!fleet.encode().contains("helm_drift_release_unknown{"), "a verdict again: known");
        eu.forget_cluster();
        let text = fleet.encode();
        assert!(!text.contains("fleet/eu"), "a member gone leaves no series: {text}");
        assert!(text.contains(r#"cluster="fleet/us""#), "{text}");
    }

    #[test]
    fn fields_owned_elsewhere_are_their_own_series_not_drift() {
        use crate::model::Ownership;
        let m = Metrics::new();
        let mut r = report(Verdict::InSync);
        let path = crate::testing::path("/data/greeting");
        r.objects[0].disowned.push(Ownership { path, manager: "kubectl-patch".into(), shared: false });
        m.record(&r, 0.1);
        let text = m.encode();
        assert!(text.contains(r#"helm_drift_release_drifted{namespace="apps",release="web"} 0"#), "{text}");
        assert!(
            text.contains(r#"helm_drift_objects{namespace="apps",release="web",verdict="taken-over"} 1"#),
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
        m.record(&crate::testing::report("apps", "web", vec![o]), 0.1);
        m.guard("apps", "web", Some("none"));
        // A fleet's series too: a member that answers no longer, a CAAPH release.
        let member = m.member("fleet/eu");
        member.record(&crate::testing::report("apps", "web", Vec::new()), 0.1);
        member.proxy("apps", "web", "cni-eu", "cni");
        member.cluster_up(false);
        let exported: Vec<String> = m
            .encode()
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split(['{', ' ']).next().unwrap().to_string())
            .collect();
        let json = include_str!("../../../../charts/helm-drift/dashboards/helm-drift.json");
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

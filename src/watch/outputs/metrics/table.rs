//! Every series family the process exports, as one table: its name, labels, help, the values
//! its label takes, and the family. Registration and the metrics page of the book are made from
//! it (`HELM_DRIFT_WRITE_DOCS=1 cargo test --lib metrics` writes the page's table).

use super::families::{
    ENDINGS, ERROR_REASONS, EVENT_REASONS, Families, GUARD_MODES, INPUTS, NOTIFICATION_RESULTS, REPAIR_RESULTS,
};
use prometheus_client::encoding::{EncodeMetric, MetricEncoder};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Metric;

/// One series family.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) struct Row {
    /// Its name under the `helm_drift_` prefix (a counter's series end in `_total`).
    pub(super) name: &'static str,
    /// Its labels besides `cluster` (a fleet watcher's every series has it).
    pub(super) labels: &'static str,
    pub(super) help: &'static str,
    /// The values its one word label takes (a counter starts at 0 for each).
    pub(super) values: &'static [&'static str],
    pub(super) metric: Box<dyn Metric>,
}

/// Every family, in the order it is exported.
#[rustfmt::skip]
pub(super) fn rows(m: &Families) -> Vec<Row> {
    vec![
        Row { name: "release_drifted", labels: "namespace, release", help: "Whether the release has drifted from its deployed revision (1) or not (0)", values: &[], metric: Box::new(m.drifted.clone()) },
        Row { name: "release_unknown", labels: "namespace, release", help: "1 while the release's verdict is not known: its cluster's API server does not answer", values: &[], metric: Box::new(m.unknown.clone()) },
        Row { name: "release_revision", labels: "namespace, release", help: "The deployed revision the release was compared with", values: &[], metric: Box::new(m.revision.clone()) },
        Row { name: "objects", labels: "namespace, release, verdict", help: "Objects of the release by verdict", values: &[], metric: Box::new(m.objects.clone()) },
        Row { name: "last_check_timestamp_seconds", labels: "namespace, release", help: "When the release was last compared with the cluster (Unix time)", values: &[], metric: Box::new(m.last_check.clone()) },
        Row { name: "release_guard", labels: "namespace, release, mode", help: "The admission guard covering the release (helm drift guard): 1 for its mode (warn, audit, deny, unknown), or for none", values: &GUARD_MODES, metric: Box::new(m.guarded.clone()) },
        Row { name: "check_duration_seconds", labels: "", help: "How long one release's comparison took", values: &[], metric: Box::new(m.duration.clone()) },
        Row { name: "api_requests", labels: "verb", help: "Requests sent to the Kubernetes API server, by verb", values: &[], metric: Box::new(m.api_requests.clone()) },
        Row { name: "errors", labels: "reason", help: "Errors, by reason", values: &ERROR_REASONS, metric: Box::new(m.errors.clone()) },
        Row { name: "repairs", labels: "result", help: "Self-healing repairs, by result", values: &REPAIR_RESULTS, metric: Box::new(m.repairs.clone()) },
        Row { name: "notifications", labels: "result", help: "Notifications sent to --notify receivers, by result", values: &NOTIFICATION_RESULTS, metric: Box::new(m.notifications.clone()) },
        Row { name: "events", labels: "reason", help: "Kubernetes Events recorded, by reason", values: &EVENT_REASONS, metric: Box::new(m.events.clone()) },
        Row { name: "rejected_inputs", labels: "input", help: "Untrusted input read from the cluster (or sent to the audit receiver) and not acted on, by kind", values: &INPUTS, metric: Box::new(m.rejected.clone()) },
        Row { name: "ready", labels: "", help: "Whether the first full check is done (1)", values: &[], metric: Box::new(m.ready.clone()) },
        Row { name: "pending_releases", labels: "", help: "Releases changed and waiting for the debounce before their comparison (changes coalesce)", values: &[], metric: Box::new(m.pending.clone()) },
        Row { name: "leader", labels: "", help: "Whether this replica acts (1) or stands by (0)", values: &[], metric: Box::new(m.leader.clone()) },
        Row { name: "selected_releases", labels: "", help: "Releases the selection matched at the last full check (0: nothing is watched)", values: &[], metric: Box::new(m.selected.clone()) },
        Row { name: "watches", labels: "", help: "Watches open on the API server", values: &[], metric: Box::new(m.watches.clone()) },
        Row { name: "repair_window_opens_timestamp_seconds", labels: "namespace, release", help: "A drifted release waiting for its repair window: when the window opens (Unix time; 0: none ever opens)", values: &[], metric: Box::new(m.window.clone()) },
        Row { name: "release_paused", labels: "namespace, release", help: "A drifted release (or some of its objects) held by a break-glass pause: when the pause ends (Unix time)", values: &[], metric: Box::new(m.paused.clone()) },
        Row { name: "release_proxy", labels: "namespace, release, helmreleaseproxy, helmchartproxy", help: "A release Cluster API's Helm add-on provider installed: 1, with its HelmReleaseProxy and HelmChartProxy", values: &[], metric: Box::new(m.proxied.clone()) },
        Row { name: "oldest_drift_timestamp_seconds", labels: "namespace, release", help: "When the oldest drift of the release still open appeared (Unix time; its age: time() - this)", values: &[], metric: Box::new(m.oldest_drift.clone()) },
        Row { name: "drift_lifetime_seconds", labels: "ended_by", help: "How long drifts lived, from their first write to their end, by what ended them (watcher, repair, revision, hand, accepted, left)", values: &ENDINGS, metric: Box::new(m.drift_lived.clone()) },
        Row { name: "audit_window", labels: "unit", help: "Audit events of watched objects kept to name who made each drift (events), their size (bytes), and those forgotten before their time to stay within 16 MiB per cluster (forgotten-events)", values: &[], metric: Box::new(m.audit_kept.clone()) },
        Row { name: "cluster_up", labels: "cluster", help: "Whether a fleet member's API server answers (1) or not (0), by cluster", values: &[], metric: Box::new(m.cluster_up.clone()) },
    ]
}

/// A family as the registry takes it.
#[derive(Debug)]
struct Boxed(Box<dyn Metric>);

impl EncodeMetric for Boxed {
    fn encode(&self, encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        self.0.encode(encoder)
    }

    fn metric_type(&self) -> MetricType {
        self.0.metric_type()
    }
}

/// Every family, registered under the `helm_drift_` prefix.
pub(super) fn families() -> Families {
    let mut f = Families::new();
    let mut registry = std::mem::take(&mut f.registry);
    for row in rows(&f) {
        registry.register(row.name, row.help, Boxed(row.metric));
    }
    f.registry = registry;
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARK: &str = "<!-- metrics: generated from src/watch/outputs/metrics/table.rs (HELM_DRIFT_WRITE_DOCS=1 cargo test --lib metrics) -->";

    /// The watch page's table of families, from [`rows`].
    fn page_table() -> String {
        let mut t = format!("{MARK}\n| metric | labels | meaning |\n|---|---|---|\n");
        for r in rows(&Families::new()) {
            let total = if matches!(r.metric.metric_type(), MetricType::Counter) { "_total" } else { "" };
            let words: Vec<String> = r.values.iter().map(|v| format!("`{v}`")).collect();
            let values = if words.is_empty() { String::new() } else { format!("; values: {}", words.join(", ")) };
            t.push_str(&format!("| `helm_drift_{}{total}` | {} | {}{values} |\n", r.name, r.labels, r.help));
        }
        t
    }

    /// The watch page lists every family the process exports, with its help and label values.
    #[test]
    fn the_watch_page_lists_every_metrics_family() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/commands/watch.md");
        let page = std::fs::read_to_string(&path).unwrap();
        let start = page.find(MARK).expect("the watch page's metrics table is marked");
        let end = page[start..].find("\n\n").map_or(page.len(), |n| start + n + 1);
        let want = page_table();
        if std::env::var_os("HELM_DRIFT_WRITE_DOCS").is_some() {
            std::fs::write(&path, format!("{}{want}{}", &page[..start], &page[end..])).unwrap();
            return;
        }
        assert_eq!(&page[start..end], want, "out of date (HELM_DRIFT_WRITE_DOCS=1 cargo test --lib metrics)");
    }
}

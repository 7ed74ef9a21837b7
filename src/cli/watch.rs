//! The flags of `helm drift watch`.

use super::flags::{ClustersArgs, CompareArgs, LogFormat, NotifyFormat, SelectionArgs, parse_duration};
use clap::Args;

/// The flags of `helm drift watch`.
#[derive(Args, Debug)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    pub(crate) select: SelectionArgs,
    /// Accepted drift, not reported and kept by self-healing: a baseline FILE;
    /// `cluster=NAMESPACE` for ConfigMaps kept in a namespace you name; `cluster` for ConfigMaps
    /// next to the releases, taken only from namespaces you trust (--trust-namespace)
    /// [default: ./.helm-drift-baseline.yaml when present]
    #[arg(long, value_name = "FILE|cluster[=NAMESPACE]", help_heading = "Comparison")]
    pub(crate) baseline: Option<String>,
    /// A full check of every release this often, besides the watches (e.g. 10m, 1h)
    #[arg(long, default_value = "10m", value_parser = parse_duration, help_heading = "Watch", hide_short_help = true)]
    pub(crate) resync: std::time::Duration,
    /// Wait this long after a change for more before checking again
    #[arg(long, default_value = "300ms", value_parser = parse_duration, help_heading = "Watch", hide_short_help = true)]
    pub(crate) debounce: std::time::Duration,
    /// Watch at most this many releases of one namespace (the first by name); the rest are
    /// counted as rejected records and named in the log (whoever may create Secrets in a
    /// namespace could otherwise make thousands of releases, each with its series)
    #[arg(long, value_name = "N", default_value_t = 1000, help_heading = "Watch", hide_short_help = true)]
    pub(crate) max_releases_per_namespace: usize,
    /// Watch at most this many releases in all, each namespace an even share (no namespace keeps
    /// more than another that was cut); the rest are counted and named as above
    #[arg(long, value_name = "N", default_value_t = 10_000, help_heading = "Watch", hide_short_help = true)]
    pub(crate) max_releases: usize,
    /// Where /metrics, /healthz and /readyz are served (loopback by default; the chart serves on
    /// every interface of the pod)
    #[arg(long, default_value = "127.0.0.1:8080", help_heading = "Watch")]
    pub(crate) metrics_address: String,
    /// POST each new or resolved drift to this URL (repeatable; $HELM_DRIFT_NOTIFY: comma-separated)
    #[arg(
        long,
        value_name = "URL",
        env = "HELM_DRIFT_NOTIFY",
        value_delimiter = ',',
        hide_env_values = true,
        help_heading = "Watch"
    )]
    pub(crate) notify: Vec<String>,
    /// Body of notifications: json (the -o json object shape) or slack (incoming webhooks)
    #[arg(long, value_enum, default_value_t = NotifyFormat::Json, help_heading = "Watch", hide_short_help = true)]
    pub(crate) notify_format: NotifyFormat,
    /// The cluster's name, carried by every notification (`"cluster"` in JSON, `[NAME]` before
    /// Slack's text), so that one receiver for a fleet of watchers knows where drift happened
    #[arg(long, env = "HELM_DRIFT_CLUSTER", help_heading = "Watch", hide_short_help = true)]
    pub(crate) cluster: Option<String>,
    /// Serve a read-only page at / on the metrics address: releases and their drifted objects
    /// with paths, verdicts and who changed them, never a value
    #[arg(long, help_heading = "Watch")]
    pub(crate) ui: bool,
    /// Log lines on stderr: text or json
    #[arg(long, value_enum, default_value_t = LogFormat::Text, help_heading = "Watch", hide_short_help = true)]
    pub(crate) log_format: LogFormat,
    /// Repair drift of the releases that opt in (see --repair-selector), as `helm drift repair`
    #[arg(long, help_heading = "Self-healing")]
    pub(crate) repair: bool,
    /// Releases whose storage labels match this selector opt in to --repair
    #[arg(long, default_value = "helm-drift.io/repair=true", requires = "repair", help_heading = "Self-healing")]
    pub(crate) repair_selector: String,
    /// With --repair: also remove fields other field managers added
    #[arg(long, requires = "repair", help_heading = "Self-healing")]
    pub(crate) remove_foreign: bool,
    /// At least this long between two repairs of one release
    #[arg(long, default_value = "30s", value_parser = parse_duration, help_heading = "Self-healing", hide_short_help = true)]
    pub(crate) repair_cooldown: std::time::Duration,
    /// Stop repairing an object that drifts again after this many repairs within --fight-window
    #[arg(long, default_value_t = 3, help_heading = "Self-healing", hide_short_help = true)]
    pub(crate) fight_limit: usize,
    #[arg(long, default_value = "10m", value_parser = parse_duration, help_heading = "Self-healing")]
    /// The window of --fight-limit
    pub(crate) fight_window: std::time::Duration,
    /// Repair as this ServiceAccount of the namespace each release's record is stored in
    /// (impersonated): the API server decides what a repair may write, as Flux's
    /// --default-service-account
    #[arg(long, value_name = "NAME", requires = "repair", help_heading = "Self-healing", hide_short_help = true)]
    pub(crate) repair_service_account: Option<String>,
    /// Heal only while this window is open (repeatable; any of them): `Sat 02:00-04:00
    /// Europe/Berlin`, `Mon-Fri 22:00-06:00`, `* 12:00-12:30 UTC`; `@ SELECTOR` at the end for
    /// the releases whose storage labels match. Outside, drift is reported as waiting for the
    /// window; `helm drift repair` by hand is never held
    #[arg(long, value_name = "WINDOW", requires = "repair", help_heading = "Self-healing")]
    pub(crate) repair_window: Vec<String>,
    /// The watcher's own namespace: its signature key, the pauses of self-healing it reads
    /// (`helm drift pause`) and its announcement of them [default: the --lease-namespace; else
    /// the session's namespace, which may be a tenant's: its pauses hold only its own releases
    /// and no signature key is read there]
    #[arg(
        long,
        value_name = "NAMESPACE",
        env = "HELM_DRIFT_PAUSE_NAMESPACE",
        help_heading = "Self-healing",
        hide_short_help = true
    )]
    pub(crate) pause_namespace: Option<String>,
    /// Never heal while this window is open (repeatable; wins over --repair-window), same form
    #[arg(long, value_name = "WINDOW", requires = "repair", help_heading = "Self-healing", hide_short_help = true)]
    pub(crate) repair_deny_window: Vec<String>,
    /// The Secret (in the watcher's namespace) holding the key of drift signatures; created
    /// with a random key when absent
    #[arg(
        long,
        value_name = "NAME",
        default_value = "helm-drift-signature-key",
        help_heading = "Watch",
        hide_short_help = true
    )]
    pub(crate) signature_key_secret: String,
    /// Act only while holding a coordination.k8s.io Lease (for several replicas)
    #[arg(long, help_heading = "Leader election")]
    pub(crate) leader_elect: bool,
    /// Name of the Lease
    #[arg(long, default_value = "helm-drift", help_heading = "Leader election", hide_short_help = true)]
    pub(crate) lease_name: String,
    /// Namespace of the Lease [default: the namespace from -n or the context]
    #[arg(long, help_heading = "Leader election", hide_short_help = true)]
    pub(crate) lease_namespace: Option<String>,
    /// How long a leader holds the Lease without renewing it
    #[arg(long, default_value = "15s", value_parser = parse_duration, help_heading = "Leader election", hide_short_help = true)]
    pub(crate) lease_duration: std::time::Duration,
    #[command(flatten)]
    pub(crate) inventory: ClustersArgs,
    /// With --clusters: the fleet's round (the inventory itself is watched: clusters added or
    /// removed, kubeconfig Secrets rotated are seen within seconds): how often a healing fleet
    /// renews its announcement, and replicas their Leases (at most a third of --lease-duration)
    #[arg(long, default_value = "30s", value_parser = parse_duration, help_heading = "Selection", hide_short_help = true)]
    pub(crate) clusters_interval: std::time::Duration,
    /// With --clusters: watch at most this many entries (the first by name); the rest are
    /// counted as rejected input and named in the log (each entry costs a watcher of its own)
    #[arg(long, value_name = "N", default_value_t = 200, help_heading = "Selection", hide_short_help = true)]
    pub(crate) clusters_max: usize,
    #[command(flatten)]
    pub(crate) audit: AuditArgs,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
}

/// The flags of the audit webhook endpoint of `helm drift watch`.
#[derive(Args, Debug)]
pub(crate) struct AuditArgs {
    /// Serve the API server's audit webhook (HTTPS) here, to name who made each drift (point
    /// --audit-webhook-config-file at it; see the README)
    #[arg(long, value_name = "ADDRESS", help_heading = "Audit", requires_all = ["audit_tls_cert", "audit_tls_key"])]
    pub(crate) audit_address: Option<String>,
    /// The endpoint's certificate (PEM, with its chain)
    #[arg(long, value_name = "FILE", help_heading = "Audit", requires = "audit_address")]
    pub(crate) audit_tls_cert: Option<std::path::PathBuf>,
    /// The endpoint's private key (PEM)
    #[arg(long, value_name = "FILE", help_heading = "Audit", requires = "audit_address")]
    pub(crate) audit_tls_key: Option<std::path::PathBuf>,
    /// API servers present a client certificate signed by this CA (PEM); its Common Name is
    /// the cluster it speaks for (with --clusters, an inventory entry's name)
    #[arg(long, value_name = "FILE", help_heading = "Audit", requires = "audit_address")]
    pub(crate) audit_client_ca: Option<std::path::PathBuf>,
    /// API servers present a bearer token from this file: one `TOKEN [CLUSTER]` a line
    #[arg(long, value_name = "FILE", help_heading = "Audit", requires = "audit_address")]
    pub(crate) audit_tokens: Option<std::path::PathBuf>,
    /// How long audit events of the watched objects are kept (16 MiB at most per cluster)
    #[arg(long, value_name = "DURATION", default_value = "6h", value_parser = parse_duration, help_heading = "Audit", hide_short_help = true)]
    pub(crate) audit_window: std::time::Duration,
    /// Also name people in Events and notifications (read by everyone who may read the
    /// namespace's Events, or the receiver's channel); off: only the page, the log and check
    #[arg(long, help_heading = "Audit", requires = "audit_address")]
    pub(crate) audit_publish_names: bool,
}

//! The command line as clap sees it: the commands, one args struct each, and Helm's global
//! connection flags. Flag groups several commands share and the value enums are in
//! [`super::flags`], help texts in [`super::help`]. Nothing here acts: each command's
//! `XxxSettings::resolve` (in `commands`) turns these into settings.

use super::flags::parse_duration;
pub(crate) use super::flags::{
    ClustersArgs, ColorChoice, CompareArgs, LogFormat, NotifyFormat, OutputArgs, SelectionArgs,
};
use super::help::{ACCEPT_HELP, CHECK_HELP, GUARD_HELP, RENDER_HELP, REPAIR_HELP, TOP_HELP, WATCH_HELP};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "helm-drift",
    bin_name = "helm drift",
    version,
    about = "Find drift between Helm releases and the live cluster",
    after_help = TOP_HELP
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Helm's connection settings: the environment Helm gives a plugin, or the same as flags.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Connection (Helm's global flags and environment)")]
pub(crate) struct Global {
    /// Namespace of the release (Helm: -n/--namespace)
    #[arg(short = 'n', long, env = "HELM_NAMESPACE", global = true)]
    pub(crate) namespace: Option<String>,
    /// Kubeconfig context to use; `check` and `repair` take several (repeat the flag): a
    /// fleet of clusters in one run
    #[arg(long, env = "HELM_KUBECONTEXT", global = true, action = clap::ArgAction::Append)]
    pub(crate) kube_context: Vec<String>,
    /// Path(s) of kubeconfig files (a path list, like KUBECONFIG)
    #[arg(long, env = "KUBECONFIG", global = true)]
    pub(crate) kubeconfig: Option<String>,
    /// Address and port of the Kubernetes API server
    #[arg(long, env = "HELM_KUBEAPISERVER", global = true)]
    pub(crate) kube_apiserver: Option<String>,
    /// Bearer token for authentication
    #[arg(long, env = "HELM_KUBETOKEN", global = true, hide_env_values = true)]
    pub(crate) kube_token: Option<String>,
    /// User to impersonate
    #[arg(long, env = "HELM_KUBEASUSER", global = true)]
    pub(crate) kube_as_user: Option<String>,
    /// Groups to impersonate (comma-separated)
    #[arg(long, env = "HELM_KUBEASGROUPS", global = true, value_delimiter = ',')]
    pub(crate) kube_as_group: Vec<String>,
    /// Certificate authority file for the API server
    #[arg(long, env = "HELM_KUBECAFILE", global = true)]
    pub(crate) kube_ca_file: Option<String>,
    /// Skip verifying the API server's certificate (insecure)
    /// (also HELM_KUBEINSECURE_SKIP_TLS_VERIFY=true)
    #[arg(long, global = true)]
    pub(crate) kube_insecure_skip_tls_verify: bool,
    /// Server name for the API server's certificate
    #[arg(long, env = "HELM_KUBETLS_SERVER_NAME", global = true)]
    pub(crate) kube_tls_server_name: Option<String>,
    /// Queries per second to the API server (Helm's --qps; 0 = no limit)
    #[arg(long, env = "HELM_QPS", global = true)]
    pub(crate) qps: Option<String>,
    /// Requests allowed in a burst (Helm's --burst-limit)
    #[arg(long, env = "HELM_BURST_LIMIT", global = true)]
    pub(crate) burst_limit: Option<String>,
    /// Objects per page of each LIST the API server answers (like kubectl's --chunk-size; 0 =
    /// a whole kind in one response)
    #[arg(long, env = "HELM_DRIFT_CHUNK_SIZE", global = true, default_value_t = crate::api::DEFAULT_CHUNK_SIZE)]
    pub(crate) chunk_size: u32,
    /// Give up on a request to the API server after this long (e.g. 500ms, 30s, 2m); transient
    /// failures are retried
    #[arg(long, global = true, default_value = "30s", value_parser = parse_duration)]
    pub(crate) timeout: std::time::Duration,
    /// Helm storage driver: secrets (default), configmaps, sql
    #[arg(long, env = "HELM_DRIVER", global = true)]
    pub(crate) driver: Option<String>,
    /// PostgreSQL connection string for the sql driver
    #[arg(long, env = "HELM_DRIVER_SQL_CONNECTION_STRING", global = true, hide_env_values = true)]
    pub(crate) sql_connection: Option<String>,
    /// Verbose diagnostics on stderr
    /// (also HELM_DEBUG=true)
    #[arg(long, global = true, help_heading = "Output")]
    pub(crate) debug: bool,
    /// When to colour the output: auto, always, never
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, help_heading = "Output")]
    pub(crate) color: ColorChoice,
}

#[derive(Subcommand, Debug)]
// Parsed once per run: the size of its largest variant (watch's many flags) costs nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Command {
    /// Compare a release's recorded objects with the cluster
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
    /// Render the release's chart again from its record and show documents that render
    /// differently from the stored manifest (lookup, random functions, Capabilities)
    #[command(after_help = RENDER_HELP)]
    Render(RenderArgs),
    /// Put drifted objects back to the recorded revision, without a new Helm revision
    #[command(after_help = REPAIR_HELP)]
    Repair(RepairArgs),
    /// Record the release's current drift as accepted: check then fails only on new or changed
    /// drift
    #[command(after_help = ACCEPT_HELP)]
    Accept(AcceptArgs),
    /// Watch releases continuously: metrics, Events and notifications once per drift, and
    /// optional self-healing
    #[command(after_help = WATCH_HELP)]
    Watch(WatchArgs),
    /// Warn (or refuse) at the prompt when someone changes or deletes what Helm manages: an
    /// admission guard (ValidatingAdmissionPolicy) for the selected releases
    #[command(after_help = GUARD_HELP)]
    Guard(GuardArgs),
    /// Print the version
    Version,
    /// Completion candidates for Helm's plugin.complete (sub-command, arguments, word)
    #[command(name = "__complete", hide = true)]
    Complete {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
}

/// The flags of `helm drift check`.
#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    pub(crate) select: SelectionArgs,
    /// Check this revision instead of the latest deployed one (one release only)
    #[arg(long, help_heading = "Selection")]
    pub(crate) revision: Option<u32>,
    /// Accepted drift: a baseline FILE, or `cluster` for ConfigMaps next to the releases
    /// [default: ./.helm-drift-baseline.yaml when present]
    #[arg(long, value_name = "FILE|cluster", help_heading = "Comparison")]
    pub(crate) baseline: Option<String>,
    /// Say which value of the release produced each modified field, and the helm upgrade
    /// that would make the live state the desired state
    #[arg(long, help_heading = "Output")]
    pub(crate) explain: bool,
    /// Also render the chart now (stored values, lookup answered by the cluster) and show
    /// what a helm upgrade with the same values would change
    #[arg(long, help_heading = "Output")]
    pub(crate) rerender: bool,
    /// With --explain or --rerender: the chart's source directory (needed for charts with
    /// subcharts)
    #[arg(long, help_heading = "Output")]
    pub(crate) chart: Option<PathBuf>,
    /// Check in every context of the kubeconfig: a fleet of clusters in one run, one report
    /// with the cluster of every release (like several --kube-context)
    #[arg(long, help_heading = "Selection", conflicts_with = "clusters")]
    pub(crate) all_contexts: bool,
    #[command(flatten)]
    pub(crate) inventory: ClustersArgs,
    /// Also append the report as Markdown to FILE (kept under 1 MiB), beside the normal
    /// output: `--summary-file "$GITHUB_STEP_SUMMARY"` in GitHub Actions
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub(crate) summary_file: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// The flags of `helm drift render`.
#[derive(Args, Debug)]
pub(crate) struct RenderArgs {
    /// The release to render
    pub(crate) release: String,
    /// Render this revision instead of the latest deployed one
    #[arg(long, help_heading = "Selection")]
    pub(crate) revision: Option<u32>,
    /// The chart's source directory (needed for charts with subcharts, which Helm does not store)
    #[arg(long, help_heading = "Selection")]
    pub(crate) chart: Option<PathBuf>,
    /// Show secret values in the documents (hidden by default)
    #[arg(long, help_heading = "Output")]
    pub(crate) show_secrets: bool,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// The flags of `helm drift repair`.
#[derive(Args, Debug)]
pub(crate) struct RepairArgs {
    /// The release to repair
    pub(crate) release: String,
    /// Only repair this object (KIND/NAME, repeatable)
    #[arg(long, value_name = "KIND/NAME", help_heading = "Repair")]
    pub(crate) only: Vec<String>,
    /// Also remove fields that other field managers added (changed outside Helm)
    #[arg(long, help_heading = "Repair")]
    pub(crate) remove_foreign: bool,
    /// Show the plan and validate it with server dry-runs; change nothing
    #[arg(long, help_heading = "Repair")]
    pub(crate) dry_run: bool,
    /// Repair through Helm: `helm upgrade` of the stored chart and values (a new revision)
    #[arg(long, help_heading = "Repair")]
    pub(crate) upgrade: bool,
    /// With --upgrade: the chart's source directory (needed for charts with subcharts)
    #[arg(long, requires = "upgrade", help_heading = "Repair")]
    pub(crate) chart: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// The flags of `helm drift accept`.
#[derive(Args, Debug)]
pub(crate) struct AcceptArgs {
    /// The release whose drift is accepted
    pub(crate) release: String,
    /// Only this object's drift (KIND/NAME, repeatable)
    #[arg(long, value_name = "KIND/NAME", help_heading = "Selection")]
    pub(crate) only: Vec<String>,
    /// Only drift at or under this JSON pointer (repeatable)
    #[arg(long, value_name = "POINTER", help_heading = "Selection")]
    pub(crate) path: Vec<String>,
    /// Also drop the release's entries whose drift is gone
    #[arg(long, help_heading = "Selection")]
    pub(crate) prune: bool,
    /// Where to keep it: a FILE, or `cluster` for a ConfigMap next to the release
    /// [default: ./.helm-drift-baseline.yaml]
    #[arg(long, value_name = "FILE|cluster", help_heading = "Comparison")]
    pub(crate) baseline: Option<String>,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
}

/// What `helm drift guard` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum GuardAction {
    /// Write (or update) the guard of the namespace (or of every namespace with -A)
    Install,
    /// List the guards written
    Status,
    /// Remove the guard of the namespace (or of every namespace with -A)
    Remove,
}

/// The flags of `helm drift guard`.
#[derive(Args, Debug)]
pub(crate) struct GuardArgs {
    /// install, status or remove
    #[arg(value_enum)]
    pub(crate) action: GuardAction,
    #[command(flatten)]
    pub(crate) select: SelectionArgs,
    /// warn (a warning to the writer and an audit annotation), audit (the annotation only) or
    /// deny (changes refused; deletions pass, since helm uninstall deletes as its user does)
    #[arg(long, default_value = "warn", value_parser = ["warn", "audit", "deny"], help_heading = "Guard")]
    pub(crate) mode: String,
    /// A user who may write without a word (repeatable)
    #[arg(long, value_name = "USER", help_heading = "Guard")]
    pub(crate) allow_user: Vec<String>,
    /// A group whose members may write without a word (repeatable)
    #[arg(long, value_name = "GROUP", help_heading = "Guard")]
    pub(crate) allow_group: Vec<String>,
    /// A field manager whose writes are expected, besides helm, helm-controller (Flux) and
    /// kubectl-rollout (repeatable; the config file's managers are added: Argo CD's
    /// managedFieldsManagers, expected-change rules naming one manager)
    #[arg(long, value_name = "MANAGER", help_heading = "Guard")]
    pub(crate) allow_manager: Vec<String>,
    /// Cover every kind and its scale, also kinds a later upgrade adds (default: the kinds the
    /// releases contain now)
    #[arg(long, help_heading = "Guard")]
    pub(crate) every_kind: bool,
    /// Judge the writes of service accounts outside kube-system like a person's (by default
    /// service accounts, like the control plane, are let through: controllers, operators, CI)
    #[arg(long, help_heading = "Guard")]
    pub(crate) judge_service_accounts: bool,
    /// Print the policy and binding `install` would write (YAML), and write nothing
    #[arg(long, help_heading = "Guard")]
    pub(crate) dry_run: bool,
    /// Config file whose expected writers are let through [default: $HELM_DRIFT_CONFIG, else
    /// ./.helm-drift.yaml if present]
    #[arg(long, env = "HELM_DRIFT_CONFIG", help_heading = "Guard")]
    pub(crate) config: Option<std::path::PathBuf>,
}

/// The flags of `helm drift watch`.
#[derive(Args, Debug)]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    pub(crate) select: SelectionArgs,
    /// Accepted drift: a baseline FILE, or `cluster` for ConfigMaps next to the releases
    #[arg(long, value_name = "FILE|cluster", help_heading = "Comparison")]
    pub(crate) baseline: Option<String>,
    /// A full check of every release this often, besides the watches (e.g. 10m, 1h)
    #[arg(long, default_value = "10m", value_parser = parse_duration, help_heading = "Watch")]
    pub(crate) resync: std::time::Duration,
    /// Wait this long after a change for more before checking again
    #[arg(long, default_value = "300ms", value_parser = parse_duration, help_heading = "Watch")]
    pub(crate) debounce: std::time::Duration,
    /// Watch at most this many releases of one namespace (the first by name); the rest are
    /// counted as rejected records and named in the log (whoever may create Secrets in a
    /// namespace could otherwise make thousands of releases, each with its series)
    #[arg(long, value_name = "N", default_value_t = 1000, help_heading = "Watch")]
    pub(crate) max_releases_per_namespace: usize,
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
    #[arg(long, value_enum, default_value_t = NotifyFormat::Json, help_heading = "Watch")]
    pub(crate) notify_format: NotifyFormat,
    /// The cluster's name, carried by every notification (`"cluster"` in JSON, `[NAME]` before
    /// Slack's text), so that one receiver for a fleet of watchers knows where drift happened
    #[arg(long, env = "HELM_DRIFT_CLUSTER", help_heading = "Watch")]
    pub(crate) cluster: Option<String>,
    /// Serve a read-only page at / on the metrics address: releases and their drifted objects
    /// with paths, verdicts and who changed them, never a value
    #[arg(long, help_heading = "Watch")]
    pub(crate) ui: bool,
    /// Log lines on stderr: text or json
    #[arg(long, value_enum, default_value_t = LogFormat::Text, help_heading = "Watch")]
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
    #[arg(long, default_value = "30s", value_parser = parse_duration, help_heading = "Self-healing")]
    pub(crate) repair_cooldown: std::time::Duration,
    /// Stop repairing an object that drifts again after this many repairs within --fight-window
    #[arg(long, default_value_t = 3, help_heading = "Self-healing")]
    pub(crate) fight_limit: usize,
    #[arg(long, default_value = "10m", value_parser = parse_duration, help_heading = "Self-healing")]
    /// The window of --fight-limit
    pub(crate) fight_window: std::time::Duration,
    /// Repair as this ServiceAccount of each release's namespace (impersonated): the API
    /// server decides what a repair may write, as Flux's --default-service-account
    #[arg(long, value_name = "NAME", requires = "repair", help_heading = "Self-healing")]
    pub(crate) repair_service_account: Option<String>,
    /// Heal only while this window is open (repeatable; any of them): `Sat 02:00-04:00
    /// Europe/Berlin`, `Mon-Fri 22:00-06:00`, `* 12:00-12:30 UTC`; `@ SELECTOR` at the end for
    /// the releases whose storage labels match. Outside, drift is reported as waiting for the
    /// window; `helm drift repair` by hand is never held
    #[arg(long, value_name = "WINDOW", requires = "repair", help_heading = "Self-healing")]
    pub(crate) repair_window: Vec<String>,
    /// Never heal while this window is open (repeatable; wins over --repair-window), same form
    #[arg(long, value_name = "WINDOW", requires = "repair", help_heading = "Self-healing")]
    pub(crate) repair_deny_window: Vec<String>,
    /// Trust the release records of this namespace as the operator's own (repeatable; `*`:
    /// every namespace): they are compared wherever their objects live and self-healing writes
    /// for them as the watcher itself. A record elsewhere speaks only for objects in its own
    /// namespace, and is repaired only as --repair-service-account
    #[arg(long, value_name = "NAMESPACE", alias = "repair-trust-namespace", help_heading = "Watch")]
    pub(crate) trust_namespace: Vec<String>,
    /// The Secret (in the watcher's namespace) holding the key of drift signatures; created
    /// with a random key when absent
    #[arg(long, value_name = "NAME", default_value = "helm-drift-signature-key", help_heading = "Watch")]
    pub(crate) signature_key_secret: String,
    /// Act only while holding a coordination.k8s.io Lease (for several replicas)
    #[arg(long, help_heading = "Leader election")]
    pub(crate) leader_elect: bool,
    /// Name of the Lease
    #[arg(long, default_value = "helm-drift", help_heading = "Leader election")]
    pub(crate) lease_name: String,
    /// Namespace of the Lease [default: the namespace from -n or the context]
    #[arg(long, help_heading = "Leader election")]
    pub(crate) lease_namespace: Option<String>,
    /// How long a leader holds the Lease without renewing it
    #[arg(long, default_value = "15s", value_parser = parse_duration, help_heading = "Leader election")]
    pub(crate) lease_duration: std::time::Duration,
    #[command(flatten)]
    pub(crate) inventory: ClustersArgs,
    /// With --clusters: read the inventory again this often (clusters added or removed,
    /// kubeconfig Secrets rotated)
    #[arg(long, default_value = "30s", value_parser = parse_duration, help_heading = "Selection")]
    pub(crate) clusters_interval: std::time::Duration,
    /// With --clusters: watch at most this many entries (the first by name); the rest are
    /// counted as rejected input and named in the log (each entry costs a watcher of its own)
    #[arg(long, value_name = "N", default_value_t = 200, help_heading = "Selection")]
    pub(crate) clusters_max: usize,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
}

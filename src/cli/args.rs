//! The command line as clap sees it: the commands, one args struct each, and Helm's global
//! connection flags. Flag groups several commands share and the value enums are in
//! [`super::flags`], help texts in [`super::help`]. Nothing here acts: each command's
//! `XxxSettings::resolve` (in `commands`) turns these into settings.

pub(crate) use super::flags::{
    ClustersArgs, ColorChoice, CompareArgs, LogFormat, NotifyFormat, OutputArgs, SelectionArgs,
};
use super::flags::{output_formats, parse_duration};
use super::help::{
    ACCEPT_HELP, CHECK_HELP, GUARD_HELP, PAUSE_HELP, PLAN_HELP, RENDER_HELP, REPAIR_HELP, TOP_HELP, WATCH_HELP, after,
};
pub(crate) use super::plan::PlanArgs;
use super::watch::WatchArgs;
use crate::report::{Format, Writes};
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
    #[arg(long, env = "KUBECONFIG", global = true, hide_short_help = true)]
    pub(crate) kubeconfig: Option<String>,
    /// Address and port of the Kubernetes API server
    #[arg(long, env = "HELM_KUBEAPISERVER", global = true, hide_short_help = true)]
    pub(crate) kube_apiserver: Option<String>,
    /// Bearer token for authentication
    #[arg(long, env = "HELM_KUBETOKEN", global = true, hide_env_values = true, hide_short_help = true)]
    pub(crate) kube_token: Option<String>,
    /// User to impersonate
    #[arg(long, env = "HELM_KUBEASUSER", global = true, hide_short_help = true)]
    pub(crate) kube_as_user: Option<String>,
    /// Groups to impersonate (comma-separated)
    #[arg(long, env = "HELM_KUBEASGROUPS", global = true, value_delimiter = ',', hide_short_help = true)]
    pub(crate) kube_as_group: Vec<String>,
    /// Certificate authority file for the API server
    #[arg(long, env = "HELM_KUBECAFILE", global = true, hide_short_help = true)]
    pub(crate) kube_ca_file: Option<String>,
    /// Skip verifying the API server's certificate (insecure)
    /// (also HELM_KUBEINSECURE_SKIP_TLS_VERIFY=true)
    #[arg(long, global = true, hide_short_help = true)]
    pub(crate) kube_insecure_skip_tls_verify: bool,
    /// Server name for the API server's certificate
    #[arg(long, env = "HELM_KUBETLS_SERVER_NAME", global = true, hide_short_help = true)]
    pub(crate) kube_tls_server_name: Option<String>,
    /// Queries per second to the API server (Helm's --qps; 0 = no limit)
    #[arg(long, env = "HELM_QPS", global = true, hide_short_help = true)]
    pub(crate) qps: Option<String>,
    /// Requests allowed in a burst (Helm's --burst-limit)
    #[arg(long, env = "HELM_BURST_LIMIT", global = true, hide_short_help = true)]
    pub(crate) burst_limit: Option<String>,
    /// Objects per page of each LIST the API server answers (like kubectl's --chunk-size; 0 =
    /// a whole kind in one response)
    #[arg(long, env = "HELM_DRIFT_CHUNK_SIZE", global = true, default_value_t = crate::api::DEFAULT_CHUNK_SIZE, hide_short_help = true)]
    pub(crate) chunk_size: u32,
    /// Give up on a request to the API server after this long (e.g. 500ms, 30s, 2m); transient
    /// failures are retried
    #[arg(long, global = true, default_value = "30s", value_parser = parse_duration, hide_short_help = true)]
    pub(crate) timeout: std::time::Duration,
    /// Helm storage driver: secrets (default), configmaps, sql
    #[arg(long, env = "HELM_DRIVER", global = true, hide_short_help = true)]
    pub(crate) driver: Option<String>,
    /// PostgreSQL connection string for the sql driver
    #[arg(
        long,
        env = "HELM_DRIVER_SQL_CONNECTION_STRING",
        global = true,
        hide_env_values = true,
        hide_short_help = true
    )]
    pub(crate) sql_connection: Option<String>,
    /// Verbose diagnostics on stderr
    /// (also HELM_DEBUG=true)
    #[arg(long, global = true, help_heading = "Output", hide_short_help = true)]
    pub(crate) debug: bool,
    /// When to colour the output: auto, always, never
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, help_heading = "Output", hide_short_help = true)]
    pub(crate) color: ColorChoice,
}

#[derive(Subcommand, Debug)]
// Parsed once per run: the size of its largest variant (watch's many flags) costs nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Command {
    /// Compare a release's recorded objects with the cluster
    #[command(after_help = after(CHECK_HELP, "check"))]
    Check(CheckArgs),
    /// Render the release's chart again from its record and show documents that render
    /// differently from the stored manifest (lookup, random functions, Capabilities)
    #[command(after_help = after(RENDER_HELP, "render"), mut_arg("output", |a| a
        .value_parser(output_formats(Format::names(Writes::Render)))
        .help(Format::help(Writes::Render))))]
    Render(RenderArgs),
    /// Put drifted objects back to the recorded revision, without a new Helm revision
    #[command(after_help = after(REPAIR_HELP, "repair"), mut_arg("output", |a| a
        .value_parser(output_formats(Format::names(Writes::Repair)))
        .help(Format::help(Writes::Repair))))]
    Repair(RepairArgs),
    /// Record the release's current drift as accepted: check then fails only on new or changed
    /// drift
    #[command(after_help = after(ACCEPT_HELP, "accept"))]
    Accept(AcceptArgs),
    /// Watch releases continuously: metrics, Events and notifications once per drift, and
    /// optional self-healing
    // -v and --show-secrets shape check's report: watch refuses them, so its help leaves them out.
    #[command(after_help = after(WATCH_HELP, "watch"),
        mut_arg("verbose", |a| a.hide(true)),
        mut_arg("show_secrets", |a| a.hide(true)),
        mut_arg("include_crds", |a| a.hide_short_help(true)),
        mut_arg("hooks", |a| a.hide_short_help(true)),
        mut_arg("fight_window", |a| a.hide_short_help(true)))]
    Watch(WatchArgs),
    /// Warn (or refuse) at the prompt when someone changes or deletes what Helm manages: an
    /// admission guard (ValidatingAdmissionPolicy) for the selected releases
    #[command(after_help = after(GUARD_HELP, "guard"))]
    Guard(GuardArgs),
    /// Break-glass: keep a hand edit for a while, the watcher reporting the drift as paused and
    /// not healing it, until the pause ends by itself
    #[command(after_help = after(PAUSE_HELP, "pause"))]
    Pause(PauseArgs),
    /// What the next helm upgrade would do to the cluster as it is now: each object created,
    /// updated or deleted, whether the upgrade would fail, and what becomes of today's drift
    #[command(after_help = after(PLAN_HELP, "plan"), mut_arg("output", |a| a
        .value_parser(output_formats(Format::names(Writes::Plan)))
        .help(Format::help(Writes::Plan))))]
    Plan(PlanArgs),
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
    /// Let a selection that matches no release pass (exit 0); by default it is an error, so
    /// that a CI gate with a typo in its namespace or selector is never green
    #[arg(long, help_heading = "Selection")]
    pub(crate) allow_empty: bool,
    /// Accepted drift: a baseline FILE; `cluster=NAMESPACE` for ConfigMaps kept in a namespace
    /// you name; `cluster` for ConfigMaps next to the releases, taken only from namespaces you
    /// trust (--trust-namespace: whoever writes ConfigMaps there could accept any drift)
    /// [default: ./.helm-drift-baseline.yaml when present]
    #[arg(long, value_name = "FILE|cluster[=NAMESPACE]", help_heading = "Comparison")]
    pub(crate) baseline: Option<String>,
    /// Say which value of the release produced each modified field, and the helm upgrade
    /// that would make the live state the desired state
    #[arg(long, help_heading = "Output")]
    pub(crate) explain: bool,
    /// Also render the chart now (stored values; lookup answered by the cluster only where
    /// --trust-namespace trusts the record) and show what a helm upgrade with the same values
    /// would change
    #[arg(long, help_heading = "Output")]
    pub(crate) rerender: bool,
    /// With --explain or --rerender: the chart's source directory (needed for charts with
    /// subcharts)
    #[arg(long, help_heading = "Output", hide_short_help = true)]
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
    /// Name who made each drift from the API server's audit log FILE (the log backend's JSON
    /// lines, `--audit-log-path`, gzipped or not; `-` reads stdin; repeatable for rotated
    /// files): user, impersonator, client, time
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub(crate) audit_log: Vec<PathBuf>,
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
    #[arg(long, help_heading = "Selection", hide_short_help = true)]
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
    /// Only repair this object (NAMESPACE/KIND/NAME, or KIND/NAME where it names one; repeatable)
    #[arg(long, value_name = "[NAMESPACE/]KIND/NAME", help_heading = "Repair")]
    pub(crate) only: Vec<String>,
    /// Also remove fields that other field managers added (the verdict "fields added")
    #[arg(long, help_heading = "Repair")]
    pub(crate) remove_foreign: bool,
    /// Show the plan and validate it with server dry-runs; change nothing
    #[arg(long, help_heading = "Repair")]
    pub(crate) dry_run: bool,
    /// Repair through Helm: `helm upgrade` of the stored chart and values (a new revision); it
    /// runs the record's templates and hooks with your rights, so only with --trust-namespace
    #[arg(long, help_heading = "Repair")]
    pub(crate) upgrade: bool,
    /// With --upgrade: the chart's source directory (needed for charts with subcharts)
    #[arg(long, requires = "upgrade", help_heading = "Repair", hide_short_help = true)]
    pub(crate) chart: Option<PathBuf>,
    /// Write as this ServiceAccount of the namespace the release's record is stored in
    /// (impersonated), for a record of a namespace you do not trust: the API server then allows
    /// only what that namespace's own identity may do. Without it, and without
    /// --trust-namespace, nothing is written on what an untrusted record says
    #[arg(long, value_name = "NAME", conflicts_with = "upgrade", help_heading = "Repair")]
    pub(crate) repair_service_account: Option<String>,
    /// Replace (delete and create as recorded) an object whose repair the API server refuses
    /// because a field that cannot change was changed (as Fleet's `force`); without it such a
    /// repair is refused and nothing is applied
    #[arg(long, conflicts_with = "upgrade", help_heading = "Repair")]
    pub(crate) replace: bool,
    /// Accepted drift, kept as it is: a baseline FILE; `cluster=NAMESPACE` or `cluster`, as for
    /// check [default: ./.helm-drift-baseline.yaml when present]
    #[arg(long, value_name = "FILE|cluster[=NAMESPACE]", conflicts_with = "upgrade", help_heading = "Repair")]
    pub(crate) baseline: Option<String>,
    /// Put back accepted drift too (no baseline is read; --upgrade always does, as helm upgrade)
    #[arg(long, conflicts_with = "baseline", help_heading = "Repair")]
    pub(crate) include_accepted: bool,
    #[command(flatten)]
    pub(crate) inventory: ClustersArgs,
    /// With --clusters: the one cluster of the inventory to repair in (as check names it:
    /// `NAMESPACE/NAME` for Cluster API, the Secret's name for Argo CD)
    #[arg(long, value_name = "NAME", requires = "clusters", conflicts_with = "upgrade")]
    pub(crate) cluster: Option<String>,
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
    /// Only this object's drift (NAMESPACE/KIND/NAME, or KIND/NAME where it names one; repeatable)
    #[arg(long, value_name = "[NAMESPACE/]KIND/NAME", help_heading = "Selection")]
    pub(crate) only: Vec<String>,
    /// Only drift at or under this JSON pointer (repeatable)
    #[arg(long, value_name = "POINTER", help_heading = "Selection")]
    pub(crate) path: Vec<String>,
    /// Also drop the release's entries whose drift is gone
    #[arg(long, help_heading = "Selection")]
    pub(crate) prune: bool,
    /// The acceptance ends by itself this long from now (24h, 30m): the drift is drift again
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Selection")]
    pub(crate) expires: Option<std::time::Duration>,
    /// Where to keep it: a FILE; `cluster=NAMESPACE` for a ConfigMap in a namespace you name;
    /// `cluster` for a ConfigMap next to the release (a check takes it only with
    /// --trust-namespace for that namespace) [default: ./.helm-drift-baseline.yaml]
    #[arg(long, value_name = "FILE|cluster[=NAMESPACE]", help_heading = "Comparison")]
    pub(crate) baseline: Option<String>,
    /// Show what would be accepted; write nothing
    #[arg(long, help_heading = "Selection")]
    pub(crate) dry_run: bool,
    /// Output format
    #[arg(short, long, value_enum, default_value = "text", help_heading = "Output")]
    pub(crate) output: AcceptFormat,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
}

/// `accept -o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AcceptFormat {
    /// One line per drift accepted
    Text,
    /// One document: the drift accepted, where, and how many entries the release has
    Json,
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

/// The flags of `helm drift pause`.
#[derive(Args, Debug)]
pub(crate) struct PauseArgs {
    /// The release whose self-healing to pause
    pub(crate) release: String,
    /// How long (30m, 2h); the pause ends by itself then
    #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration, required_unless_present = "end")]
    pub(crate) duration: Option<std::time::Duration>,
    /// Why: kept with the pause, in the watcher's Event and log
    #[arg(long, required_unless_present = "end")]
    pub(crate) reason: Option<String>,
    /// Only this object of the release (KIND/NAME, or NAMESPACE/KIND/NAME for one of namesakes in
    /// several namespaces)
    #[arg(long, value_name = "[NAMESPACE/]KIND/NAME")]
    pub(crate) object: Option<String>,
    /// Only on this cluster of a fleet (its inventory name, NAMESPACE/NAME or NAME): the pause
    /// is written in the management cluster, where the fleet's watcher reads it
    #[arg(long, value_name = "NAME")]
    pub(crate) cluster: Option<String>,
    /// End the pause now
    #[arg(long, conflicts_with_all = ["duration", "reason"])]
    pub(crate) end: bool,
    /// The watcher's namespace, where pauses live (whoever may write there may pause)
    /// [default: helm-drift, the chart's usual home; a watcher must announce there that it reads them]
    #[arg(long, value_name = "NAMESPACE", env = "HELM_DRIFT_PAUSE_NAMESPACE")]
    pub(crate) pause_namespace: Option<String>,
}

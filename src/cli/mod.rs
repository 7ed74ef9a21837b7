//! The command line: clap definitions, turned once into [`Settings`] (see [`resolve`]); runs the
//! command and maps its outcome to an exit code.

mod complete;
mod resolve;

use complete::complete;
use resolve::{compare_options, parse_duration, settings};

use crate::commands::{accept, check, render, repair, upgrade};
use crate::engine::Selection;
use crate::helm::HelmBinary;
use crate::model::{ExitStatus, RunReport};
use crate::report::{Format, Style, Terminal};
use crate::settings::Settings;
use crate::watch;
use anyhow::{Result, bail};
use clap::{Args, Parser, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

const CHECK_HELP: &str = "\
Examples:
  helm drift check web                     # one release in the current namespace
  helm drift check -A -o junit > drift.xml # every release, as a CI report
  helm drift check web -v --ignore kind=Deployment:/spec/replicas

Exit codes:
  0  every checked release is in sync
  2  drift found
  1  error (bad input, release not found, cluster unreachable, forbidden); an error outranks drift";

const REPAIR_HELP: &str = "\
Examples:
  helm drift repair web --dry-run          # the plan, validated by server dry-runs
  helm drift repair web --only Deployment/web-api
  helm drift repair web --upgrade          # through helm upgrade instead (a new revision)

Exit codes:
  0  repaired (or nothing to repair): in sync, but for fields added outside Helm that repair
     keeps without --remove-foreign (check still reports those)
  2  drift remains (or, with --dry-run, something would change)
  1  error: a step was refused or failed (see which were applied)";

const RENDER_HELP: &str = "\
Examples:
  helm drift render web                    # does the stored chart still render the same?
  helm drift render web --chart ./charts/web --revision 3

Exit codes:
  0  every document renders as stored
  2  some documents render differently
  1  error";

const ACCEPT_HELP: &str = "\
Examples:
  helm drift accept web                          # everything web drifted by, into ./.helm-drift-baseline.yaml
  helm drift accept web --only Deployment/web --path /spec/replicas
  helm drift accept web --baseline cluster --prune

Exit codes:
  0  recorded
  1  error";

const WATCH_HELP: &str = "\
Examples:
  helm drift watch -A                              # every release, metrics on :8080
  helm drift watch -A --notify https://hooks.slack.com/services/... --notify-format slack
  helm drift watch -A --repair --repair-selector helm-drift.io/repair=true
  helm drift watch -A --leader-elect --log-format json   # in the cluster (charts/helm-drift)

Endpoints: /metrics (OpenMetrics), /healthz, /readyz (after the first full check).
Runs until SIGINT or SIGTERM; exits 0 then, 1 on an error at start.";

const TOP_HELP: &str = "\
Examples:
  helm drift check web
  helm drift check -A --summary
  helm drift repair web --dry-run

Exit codes: 0 in sync, 2 drift found, 1 error (an error outranks drift)";

#[derive(Parser, Debug)]
#[command(
    name = "helm-drift",
    bin_name = "helm drift",
    version,
    about = "Find drift between Helm releases and the live cluster",
    after_help = TOP_HELP
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

/// Helm's connection settings: the environment Helm gives a plugin, or the same as flags.
#[derive(Args, Debug)]
#[command(next_help_heading = "Connection (Helm's global flags and environment)")]
struct Global {
    /// Namespace of the release (Helm: -n/--namespace)
    #[arg(short = 'n', long, env = "HELM_NAMESPACE", global = true)]
    namespace: Option<String>,
    /// Kubeconfig context to use
    #[arg(long, env = "HELM_KUBECONTEXT", global = true)]
    kube_context: Option<String>,
    /// Path(s) of kubeconfig files (a path list, like KUBECONFIG)
    #[arg(long, env = "KUBECONFIG", global = true)]
    kubeconfig: Option<String>,
    /// Address and port of the Kubernetes API server
    #[arg(long, env = "HELM_KUBEAPISERVER", global = true)]
    kube_apiserver: Option<String>,
    /// Bearer token for authentication
    #[arg(long, env = "HELM_KUBETOKEN", global = true, hide_env_values = true)]
    kube_token: Option<String>,
    /// User to impersonate
    #[arg(long, env = "HELM_KUBEASUSER", global = true)]
    kube_as_user: Option<String>,
    /// Groups to impersonate (comma-separated)
    #[arg(long, env = "HELM_KUBEASGROUPS", global = true, value_delimiter = ',')]
    kube_as_group: Vec<String>,
    /// Certificate authority file for the API server
    #[arg(long, env = "HELM_KUBECAFILE", global = true)]
    kube_ca_file: Option<String>,
    /// Skip verifying the API server's certificate (insecure)
    /// (also HELM_KUBEINSECURE_SKIP_TLS_VERIFY=true)
    #[arg(long, global = true)]
    kube_insecure_skip_tls_verify: bool,
    /// Server name for the API server's certificate
    #[arg(long, env = "HELM_KUBETLS_SERVER_NAME", global = true)]
    kube_tls_server_name: Option<String>,
    /// Queries per second to the API server (Helm's --qps; 0 = no limit)
    #[arg(long, env = "HELM_QPS", global = true)]
    qps: Option<String>,
    /// Requests allowed in a burst (Helm's --burst-limit)
    #[arg(long, env = "HELM_BURST_LIMIT", global = true)]
    burst_limit: Option<String>,
    /// Give up on a request to the API server after this long (e.g. 500ms, 30s, 2m); transient
    /// failures are retried
    #[arg(long, global = true, default_value = "30s", value_parser = parse_duration)]
    timeout: std::time::Duration,
    /// Helm storage driver: secrets (default), configmaps, sql
    #[arg(long, env = "HELM_DRIVER", global = true)]
    driver: Option<String>,
    /// PostgreSQL connection string for the sql driver
    #[arg(long, env = "HELM_DRIVER_SQL_CONNECTION_STRING", global = true, hide_env_values = true)]
    sql_connection: Option<String>,
    /// Verbose diagnostics on stderr
    /// (also HELM_DEBUG=true)
    #[arg(long, global = true, help_heading = "Output")]
    debug: bool,
    /// When to colour the output: auto, always, never
    #[arg(long, global = true, default_value = "auto", value_parser = ["auto", "always", "never"], help_heading = "Output")]
    color: String,
}

#[derive(Subcommand, Debug)]
// Parsed once per run: the size of its largest variant (watch's many flags) costs nothing.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Compare a release's recorded objects with the cluster
    #[command(after_help = CHECK_HELP)]
    Check {
        #[command(flatten)]
        select: SelectionArgs,
        /// Check this revision instead of the latest deployed one (one release only)
        #[arg(long, help_heading = "Selection")]
        revision: Option<u32>,
        /// Accepted drift: a baseline FILE, or `cluster` for ConfigMaps next to the releases
        /// [default: ./.helm-drift-baseline.yaml when present]
        #[arg(long, value_name = "FILE|cluster", help_heading = "Comparison")]
        baseline: Option<String>,
        /// Say which value of the release produced each modified field, and the helm upgrade
        /// that would make the live state the desired state
        #[arg(long, help_heading = "Output")]
        explain: bool,
        /// Also render the chart now (stored values, lookup answered by the cluster) and show
        /// what a helm upgrade with the same values would change
        #[arg(long, help_heading = "Output")]
        rerender: bool,
        /// With --explain or --rerender: the chart's source directory (needed for charts with
        /// subcharts)
        #[arg(long, help_heading = "Output")]
        chart: Option<PathBuf>,
        #[command(flatten)]
        compare: CompareArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Render the release's chart again from its record and show documents that render
    /// differently from the stored manifest (lookup, random functions, Capabilities)
    #[command(after_help = RENDER_HELP)]
    Render {
        /// The release to render
        release: String,
        /// Render this revision instead of the latest deployed one
        #[arg(long, help_heading = "Selection")]
        revision: Option<u32>,
        /// The chart's source directory (needed for charts with subcharts, which Helm does not store)
        #[arg(long, help_heading = "Selection")]
        chart: Option<PathBuf>,
        /// Show secret values in the documents (hidden by default)
        #[arg(long, help_heading = "Output")]
        show_secrets: bool,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Put drifted objects back to the recorded revision, without a new Helm revision
    #[command(after_help = REPAIR_HELP)]
    Repair {
        /// The release to repair
        release: String,
        /// Only repair this object (KIND/NAME, repeatable)
        #[arg(long, value_name = "KIND/NAME", help_heading = "Repair")]
        only: Vec<String>,
        /// Also remove fields that other field managers added (changed outside Helm)
        #[arg(long, help_heading = "Repair")]
        remove_foreign: bool,
        /// Show the plan and validate it with server dry-runs; change nothing
        #[arg(long, help_heading = "Repair")]
        dry_run: bool,
        /// Repair through Helm: `helm upgrade` of the stored chart and values (a new revision)
        #[arg(long, help_heading = "Repair")]
        upgrade: bool,
        /// With --upgrade: the chart's source directory (needed for charts with subcharts)
        #[arg(long, requires = "upgrade", help_heading = "Repair")]
        chart: Option<PathBuf>,
        #[command(flatten)]
        compare: CompareArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Record the release's current drift as accepted: check then fails only on new or changed
    /// drift
    #[command(after_help = ACCEPT_HELP)]
    Accept {
        /// The release whose drift is accepted
        release: String,
        /// Only this object's drift (KIND/NAME, repeatable)
        #[arg(long, value_name = "KIND/NAME", help_heading = "Selection")]
        only: Vec<String>,
        /// Only drift at or under this JSON pointer (repeatable)
        #[arg(long, value_name = "POINTER", help_heading = "Selection")]
        path: Vec<String>,
        /// Also drop the release's entries whose drift is gone
        #[arg(long, help_heading = "Selection")]
        prune: bool,
        /// Where to keep it: a FILE, or `cluster` for a ConfigMap next to the release
        /// [default: ./.helm-drift-baseline.yaml]
        #[arg(long, value_name = "FILE|cluster", help_heading = "Comparison")]
        baseline: Option<String>,
        #[command(flatten)]
        compare: CompareArgs,
    },
    /// Watch releases continuously: metrics, Events and notifications once per drift, and
    /// optional self-healing
    #[command(after_help = WATCH_HELP)]
    Watch {
        #[command(flatten)]
        select: SelectionArgs,
        /// Accepted drift: a baseline FILE, or `cluster` for ConfigMaps next to the releases
        #[arg(long, value_name = "FILE|cluster", help_heading = "Comparison")]
        baseline: Option<String>,
        /// A full check of every release this often, besides the watches (e.g. 10m, 1h)
        #[arg(long, default_value = "10m", value_parser = parse_duration, help_heading = "Watch")]
        resync: std::time::Duration,
        /// Wait this long after a change for more before checking again
        #[arg(long, default_value = "300ms", value_parser = parse_duration, help_heading = "Watch")]
        debounce: std::time::Duration,
        /// Where /metrics, /healthz and /readyz are served (loopback by default; the chart serves on
        /// every interface of the pod)
        #[arg(long, default_value = "127.0.0.1:8080", help_heading = "Watch")]
        metrics_address: String,
        /// POST each new or resolved drift to this URL (repeatable; $HELM_DRIFT_NOTIFY: comma-separated)
        #[arg(
            long,
            value_name = "URL",
            env = "HELM_DRIFT_NOTIFY",
            value_delimiter = ',',
            hide_env_values = true,
            help_heading = "Watch"
        )]
        notify: Vec<String>,
        /// Body of notifications: json (the -o json object shape) or slack (incoming webhooks)
        #[arg(long, default_value = "json", value_parser = ["json", "slack"], help_heading = "Watch")]
        notify_format: String,
        /// Log lines on stderr: text or json
        #[arg(long, default_value = "text", value_parser = ["text", "json"], help_heading = "Watch")]
        log_format: String,
        /// Repair drift of the releases that opt in (see --repair-selector), as `helm drift repair`
        #[arg(long, help_heading = "Self-healing")]
        repair: bool,
        /// Releases whose storage labels match this selector opt in to --repair
        #[arg(long, default_value = "helm-drift.io/repair=true", requires = "repair", help_heading = "Self-healing")]
        repair_selector: String,
        /// With --repair: also remove fields other field managers added
        #[arg(long, requires = "repair", help_heading = "Self-healing")]
        remove_foreign: bool,
        /// At least this long between two repairs of one release
        #[arg(long, default_value = "30s", value_parser = parse_duration, help_heading = "Self-healing")]
        repair_cooldown: std::time::Duration,
        /// Stop repairing an object that drifts again after this many repairs within --fight-window
        #[arg(long, default_value_t = 3, help_heading = "Self-healing")]
        fight_limit: usize,
        #[arg(long, default_value = "10m", value_parser = parse_duration, help_heading = "Self-healing")]
        /// The window of --fight-limit
        fight_window: std::time::Duration,
        /// Repair as this ServiceAccount of each release's namespace (impersonated): the API
        /// server decides what a repair may write, as Flux's --default-service-account
        #[arg(long, value_name = "NAME", requires = "repair", help_heading = "Self-healing")]
        repair_service_account: Option<String>,
        /// Let the releases of this namespace repair objects outside it (cluster-scoped objects,
        /// other namespaces); without it self-healing writes only in the release's namespace
        /// (repeatable)
        #[arg(long, value_name = "NAMESPACE", requires = "repair", help_heading = "Self-healing")]
        repair_trust_namespace: Vec<String>,
        /// The Secret (in the watcher's namespace) holding the key of drift signatures; created
        /// with a random key when absent
        #[arg(long, value_name = "NAME", default_value = "helm-drift-signature-key", help_heading = "Watch")]
        signature_key_secret: String,
        /// Act only while holding a coordination.k8s.io Lease (for several replicas)
        #[arg(long, help_heading = "Leader election")]
        leader_elect: bool,
        /// Name of the Lease
        #[arg(long, default_value = "helm-drift", help_heading = "Leader election")]
        lease_name: String,
        /// Namespace of the Lease [default: the namespace from -n or the context]
        #[arg(long, help_heading = "Leader election")]
        lease_namespace: Option<String>,
        /// How long a leader holds the Lease without renewing it
        #[arg(long, default_value = "15s", value_parser = parse_duration, help_heading = "Leader election")]
        lease_duration: std::time::Duration,
        #[command(flatten)]
        compare: CompareArgs,
    },
    /// Print the version
    Version,
    /// Completion candidates for Helm's plugin.complete (sub-command, arguments, word)
    #[command(name = "__complete", hide = true)]
    Complete {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
}

/// Which releases `check` and `watch` look at.
#[derive(Args, Debug)]
#[command(next_help_heading = "Selection")]
struct SelectionArgs {
    /// Releases (in the namespace, or in every namespace with -A)
    releases: Vec<String>,
    /// Every release in the namespace
    #[arg(long)]
    all: bool,
    /// Releases in every namespace
    #[arg(short = 'A', long)]
    all_namespaces: bool,
    /// Only releases whose storage labels match this selector (like `helm list -l`)
    #[arg(short = 'l', long)]
    selector: Option<String>,
    /// How many releases to check at once (latency-bound: more in flight is faster, at some
    /// memory and API server load)
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
}

impl SelectionArgs {
    /// The selection, refusing an empty one (`what`: check, watch).
    fn selection(self, what: &str, revision: Option<u32>) -> Result<Selection> {
        let SelectionArgs { releases, all, all_namespaces, selector, concurrency } = self;
        if releases.is_empty() && !all && !all_namespaces && selector.is_none() {
            bail!("name a release to {what}, or use --all (this namespace), -A (every namespace) or -l SELECTOR");
        }
        if revision.is_some() && (releases.len() != 1 || all || all_namespaces) {
            bail!("--revision needs exactly one release");
        }
        Ok(Selection { releases, all_namespaces, selector, revision, concurrency })
    }
}

/// How objects are compared and reported.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Comparison")]
struct CompareArgs {
    /// Never ask the server for a dry-run: compare client-side only (get/list rights suffice)
    #[arg(long)]
    read_only: bool,
    /// Ignore a JSON pointer: [group=RE,version=RE,kind=RE,name=RE,namespace=RE:]/pointer[,/pointer]
    #[arg(long = "ignore", value_name = "RULE")]
    ignore: Vec<String>,
    /// Config file with ignore rules [default: $HELM_DRIFT_CONFIG, else ./.helm-drift.yaml if present]
    #[arg(long, env = "HELM_DRIFT_CONFIG")]
    config: Option<PathBuf>,
    /// Report replica drift even when a HorizontalPodAutoscaler manages the workload
    #[arg(long)]
    check_hpa_replicas: bool,
    /// Also check the CRDs from the chart's crds/ folder (Helm installs them once, unmanaged)
    #[arg(long)]
    include_crds: bool,
    /// Count expected changes (rollout restarts, injected CA bundles, Helm's own request
    /// mutated at admission) and fields owned by another manager with the recorded values as
    /// drift
    #[arg(long)]
    strict: bool,
    /// Honour opt-out annotations (helm-drift.io/ignore, helm-drift.io/disabled, Flux's
    /// driftDetection) added to live objects, as Flux does; by default only the chart's count and
    /// a live-only one is reported as drift
    #[arg(long)]
    trust_live_annotations: bool,
    /// Refuse a release record holding more objects than this (a forged record cannot make the
    /// check read and compare without bound)
    #[arg(long, value_name = "N", default_value_t = crate::settings::MAX_OBJECTS)]
    max_objects: usize,
    /// Also show in-sync objects, ignored differences, the engine used and notes
    #[arg(short, long, help_heading = "Output")]
    verbose: bool,
    /// Show secret values in differences (hidden by default)
    #[arg(long, help_heading = "Output")]
    show_secrets: bool,
}

/// How the report is written.
#[derive(Args, Debug)]
#[command(next_help_heading = "Output")]
struct OutputArgs {
    /// Output format: text, json, junit
    #[arg(short, long, default_value = "text", value_parser = ["text", "json", "junit"])]
    output: String,
    /// Lines of context around each change in diffs
    #[arg(long, default_value_t = 3)]
    context: usize,
    /// Print nothing; only the exit code tells (errors still go to stderr)
    #[arg(short, long)]
    quiet: bool,
    /// Print only the verdict line of each release
    #[arg(long)]
    summary: bool,
}

/// Parses the command line, runs it and returns the process exit code (0, 1 or 2).
pub fn main() -> ExitCode {
    watch::note_parent();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            let mut printer = Terminal::terminal(Style::default());
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    printer.text(&text);
                    ExitStatus::InSync.into()
                }
                _ => {
                    printer.usage(&text);
                    ExitStatus::Error.into()
                }
            };
        }
    };
    let now = Some(k8s_openapi::jiff::Timestamp::now());
    let mut printer = Terminal::terminal(Style { color: use_color(&cli.global.color), now, ..Style::default() });
    match run(cli, &mut printer) {
        Ok(status) => status.into(),
        Err(e) => {
            printer.error(&e);
            ExitStatus::Error.into()
        }
    }
}

fn run(cli: Cli, printer: &mut Terminal) -> Result<ExitStatus> {
    let mut settings = settings(&cli.global)?;
    match cli.command {
        Command::Version => {
            printer.text(&format!("{}\n", version_line()));
            Ok(ExitStatus::InSync)
        }
        Command::Complete { words } => {
            let lines = runtime()?.block_on(complete(&settings, &words));
            printer.text(&lines);
            Ok(ExitStatus::InSync)
        }
        Command::Repair { release, only, remove_foreign, dry_run, upgrade, chart, compare, output } => {
            if output.output != "text" {
                bail!("repair writes a text report only (-o {} is for check and render)", output.output);
            }
            settings.compare = compare_options(&compare)?;
            warn(printer, &settings);
            output_style(&mut printer.style, &compare, &output);
            if upgrade {
                let request = upgrade::UpgradeRequest { release, chart, helm: HelmBinary::from_env(), dry_run };
                let report = runtime()?.block_on(upgrade::run(&settings, &request))?;
                printer.upgrade(&report);
                return Ok(report.exit_status());
            }
            let request = repair::RepairRequest { release, only, remove_foreign, dry_run, authority: None };
            let report = runtime()?.block_on(repair::run(&settings, &request))?;
            printer.repair(&report);
            Ok(report.exit_status())
        }
        Command::Render { release, revision, chart, show_secrets, output } => {
            output_style(&mut printer.style, &CompareArgs { show_secrets, ..CompareArgs::default() }, &output);
            let request = render::RenderRequest { release, revision, chart, helm: HelmBinary::from_env() };
            let report = runtime()?.block_on(render::run(&settings, &request))?;
            printer.render(&report);
            Ok(report.exit_status())
        }
        Command::Accept { release, only, path, prune, baseline, compare } => {
            settings.compare = compare_options(&compare)?;
            warn(printer, &settings);
            let store = resolve::baseline_store(baseline.as_deref(), true).expect("accept always has a store");
            let request = accept::AcceptRequest { release, only, paths: path, prune, store };
            let report = runtime()?.block_on(accept::run(&settings, &request))?;
            printer.accept(&report);
            Ok(ExitStatus::InSync)
        }
        Command::Watch {
            select,
            baseline,
            resync,
            debounce,
            metrics_address,
            notify,
            notify_format,
            log_format,
            repair,
            repair_selector,
            remove_foreign,
            repair_cooldown,
            fight_limit,
            fight_window,
            repair_service_account,
            repair_trust_namespace,
            signature_key_secret,
            leader_elect,
            lease_name,
            lease_namespace,
            lease_duration,
            compare,
        } => {
            let selection = select.selection("watch", None)?;
            if compare.verbose || compare.show_secrets {
                bail!(
                    "-v and --show-secrets shape check's report; watch reports through metrics, Events, notifications and logs, never with secret values"
                );
            }
            settings.compare = compare_options(&compare)?;
            warn(printer, &settings);
            let default_file = std::path::Path::new(crate::baseline::DEFAULT_FILE).is_file();
            settings.baseline = resolve::baseline_store(baseline.as_deref(), default_file);
            let options = watch::WatchOptions {
                selection,
                resync,
                debounce,
                metrics_address,
                notify,
                notify_format: if notify_format == "slack" { watch::Format::Slack } else { watch::Format::Json },
                log: watch::Log { json: log_format == "json" },
                repair: repair.then(|| watch::RepairOptions {
                    selector: repair_selector,
                    remove_foreign,
                    service_account: repair_service_account,
                    trusted_namespaces: repair_trust_namespace,
                    policy: watch::Policy {
                        cooldown: repair_cooldown,
                        fight_limit: fight_limit.max(1),
                        window: fight_window,
                    },
                }),
                signature_key_secret,
                leader: leader_elect.then(|| watch::LeaderOptions {
                    name: lease_name,
                    namespace: lease_namespace,
                    identity: identity(),
                    duration: lease_duration.as_secs().max(2),
                }),
            };
            runtime()?.block_on(watch::run(&settings, options))?;
            Ok(ExitStatus::InSync)
        }
        Command::Check { select, revision, explain, rerender, chart, baseline, compare, output } => {
            let selection = select.selection("check", revision)?;
            settings.compare = compare_options(&compare)?;
            warn(printer, &settings);
            let default_file = std::path::Path::new(crate::baseline::DEFAULT_FILE).is_file();
            settings.baseline = resolve::baseline_store(baseline.as_deref(), default_file);
            output_style(&mut printer.style, &compare, &output);
            let progress = crate::report::progress(&printer.style);
            let started = std::time::Instant::now();
            if chart.is_some() && !explain && !rerender {
                bail!("--chart is for --explain and --rerender");
            }
            let rendering = (explain || rerender).then(|| check::Rendering {
                helm: HelmBinary::from_env(),
                chart,
                explain,
                rerender,
            });
            let report = match runtime()?.block_on(check::run(&settings, &selection, rendering.as_ref(), &progress)) {
                Ok(report) => report,
                // A machine output is a document on every path: what could not be checked, and why.
                Err(e) if printer.style.format != crate::report::Format::Text => {
                    let namespace =
                        if selection.all_namespaces { "" } else { settings.namespace.as_deref().unwrap_or("") };
                    let report = RunReport::unchecked(&selection.releases, namespace, &crate::errors::chain(&e));
                    printer.check(&report);
                    return Ok(report.exit_status());
                }
                Err(e) => return Err(e),
            };
            if settings.debug {
                printer.debug(&debug_summary(&settings, &report, started.elapsed()));
            }
            for w in unmatched_gitops(&settings, &report) {
                printer.warning(&w);
            }
            printer.check(&report);
            Ok(report.exit_status())
        }
    }
}

/// `helm-drift VERSION (commit C, built DATE)`: the version, the commit it was built from and
/// the build date (see build.rs).
pub fn version_line() -> String {
    format!(
        "helm-drift {} (commit {}, built {})",
        env!("CARGO_PKG_VERSION"),
        env!("HELM_DRIFT_COMMIT"),
        env!("HELM_DRIFT_BUILD_DATE")
    )
}

/// This replica's name in a Lease: the pod's (host) name and the process id.
fn identity() -> String {
    let host = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_string()))
        .unwrap_or_else(|| "helm-drift".into());
    format!("{host}-{}", std::process::id())
}

/// When no Flux HelmRelease or Argo CD Application of the config file describes a release this
/// run checked, each says so: its rules apply to nothing (an Application named unlike its
/// release, without `spec.source.helm.releaseName`, is the common cause).
fn unmatched_gitops(settings: &Settings, run: &RunReport) -> Vec<String> {
    let checked: Vec<&str> = run
        .outcomes
        .iter()
        .filter_map(|o| match o {
            crate::model::Outcome::Checked(r) => Some(r.release.as_str()),
            crate::model::Outcome::Failed(_) => None,
        })
        .collect();
    let docs = &settings.compare.gitops;
    if checked.is_empty() || docs.iter().any(|(_, release)| checked.contains(&release.as_str())) {
        return Vec::new();
    }
    docs.iter()
        .map(|(what, release)| {
            format!("{what} describes release {release:?}, which this run did not check: its rules apply to nothing (name the release in spec.source.helm.releaseName or spec.releaseName)")
        })
        .collect()
}

/// The config file's warnings, on stderr.
fn warn(printer: &mut Terminal, settings: &Settings) {
    for w in &settings.compare.warnings {
        printer.warning(w);
    }
}

/// What `--debug` / `HELM_DEBUG` adds on stderr: where the run looked and what it found
/// (never credentials).
fn debug_summary(settings: &Settings, run: &RunReport, took: std::time::Duration) -> String {
    let c = &settings.connection;
    format!(
        "kubeconfig {:?}, context {}, API server {}, auth {}, namespace {}, driver {}; {} release(s), {} object(s) in {:.3}s",
        c.kubeconfig,
        c.context.as_deref().unwrap_or("(current)"),
        c.api_server.as_deref().unwrap_or("(from kubeconfig)"),
        if c.token.is_some() { "bearer token (hidden)" } else { "kubeconfig user" },
        settings.namespace.as_deref().unwrap_or("(context default)"),
        settings.driver.name(),
        run.outcomes.len(),
        run.objects(),
        took.as_secs_f64()
    )
}

/// The async runtime a command runs on.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build()
}

/// The report style the output and comparison flags ask for (no colour in JSON or JUnit).
fn output_style(style: &mut Style, compare: &CompareArgs, output: &OutputArgs) {
    style.verbose = compare.verbose;
    style.show_secrets = compare.show_secrets;
    style.context = output.context;
    style.quiet = output.quiet;
    style.summary = output.summary;
    style.format = match output.output.as_str() {
        "json" => Format::Json,
        "junit" => Format::Junit,
        _ => Format::Text,
    };
    if style.format != Format::Text {
        style.color = false;
    }
}

/// `--color` > `NO_COLOR` > `CLICOLOR_FORCE` > whether stdout is a terminal.
fn use_color(flag: &str) -> bool {
    let env = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    match flag {
        "always" => true,
        "never" => false,
        _ if env("NO_COLOR") => false,
        _ if std::env::var("CLICOLOR_FORCE").is_ok_and(|v| !v.is_empty() && v != "0") => true,
        _ => std::io::stdout().is_terminal(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// Each command's help groups its flags under headings, Helm's connection flags last, and
    /// ends with examples.
    #[test]
    fn help_groups_flags_and_ends_with_examples() {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        cli.build();
        for (name, headings) in [
            ("check", &["Selection:", "Comparison:", "Output:", "Connection"][..]),
            ("repair", &["Repair:", "Comparison:", "Output:", "Connection"][..]),
            ("render", &["Selection:", "Output:", "Connection"][..]),
        ] {
            let help = cli.find_subcommand_mut(name).unwrap().render_long_help().to_string();
            let at: Vec<usize> = headings.iter().map(|h| help.find(&format!("\n{h}")).expect(h)).collect();
            assert!(at.windows(2).all(|w| w[0] < w[1]), "{name}: headings in order\n{help}");
            let examples = help.find("\nExamples:\n  helm drift ").expect("examples");
            assert!(examples > at[at.len() - 1], "{name}: examples after the flags");
        }
    }

    /// One version, one place: plugin.yaml and the chart carry Cargo.toml's version, and the
    /// changelog has its section (scripts/version.sh --set writes them, --check checks a tag).
    #[test]
    fn one_version_everywhere() {
        let v = env!("CARGO_PKG_VERSION");
        let plugin: serde_yaml::Value = serde_yaml::from_str(include_str!("../../plugin.yaml")).unwrap();
        assert_eq!(plugin["version"], v, "plugin.yaml");
        let chart: serde_yaml::Value =
            serde_yaml::from_str(include_str!("../../charts/helm-drift/Chart.yaml")).unwrap();
        assert_eq!(chart["version"], v, "charts/helm-drift/Chart.yaml version");
        assert_eq!(chart["appVersion"], v, "charts/helm-drift/Chart.yaml appVersion");
        assert!(include_str!("../../CHANGELOG.md").contains(&format!("\n## [{v}] - ")), "CHANGELOG.md section");
        let line = version_line();
        assert!(line.starts_with(&format!("helm-drift {v} (commit ")) && line.contains(", built "), "{line}");
    }

    /// completion.yaml (Helm's static completion) lists every sub-command and its own flags.
    #[test]
    fn completion_yaml_matches_the_cli() {
        use clap::CommandFactory;
        #[derive(serde::Deserialize)]
        struct Cmd {
            name: String,
            #[serde(default)]
            flags: Vec<String>,
            #[serde(default)]
            commands: Vec<Cmd>,
        }
        let file: Cmd = serde_yaml::from_str(include_str!("../../completion.yaml")).unwrap();
        assert_eq!(file.name, "drift");
        let cli = Cli::command();
        let global: Vec<String> = cli.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect();
        let subs: Vec<_> = cli.get_subcommands().filter(|c| !c.is_hide_set()).collect();
        let listed: Vec<&str> = file.commands.iter().map(|c| c.name.as_str()).collect();
        let expected: Vec<&str> = subs.iter().map(|c| c.get_name()).filter(|n| *n != "help").collect();
        assert_eq!(listed, expected);
        for sub in subs {
            let mut flags: Vec<String> = Vec::new();
            for a in sub.get_arguments().filter(|a| !a.is_positional()) {
                if let Some(l) = a.get_long().filter(|l| !global.contains(&l.to_string()) && *l != "help") {
                    flags.push(l.to_string());
                }
            }
            if sub.get_name() != "version" {
                flags.push("color".into());
            }
            let entry = file.commands.iter().find(|c| c.name == sub.get_name()).unwrap();
            let mut have = entry.flags.clone();
            have.sort();
            flags.sort();
            assert_eq!(have, flags, "flags of {}", sub.get_name());
        }
    }
}

//! Flag groups several commands share (selection, comparison, output) and the value enums of
//! closed sets of values.

use crate::engine::Selection;
use crate::inventory::{InventoryKind, Scope};
pub(crate) use crate::model::parse_duration;
use crate::report::{Format, Writes};
use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Which releases `check` and `watch` look at.
#[derive(Args, Debug)]
#[command(next_help_heading = "Selection")]
pub(crate) struct SelectionArgs {
    /// Releases (in the namespace, or in every namespace with -A)
    pub(crate) releases: Vec<String>,
    /// Every release in the namespace
    #[arg(long)]
    pub(crate) all: bool,
    /// Releases in every namespace
    #[arg(short = 'A', long)]
    pub(crate) all_namespaces: bool,
    /// Only releases whose storage labels match this selector (like `helm list -l`)
    #[arg(short = 'l', long)]
    pub(crate) selector: Option<String>,
    /// How many releases to check at once (latency-bound: more in flight is faster, at some
    /// memory and API server load)
    #[arg(long, default_value_t = 32, hide_short_help = true)]
    pub(crate) concurrency: usize,
}

impl SelectionArgs {
    /// The selection, refusing an empty one (`what`: check, watch).
    pub(crate) fn selection(self, what: &str, revision: Option<u32>) -> Result<Selection> {
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
pub(crate) struct CompareArgs {
    /// Never ask the server for a dry-run: compare client-side only (get/list rights suffice)
    #[arg(long)]
    pub(crate) read_only: bool,
    /// Ignore a JSON pointer: [group=RE,version=RE,kind=RE,name=RE,namespace=RE:]/pointer[,/pointer]
    #[arg(long = "ignore", value_name = "RULE")]
    pub(crate) ignore: Vec<String>,
    /// Config file with ignore rules [default: $HELM_DRIFT_CONFIG, else ./.helm-drift.yaml if present]
    #[arg(long, env = "HELM_DRIFT_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Report replica drift even when a HorizontalPodAutoscaler manages the workload
    #[arg(long, hide_short_help = true)]
    pub(crate) check_hpa_replicas: bool,
    /// Also check the CRDs from the chart's crds/ folder (Helm installs them once, unmanaged)
    #[arg(long)]
    pub(crate) include_crds: bool,
    /// Also check the hook objects Helm keeps after their hooks ran (no delete policy, or only
    /// before-hook-creation: ConfigMaps, RBAC, CRDs of pre-install hooks...), in a section of
    /// their own; Jobs and Pods for what they declare, not their run state
    #[arg(long)]
    pub(crate) hooks: bool,
    /// Count expected changes (rollout restarts, injected CA bundles, Helm's own request
    /// mutated at admission) and fields owned by another manager with the recorded values as
    /// drift
    #[arg(long)]
    pub(crate) strict: bool,
    /// Honour opt-out annotations (helm-drift.io/ignore, helm-drift.io/disabled, Flux's
    /// driftDetection) added to live objects, as Flux does; by default only the chart's count and
    /// a live-only one is reported as drift
    #[arg(long, hide_short_help = true)]
    pub(crate) trust_live_annotations: bool,
    /// Trust the release records of this namespace as your own (repeatable; `*`: every
    /// namespace). A record is written by whoever may write Secrets in its namespace, so what it
    /// lists outside that namespace (cluster-scoped objects included) is judged only where the
    /// object names its release itself, and `repair` and the watcher write what a record says
    /// with your (its) own rights only when trusted, else only as a ServiceAccount of its
    /// namespace (--repair-service-account). Set once: HELM_DRIFT_TRUST_NAMESPACE=NS[,NS...]
    #[arg(
        long,
        value_name = "NAMESPACE",
        alias = "repair-trust-namespace",
        env = "HELM_DRIFT_TRUST_NAMESPACE",
        value_delimiter = ','
    )]
    pub(crate) trust_namespace: Vec<String>,
    /// The field manager Helm's writes to the releases are under, instead of the one learnt from
    /// their objects: `helm` for the helm command; a controller built on Helm's SDK writes as
    /// its own name (Flux's helm-controller, Cluster API's Helm add-on provider `manager`).
    /// `NAMESPACE=NAME` pins it for the releases of one namespace (the one their record is
    /// stored in, else the one they install into), which wins over a plain `NAME`;
    /// `MEMBER:NAMESPACE=NAME` (`MEMBER:*=NAME`) for one cluster of a fleet; repeat it.
    /// Repairs and dry-runs write as it, so that its next upgrade meets no conflict
    #[arg(long, value_name = "[[MEMBER:]NAMESPACE=]NAME", hide_short_help = true)]
    pub(crate) helm_manager: Vec<String>,
    /// Refuse a release record holding more objects than this (a forged record cannot make the
    /// check read and compare without bound)
    #[arg(long, value_name = "N", default_value_t = crate::settings::MAX_OBJECTS, hide_short_help = true)]
    pub(crate) max_objects: usize,
    /// Also show in-sync objects, ignored differences, the engine used and notes
    #[arg(short, long, help_heading = "Output")]
    pub(crate) verbose: bool,
    /// Show secret values in differences (hidden by default)
    #[arg(long, help_heading = "Output")]
    pub(crate) show_secrets: bool,
}

/// How the report is written.
#[derive(Args, Debug)]
#[command(next_help_heading = "Output")]
pub(crate) struct OutputArgs {
    #[arg(short, long, value_parser = output_format(), default_value = "text", help = Format::help(Writes::Check))]
    pub(crate) output: Format,
    /// Lines of context around each change in diffs (the cluster's context is --kube-context)
    #[arg(long, default_value_t = 3, value_parser = context_lines, hide_short_help = true)]
    pub(crate) context: usize,
    /// Print nothing; only the exit code tells (errors still go to stderr)
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// Print only the verdict line of each release
    #[arg(long)]
    pub(crate) summary: bool,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// `--context`: a number of lines; a kubectl user's `--context NAME` is pointed to
/// `--kube-context`.
fn context_lines(text: &str) -> Result<usize, String> {
    text.parse().map_err(|_| {
        format!("--context is the lines of context around a change in diffs; for the cluster's context use --kube-context {text}")
    })
}

/// `-o/--output`: the report's formats, by name.
fn output_format() -> impl clap::builder::TypedValueParser<Value = Format> {
    output_formats(Format::names(Writes::Check))
}

/// `-o/--output` of a command that writes only the formats `names`: help and refusals list
/// only those.
pub(crate) fn output_formats(names: Vec<&'static str>) -> impl clap::builder::TypedValueParser<Value = Format> {
    clap::builder::TypedValueParser::map(clap::builder::PossibleValuesParser::new(names), |name: String| {
        Format::named(&name).expect("one of the names")
    })
}

/// Where a fleet's clusters come from.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Selection")]
pub(crate) struct ClustersArgs {
    /// Every cluster of an inventory the current cluster holds: `capi` (Cluster API Clusters
    /// with a ready control plane, reached through their <cluster>-kubeconfig Secret) or
    /// `argocd` (Argo CD's cluster Secrets); only inline credentials are used
    #[arg(long, value_name = "SOURCE", value_parser = cluster_source())]
    pub(crate) clusters: Option<InventoryKind>,
    /// With --clusters: the namespace of the inventory (`*`: every namespace). Argo CD's is
    /// `argocd` by default, as Argo CD reads its cluster Secrets only in its own; Cluster API's
    /// must be named
    #[arg(long, value_name = "NAMESPACE", requires = "clusters", hide_short_help = true)]
    pub(crate) clusters_namespace: Option<String>,
    /// With --clusters: only the inventory entries with these labels (`env=prod,team=a`)
    #[arg(long, value_name = "SELECTOR", requires = "clusters", hide_short_help = true)]
    pub(crate) clusters_selector: Option<String>,
}

/// `--clusters`: the inventory sources, by name (the one table is [`InventoryKind::ALL`]).
fn cluster_source() -> impl clap::builder::TypedValueParser<Value = InventoryKind> {
    let names = InventoryKind::ALL.map(InventoryKind::name);
    clap::builder::TypedValueParser::map(clap::builder::PossibleValuesParser::new(names), |name: String| {
        InventoryKind::named(&name).expect("a listed name")
    })
}

impl ClustersArgs {
    /// The inventory asked for, if any. It is read only where the operator says: whoever may
    /// write a Secret in some namespace must not add a cluster to the fleet (or push the real
    /// ones out of `--clusters-max`) by writing an entry there.
    pub(crate) fn inventory(self) -> Result<Option<(InventoryKind, Scope)>, String> {
        let Some(source) = self.clusters else { return Ok(None) };
        let default = source.default_namespace();
        let namespace = match self.clusters_namespace.as_deref().map(str::trim) {
            Some("*") => None,
            Some(ns) if !ns.is_empty() => Some(ns.to_string()),
            _ => match default {
                Some(ns) => Some(ns.to_string()),
                None => {
                    return Err(format!(
                        "--clusters {}: name the namespace of the {} with --clusters-namespace NAMESPACE \
                         (`*` reads every namespace, and their Secrets)",
                        source.name(),
                        source.entries()
                    ));
                }
            },
        };
        Ok(Some((source, Scope { namespace, selector: self.clusters_selector })))
    }
}

/// `--notify-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum NotifyFormat {
    Json,
    Slack,
}

/// `--log-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(clusters: InventoryKind, namespace: Option<&str>) -> Result<Option<String>, String> {
        let a = ClustersArgs {
            clusters: Some(clusters),
            clusters_namespace: namespace.map(String::from),
            clusters_selector: None,
        };
        Ok(a.inventory()?.expect("an inventory").1.namespace)
    }

    #[test]
    fn an_inventory_is_read_only_where_the_operator_says() {
        assert_eq!(scope(InventoryKind::Argocd, None).unwrap().as_deref(), Some("argocd"), "Argo CD's own namespace");
        assert_eq!(scope(InventoryKind::Argocd, Some("")).unwrap().as_deref(), Some("argocd"));
        assert_eq!(scope(InventoryKind::Argocd, Some("ops")).unwrap().as_deref(), Some("ops"));
        assert_eq!(scope(InventoryKind::Argocd, Some("*")).unwrap(), None, "every namespace, when said");
        assert!(scope(InventoryKind::Capi, None).unwrap_err().contains("--clusters-namespace"));
        assert_eq!(scope(InventoryKind::Capi, Some("fleet")).unwrap().as_deref(), Some("fleet"));
        assert_eq!(scope(InventoryKind::Capi, Some("*")).unwrap(), None);
        assert!(ClustersArgs::default().inventory().unwrap().is_none());
    }
}

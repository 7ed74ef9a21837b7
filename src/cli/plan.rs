//! The flags of `helm drift plan`: the release, the chart, and the flags of `helm upgrade` that
//! decide what is rendered, passed to helm as given.

use super::flags::{CompareArgs, OutputArgs};
use clap::Args;

/// The flags of `helm drift plan`.
#[derive(Args, Debug)]
pub(crate) struct PlanArgs {
    /// The release to upgrade (with --helmrelease or --helmrelease-file: leave it out, the
    /// HelmRelease names it)
    #[arg(required_unless_present_any = ["helmrelease", "helmrelease_file", "helmchartproxy", "helmchartproxy_file"])]
    pub(crate) release: Option<String>,
    /// The chart, as `helm upgrade` takes it (a path, `repo/name`, `oci://...`); for a
    /// HelmRelease, the chart helm-controller will install (your checkout's; else the
    /// HelmRelease's own, from its HelmRepository or OCIRepository at the version it names);
    /// for a HelmChartProxy, the chart CAAPH will install (else its repoURL and chartName)
    pub(crate) chart: Option<String>,
    /// Flux: plan the upgrade helm-controller will make of this HelmRelease of the namespace
    /// (-n): its values and valuesFrom, target and storage namespace, server-side apply with
    /// conflicts forced, ownership taken. With --helmrelease-file, picks one of the file's
    #[arg(long, value_name = "NAME", help_heading = "Flux")]
    pub(crate) helmrelease: Option<String>,
    /// Flux: plan a HelmRelease from a file (a changed one, from a pull request); its
    /// valuesFrom are read from the cluster
    #[arg(long, value_name = "FILE", help_heading = "Flux")]
    pub(crate) helmrelease_file: Option<std::path::PathBuf>,
    /// Cluster API: plan what the Helm add-on provider will do on every workload cluster this
    /// HelmChartProxy of the namespace (-n) selects: its valuesTemplate over each Cluster, the
    /// install, upgrade, reinstall or uninstall it makes there. With --helmchartproxy-file,
    /// picks one of the file's
    #[arg(long, value_name = "NAME", help_heading = "Cluster API", conflicts_with_all = ["helmrelease", "helmrelease_file"])]
    pub(crate) helmchartproxy: Option<String>,
    /// Cluster API: plan a HelmChartProxy from a file (a changed one, from a pull request)
    /// against the Clusters of the management cluster
    #[arg(long, value_name = "FILE", help_heading = "Cluster API", conflicts_with_all = ["helmrelease", "helmrelease_file"])]
    pub(crate) helmchartproxy_file: Option<std::path::PathBuf>,
    /// Values files (helm upgrade -f, repeatable)
    #[arg(short = 'f', long, value_name = "FILE", help_heading = "Upgrade")]
    pub(crate) values: Vec<String>,
    /// Values (helm upgrade --set, repeatable)
    #[arg(long, value_name = "KEY=VALUE", help_heading = "Upgrade")]
    pub(crate) set: Vec<String>,
    /// String values (helm upgrade --set-string, repeatable)
    #[arg(long, value_name = "KEY=VALUE", help_heading = "Upgrade")]
    pub(crate) set_string: Vec<String>,
    /// JSON values (helm upgrade --set-json, repeatable)
    #[arg(long, value_name = "KEY=JSON", help_heading = "Upgrade")]
    pub(crate) set_json: Vec<String>,
    /// Values read from files (helm upgrade --set-file, repeatable)
    #[arg(long, value_name = "KEY=PATH", help_heading = "Upgrade")]
    pub(crate) set_file: Vec<String>,
    /// The chart version (helm upgrade --version)
    #[arg(long, help_heading = "Upgrade")]
    pub(crate) version: Option<String>,
    /// Reuse the release's values (helm upgrade --reuse-values)
    #[arg(long, help_heading = "Upgrade")]
    pub(crate) reuse_values: bool,
    /// Reset the values to the chart's (helm upgrade --reset-values)
    #[arg(long, help_heading = "Upgrade")]
    pub(crate) reset_values: bool,
    /// Reset to the chart's values, then reuse the release's (helm upgrade --reset-then-reuse-values)
    #[arg(long, help_heading = "Upgrade")]
    pub(crate) reset_then_reuse_values: bool,
    /// A post-renderer (helm upgrade --post-renderer)
    #[arg(long, value_name = "PATH", help_heading = "Upgrade")]
    pub(crate) post_renderer: Option<String>,
    /// Adopt objects that exist outside the release (helm upgrade --take-ownership)
    #[arg(long, help_heading = "Upgrade")]
    pub(crate) take_ownership: bool,
    /// Helm 4: take fields other field managers own (helm upgrade --force-conflicts)
    #[arg(long, help_heading = "Upgrade")]
    pub(crate) force_conflicts: bool,
    /// Helm 4: apply server-side (true), with the three-way merge (false), or as the release was
    /// applied until now (auto, the default); predicts a switch: which fields of which managers
    /// conflict (helm upgrade --server-side)
    #[arg(long, value_name = "auto|true|false", value_parser = ["auto", "true", "false"], help_heading = "Upgrade")]
    pub(crate) server_side: Option<String>,
    /// Plan an install when the release does not exist (helm upgrade --install)
    #[arg(short = 'i', long, help_heading = "Upgrade")]
    pub(crate) install: bool,
    /// Also append the plan as Markdown to FILE, beside the normal output: `--summary-file
    /// "$GITHUB_STEP_SUMMARY"` in GitHub Actions
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub(crate) summary_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub(crate) compare: CompareArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

impl PlanArgs {
    /// The value flags, for whether the upgrade takes the record's values.
    pub(crate) fn value_flags(&self) -> crate::plan::ValueFlags {
        crate::plan::ValueFlags {
            reuse_values: self.reuse_values,
            reset_values: self.reset_values,
            reset_then_reuse_values: self.reset_then_reuse_values,
            sets: [&self.set, &self.set_string, &self.set_json, &self.set_file].iter().any(|v| !v.is_empty()),
            files: self.values.clone(),
        }
    }

    /// `--server-side` and `--force-conflicts`: how the upgrade applies.
    pub(crate) fn apply_flags(&self) -> crate::plan::ApplyFlags {
        let server_side = match self.server_side.as_deref() {
            Some("true") => Some(crate::model::Apply::ServerSide),
            Some("false") => Some(crate::model::Apply::ClientSide),
            _ => None,
        };
        crate::plan::ApplyFlags { server_side, force_conflicts: self.force_conflicts, always_force: false }
    }

    /// The flags for `helm upgrade` that decide what is rendered, as given (the apply flags
    /// are the plan's: [`PlanArgs::apply_flags`]).
    pub(crate) fn helm_flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        let many = [
            ("--values", &self.values),
            ("--set", &self.set),
            ("--set-string", &self.set_string),
            ("--set-json", &self.set_json),
            ("--set-file", &self.set_file),
        ];
        for (flag, values) in many {
            for v in values {
                out.push(format!("{flag}={v}"));
            }
        }
        let one = [("--version", &self.version), ("--post-renderer", &self.post_renderer)];
        for (flag, value) in one {
            if let Some(v) = value {
                out.push(format!("{flag}={v}"));
            }
        }
        let switches = [
            ("--reuse-values", self.reuse_values),
            ("--reset-values", self.reset_values),
            ("--reset-then-reuse-values", self.reset_then_reuse_values),
            ("--take-ownership", self.take_ownership),
            ("--install", self.install),
        ];
        out.extend(switches.iter().filter(|(_, on)| *on).map(|(f, _)| f.to_string()));
        out
    }
}

//! Resolved settings for a run: Helm's plugin environment and the plugin's own flags, merged once.

use crate::api::Connection;
use crate::release::Driver;

/// Everything a `check` needs, resolved.
#[derive(Clone, Debug)]
pub struct Settings {
    pub connection: Connection,
    /// The namespace given by `-n` / `HELM_NAMESPACE`; `None` means the kubeconfig context's.
    pub namespace: Option<String>,
    pub driver: Driver,
    /// `HELM_DRIVER_SQL_CONNECTION_STRING`, for the SQL driver.
    pub sql_connection: Option<String>,
    pub debug: bool,
    pub compare: CompareOptions,
    /// Where accepted drift is kept (`--baseline`), if anywhere.
    pub baseline: Option<crate::baseline::Store>,
}

/// The default of `--max-objects`.
pub const MAX_OBJECTS: usize = 10_000;

/// How objects are compared.
#[derive(Clone, Debug, Default)]
pub struct CompareOptions {
    /// Never ask for a server-side dry-run (`--read-only`).
    pub read_only: bool,
    pub rules: Vec<crate::policy::ignore::Rule>,
    /// Report `/spec/replicas` drift even when an HPA manages the workload.
    pub check_hpa_replicas: bool,
    /// Also check the CRDs of the chart's `crds/` folder.
    pub include_crds: bool,
    /// Expected-change rules (built-in and from the config file).
    pub expected: Vec<crate::policy::expected::Rule>,
    /// Count expected changes and fields owned elsewhere as drift (`--strict`).
    pub strict: bool,
    /// Honour opt-out annotations found only on the live object (`--trust-live-annotations`):
    /// whoever edits the object could then hide their own drift.
    pub trust_live_annotations: bool,
    /// Most objects one release record may hold (`--max-objects`; 0: [`MAX_OBJECTS`]).
    pub max_objects: usize,
    /// Releases whose drift detection is off (a Flux HelmRelease's `driftDetection.mode:
    /// disabled`), with the reason.
    pub disabled_releases: Vec<(String, String)>,
    /// What the config file held that was not understood (printed, never silently dropped).
    pub warnings: Vec<String>,
    /// The Flux HelmReleases and Argo CD Applications read, `(what, release)`.
    pub gitops: Vec<(String, String)>,
}

//! Resolved settings for a run: Helm's plugin environment and the plugin's own flags, merged once.

use crate::api::Connection;
use crate::model::Refusal;
use crate::release::Driver;

/// What every command needs to reach the cluster and Helm's storage and to compare, resolved
/// once (each command's own flags live in its `XxxSettings`).
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) connection: Connection,
    /// The namespace given by `-n` / `HELM_NAMESPACE`; `None` means the kubeconfig context's.
    pub(crate) namespace: Option<String>,
    pub(crate) driver: Driver,
    /// `HELM_DRIVER_SQL_CONNECTION_STRING`, for the SQL driver.
    pub(crate) sql_connection: Option<String>,
    pub(crate) debug: bool,
    pub(crate) compare: CompareOptions,
    /// Where accepted drift is kept (`--baseline`), if anywhere.
    pub(crate) baseline: Option<crate::baseline::Store>,
}

/// The default of `--max-objects`.
pub(crate) const MAX_OBJECTS: usize = 10_000;

/// How objects are compared.
#[derive(Clone, Debug, Default)]
pub(crate) struct CompareOptions {
    /// Never ask for a server-side dry-run (`--read-only`).
    pub(crate) read_only: bool,
    pub(crate) rules: Vec<crate::policy::ignore::IgnoreRule>,
    /// Report `/spec/replicas` drift even when an HPA manages the workload.
    pub(crate) check_hpa_replicas: bool,
    /// Also check the CRDs of the chart's `crds/` folder.
    pub(crate) include_crds: bool,
    /// Also check the hook objects Helm keeps after their hooks ran (`--hooks`).
    pub(crate) hooks: bool,
    /// Expected-change rules (built-in and from the config file).
    pub(crate) expected: Vec<crate::policy::expected::ExpectedRule>,
    /// Count expected changes and fields owned elsewhere as drift (`--strict`).
    pub(crate) strict: bool,
    /// Honour opt-out annotations found only on the live object (`--trust-live-annotations`):
    /// whoever edits the object could then hide their own drift.
    pub(crate) trust_live_annotations: bool,
    /// Most objects one release record may hold (`--max-objects`; 0: [`MAX_OBJECTS`]).
    pub(crate) max_objects: usize,
    /// Releases whose drift detection is off (a Flux HelmRelease's `driftDetection.mode:
    /// disabled`), with the reason.
    pub(crate) disabled_releases: Vec<(String, String)>,
    /// What the config file held that was not understood (printed, never silently dropped).
    pub(crate) warnings: Vec<String>,
    /// What the run reads besides the cluster, said on stderr (the baseline and where from).
    pub(crate) notices: Vec<String>,
    /// The Flux HelmReleases and Argo CD Applications read, `(what, release)`.
    pub(crate) gitops: Vec<(String, String)>,
    /// The namespaces whose records the operator trusts as their own (`--trust-namespace`):
    /// `repair` writes what they list outside their namespace only for these.
    pub(crate) trust: Trust,
    /// The watcher's trust rule: a record outside these namespaces is compared only for the
    /// objects of its own namespace. `None` (a person's `check`, `repair`): what the person may
    /// read, they may compare.
    pub(crate) confined: Option<Trust>,
    /// Helm's writer as the operator named it (`--helm-manager`); `None`: learnt per release
    /// from its objects ([`crate::compare::writer`]).
    pub(crate) writer: Option<crate::model::HelmWriter>,
}

impl CompareOptions {
    /// The most objects (and hooks) one release record may hold.
    pub(crate) fn object_limit(&self) -> usize {
        if self.max_objects == 0 { MAX_OBJECTS } else { self.max_objects }
    }
}

/// The namespaces whose release records the operator trusts as their own (`--trust-namespace`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Trust {
    namespaces: Vec<String>,
}

impl Trust {
    pub(crate) fn new(namespaces: Vec<String>) -> Trust {
        Trust { namespaces }
    }

    /// Whether the records of `namespace` speak beyond it.
    pub(crate) fn trusts(&self, namespace: &str) -> bool {
        self.namespaces.iter().any(|n| n == "*" || n == namespace)
    }

    /// Why an object of a record of `release_ns` living in `object_ns` (`None`: cluster-scoped)
    /// is not compared, or `None` when it may be. The reason never depends on the object itself,
    /// so it says nothing of whether it exists.
    pub(crate) fn outside(&self, release_ns: &str, object_ns: Option<&str>) -> Option<Refusal> {
        (object_ns != Some(release_ns) && !self.trusts(release_ns))
            .then(|| Refusal::NotCompared { release_ns: release_ns.to_string() })
    }

    /// Why a person's `repair` does not write `object` (living in `object_ns`, `None` when
    /// cluster-scoped) on the word of a record of `release_ns`, or `None` when it may: the
    /// record is written by whoever may write Secrets in its namespace, and what it lists
    /// elsewhere would be written with the person's rights, not theirs.
    pub(crate) fn beyond(
        &self,
        release_ns: &str,
        object: &crate::model::ObjectId,
        object_ns: Option<&str>,
    ) -> Option<Refusal> {
        (object_ns != Some(release_ns) && !self.trusts(release_ns)).then(|| Refusal::BeyondRecord {
            object: object.clone(),
            namespace: object_ns.map(String::from),
            release_ns: release_ns.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ObjectId;

    #[test]
    fn a_persons_repair_writes_outside_the_records_namespace_only_when_trusted() {
        let crb = ObjectId::new("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None, "admin");
        let cm = ObjectId::new("v1", "ConfigMap", Some("kube-system"), "x");
        let own = ObjectId::new("v1", "ConfigMap", Some("demo"), "c");
        let none = Trust::default();
        let why = none.beyond("demo", &crb, None).unwrap().to_string();
        assert!(why.contains("is cluster-scoped") && why.contains("--trust-namespace demo"), "{why}");
        assert!(
            none.beyond("demo", &cm, Some("kube-system")).unwrap().to_string().contains("in namespace kube-system")
        );
        assert_eq!(none.beyond("demo", &own, Some("demo")), None);
        for trusted in [Trust::new(vec!["demo".into()]), Trust::new(vec!["*".into()])] {
            assert_eq!(trusted.beyond("demo", &crb, None), None);
            assert_eq!(trusted.beyond("demo", &cm, Some("kube-system")), None);
        }
        assert!(Trust::new(vec!["other".into()]).beyond("demo", &crb, None).is_some());
    }
}

//! Resolved settings for a run: Helm's plugin environment and the plugin's own flags, merged once.

use crate::api::Connection;
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
    /// Shared by every fleet member's settings (its rules are the run's).
    pub(crate) compare: std::sync::Arc<CompareOptions>,
    /// What the run says on stderr besides its report.
    pub(crate) said: Said,
    /// Whose records are trusted, and how far.
    pub(crate) trust: TrustRules,
    /// Helm's writers as the operator pinned them (`--helm-manager`, per namespace or for
    /// every release); where none is pinned, learnt per release from its objects (the writer
    /// stage, `engine/writer.rs`).
    pub(crate) helm_manager: crate::compare::writer::WriterPins,
    /// Where accepted drift is kept (`--baseline`), if anywhere.
    pub(crate) baseline: Option<crate::baseline::Store>,
}

impl Settings {
    /// A fleet member's settings, built only here and in [`Settings::for_context`] (the fleet's
    /// check and repair, its watcher, a HelmChartProxy's plan): this run's, reaching member
    /// `member` (`namespace/name` of its Cluster) with its kubeconfig under the run's limits,
    /// Helm's writer pinned as the member's pins say (`--helm-manager MEMBER:NAMESPACE=NAME`).
    pub(crate) fn for_member(&self, member: &str, kubeconfig: kube::config::Kubeconfig) -> Settings {
        Settings {
            connection: self.connection.for_member(kubeconfig),
            helm_manager: self.helm_manager.of_member(member),
            ..self.clone()
        }
    }

    /// The settings of one kubeconfig context of `--kube-context` repeated (a fleet member
    /// named by its context): this run's, reaching that context, with its `--helm-manager`.
    pub(crate) fn for_context(&self, context: &str) -> Settings {
        let mut settings = Settings { helm_manager: self.helm_manager.of_member(context), ..self.clone() };
        settings.connection.context = Some(context.to_string());
        settings
    }
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
    /// Judging what an upgrade writes (`plan`'s upgraded manifest): the drift rules (flags, the
    /// config file, opt-out annotations, the Flux HelmRelease's) hide nothing, since the upgrade
    /// writes every field its chart sets (helm-controller's too, whatever its drift rules say).
    pub(crate) upgrade: bool,
}

impl CompareOptions {
    /// These options for judging what an upgrade writes ([`CompareOptions::upgrade`]).
    pub(crate) fn for_upgrade(&self) -> CompareOptions {
        CompareOptions { upgrade: true, ..self.clone() }
    }

    /// The most objects (and hooks) one release record may hold.
    pub(crate) fn object_limit(&self) -> usize {
        if self.max_objects == 0 { MAX_OBJECTS } else { self.max_objects }
    }
}

/// What a run says on stderr besides its report, gathered while its settings resolve.
#[derive(Clone, Debug, Default)]
pub(crate) struct Said {
    /// What the config file held that was not understood (printed, never silently dropped).
    pub(crate) warnings: Vec<String>,
    /// What the run reads besides the cluster (the baseline and where from).
    pub(crate) notices: Vec<String>,
    /// The Flux HelmReleases and Argo CD Applications read, `(what, release)`.
    pub(crate) gitops: Vec<(String, String)>,
}

/// Whose release records are trusted, and how far: the one place trust is set.
#[derive(Clone, Debug, Default)]
pub(crate) struct TrustRules {
    /// The namespaces whose records the operator trusts as their own (`--trust-namespace`):
    /// `repair` writes what they list outside their namespace only for these.
    pub(crate) namespaces: Trust,
    /// The watcher's rule: a record stored outside the trusted namespaces is compared only for
    /// the objects of its own namespace. Off for a person's `check` and `repair`: what the person
    /// may read, they may compare.
    pub(crate) confined: bool,
}

impl TrustRules {
    /// Who acts: the watcher (its rule on) or a person.
    pub(crate) fn acting(&self) -> crate::model::Acting {
        match self.confined {
            true => crate::model::Acting::Watcher,
            false => crate::model::Acting::Person,
        }
    }
}

pub(crate) use crate::model::Trust;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_members_settings_carry_its_own_writer_pins() {
        let pins = ["eu/alpha:apps=manager", "eu/beta:*=flux", "kube-system=helm"].map(String::from);
        let run = Settings {
            connection: Connection::default(),
            namespace: Some("apps".into()),
            driver: Driver::Secrets,
            sql_connection: None,
            debug: false,
            compare: Default::default(),
            said: Said::default(),
            trust: TrustRules::default(),
            helm_manager: crate::compare::writer::WriterPins::parse(&pins).unwrap(),
            baseline: None,
        };
        let alpha = run.for_member("eu/alpha", kube::config::Kubeconfig::default());
        let home = |ns| crate::model::Home::new(ns, ns, "web");
        let pinned = |s: &Settings, ns| s.helm_manager.for_release(home(ns)).map(|w| w.manager.clone());
        assert_eq!(pinned(&alpha, "apps").as_deref(), Some("manager"));
        assert_eq!(pinned(&alpha, "kube-system").as_deref(), Some("helm"), "the run's own pins too");
        assert!(alpha.connection.given.is_some() && alpha.namespace.as_deref() == Some("apps"));
        let beta = run.for_member("eu/beta", kube::config::Kubeconfig::default());
        assert_eq!(pinned(&beta, "apps").as_deref(), Some("flux"));
        assert_eq!(pinned(&run.for_member("eu/gamma", Default::default()), "apps"), None, "another member's pins");
    }
}

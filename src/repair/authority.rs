//! The authority a repair acts within, a person's or the watcher's alike. A release record can
//! be written by anyone who may create a Secret in its namespace, so no repair lets it do more
//! than that namespace could: it writes on a record's word with the actor's own rights only when
//! the operator trusts the record's namespace (`--trust-namespace`), else only as a
//! ServiceAccount of that namespace (impersonated: the API server then authorises each write;
//! `--repair-service-account`, or the one the HelmRelease installing a record stored apart
//! names, as Flux's lockdown writes), and otherwise not at all. And never a change to a live
//! object Helm's ownership metadata does not give to this release (Helm's own adoption rule).
//! What may be written is [`crate::model::decide`]'s answer.

use crate::model::{Acting, Action, Deed, DriftReport, Home, ObjectId, Question, Refusal, Rights, Trust, decide};
use serde_json::Value;

/// Who a repair acts for, and how far it may reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Authority {
    /// A person's repair or self-healing.
    pub(crate) acting: Acting,
    /// The release's namespace and name.
    pub(crate) namespace: String,
    pub(crate) release: String,
    /// The namespace its record is stored in (the release's own, unless a Flux HelmRelease
    /// stores it apart): whose writers the record's word is.
    pub(crate) stored: String,
    /// The operator trusts this namespace's records as their own (`--trust-namespace`): the
    /// actor writes for them with its own rights, cluster-scoped objects and other namespaces
    /// included.
    pub(crate) trusted: bool,
    /// Every write impersonates this ServiceAccount (namespace, name): the storage namespace's
    /// `--repair-service-account`, or the one the vouching HelmRelease names, as Flux writes;
    /// the API server decides what it may do.
    pub(crate) service_account: Option<(String, String)>,
    /// The HelmRelease of `stored` installing a release stored apart: outside `stored`, only
    /// objects carrying its origin labels are written on the record's word.
    pub(crate) helm_release: Option<String>,
}

impl Authority {
    /// The authority over the release `report` judged: trusted or not by `trust`; `named`, the
    /// ServiceAccount of the record's namespace the operator names to write as. The watcher
    /// writes as the account the vouching HelmRelease names even when trusted (as Flux does); a
    /// person who trusts the namespace writes with their own rights, as Helm would.
    pub(crate) fn of(report: &DriftReport, trust: &Trust, named: Option<&str>, acting: Acting) -> Authority {
        let stored = report.stored_in();
        let trusted = trust.trusts(stored);
        let apart = report.stored_apart.as_ref();
        let own = named.map(|sa| (stored.to_string(), sa.to_string()));
        let vouching = || apart.and_then(|a| a.service_account());
        let service_account = match acting {
            Acting::Watcher => own.or_else(vouching),
            Acting::Person => own.or_else(|| vouching().filter(|_| !trusted)),
        };
        Authority {
            acting,
            namespace: report.namespace.clone(),
            release: report.release.clone(),
            stored: stored.to_string(),
            trusted,
            service_account,
            helm_release: apart.and_then(|a| a.vouch.helm_release()).map(String::from),
        }
    }

    /// On whose rights its writes go.
    pub(crate) fn rights(&self) -> Rights {
        match (&self.service_account, self.trusted) {
            (Some((ns, sa)), _) => Rights::ServiceAccount(ns.clone(), sa.clone()),
            (None, true) => Rights::Own,
            (None, false) => Rights::Nobody,
        }
    }

    /// The user the writes impersonate (`system:serviceaccount:NS:NAME`), if any.
    pub(crate) fn impersonated_user(&self) -> Option<String> {
        self.service_account.as_ref().map(|(ns, sa)| format!("system:serviceaccount:{ns}:{sa}"))
    }

    /// A client impersonating its ServiceAccount, made from `connection`; `None` when it writes
    /// as the caller.
    pub(crate) async fn write_client(
        &self,
        connection: &crate::api::Connection,
    ) -> anyhow::Result<Option<kube::Client>> {
        let Some(user) = self.impersonated_user() else { return Ok(None) };
        let mut connection = connection.clone();
        connection.as_user = Some(user);
        connection.as_groups = Vec::new();
        Ok(Some(crate::api::connect(&connection).await?.client))
    }

    fn home(&self) -> Home<'_> {
        Home { helm_release: self.helm_release.as_deref(), ..Home::new(&self.stored, &self.namespace, &self.release) }
    }

    /// Why every step is refused whatever it touches (a record of an untrusted namespace, and no
    /// ServiceAccount to write as), or `None`.
    pub(crate) fn refuses_all(&self) -> Option<Refusal> {
        (self.rights() == Rights::Nobody)
            .then(|| Refusal::Untrusted { namespace: self.stored.clone(), acting: self.acting })
    }

    /// Why a step on `object` (living in `namespace`, `None` when cluster-scoped; `live` as the
    /// server holds it, absent when deleted) is refused, or `None` when it may go ahead.
    pub(crate) fn refusal(
        &self,
        object: &ObjectId,
        action: &Action,
        namespace: Option<&str>,
        live: Option<&Value>,
    ) -> Option<Refusal> {
        let deed = match action {
            Action::Recreate => Deed::Create,
            Action::Replace | Action::Repair { .. } => Deed::Change,
        };
        let q = Question {
            acting: self.acting,
            home: self.home(),
            trusted: self.trusted,
            object,
            namespace,
            live,
            owned: true,
        };
        decide(&q, deed, &self.rights()).err()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RELEASE_NAME_ANNOTATION, RELEASE_NAMESPACE_ANNOTATION};
    use serde_json::json;

    fn authority(trusted: bool, sa: Option<&str>) -> Authority {
        Authority {
            acting: Acting::Watcher,
            namespace: "tenant".into(),
            release: "web".into(),
            stored: "tenant".into(),
            trusted,
            service_account: sa.map(|sa| ("tenant".to_string(), sa.to_string())),
            helm_release: None,
        }
    }

    fn owned(release: &str, ns: &str) -> Value {
        json!({"metadata": {"annotations": {RELEASE_NAME_ANNOTATION: release, RELEASE_NAMESPACE_ANNOTATION: ns}}})
    }

    fn repair() -> Action {
        Action::Repair { restore: vec![], remove: vec![], reclaim: vec![] }
    }

    #[test]
    fn an_untrusted_record_writes_only_as_a_service_account_of_its_namespace() {
        let crb = ObjectId::new("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None, "admin");
        let cm = ObjectId::new("v1", "ConfigMap", Some("kube-system"), "x");
        let own = ObjectId::new("v1", "ResourceQuota", Some("tenant"), "q");
        for (id, ns) in [(&crb, None), (&cm, Some("kube-system")), (&own, Some("tenant"))] {
            let why = authority(false, None).refusal(id, &Action::Recreate, ns, None).unwrap().to_string();
            assert!(why.contains("namespace tenant is not trusted"), "{why}");
            assert!(why.contains("--trust-namespace tenant"), "{why}");
            assert_eq!(authority(true, None).refusal(id, &Action::Recreate, ns, None), None);
        }
        // Impersonated, it writes in its own namespace; elsewhere only when trusted.
        assert_eq!(authority(false, Some("fixer")).refusal(&own, &Action::Recreate, Some("tenant"), None), None);
        for (id, ns) in [(&crb, None), (&cm, Some("kube-system"))] {
            let why = authority(false, Some("fixer")).refusal(id, &Action::Recreate, ns, None).unwrap().to_string();
            assert!(why.contains("outside the record's namespace"), "{why}");
            assert_eq!(authority(true, Some("fixer")).refusal(id, &Action::Recreate, ns, None), None);
        }
    }

    #[test]
    fn only_objects_owned_by_the_release_are_changed() {
        let id = ObjectId::new("v1", "ConfigMap", Some("tenant"), "c");
        let a = authority(true, None);
        assert_eq!(a.refusal(&id, &repair(), Some("tenant"), Some(&owned("web", "tenant"))), None);
        let other = a.refusal(&id, &repair(), Some("tenant"), Some(&owned("db", "tenant"))).unwrap().to_string();
        assert!(other.contains("it belongs to release tenant/db"), "{other}");
        let bare = a.refusal(&id, &repair(), Some("tenant"), Some(&json!({"metadata": {}}))).unwrap().to_string();
        assert!(bare.contains("does not carry meta.helm.sh/release-name"), "{bare}");
        // Trust and impersonation widen the namespaces, never the ownership rule.
        assert!(
            authority(true, Some("x")).refusal(&id, &repair(), Some("tenant"), Some(&owned("db", "tenant"))).is_some()
        );
        // A missing object is created again in the release's namespace.
        assert_eq!(a.refusal(&id, &Action::Recreate, Some("tenant"), None), None);
        // An object that came back meanwhile is not recreated over.
        assert!(a.refusal(&id, &Action::Recreate, Some("tenant"), Some(&json!({"metadata": {}}))).is_some());
    }

    #[test]
    fn a_record_stored_apart_writes_in_the_release_namespace_only_what_its_helmrelease_labelled() {
        let a = Authority {
            acting: Acting::Watcher,
            namespace: "apps".into(),
            release: "apps-web".into(),
            stored: "flux-system".into(),
            trusted: false,
            service_account: Some(("flux-system".into(), "deployer".into())),
            helm_release: Some("web".into()),
        };
        let id = ObjectId::new("apps/v1", "Deployment", Some("apps"), "web");
        let owned = |release: &str, ns: &str| {
            let mut v = owned(release, ns);
            v["metadata"]["namespace"] = json!(ns);
            v
        };
        let mut live = owned("apps-web", "apps");
        // The release namespace's own object, Helm's annotations and all: not the record's.
        let why = a.refusal(&id, &repair(), Some("apps"), Some(&live)).unwrap().to_string();
        assert!(why.contains("outside the record's namespace") && why.contains("flux-system"), "{why}");
        live["metadata"]["labels"] =
            json!({crate::model::FLUX_NAME_LABEL: "web", crate::model::FLUX_NAMESPACE_LABEL: "flux-system"});
        assert_eq!(a.refusal(&id, &repair(), Some("apps"), Some(&live)), None);
        live["metadata"]["labels"][crate::model::FLUX_NAMESPACE_LABEL] = json!("tenant");
        assert!(a.refusal(&id, &repair(), Some("apps"), Some(&live)).is_some());
        // Nothing missing there is created on the record's word; trust creates it.
        assert!(a.refusal(&id, &Action::Recreate, Some("apps"), None).is_some());
        assert_eq!(Authority { trusted: true, ..a.clone() }.refusal(&id, &Action::Recreate, Some("apps"), None), None);
        assert_eq!(a.impersonated_user().unwrap(), "system:serviceaccount:flux-system:deployer");
    }

    #[test]
    fn impersonated_user_is_a_service_account_of_the_release_namespace() {
        assert_eq!(authority(false, Some("fixer")).impersonated_user().unwrap(), "system:serviceaccount:tenant:fixer");
        assert_eq!(authority(false, None).impersonated_user(), None);
    }
}

//! The stored revisions of a release as their labels (or SQL columns) describe them, and Helm's
//! rule for which revision is current.

use super::SourceError;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The longest release name Helm takes (`helm install` refuses longer ones).
pub(crate) const MAX_RELEASE_NAME: usize = 53;

/// One stored revision.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Record {
    /// The storage object's name (`sh.helm.release.v1.<name>.v<revision>`).
    pub(crate) object: String,
    pub(crate) revision: u32,
    pub(crate) status: String,
    pub(crate) written: Option<super::Written>,
}

/// Every stored revision of one release.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReleaseIndex {
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) records: Vec<Record>,
}

impl ReleaseIndex {
    /// The highest revision in any status.
    pub(crate) fn newest(&self) -> Option<&Record> {
        self.records.iter().max_by_key(|r| r.revision)
    }

    /// Whether Helm is in the middle of an operation on the release (its newest record is
    /// `pending-*` or `uninstalling`): an install, upgrade, rollback or uninstall under way.
    pub(crate) fn in_progress(&self) -> bool {
        self.newest().is_some_and(|r| r.status.starts_with("pending-") || r.status == "uninstalling")
    }

    /// The highest `deployed` revision.
    pub(crate) fn deployed(&self) -> Option<&Record> {
        self.records.iter().filter(|r| r.status == "deployed").max_by_key(|r| r.revision)
    }

    /// Helm's rule: the given revision, else the highest `deployed` one; also the newest
    /// revision when it is not the chosen one. `driver` names the storage in errors.
    pub(crate) fn choose(
        &self,
        revision: Option<u32>,
        driver: &'static str,
    ) -> Result<(Record, Option<(u32, String)>), SourceError> {
        let newest = self.newest().ok_or_else(|| SourceError::NotFound {
            release: self.name.clone(),
            namespace: self.namespace.clone(),
            driver,
            hint: String::new(),
        })?;
        let chosen = match revision {
            Some(n) => self.records.iter().find(|r| r.revision == n).ok_or_else(|| SourceError::NoSuchRevision {
                release: self.name.clone(),
                namespace: self.namespace.clone(),
                revision: n,
                driver,
            })?,
            None => self.deployed().ok_or_else(|| SourceError::NotDeployed {
                release: self.name.clone(),
                namespace: self.namespace.clone(),
                revision: newest.revision,
                status: newest.status.clone(),
            })?,
        };
        let newest = (newest.revision != chosen.revision).then(|| (newest.revision, newest.status.clone()));
        Ok((chosen.clone(), newest))
    }
}

impl Record {
    /// A record from a storage object's labels; objects without Helm's `name` and a numeric
    /// `version` label are not Helm's and are skipped.
    pub(crate) fn from_labels(meta: ObjectMeta) -> Option<(String, Record)> {
        let written = super::written::data_written(&meta);
        let labels = meta.labels.unwrap_or_default();
        let revision = labels.get("version")?.parse().ok()?;
        // Helm refuses a release name it could not have made: so is its forged record.
        let name = labels.get("name").filter(|n| n.len() <= MAX_RELEASE_NAME)?.clone();
        let status = labels.get("status").cloned().unwrap_or_default();
        Some((name, Record { object: meta.name.unwrap_or_default(), revision, status, written }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(records: &[(u32, &str)]) -> ReleaseIndex {
        ReleaseIndex {
            namespace: "apps".into(),
            name: "web".into(),
            records: records
                .iter()
                .map(|(v, s)| Record {
                    object: format!("sh.helm.release.v1.web.v{v}"),
                    revision: *v,
                    status: s.to_string(),
                    written: None,
                })
                .collect(),
        }
    }

    #[test]
    fn picks_highest_deployed_and_reports_newer_failed() {
        let (r, newest) = index(&[(1, "superseded"), (2, "deployed"), (3, "failed")]).choose(None, "secrets").unwrap();
        assert_eq!(r.revision, 2);
        assert_eq!(newest, Some((3, "failed".into())));
        let (r, newest) = index(&[(1, "deployed"), (2, "deployed")]).choose(None, "secrets").unwrap();
        assert_eq!((r.revision, newest), (2, None));
    }

    #[test]
    fn a_pending_newest_record_is_an_operation_in_progress() {
        assert!(index(&[(1, "deployed"), (2, "pending-upgrade")]).in_progress());
        assert!(index(&[(1, "pending-install")]).in_progress());
        assert!(index(&[(1, "superseded"), (2, "uninstalling")]).in_progress(), "helm uninstall under way");
        assert!(!index(&[(1, "superseded"), (2, "deployed")]).in_progress());
        assert!(!index(&[(1, "deployed"), (2, "failed")]).in_progress());
    }

    #[test]
    fn explicit_revision_and_clear_errors() {
        let (r, _) = index(&[(1, "superseded"), (2, "deployed")]).choose(Some(1), "secrets").unwrap();
        assert_eq!(r.revision, 1);
        let e = index(&[(1, "deployed")]).choose(Some(7), "configmaps").unwrap_err().to_string();
        assert_eq!(e, "revision 7 of release \"web\" not found in namespace \"apps\" (storage driver: configmaps)");
        let e = index(&[(1, "uninstalled")]).choose(None, "secrets").unwrap_err().to_string();
        assert_eq!(
            e,
            "release \"web\" in namespace \"apps\" has no deployed revision (newest is revision 1, status uninstalled)"
        );
        let e = index(&[(1, "superseded"), (2, "uninstalling")]).choose(None, "secrets").unwrap_err().to_string();
        assert!(e.ends_with("status uninstalling): helm uninstall is under way, or was interrupted (helm uninstall again finishes it)"), "{e}");
    }

    #[test]
    fn a_record_is_its_labels_and_a_name_longer_than_helm_takes_is_none() {
        let meta = |name: &str| -> ObjectMeta {
            serde_json::from_value(serde_json::json!({"name": format!("sh.helm.release.v1.{name}.v1"),
                "labels": {"owner": "helm", "name": name, "version": "1", "status": "deployed"},
                "annotations": {"big": "x".repeat(1000)}}))
            .unwrap()
        };
        let (name, r) = Record::from_labels(meta("web")).unwrap();
        assert_eq!((name.as_str(), r.revision, r.status.as_str()), ("web", 1, "deployed"));
        assert!(Record::from_labels(meta(&"a".repeat(MAX_RELEASE_NAME))).is_some());
        assert!(
            Record::from_labels(meta(&"a".repeat(MAX_RELEASE_NAME + 1))).is_none(),
            "Helm takes at most 53 characters"
        );
    }
}

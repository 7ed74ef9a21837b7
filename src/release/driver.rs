//! Which Helm storage holds the release records (`HELM_DRIVER`), and how Helm marks them: the
//! one place that knows records are Secrets or ConfigMaps labelled `owner=helm`, `name`,
//! `version`, `status` (the SQL driver keeps the same labels in columns).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Which Helm storage backend holds the release records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Driver {
    Secrets,
    ConfigMaps,
    /// PostgreSQL, as Helm's `sql` driver (`HELM_DRIVER_SQL_CONNECTION_STRING`).
    Sql,
}

impl Driver {
    /// The name `HELM_DRIVER` gives it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Driver::Secrets => "secrets",
            Driver::ConfigMaps => "configmaps",
            Driver::Sql => "sql",
        }
    }

    /// What one record is called in messages (`Secret`, `ConfigMap`, `SQL row`).
    pub(crate) fn record_kind(self) -> &'static str {
        match self {
            Driver::Secrets => "Secret",
            Driver::ConfigMaps => "ConfigMap",
            Driver::Sql => "SQL row",
        }
    }
}

/// The label selector of Helm's records, narrowed by `selector` (`helm list -l`) when given.
pub(crate) fn records_selector(base: &str, selector: Option<&str>) -> String {
    match selector.filter(|s| !s.trim().is_empty()) {
        Some(s) => format!("{base},{s}"),
        None => base.to_string(),
    }
}

/// Every record of Helm's: `owner=helm`.
pub(crate) const RECORDS: &str = "owner=helm";

/// The deployed records: what a check reads.
pub(crate) const DEPLOYED: &str = "owner=helm,status=deployed";

/// The release (namespace, name) a storage object records, from its labels; `None` for an
/// object that is not Helm's.
pub(crate) fn release_of(meta: &ObjectMeta) -> Option<(String, String)> {
    let name = meta.labels.as_ref()?.get("name")?.clone();
    Some((meta.namespace.clone()?, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_and_names_of_records() {
        assert_eq!(records_selector(RECORDS, None), "owner=helm");
        assert_eq!(records_selector(RECORDS, Some(" ")), "owner=helm");
        assert_eq!(records_selector(DEPLOYED, Some("tier=front")), "owner=helm,status=deployed,tier=front");
        let meta = ObjectMeta {
            namespace: Some("apps".into()),
            labels: Some([("name".to_string(), "web".to_string())].into()),
            ..ObjectMeta::default()
        };
        assert_eq!(release_of(&meta), Some(("apps".into(), "web".into())));
        assert_eq!(release_of(&ObjectMeta::default()), None);
        assert_eq!(Driver::Sql.record_kind(), "SQL row");
    }
}

//! Reads release records from Helm's storage drivers (Secrets, ConfigMaps): lists them by Helm's
//! labels, picks the revision to compare against by Helm's own rule, and decodes only that one.

use super::sql::{SqlError, SqlStorage};
use super::{DecodeError, Release, decode};
use crate::cluster::retry;
use crate::settings::Driver;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams};
use std::collections::BTreeMap;

/// Why no release could be read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("release {release:?} not found in namespace {namespace:?} (storage driver: {driver})")]
    NotFound { release: String, namespace: String, driver: &'static str },
    #[error(
        "release {release:?} in namespace {namespace:?} has no deployed revision (newest is revision {revision}, status {status})"
    )]
    NotDeployed { release: String, namespace: String, revision: u32, status: String },
    #[error(
        "revision {revision} of release {release:?} not found in namespace {namespace:?} (storage driver: {driver})"
    )]
    NoSuchRevision { release: String, namespace: String, revision: u32, driver: &'static str },
    #[error("{record}: {source}")]
    Corrupt { record: String, source: DecodeError },
    #[error("{record}: no `release` key in its data")]
    NoData { record: String },
    #[error("{record}: the record is for release {found:?}, not {wanted:?}")]
    Mismatch { record: String, found: String, wanted: String },
    #[error("{what}: {source}")]
    Api { what: String, source: kube::Error },
    #[error(transparent)]
    Sql(#[from] SqlError),
}

/// The chosen revision, and the newest one when it is not the chosen one (failed, pending...).
#[derive(Debug)]
pub struct Selected {
    pub release: Release,
    /// The storage object it came from, e.g. `Secret apps/sh.helm.release.v1.web.v3`.
    pub record: String,
    pub newest: Option<(u32, String)>,
}

/// One stored revision as its labels describe it.
#[derive(Clone, Debug)]
pub struct Record {
    /// The storage object's name (`sh.helm.release.v1.<name>.v<revision>`).
    pub object: String,
    pub revision: u32,
    pub status: String,
}

/// Every stored revision of one release.
#[derive(Clone, Debug)]
pub struct ReleaseIndex {
    pub namespace: String,
    pub name: String,
    pub records: Vec<Record>,
}

/// Helm's storage, through one driver.
pub struct Storage {
    client: kube::Client,
    driver: Driver,
    sql: Option<SqlStorage>,
    /// Record data read ahead by one LIST, keyed by (namespace, object name).
    prefetched: std::sync::Mutex<BTreeMap<(String, String), Vec<u8>>>,
}

impl Storage {
    /// Opens the storage; for the SQL driver this connects to the database.
    pub async fn open(
        client: kube::Client,
        driver: Driver,
        sql_connection: Option<&str>,
    ) -> Result<Storage, SourceError> {
        let sql = match driver {
            Driver::Sql => Some(SqlStorage::connect(sql_connection).await?),
            _ => None,
        };
        Ok(Storage { client, driver, sql, prefetched: Default::default() })
    }

    pub fn driver(&self) -> Driver {
        self.driver
    }

    /// Every release in `namespace` (all namespaces when `None`) whose storage labels match
    /// `selector`, sorted by namespace and name; only labels are read.
    pub async fn list(
        &self,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<Vec<ReleaseIndex>, SourceError> {
        if let Some(sql) = &self.sql {
            return Ok(sql.list(namespace, selector).await?);
        }
        let labels = match selector.filter(|s| !s.trim().is_empty()) {
            Some(s) => format!("owner=helm,{s}"),
            None => "owner=helm".to_string(),
        };
        let lp = ListParams::default().labels(&labels);
        let kind = self.kind();
        let what = format!(
            "listing {kind}s {}",
            namespace.map_or("in all namespaces".to_string(), |ns| format!("in namespace {ns:?}"))
        );
        let metas: Vec<ObjectMeta> = match self.driver {
            Driver::Secrets => {
                let api: Api<Secret> = self.api(namespace);
                retry(|| api.list_metadata(&lp)).await.map(|l| l.items.into_iter().map(|m| m.metadata).collect())
            }
            Driver::ConfigMaps | Driver::Sql => {
                let api: Api<ConfigMap> = self.api(namespace);
                retry(|| api.list_metadata(&lp)).await.map(|l| l.items.into_iter().map(|m| m.metadata).collect())
            }
        }
        .map_err(|source| SourceError::Api { what: forbidden_hint(&what, &source, self.driver), source })?;
        let mut grouped: BTreeMap<(String, String), Vec<Record>> = BTreeMap::new();
        for meta in metas {
            let ns = meta.namespace.clone().unwrap_or_default();
            if let Some((name, record)) = record(meta) {
                grouped.entry((ns, name)).or_default().push(record);
            }
        }
        Ok(grouped.into_iter().map(|((namespace, name), records)| ReleaseIndex { namespace, name, records }).collect())
    }

    /// The stored revisions of one release.
    pub async fn find(&self, namespace: &str, release: &str) -> Result<ReleaseIndex, SourceError> {
        let found = self.list(Some(namespace), Some(&format!("name={release}"))).await?;
        found.into_iter().find(|r| r.name == release).ok_or_else(|| SourceError::NotFound {
            release: release.into(),
            namespace: namespace.into(),
            driver: self.driver.name(),
        })
    }

    /// Reads the data of every `deployed` record in scope with one LIST, so that checking many
    /// releases costs one request instead of one GET each. Not for the SQL driver.
    pub async fn prefetch_deployed(&self, namespace: Option<&str>, selector: Option<&str>) -> Result<(), SourceError> {
        let labels = match selector.filter(|s| !s.trim().is_empty()) {
            Some(s) => format!("owner=helm,status=deployed,{s}"),
            None => "owner=helm,status=deployed".to_string(),
        };
        let lp = ListParams::default().labels(&labels);
        let what = || format!("listing deployed {} records", self.kind());
        let mut found = Vec::new();
        match self.driver {
            Driver::Secrets => {
                let api: Api<Secret> = self.api(namespace);
                for s in retry(|| api.list(&lp)).await.map_err(|source| SourceError::Api { what: what(), source })? {
                    let key = (s.metadata.namespace.unwrap_or_default(), s.metadata.name.unwrap_or_default());
                    found.extend(s.data.and_then(|mut d| d.remove("release")).map(|b| (key, b.0)));
                }
            }
            Driver::ConfigMaps => {
                let api: Api<ConfigMap> = self.api(namespace);
                for c in retry(|| api.list(&lp)).await.map_err(|source| SourceError::Api { what: what(), source })? {
                    let key = (c.metadata.namespace.unwrap_or_default(), c.metadata.name.unwrap_or_default());
                    found.extend(c.data.and_then(|mut d| d.remove("release")).map(|v| (key, v.into_bytes())));
                }
            }
            Driver::Sql => return Ok(()),
        }
        self.prefetched.lock().expect("prefetch lock").extend(found);
        Ok(())
    }

    /// Reads and decodes the revision to check: `revision` if given, else the highest `deployed`.
    pub async fn select(&self, index: &ReleaseIndex, revision: Option<u32>) -> Result<Selected, SourceError> {
        let (chosen, newest) = choose(index, revision, self.driver)?;
        let record = format!("{} {}/{}", self.kind(), index.namespace, chosen.object);
        let ahead =
            self.prefetched.lock().expect("prefetch lock").remove(&(index.namespace.clone(), chosen.object.clone()));
        let data = match (&self.sql, ahead) {
            (_, Some(data)) => Some(data),
            (Some(sql), None) => sql.read(&index.namespace, &chosen.object).await?,
            (None, None) => self
                .read(&index.namespace, &chosen.object)
                .await
                .map_err(|source| SourceError::Api { what: format!("reading {record}"), source })?,
        };
        let data = data.ok_or_else(|| SourceError::NoData { record: record.clone() })?;
        let release = decode(&data).map_err(|source| SourceError::Corrupt { record: record.clone(), source })?;
        if release.name != index.name {
            return Err(SourceError::Mismatch { record, found: release.name, wanted: index.name.clone() });
        }
        Ok(Selected { release, record, newest })
    }

    /// The `release` value of one storage object (Helm's base64 text).
    async fn read(&self, namespace: &str, object: &str) -> Result<Option<Vec<u8>>, kube::Error> {
        Ok(match self.driver {
            Driver::Secrets => {
                let api: Api<Secret> = self.api(Some(namespace));
                let s = retry(|| api.get(object)).await?;
                s.data.and_then(|mut d| d.remove("release")).map(|b| b.0)
            }
            Driver::ConfigMaps | Driver::Sql => {
                let api: Api<ConfigMap> = self.api(Some(namespace));
                let c = retry(|| api.get(object)).await?;
                c.data.and_then(|mut d| d.remove("release")).map(String::into_bytes)
            }
        })
    }

    fn api<K>(&self, namespace: Option<&str>) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        match namespace {
            Some(ns) => Api::namespaced(self.client.clone(), ns),
            None => Api::all(self.client.clone()),
        }
    }

    fn kind(&self) -> &'static str {
        match self.driver {
            Driver::Secrets => "Secret",
            Driver::ConfigMaps => "ConfigMap",
            Driver::Sql => "SQL row",
        }
    }
}

/// Helm's rule: the given revision, else the highest `deployed` one; also the newest revision
/// when it is not the chosen one.
pub fn choose(
    index: &ReleaseIndex,
    revision: Option<u32>,
    driver: Driver,
) -> Result<(Record, Option<(u32, String)>), SourceError> {
    let newest = index.records.iter().max_by_key(|r| r.revision).ok_or_else(|| SourceError::NotFound {
        release: index.name.clone(),
        namespace: index.namespace.clone(),
        driver: driver.name(),
    })?;
    let chosen = match revision {
        Some(n) => index.records.iter().find(|r| r.revision == n).ok_or_else(|| SourceError::NoSuchRevision {
            release: index.name.clone(),
            namespace: index.namespace.clone(),
            revision: n,
            driver: driver.name(),
        })?,
        None => {
            index.records.iter().filter(|r| r.status == "deployed").max_by_key(|r| r.revision).ok_or_else(|| {
                SourceError::NotDeployed {
                    release: index.name.clone(),
                    namespace: index.namespace.clone(),
                    revision: newest.revision,
                    status: newest.status.clone(),
                }
            })?
        }
    };
    let newest = (newest.revision != chosen.revision).then(|| (newest.revision, newest.status.clone()));
    Ok((chosen.clone(), newest))
}

/// A record from a storage object's labels; objects without Helm's `name` and a numeric
/// `version` label are not Helm's and are skipped.
fn record(meta: ObjectMeta) -> Option<(String, Record)> {
    let labels = meta.labels.unwrap_or_default();
    let revision = labels.get("version")?.parse().ok()?;
    let name = labels.get("name")?.clone();
    let status = labels.get("status").cloned().unwrap_or_default();
    Some((name, Record { object: meta.name.unwrap_or_default(), revision, status }))
}

/// Adds what to do when listing release records is forbidden.
fn forbidden_hint(what: &str, e: &kube::Error, driver: Driver) -> String {
    match (e, driver) {
        (kube::Error::Api(s), Driver::Secrets) if s.code == 403 => format!(
            "{what}: the identity may not list secrets, where Helm stores releases by default (grant get/list on secrets, or use HELM_DRIVER=configmap if the releases are stored in ConfigMaps)"
        ),
        (kube::Error::Api(s), _) if s.code == 403 => format!("{what}: the identity may not list {}s", driver.name()),
        _ => what.to_string(),
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
                })
                .collect(),
        }
    }

    #[test]
    fn picks_highest_deployed_and_reports_newer_failed() {
        let (r, newest) =
            choose(&index(&[(1, "superseded"), (2, "deployed"), (3, "failed")]), None, Driver::Secrets).unwrap();
        assert_eq!(r.revision, 2);
        assert_eq!(newest, Some((3, "failed".into())));
        let (r, newest) = choose(&index(&[(1, "deployed"), (2, "deployed")]), None, Driver::Secrets).unwrap();
        assert_eq!((r.revision, newest), (2, None));
    }

    #[test]
    fn explicit_revision_and_clear_errors() {
        let (r, _) = choose(&index(&[(1, "superseded"), (2, "deployed")]), Some(1), Driver::Secrets).unwrap();
        assert_eq!(r.revision, 1);
        let e = choose(&index(&[(1, "deployed")]), Some(7), Driver::ConfigMaps).unwrap_err().to_string();
        assert_eq!(e, "revision 7 of release \"web\" not found in namespace \"apps\" (storage driver: configmaps)");
        let e = choose(&index(&[(1, "uninstalled")]), None, Driver::Secrets).unwrap_err().to_string();
        assert_eq!(
            e,
            "release \"web\" in namespace \"apps\" has no deployed revision (newest is revision 1, status uninstalled)"
        );
    }
}

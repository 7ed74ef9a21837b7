//! Reads release records from Helm's storage drivers (Secrets, ConfigMaps) and picks the revision
//! to compare against, by Helm's own rule.

use super::{DecodeError, Release, decode};
use crate::settings::Driver;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
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
    #[error("{what}: {source}")]
    Api { what: String, source: kube::Error },
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
#[derive(Debug)]
struct Record {
    object: String,
    revision: u32,
    status: String,
    data: Option<Vec<u8>>,
}

/// Helm's storage in one namespace.
pub struct Storage {
    client: kube::Client,
    namespace: String,
    driver: Driver,
}

impl Storage {
    pub fn new(client: kube::Client, namespace: &str, driver: Driver) -> Storage {
        Storage { client, namespace: namespace.to_string(), driver }
    }

    /// The revision to check: `revision` if given, else the highest `deployed` one.
    pub async fn select(&self, release: &str, revision: Option<u32>) -> Result<Selected, SourceError> {
        let records = self.records(release).await?;
        let newest = records.iter().max_by_key(|r| r.revision);
        let Some(newest) = newest else {
            return Err(SourceError::NotFound {
                release: release.into(),
                namespace: self.namespace.clone(),
                driver: self.driver.name(),
            });
        };
        let chosen = match revision {
            Some(n) => records.iter().find(|r| r.revision == n).ok_or(SourceError::NoSuchRevision {
                release: release.into(),
                namespace: self.namespace.clone(),
                revision: n,
                driver: self.driver.name(),
            })?,
            None => records.iter().filter(|r| r.status == "deployed").max_by_key(|r| r.revision).ok_or_else(|| {
                SourceError::NotDeployed {
                    release: release.into(),
                    namespace: self.namespace.clone(),
                    revision: newest.revision,
                    status: newest.status.clone(),
                }
            })?,
        };
        let data = chosen.data.as_deref().ok_or_else(|| SourceError::NoData { record: chosen.object.clone() })?;
        let release_record =
            decode(data).map_err(|source| SourceError::Corrupt { record: chosen.object.clone(), source })?;
        let newest = (newest.revision != chosen.revision).then(|| (newest.revision, newest.status.clone()));
        Ok(Selected { release: release_record, record: chosen.object.clone(), newest })
    }

    /// Every stored revision of `release`, listed by Helm's labels.
    async fn records(&self, release: &str) -> Result<Vec<Record>, SourceError> {
        let lp = ListParams::default().labels(&format!("owner=helm,name={release}"));
        let what = |kind: &str| format!("listing {kind} in namespace {:?}", self.namespace);
        let to_err = |kind: &str| {
            let what = what(kind);
            move |source| SourceError::Api { what, source }
        };
        let mut out = Vec::new();
        match self.driver {
            Driver::Secrets => {
                let api: Api<Secret> = Api::namespaced(self.client.clone(), &self.namespace);
                for s in api.list(&lp).await.map_err(to_err("Secrets"))? {
                    let data = s.data.and_then(|mut d| d.remove("release")).map(|b| b.0);
                    out.extend(record("Secret", &self.namespace, s.metadata, data));
                }
            }
            Driver::ConfigMaps => {
                let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), &self.namespace);
                for c in api.list(&lp).await.map_err(to_err("ConfigMaps"))? {
                    let data = c.data.and_then(|mut d| d.remove("release")).map(String::into_bytes);
                    out.extend(record("ConfigMap", &self.namespace, c.metadata, data));
                }
            }
        }
        Ok(out)
    }
}

/// A record from a storage object's labels; objects without a numeric `version` label are not
/// Helm's and are skipped.
fn record(
    kind: &str,
    namespace: &str,
    meta: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    data: Option<Vec<u8>>,
) -> Option<Record> {
    let labels: BTreeMap<String, String> = meta.labels.unwrap_or_default();
    let revision = labels.get("version")?.parse().ok()?;
    Some(Record {
        object: format!("{kind} {namespace}/{}", meta.name.unwrap_or_default()),
        revision,
        status: labels.get("status").cloned().unwrap_or_default(),
        data,
    })
}

//! Reads release records from Helm's storage through one [`Backend`]: Secrets or ConfigMaps in
//! the cluster, or Helm's SQL tables. Lists records by Helm's labels, picks the revision to
//! compare against by Helm's own rule, and decodes only that one.

use super::Release;
use super::codec::Encoded;
use super::driver::{self, DEPLOYED, Driver, RECORDS};
use super::error::SourceError;
use super::index::{Record, ReleaseIndex};
use super::record::Stored;
use super::sql::SqlStorage;
use crate::api::ApiError;
use crate::api::retry;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams};
use std::collections::BTreeMap;

/// Where the records are.
enum Backend {
    /// Secrets or ConfigMaps in each release's namespace.
    /// Secrets or ConfigMaps (never `Sql`).
    Kube { client: kube::Client, driver: Driver },
    /// Helm's `sql` driver (PostgreSQL).
    Sql(SqlStorage),
}

/// The chosen revision, and the newest one when it is not the chosen one (failed, pending...).
/// A copy shares the record's content (copied on write).
#[derive(Clone, Debug)]
pub(crate) struct Selected {
    pub(crate) release: Release,
    /// The storage object it came from, e.g. `Secret apps/sh.helm.release.v1.web.v3`.
    pub(crate) record: String,
    pub(crate) newest: Option<(u32, String)>,
}

/// Helm's storage, through one backend.
pub(crate) struct Storage {
    backend: Backend,
    /// Record data read ahead by one LIST, keyed by (namespace, object name).
    prefetched: std::sync::Mutex<BTreeMap<(String, String), Vec<u8>>>,
    /// Large records decoded at once, at most (each may decompress to 16 MiB).
    large: tokio::sync::Semaphore,
    /// The cluster, for the HelmReleases that vouch for a record stored apart from its release.
    client: kube::Client,
    /// The namespaces whose records the operator trusts (they speak for any release namespace).
    trust: crate::model::Trust,
}

impl Storage {
    /// Opens the storage; for the SQL driver this connects to the database.
    pub(crate) async fn open(
        client: kube::Client,
        driver: Driver,
        sql_connection: Option<&str>,
    ) -> Result<Storage, SourceError> {
        let backend = match driver {
            Driver::Sql => Backend::Sql(SqlStorage::connect(sql_connection).await?),
            kube => Backend::Kube { client: client.clone(), driver: kube },
        };
        Ok(Storage {
            backend,
            prefetched: Default::default(),
            large: tokio::sync::Semaphore::new(LARGE_AT_ONCE),
            client,
            trust: Default::default(),
        })
    }

    /// The storage, taking the records of `trust`'s namespaces for a release stored elsewhere.
    pub(crate) fn trusting(mut self, trust: crate::model::Trust) -> Storage {
        self.trust = trust;
        self
    }

    pub(crate) fn driver(&self) -> Driver {
        match &self.backend {
            Backend::Kube { driver, .. } => *driver,
            Backend::Sql(_) => Driver::Sql,
        }
    }

    /// Every release in `namespace` (all namespaces when `None`) whose storage labels match
    /// `selector`, sorted by namespace and name; only labels are read.
    pub(crate) async fn releases(
        &self,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<Vec<ReleaseIndex>, SourceError> {
        let (client, driver) = match &self.backend {
            Backend::Sql(sql) => return Ok(sql.releases(namespace, selector).await?),
            Backend::Kube { client, driver } => (client, *driver),
        };
        let lp = ListParams::default().labels(&driver::records_selector(RECORDS, selector));
        let metas = match driver {
            Driver::Secrets => list_metadata::<Secret>(client, namespace, &lp).await,
            Driver::ConfigMaps | Driver::Sql => list_metadata::<ConfigMap>(client, namespace, &lp).await,
        }
        .map_err(|e| {
            let scope = namespace.map_or("in all namespaces".to_string(), |ns| format!("in namespace {ns:?}"));
            let what = format!("listing {}s {scope}", driver.record_kind());
            let source = ApiError::from_kube(&e, "list", driver.name());
            let hint = match (&source, driver) {
                (ApiError::Forbidden { .. }, Driver::Secrets) => {
                    "; Helm stores releases in Secrets by default: grant get/list on secrets, or use HELM_DRIVER=configmap if the releases are stored in ConfigMaps"
                }
                _ => "",
            };
            SourceError::Api { what, source, hint }
        })?;
        let mut grouped: BTreeMap<(String, String), Vec<Record>> = BTreeMap::new();
        for (ns, name, record) in metas {
            grouped.entry((ns, name)).or_default().push(record);
        }
        Ok(grouped.into_iter().map(|((namespace, name), records)| ReleaseIndex { namespace, name, records }).collect())
    }

    /// The stored revisions of one release.
    pub(crate) async fn history(&self, namespace: &str, release: &str) -> Result<ReleaseIndex, SourceError> {
        let found = self.releases(Some(namespace), Some(&format!("name={release}"))).await?;
        match found.into_iter().find(|r| r.name == release) {
            Some(index) => Ok(index),
            None => Err(SourceError::NotFound {
                release: release.into(),
                namespace: namespace.into(),
                driver: self.driver().name(),
                hint: self.elsewhere(release, None).await,
            }),
        }
    }

    /// For a release not found in a namespace: where it is instead, as a hint for the error
    /// (`: it is in namespace "shop" (-n shop, or -A for every namespace)`); empty when it is
    /// nowhere, or the identity may not list every namespace.
    pub(crate) async fn elsewhere(&self, release: &str, selector: Option<&str>) -> String {
        let selector = match selector {
            Some(s) => format!("name={release},{s}"),
            None => format!("name={release}"),
        };
        let found = self.releases(None, Some(&selector)).await.unwrap_or_default();
        let namespaces: Vec<&str> = found.iter().filter(|r| r.name == release).map(|r| r.namespace.as_str()).collect();
        match namespaces[..] {
            [] => String::new(),
            [ns] => format!(": it is in namespace {ns:?} (-n {ns}, or -A for every namespace)"),
            _ => format!(": it is in namespaces {} (-n NAMESPACE, or -A for every namespace)", namespaces.join(", ")),
        }
    }

    /// Reads the data of every `deployed` record in scope with one LIST, so that checking many
    /// releases costs one request instead of one GET each. Nothing to do for SQL.
    pub(crate) async fn prefetch_deployed(
        &self,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<(), SourceError> {
        let Backend::Kube { client, driver } = &self.backend else { return Ok(()) };
        let lp = ListParams::default().labels(&driver::records_selector(DEPLOYED, selector));
        let found = match driver {
            Driver::Secrets => list_data::<Secret>(client, namespace, &lp).await,
            Driver::ConfigMaps | Driver::Sql => list_data::<ConfigMap>(client, namespace, &lp).await,
        }
        .map_err(|e| SourceError::Api {
            what: format!("listing deployed {} records", driver.record_kind()),
            source: ApiError::from_kube(&e, "list", driver.name()),
            hint: "",
        })?;
        let mut prefetched = self.prefetched.lock().expect("prefetch lock");
        let mut held: usize = prefetched.values().map(Vec::len).sum();
        for (key, data) in found {
            // Past the total, records are read one at a time when checked.
            if held + data.len() <= PREFETCH_TOTAL {
                held += data.len();
                prefetched.insert(key, data);
            }
        }
        Ok(())
    }

    /// Reads and decodes the revision to check: `revision` if given, else the highest `deployed`.
    pub(crate) async fn select(&self, index: &ReleaseIndex, revision: Option<u32>) -> Result<Selected, SourceError> {
        let (chosen, newest) = index.choose(revision, self.driver().name())?;
        let (record, claimed, reserved) = self.decoded(index, &chosen).await?;
        let stored = stored(index, &chosen);
        // A record claiming another namespace than its storage's: taken only when vouched for.
        // The operator's trust is never vetoed; a HelmRelease's word yields to that namespace's
        // own record of the release (one that decodes and matches its storage object: a
        // Secret that only carries Helm's labels is no record).
        let mut unread = String::new();
        let vouch = match claimed.namespace() {
            ns if ns == index.namespace => None,
            ns => {
                let vouch = super::vouch::vouch(&self.client, &self.trust, &index.namespace, ns, &index.name)
                    .await
                    .unwrap_or_else(|e| {
                        let stored = &index.namespace;
                        unread = format!(
                            "; the HelmReleases of namespace {stored}, which could say so, could not be read: {e}"
                        );
                        None
                    });
                if matches!(vouch, Some(crate::model::Vouch::HelmRelease { .. }))
                    && let Some(own) = self.own_record(ns, &index.name).await
                {
                    return Err(SourceError::Conflict { record, namespace: ns.to_string(), own });
                }
                vouch
            }
        };
        let release = claimed.bind(stored, reserved, vouch).map_err(|source| SourceError::Mismatch {
            record: record.clone(),
            source,
            unread,
        })?;
        Ok(Selected { release, record, newest })
    }

    /// The record `chosen` of `index` read and decoded (within the process's budget), with its
    /// name in messages (`Secret NS/OBJECT`).
    async fn decoded(
        &self,
        index: &ReleaseIndex,
        chosen: &Record,
    ) -> Result<(String, super::record::Claimed, super::budget::Reserved), SourceError> {
        let record = format!("{} {}/{}", self.record_kind(), index.namespace, chosen.object);
        let ahead =
            self.prefetched.lock().expect("prefetch lock").remove(&(index.namespace.clone(), chosen.object.clone()));
        // A record not prefetched may be large: a few at a time, so that many of them (forged
        // ones, say) never decompress together.
        let _permit = match ahead {
            Some(_) => None,
            None => self.large.acquire().await.ok(),
        };
        let data = match (&self.backend, ahead) {
            (_, Some(data)) => Some(data),
            (Backend::Sql(sql), None) => sql.read(&index.namespace, &chosen.object).await?,
            (Backend::Kube { client, driver }, None) => match driver {
                Driver::Secrets => get_data::<Secret>(client, &index.namespace, &chosen.object).await,
                Driver::ConfigMaps | Driver::Sql => {
                    get_data::<ConfigMap>(client, &index.namespace, &chosen.object).await
                }
            }
            .map_err(|e| SourceError::Api {
                what: format!("reading {record}"),
                source: ApiError::from_kube(&e, "get", driver.name()),
                hint: "",
            })?,
        };
        let data = data.ok_or_else(|| SourceError::NoData { record: record.clone() })?;
        let corrupt = |source| SourceError::Corrupt { record: record.clone(), source };
        let encoded = Encoded::new(&data).map_err(corrupt)?;
        drop(data);
        // What it will hold decoded is reserved from the process's budget before it is inflated.
        let size = encoded.size().map_err(corrupt)?;
        let mut reserved = super::budget::reserve(size).await;
        let claimed = encoded.decode().map_err(corrupt)?;
        reserved.shrink_to(super::budget::cost(size, claimed.manifest_len()));
        Ok((record, claimed, reserved))
    }

    /// The newest record `namespace` holds itself of release `name` (`Secret NS/OBJECT`), if
    /// one decodes and matches its storage object (none when it may not be listed or read: the
    /// claim is then judged by its evidence alone; a Secret with Helm's labels and no record
    /// in it, or one claiming something else, is no record of the namespace's).
    async fn own_record(&self, namespace: &str, name: &str) -> Option<String> {
        let found = self.releases(Some(namespace), Some(&format!("name={name}"))).await.ok()?;
        let index = found.into_iter().find(|r| r.name == name && r.namespace == namespace)?;
        let newest = index.newest()?.clone();
        let (record, claimed, reserved) = self.decoded(&index, &newest).await.ok()?;
        (claimed.namespace() == namespace).then_some(())?;
        claimed.bind(stored(&index, &newest), reserved, None).ok()?;
        Some(record)
    }

    /// What a record is called in messages.
    fn record_kind(&self) -> &'static str {
        self.driver().record_kind()
    }
}

/// Where `chosen` of `index` is stored, as its record must match.
fn stored<'a>(index: &'a ReleaseIndex, chosen: &'a Record) -> Stored<'a> {
    Stored {
        namespace: &index.namespace,
        object: &chosen.object,
        name: &index.name,
        revision: chosen.revision,
        status: &chosen.status,
        written: chosen.written,
    }
}

/// A Kubernetes object that holds a release record under `data.release`.
trait RecordObject:
    kube::Resource<Scope = NamespaceResourceScope, DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug
{
    /// Its metadata and the `release` value (Helm's base64 text).
    fn into_parts(self) -> (ObjectMeta, Option<Vec<u8>>);
}

impl RecordObject for Secret {
    fn into_parts(self) -> (ObjectMeta, Option<Vec<u8>>) {
        (self.metadata, self.data.and_then(|mut d| d.remove("release")).map(|b| b.0))
    }
}

impl RecordObject for ConfigMap {
    fn into_parts(self) -> (ObjectMeta, Option<Vec<u8>>) {
        (self.metadata, self.data.and_then(|mut d| d.remove("release")).map(String::into_bytes))
    }
}

fn api<K: RecordObject>(client: &kube::Client, namespace: Option<&str>) -> Api<K> {
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// Records per page of the watcher's metadata watch (its own LISTs, kube's): whoever may write a
/// Secret can give a forged record 1 MiB of annotations and managedFields.
pub(crate) const METADATA_PAGE: u32 = 50;

/// Every record's namespace, release name and [`Record`], read in pages of metadata sized by
/// bytes ([`crate::api::PageSizes`]: 4 MiB at the sizes seen, asked again with fewer past
/// 8 MiB), each page cut to its [`Record`]s as it is read (its labels, name and when its data was
/// written): a namespace of records with 1 MiB of metadata costs a page, not the namespace.
async fn list_metadata<K: RecordObject>(
    client: &kube::Client,
    namespace: Option<&str>,
    lp: &ListParams,
) -> Result<Vec<(String, String, Record)>, kube::Error> {
    #[derive(serde::Deserialize)]
    struct MetadataItem {
        metadata: ObjectMeta,
    }
    let request = kube::core::Request::new(api::<K>(client, namespace).resource_url());
    let keep = |item: MetadataItem| {
        let ns = item.metadata.namespace.clone().unwrap_or_default();
        Record::from_labels(item.metadata).map(|(name, record)| (ns, name, record))
    };
    crate::api::kept_pages(client, lp, |lp| request.list_metadata(lp), keep).await
}

/// Records at most this large (their data, compressed) are kept from the prefetch; larger ones are
/// read one at a time when their release is checked, so that a namespace full of large (forged)
/// records never sits in memory at once.
const PREFETCH_MAX: usize = 256 * 1024;
/// The most record data (compressed) the prefetch keeps, all records together.
const PREFETCH_TOTAL: usize = 32 * 1024 * 1024;
/// Records not prefetched (large ones) read and decoded at once, at most.
const LARGE_AT_ONCE: usize = 4;
/// Records per page of the prefetch LIST (fewer with a smaller `--chunk-size`): a page of
/// records at the 1 MiB Secret limit is then about 65 MiB of response at most.
const PREFETCH_PAGE: u32 = 50;

#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn list_data<K: RecordObject>(
    client: &kube::Client,
    namespace: Option<&str>,
    lp: &ListParams,
) -> Result<Vec<((String, String), Vec<u8>)>, kube::Error> {
    let api = api::<K>(client, namespace);
    let mut found = Vec::new();
    let mut page = lp.clone().limit(crate::api::chunk_size().map_or(PREFETCH_PAGE, |n| n.min(PREFETCH_PAGE)));
    loop {
        let list = match retry(|| api.list(&page)).await {
            Ok(list) => list,
            // The continue token expired: what was not read yet is read one by one later.
            Err(kube::Error::Api(s)) if s.code == 410 && page.continue_token.is_some() => return Ok(found),
            Err(e) => return Err(e),
        };
        let next = list.metadata.continue_.clone().filter(|c| !c.is_empty());
        for obj in list {
            let (meta, data) = obj.into_parts();
            let key = (meta.namespace.unwrap_or_default(), meta.name.unwrap_or_default());
            found.extend(data.filter(|d| d.len() <= PREFETCH_MAX).map(|d| (key, d)));
            if found.iter().map(|(_, d)| d.len()).sum::<usize>() > PREFETCH_TOTAL {
                return Ok(found);
            }
        }
        match next {
            Some(token) => page = page.continue_token(&token),
            None => return Ok(found),
        }
    }
}

#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn get_data<K: RecordObject>(
    client: &kube::Client,
    namespace: &str,
    object: &str,
) -> Result<Option<Vec<u8>>, kube::Error> {
    let api = api::<K>(client, Some(namespace));
    Ok(retry(|| api.get(object)).await?.into_parts().1)
}

//! Live objects shared by every release of a run, read with one LIST per kind and namespace
//! (or per kind, in every namespace). A listing keeps only what a release may ask for: the
//! objects the releases name (registered before they are read) and the objects Helm manages
//! (its ownership annotations), decided while each page is read, within a byte budget; every
//! other object leaves with its page. Pages are sized by bytes, not count: the next page asks
//! for as many objects as fit [`crate::api::PAGE_BYTES`] at the sizes seen so far. An object not kept is
//! read alone when asked for, so nothing dropped changes a verdict.

use super::{LiveState, Location, Scaled, api, crd_schema, get, hpa_targets};
use crate::api::ApiError;
use crate::api::PageSizes;
use kube::api::ListParams;
use kube::discovery::ApiResource;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Listed objects as their JSON text (a third of the memory of parsed values), parsed when read.
type Objects = HashMap<String, Box<RawValue>>;
/// A listing whose objects are handed out (and dropped from memory) as they are read.
type Shared = Result<Mutex<Objects>, ApiError>;
type Cell<T> = std::sync::Arc<tokio::sync::OnceCell<T>>;
/// group, version, plural, namespace.
type ListKey = (String, String, String, Option<String>);
type Cells<K, T> = Mutex<HashMap<K, Cell<T>>>;
/// The objects kept of one page, by name.
type KeptPage = crate::api::Page<(String, Box<RawValue>)>;

/// The annotation Helm puts on every object it manages.
/// The most bytes of listed objects one run keeps at once (a namespace stuffed with large
/// objects that claim Helm's annotations costs no more; past it, objects are read alone).
pub(crate) const KEPT_BYTES: usize = 64 * 1024 * 1024;

const RELEASE_NAME: &str = "meta.helm.sh/release-name";

/// The live objects of a run: a kind with several objects in one namespace is read with one
/// LIST (made once, whoever asks first), single objects with a GET; HPAs are listed once per
/// namespace. Requests grow with kinds and namespaces, not with objects.
#[derive(Default)]
pub(crate) struct LiveCache {
    lists: Cells<ListKey, Shared>,
    hpas: Cells<String, Result<Vec<Scaled>, ApiError>>,
    /// Flux HelmReleases, by namespace (or every namespace at once, in a wide cache).
    installers: Cells<String, Result<std::sync::Arc<Vec<crate::model::FluxInstaller>>, ApiError>>,
    /// CRD schemas (`openAPIV3Schema` of a served version), by group, version and plural.
    schemas: Cells<(String, String, String), Option<std::sync::Arc<Value>>>,
    /// Admission's configuration, read once (the read-only engine's evidence).
    admission: Cell<std::sync::Arc<super::mutators::Admission>>,
    /// Namespaces' labels (`None`: not readable), by name.
    namespaces: Cells<String, Option<std::sync::Arc<serde_json::Map<String, Value>>>>,
    /// List namespaced kinds across every namespace at once (a run over many namespaces: one
    /// LIST per kind instead of one per kind and namespace).
    wide: AtomicBool,
    /// The objects the releases name, by listing, as they are listed.
    wanted: Mutex<HashMap<ListKey, HashSet<String>>>,
    /// Bytes of listed objects held now.
    held: AtomicUsize,
    /// Objects listed and not kept for the budget (read alone if asked for).
    over_budget: AtomicUsize,
}

/// The listing key of every namespace in a wide cache.
const EVERY_NAMESPACE: &str = "*";

impl LiveCache {
    /// Admission's configuration, read once per run.
    pub(crate) async fn admission(&self, client: &kube::Client) -> std::sync::Arc<super::mutators::Admission> {
        self.admission
            .get_or_init(|| async { std::sync::Arc::new(super::mutators::admission(client).await) })
            .await
            .clone()
    }

    /// The labels of namespace `name`, read once per run (`None`: not readable).
    pub(crate) async fn namespace_labels(
        &self,
        client: &kube::Client,
        name: &str,
    ) -> Option<std::sync::Arc<serde_json::Map<String, Value>>> {
        let cell = self.namespaces.lock().expect("namespaces lock").entry(name.to_string()).or_default().clone();
        let read = || async { super::mutators::namespace_labels(client, name).await.map(std::sync::Arc::new) };
        cell.get_or_init(read).await.clone()
    }

    /// From now on, namespaced kinds are listed across every namespace at once.
    pub(crate) fn list_every_namespace(&self) {
        self.wide.store(true, Ordering::Relaxed);
    }

    fn is_wide(&self) -> bool {
        self.wide.load(Ordering::Relaxed)
    }

    /// The listing `at`'s kind is read from, and the object's name in it.
    fn key(&self, at: &Location, name: &str) -> (ListKey, String, bool) {
        let wide = self.is_wide() && at.namespace.is_some();
        let r = &at.resource;
        let scope = if wide { Some(EVERY_NAMESPACE.to_string()) } else { at.namespace.clone() };
        let listed_as = match (&at.namespace, wide) {
            (Some(ns), true) => format!("{ns}/{name}"),
            _ => name.to_string(),
        };
        ((r.group.clone(), r.version.clone(), r.plural.clone(), scope), listed_as, wide)
    }

    /// Says that a release names these objects (before they are read): their listings keep them.
    pub(crate) fn want<'a>(&self, objects: impl IntoIterator<Item = (&'a Location, &'a str)>) {
        let mut wanted = self.wanted.lock().expect("cache lock");
        for (at, name) in objects {
            let (key, listed_as, _) = self.key(at, name);
            wanted.entry(key).or_default().insert(listed_as);
        }
    }

    /// How many listed objects were not kept for the byte budget (read alone when asked for).
    pub(crate) fn over_budget(&self) -> usize {
        self.over_budget.load(Ordering::Relaxed)
    }

    /// The live object; `listed` reads it from the LIST of its kind in its namespace (in a wide
    /// cache, every namespaced object comes from the LIST of its kind in every namespace).
    pub(crate) async fn get(&self, client: &kube::Client, at: &Location, name: &str, listed: bool) -> LiveState {
        let (key, listed_as, wide) = self.key(at, name);
        if !listed && !wide {
            return get(client, at, name).await;
        }
        let cell = self.lists.lock().expect("cache lock").entry(key.clone()).or_default().clone();
        let listing = cell
            .get_or_init(|| async {
                let keep = |listed_as: &str, helm: bool, bytes: usize| self.keep(&key, listed_as, helm, bytes);
                list_objects(client, at, wide, keep).await.map(Mutex::new)
            })
            .await;
        let r = &at.resource;
        match listing {
            // Each desired object is read once: hand it over rather than copy it. Not in the
            // listing (or already handed over to another release claiming the same object):
            // ask for it alone, so an absence is always confirmed.
            Ok(objects) => {
                let found = objects.lock().expect("listing lock").remove(&listed_as);
                if let Some(raw) = &found {
                    self.held.fetch_sub(raw.get().len(), Ordering::Relaxed);
                }
                match found.map(|raw| listed_object(&raw, r)) {
                    Some(Ok(v)) => LiveState::Present(v),
                    Some(Err(e)) => LiveState::Failed(ApiError::Other {
                        message: format!("cannot parse {} {name} from its listing: {e}", r.kind),
                    }),
                    None => get(client, at, name).await,
                }
            }
            // No `list` right (get only): read this object alone.
            Err(e) if e.is_forbidden() => get(client, at, name).await,
            Err(e) => LiveState::Failed(e.clone()),
        }
    }

    /// Whether a listed object (`listed_as` in listing `key`, managed by Helm or not, of `bytes`)
    /// is kept: named by a release (always: the releases' records bound those), or managed by
    /// Helm for a release not judged yet, within the budget.
    fn keep(&self, key: &ListKey, listed_as: &str, helm: bool, bytes: usize) -> bool {
        let named = self.wanted.lock().expect("cache lock").get(key).is_some_and(|w| w.contains(listed_as));
        if named {
            self.held.fetch_add(bytes, Ordering::Relaxed);
            return true;
        }
        if !helm {
            return false;
        }
        let fits = self
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                (held.saturating_add(bytes) <= KEPT_BYTES).then_some(held + bytes)
            })
            .is_ok();
        if !fits {
            self.over_budget.fetch_add(1, Ordering::Relaxed);
        }
        fits
    }

    /// The schema of the CRD that serves `at`'s custom resources at its version, read once per
    /// run; `None` when it cannot be read (not a CRD, or not readable by whoever runs).
    pub(crate) async fn crd_schema(&self, client: &kube::Client, at: &Location) -> Option<std::sync::Arc<Value>> {
        let r = &at.resource;
        let key = (r.group.clone(), r.version.clone(), r.plural.clone());
        let cell = self.schemas.lock().expect("cache lock").entry(key).or_default().clone();
        cell.get_or_init(|| crd_schema(client, r)).await.clone()
    }

    /// The HPAs of a namespace, listed once per run (in a wide cache, once for every namespace).
    pub(crate) async fn hpa_targets(&self, client: &kube::Client, namespace: &str) -> Result<Vec<Scaled>, ApiError> {
        let scope = if self.is_wide() { EVERY_NAMESPACE } else { namespace };
        let cell = self.hpas.lock().expect("cache lock").entry(scope.to_string()).or_default().clone();
        let all = cell.get_or_init(|| hpa_targets(client, (scope != EVERY_NAMESPACE).then_some(scope))).await;
        all.clone().map(|found| found.into_iter().filter(|s| s.namespace == namespace).collect())
    }

    /// The Flux HelmRelease of `namespace` that installs `release` into `target` with its record
    /// in `namespace`, from the HelmReleases listed once per run (in a wide cache, once for every
    /// namespace).
    pub(crate) async fn flux_installer(
        &self,
        client: &kube::Client,
        (namespace, target, release): (&str, &str, &str),
    ) -> Result<Option<crate::model::FluxInstaller>, ApiError> {
        let scope = if self.is_wide() { EVERY_NAMESPACE } else { namespace };
        let cell = self.installers.lock().expect("cache lock").entry(scope.to_string()).or_default().clone();
        let list = || async {
            super::flux::helm_releases(client, (scope != EVERY_NAMESPACE).then_some(scope))
                .await
                .map(std::sync::Arc::new)
        };
        let all = cell.get_or_init(list).await.clone()?;
        Ok(all.iter().find(|hr| hr.installs(namespace, target, release)).cloned())
    }
}

/// The objects of a kind in a namespace (or cluster-wide for cluster-scoped kinds) that `keep`
/// keeps (`keep(name, managed by Helm, bytes)`), by name (`namespace/name` when `everywhere`
/// lists a namespaced kind in every namespace), kept as their JSON text. Helm's own release
/// records are left out of listings of every namespace. Read in pages sized by bytes
/// ([`PageSizes`]): one page of response text at a time, each item borrowed from it and copied
/// only when kept.
async fn list_objects(
    client: &kube::Client,
    at: &Location,
    everywhere: bool,
    keep: impl Fn(&str, bool, usize) -> bool,
) -> Result<Objects, ApiError> {
    let r = &at.resource;
    let api = if everywhere { kube::Api::all_with(client.clone(), &at.resource) } else { api(client, at) };
    let request = kube::core::Request::new(api.resource_url());
    let records = everywhere && r.group.is_empty() && (r.plural == "secrets" || r.plural == "configmaps");
    let base = if records { ListParams::default().labels("owner!=helm") } else { ListParams::default() };
    let invalid = |e: serde_json::Error| kube::Error::SerdeError(e);
    let sizes = PageSizes::new();
    let keep = &keep;
    let items = crate::api::all_pages(|limit, token| {
        let mut lp = base.clone();
        lp.continue_token = token;
        let (request, sizes) = (&request, &sizes);
        async move {
            let text = sizes.page(client, &mut lp, limit, |lp: &ListParams| request.list(lp)).await?;
            let page = kept(&text, everywhere, keep).map_err(invalid)?;
            sizes.read(text.len(), page.1);
            Ok(page.0)
        }
    })
    .await
    .map_err(|e| match e {
        kube::Error::SerdeError(e) => {
            ApiError::Other { message: format!("cannot parse the list of {}: {e}", r.plural) }
        }
        e => ApiError::from_kube(&e, "list", &r.plural),
    })?;
    Ok(items.into_iter().collect())
}

/// The objects of one page of a LIST (`text`) that `keep` keeps, each copied out of the text,
/// and how many the page held.
fn kept(
    text: &str,
    everywhere: bool,
    keep: impl Fn(&str, bool, usize) -> bool,
) -> Result<(KeptPage, usize), serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct List<'a> {
        #[serde(borrow, default)]
        items: Vec<&'a RawValue>,
        #[serde(default)]
        metadata: ListMeta,
    }
    #[derive(serde::Deserialize, Default)]
    struct ListMeta {
        #[serde(default, rename = "continue")]
        next: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Item<'a> {
        #[serde(borrow)]
        metadata: Meta<'a>,
    }
    #[derive(serde::Deserialize)]
    struct Meta<'a> {
        #[serde(default)]
        name: String,
        namespace: Option<String>,
        #[serde(borrow, default)]
        annotations: Option<HashMap<std::borrow::Cow<'a, str>, serde::de::IgnoredAny>>,
    }
    let list: List<'_> = serde_json::from_str(text)?;
    let read = list.items.len();
    let mut items = Vec::new();
    for raw in list.items {
        let item: Item<'_> = serde_json::from_str(raw.get())?;
        let helm = item.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(RELEASE_NAME));
        let key = match item.metadata.namespace {
            Some(ns) if everywhere => format!("{ns}/{}", item.metadata.name),
            _ => item.metadata.name,
        };
        if keep(&key, helm, raw.get().len()) {
            items.push((key, raw.to_owned()));
        }
    }
    Ok((crate::api::Page { items, next: list.metadata.next }, read))
}

/// A listed object, parsed, with `apiVersion`/`kind` filled in (list items come without them).
fn listed_object(raw: &RawValue, r: &ApiResource) -> Result<Value, serde_json::Error> {
    let mut obj: Value = serde_json::from_str(raw.get())?;
    if let Some(map) = obj.as_object_mut() {
        map.insert("apiVersion".into(), r.api_version.clone().into());
        map.insert("kind".into(), r.kind.clone().into());
    }
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(namespace: Option<&str>) -> Location {
        let gvk = kube::core::GroupVersionKind::gvk("", "v1", "ConfigMap");
        Location {
            resource: ApiResource::from_gvk_with_plural(&gvk, "configmaps"),
            namespace: namespace.map(String::from),
        }
    }

    #[test]
    fn a_listing_keeps_what_releases_name_or_helm_manages_within_its_budget() {
        let cache = LiveCache::default();
        let at = location(Some("shop"));
        cache.want([(&at, "web")]);
        let (key, listed_as, _) = cache.key(&at, "web");
        assert!(cache.keep(&key, &listed_as, false, KEPT_BYTES), "named by a release: always");
        cache.held.store(0, Ordering::Relaxed);
        assert!(cache.keep(&key, "dashboard", true, 10), "managed by Helm");
        assert!(!cache.keep(&key, "unrelated", false, 10), "neither: left with its page");
        assert!(!cache.keep(&key, "huge", true, KEPT_BYTES), "past the budget: read alone if asked");
        assert_eq!(cache.over_budget(), 1);
        cache.list_every_namespace();
        cache.want([(&at, "api")]);
        let (wide, listed_as, _) = cache.key(&at, "api");
        assert_eq!(listed_as, "shop/api");
        assert!(cache.keep(&wide, "shop/api", false, 10));
        assert!(!cache.keep(&wide, "other/api", false, 10), "by name and namespace");
    }
}

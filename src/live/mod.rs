//! Live state: resolves kinds by discovery, fetches objects (one shared LIST per kind and
//! namespace, or a GET), finds the HorizontalPodAutoscalers that own replica counts, and makes
//! changes as Helm would ([`change`]). Every failure is a typed [`ApiError`].

pub(crate) mod admission;
mod change;
mod events;

pub(crate) use change::{Change, apply_dry_run, change};
pub(crate) use events::{event, event_namespace, record_event};

use crate::api::ApiError;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Discovery, Scope};
use serde_json::Value;

/// Where a desired object lives: its served resource and effective namespace.
#[derive(Clone, Debug)]
pub(crate) struct Location {
    pub(crate) resource: ApiResource,
    /// `None` for cluster-scoped kinds.
    pub(crate) namespace: Option<String>,
}

/// What the cluster holds for one desired object.
#[derive(Debug)]
pub(crate) enum LiveState {
    Present(Value),
    Absent,
    /// The lookup failed (forbidden, ...).
    Failed(ApiError),
}

/// Runs discovery once for the run.
pub(crate) async fn discover(client: &kube::Client) -> Result<Discovery, ApiError> {
    crate::api::retry(|| Discovery::new(client.clone()).run_aggregated())
        .await
        .map_err(|e| ApiError::from_kube(&e, "discover", "API groups"))
}

/// Resolves `api_version`/`kind` to a served resource and the object's namespace (namespaced
/// objects without one get `release_namespace`). `None` when the kind is not served.
pub(crate) fn locate(
    discovery: &Discovery,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
    release_namespace: &str,
) -> Option<Location> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let (resource, caps) = discovery.resolve_gvk(&GroupVersionKind::gvk(group, version, kind))?;
    let namespace = match caps.scope {
        Scope::Namespaced => Some(namespace.unwrap_or(release_namespace).to_string()),
        Scope::Cluster => None,
    };
    Some(Location { resource, namespace })
}

/// Kinds that moved to another API group when their old version was removed.
const GROUP_MOVES: [(&str, &str, &str); 5] = [
    ("extensions", "Deployment", "apps"),
    ("extensions", "DaemonSet", "apps"),
    ("extensions", "ReplicaSet", "apps"),
    ("extensions", "Ingress", "networking.k8s.io"),
    ("extensions", "NetworkPolicy", "networking.k8s.io"),
];

/// A served `apiVersion` for a kind whose recorded `api_version` is no longer served: the
/// group's preferred version that has the kind, else the group the kind moved to.
pub(crate) fn served_replacement(discovery: &Discovery, api_version: &str, kind: &str) -> Option<String> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let moved = GROUP_MOVES.iter().filter(|(from, k, _)| *from == group && *k == kind).map(|(_, _, to)| *to);
    for g in std::iter::once(group).chain(moved) {
        let Some(found) = discovery.groups().find(|d| d.name() == g) else { continue };
        let mut versions = found.versions().collect::<Vec<_>>();
        // The preferred version first.
        versions.sort_by_key(|v| Some(*v) != found.preferred_version());
        for v in versions {
            if found.versioned_resources(v).iter().any(|(ar, _)| ar.kind == kind) {
                return Some(if g.is_empty() { v.to_string() } else { format!("{g}/{v}") });
            }
        }
    }
    None
}

fn api(client: &kube::Client, at: &Location) -> Api<DynamicObject> {
    match &at.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &at.resource),
        None => Api::all_with(client.clone(), &at.resource),
    }
}

/// GETs one object (parsed once, straight into JSON).
pub(crate) async fn get(client: &kube::Client, at: &Location, name: &str) -> LiveState {
    let api = api(client, at);
    let request = kube::core::Request::new(api.resource_url());
    let result = crate::api::retry(|| async {
        let req = request.get(name, &Default::default()).map_err(kube::Error::BuildRequest)?;
        client.request::<Value>(req).await
    })
    .await;
    match result {
        Ok(v) => LiveState::Present(v),
        Err(kube::Error::Api(s)) if s.code == 404 => LiveState::Absent,
        Err(e) => LiveState::Failed(ApiError::from_kube(&e, "get", &at.resource.plural)),
    }
}

/// A workload whose replica count an HPA manages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scaled {
    pub(crate) namespace: String,
    pub(crate) group: String,
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) hpa: String,
}

/// The scale targets of every HorizontalPodAutoscaler in `namespace` (every namespace: `None`).
pub(crate) async fn hpa_targets(client: &kube::Client, namespace: Option<&str>) -> Result<Vec<Scaled>, ApiError> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("autoscaling", "v2", "HorizontalPodAutoscaler"),
        "horizontalpodautoscalers",
    );
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let list = crate::api::list_all(&api, &ListParams::default())
        .await
        .map_err(|e| ApiError::from_kube(&e, "list", "horizontalpodautoscalers"))?;
    Ok(list
        .into_iter()
        .filter_map(|hpa| {
            let target = hpa.data.get("spec")?.get("scaleTargetRef")?;
            let text = |k: &str| target.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let api_version = text("apiVersion");
            Some(Scaled {
                namespace: hpa.metadata.namespace.clone().unwrap_or_default(),
                group: api_version.rsplit_once('/').map_or("", |(g, _)| g).to_string(),
                kind: text("kind"),
                name: text("name"),
                hpa: hpa.metadata.name.unwrap_or_default(),
            })
        })
        .collect())
}

/// Listed objects as their JSON text (a third of the memory of parsed values), parsed when read.
type Listing = Result<std::collections::HashMap<String, Box<serde_json::value::RawValue>>, ApiError>;
/// A listing whose objects are handed out (and dropped from memory) as they are read.
type Shared = Result<std::sync::Mutex<std::collections::HashMap<String, Box<serde_json::value::RawValue>>>, ApiError>;
type Cell<T> = std::sync::Arc<tokio::sync::OnceCell<T>>;
/// group, version, plural, namespace.
type ListKey = (String, String, String, Option<String>);
type Cells<K, T> = std::sync::Mutex<std::collections::HashMap<K, Cell<T>>>;

/// Live objects shared by every release of a run: a kind with several objects in one namespace
/// is read with one LIST (made once, whoever asks first), single objects with a GET; HPAs are
/// listed once per namespace. Requests grow with kinds and namespaces, not with objects.
#[derive(Default)]
pub(crate) struct LiveCache {
    lists: Cells<ListKey, Shared>,
    hpas: Cells<String, Result<Vec<Scaled>, ApiError>>,
    /// CRD schemas (`openAPIV3Schema` of a served version), by group, version and plural.
    schemas: Cells<(String, String, String), Option<std::sync::Arc<Value>>>,
    /// List namespaced kinds across every namespace at once (a run over many namespaces: one
    /// LIST per kind instead of one per kind and namespace).
    wide: std::sync::atomic::AtomicBool,
}

/// The listing key of every namespace in a wide cache.
const EVERY_NAMESPACE: &str = "*";

impl LiveCache {
    /// From now on, namespaced kinds are listed across every namespace at once.
    pub(crate) fn list_every_namespace(&self) {
        self.wide.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn is_wide(&self) -> bool {
        self.wide.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The live object; `listed` reads it from the LIST of its kind in its namespace (in a wide
    /// cache, every namespaced object comes from the LIST of its kind in every namespace).
    pub(crate) async fn get(&self, client: &kube::Client, at: &Location, name: &str, listed: bool) -> LiveState {
        let wide = self.is_wide() && at.namespace.is_some();
        if !listed && !wide {
            return get(client, at, name).await;
        }
        let r = &at.resource;
        let scope = if wide { Some(EVERY_NAMESPACE.to_string()) } else { at.namespace.clone() };
        let key = (r.group.clone(), r.version.clone(), r.plural.clone(), scope);
        let cell = self.lists.lock().expect("cache lock").entry(key).or_default().clone();
        let listing =
            cell.get_or_init(|| async { list_objects(client, at, wide).await.map(std::sync::Mutex::new) }).await;
        let listed_as = match (&at.namespace, wide) {
            (Some(ns), true) => format!("{ns}/{name}"),
            _ => name.to_string(),
        };
        match listing {
            // Each desired object is read once: hand it over rather than copy it. Not in the
            // listing (or already handed over to another release claiming the same object):
            // ask for it alone, so an absence is always confirmed.
            Ok(objects) => {
                let found = objects.lock().expect("listing lock").remove(&listed_as);
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
}

/// The `openAPIV3Schema` of version `version` of the CRD `plural.group` of kind `kind`: from the
/// CRD, or, for an identity that may not read CRDs (a namespaced watcher), from the API server's
/// OpenAPI v3 document of the group version, which every authenticated user may read.
async fn crd_schema(client: &kube::Client, at: &ApiResource) -> Option<std::sync::Arc<Value>> {
    let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "customresourcedefinitions");
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let Ok(crd) = api.get_opt(&format!("{}.{}", at.plural, at.group)).await else {
        return published_schema(client, at).await;
    };
    let versions = crd?.data.pointer("/spec/versions")?.as_array()?.clone();
    let served = versions.iter().find(|v| v.get("name").and_then(Value::as_str) == Some(&at.version))?;
    served.pointer("/schema/openAPIV3Schema").cloned().map(std::sync::Arc::new)
}

/// The schema of `at`'s kind in the OpenAPI v3 document the API server publishes for its group
/// version (the one whose `x-kubernetes-group-version-kind` names it).
async fn published_schema(client: &kube::Client, at: &ApiResource) -> Option<std::sync::Arc<Value>> {
    let path = format!("/openapi/v3/apis/{}/{}", at.group, at.version);
    let request = http::Request::get(path).body(Vec::new()).ok()?;
    let doc: Value = client.request(request).await.ok()?;
    let names = |s: &Value| {
        s.get("x-kubernetes-group-version-kind").and_then(Value::as_array).is_some_and(|gvks| {
            gvks.iter().any(|g| {
                g.get("group").and_then(Value::as_str) == Some(&at.group)
                    && g.get("version").and_then(Value::as_str) == Some(&at.version)
                    && g.get("kind").and_then(Value::as_str) == Some(&at.kind)
            })
        })
    };
    let schemas = doc.pointer("/components/schemas")?.as_object()?;
    schemas.values().find(|s| names(s)).cloned().map(std::sync::Arc::new)
}

/// Every object of a kind in a namespace (or cluster-wide for cluster-scoped kinds), by name
/// (`namespace/name` when `everywhere` lists a namespaced kind in every namespace), kept as its
/// JSON text. Helm's own release records are left out of listings of every namespace. Read in
/// pages ([`crate::api::all_pages`]): one page of response text at a time.
async fn list_objects(client: &kube::Client, at: &Location, everywhere: bool) -> Listing {
    #[derive(serde::Deserialize)]
    struct List {
        #[serde(default)]
        items: Vec<Box<serde_json::value::RawValue>>,
        #[serde(default)]
        metadata: ListMeta,
    }
    #[derive(serde::Deserialize, Default)]
    struct ListMeta {
        #[serde(default, rename = "continue")]
        next: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Item {
        metadata: Meta,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(default)]
        name: String,
        namespace: Option<String>,
    }
    let r = &at.resource;
    let api = if everywhere { Api::all_with(client.clone(), &at.resource) } else { api(client, at) };
    let request = kube::core::Request::new(api.resource_url());
    let records = everywhere && r.group.is_empty() && (r.plural == "secrets" || r.plural == "configmaps");
    let base = if records { ListParams::default().labels("owner!=helm") } else { ListParams::default() };
    let invalid = |e: serde_json::Error| kube::Error::SerdeError(e);
    let items = crate::api::all_pages(|limit, token| {
        let mut lp = base.clone();
        lp.limit = limit;
        lp.continue_token = token;
        let request = &request;
        async move {
            let text = crate::api::retry(|| async {
                let req = request.list(&lp).map_err(kube::Error::BuildRequest)?;
                client.request_text(req).await
            })
            .await?;
            let list: List = serde_json::from_str(&text).map_err(invalid)?;
            drop(text);
            let mut items = Vec::with_capacity(list.items.len());
            for raw in list.items {
                let item: Item = serde_json::from_str(raw.get()).map_err(invalid)?;
                let key = match item.metadata.namespace {
                    Some(ns) if everywhere => format!("{ns}/{}", item.metadata.name),
                    _ => item.metadata.name,
                };
                items.push((key, raw));
            }
            Ok(crate::api::Page { items, next: list.metadata.next })
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

/// A listed object, parsed, with `apiVersion`/`kind` filled in (list items come without them).
fn listed_object(raw: &serde_json::value::RawValue, r: &ApiResource) -> Result<Value, serde_json::Error> {
    let mut obj: Value = serde_json::from_str(raw.get())?;
    if let Some(map) = obj.as_object_mut() {
        map.insert("apiVersion".into(), r.api_version.clone().into());
        map.insert("kind".into(), r.kind.clone().into());
    }
    Ok(obj)
}

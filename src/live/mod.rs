//! Live state: resolves kinds by discovery, fetches objects (one shared LIST per kind and
//! namespace, or a GET), finds the HorizontalPodAutoscalers that own replica counts, and makes
//! changes as Helm would ([`change`]). Every failure is a typed [`ApiError`].

pub(crate) mod admission;
mod change;
mod discovered;
mod events;
pub(crate) mod flux;
mod listing;
pub(crate) mod mutators;

pub(crate) use change::{Change, WriteTo, apply_dry_run, change, create_dry_run, update_dry_run, upgrade_dry_run};
pub(crate) use events::{event, event_namespace, record_event};
pub(crate) use listing::{KEPT_BYTES, LiveCache};

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
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn discover(client: &kube::Client) -> Result<std::sync::Arc<Discovery>, ApiError> {
    crate::api::retry(|| Discovery::new(client.clone()).run_aggregated())
        .await
        .map(discovered::shared)
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
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
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
    // Each HPA is kept only as its target, as its page is read (whoever may make HPAs makes them).
    crate::api::list_kept(client, &api, &ListParams::default(), |hpa: DynamicObject| {
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
    .await
    .map_err(|e| ApiError::from_kube(&e, "list", "horizontalpodautoscalers"))
}

/// The `openAPIV3Schema` of version `version` of the CRD `plural.group` of kind `kind`: from the
/// CRD, or, for an identity that may not read CRDs (a namespaced watcher), from the API server's
/// OpenAPI v3 document of the group version, which every authenticated user may read.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
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
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
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

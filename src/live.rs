//! Live state: resolves kinds by discovery, fetches objects, asks the server for a server-side
//! apply dry-run, and finds the HorizontalPodAutoscalers that own replica counts.

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Discovery, Scope};
use serde_json::Value;

/// The field manager Helm uses; dry-runs apply as Helm would.
pub const FIELD_MANAGER: &str = "helm";

/// Where a desired object lives: its resource and effective namespace.
#[derive(Clone, Debug)]
pub struct Target {
    pub resource: ApiResource,
    /// `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
}

/// What the cluster holds for one desired object.
#[derive(Debug)]
pub enum LiveState {
    Present(Value),
    Absent,
    /// The lookup failed (forbidden, ...): the message says why.
    Failed(String),
}

/// Why a dry-run gave no answer.
#[derive(Debug)]
pub enum DryRunError {
    /// The identity may not patch this resource (HTTP 403).
    Forbidden(String),
    /// The server refused the apply (invalid, immutable field, conflict...).
    Refused(String),
}

/// Runs discovery once for the run.
pub async fn discover(client: &kube::Client) -> Result<Discovery, kube::Error> {
    crate::cluster::retry(|| Discovery::new(client.clone()).run_aggregated()).await
}

/// Resolves `api_version`/`kind` to a served resource and the object's namespace (namespaced
/// objects without one get `release_namespace`). `None` when the kind is not served.
pub fn resolve(
    discovery: &Discovery,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
    release_namespace: &str,
) -> Option<Target> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let (resource, caps) = discovery.resolve_gvk(&GroupVersionKind::gvk(group, version, kind))?;
    let namespace = match caps.scope {
        Scope::Namespaced => Some(namespace.unwrap_or(release_namespace).to_string()),
        Scope::Cluster => None,
    };
    Some(Target { resource, namespace })
}

fn api(client: &kube::Client, target: &Target) -> Api<DynamicObject> {
    match &target.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &target.resource),
        None => Api::all_with(client.clone(), &target.resource),
    }
}

/// GETs one object (parsed once, straight into JSON).
pub async fn get(client: &kube::Client, target: &Target, name: &str) -> LiveState {
    let api = api(client, target);
    let request = kube::core::Request::new(api.resource_url());
    let result = crate::cluster::retry(|| async {
        let req = request.get(name, &Default::default()).map_err(kube::Error::BuildRequest)?;
        client.request::<Value>(req).await
    })
    .await;
    match result {
        Ok(v) => LiveState::Present(v),
        Err(kube::Error::Api(s)) if s.code == 404 => LiveState::Absent,
        Err(e) => LiveState::Failed(describe(&e, "get", &target.resource.plural)),
    }
}

/// What the object would look like after Helm applied `desired` (server-side apply, field
/// manager `helm`, forced, `dryRun=All`): nothing is changed in the cluster.
pub async fn dry_run_apply(
    client: &kube::Client,
    target: &Target,
    name: &str,
    desired: &Value,
) -> Result<Value, DryRunError> {
    // The same request a repair makes, only with dryRun=All.
    let apply = Change::Apply(desired.clone());
    change(client, target, name, &apply, true).await.map_err(|e| match e.strip_prefix(FORBIDDEN) {
        Some(why) => DryRunError::Forbidden(why.to_string()),
        None => DryRunError::Refused(e),
    })
}

/// A workload whose replica count an HPA manages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scaled {
    pub namespace: String,
    pub group: String,
    pub kind: String,
    pub name: String,
    pub hpa: String,
}

/// The scale targets of every HorizontalPodAutoscaler in `namespace`.
pub async fn hpa_targets(client: &kube::Client, namespace: &str) -> Result<Vec<Scaled>, String> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("autoscaling", "v2", "HorizontalPodAutoscaler"),
        "horizontalpodautoscalers",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    let lp = ListParams::default();
    let list =
        crate::cluster::retry(|| api.list(&lp)).await.map_err(|e| describe(&e, "list", "horizontalpodautoscalers"))?;
    Ok(list
        .items
        .into_iter()
        .filter_map(|hpa| {
            let target = hpa.data.get("spec")?.get("scaleTargetRef")?;
            let text = |k: &str| target.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let api_version = text("apiVersion");
            Some(Scaled {
                namespace: namespace.to_string(),
                group: api_version.rsplit_once('/').map_or("", |(g, _)| g).to_string(),
                kind: text("kind"),
                name: text("name"),
                hpa: hpa.metadata.name.unwrap_or_default(),
            })
        })
        .collect())
}

/// How [`describe`] starts the reason of a forbidden request.
const FORBIDDEN: &str = "forbidden: ";

/// A one-line reason for a failed request, naming the missing RBAC verb when forbidden.
pub fn describe(e: &kube::Error, verb: &str, resource: &str) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 => {
            format!("{FORBIDDEN}the identity may not {verb} {resource} ({})", s.message)
        }
        other => other.to_string(),
    }
}

/// A change to make to one object, as Helm would make it.
#[derive(Clone, Debug)]
pub enum Change {
    /// Server-side apply of the whole object (field manager `helm`, forced).
    Apply(Value),
    /// Create the object (field manager `helm`), for client-side applied releases.
    Create(Value),
    /// A JSON patch (field manager `helm`); `test` operations guard against concurrent edits.
    Patch(Value),
}

/// Makes (or, with `dry_run`, only validates) one change; the error is one line naming the
/// object and, when forbidden, the verb.
pub async fn change(
    client: &kube::Client,
    target: &Target,
    name: &str,
    change: &Change,
    dry_run: bool,
) -> Result<Value, String> {
    let api = api(client, target);
    let plural = &target.resource.plural;
    let result = match change {
        Change::Apply(body) => {
            let mut params = PatchParams::apply(FIELD_MANAGER).force();
            params.dry_run = dry_run;
            api.patch(name, &params, &Patch::Apply(body)).await.map_err(|e| describe(&e, "patch", plural))
        }
        Change::Create(body) => {
            let obj: DynamicObject = serde_json::from_value(body.clone()).map_err(|e| e.to_string())?;
            let params = kube::api::PostParams { dry_run, field_manager: Some(FIELD_MANAGER.into()) };
            api.create(&params, &obj).await.map_err(|e| describe(&e, "create", plural))
        }
        Change::Patch(ops) => {
            let patch: json_patch::Patch = serde_json::from_value(ops.clone()).map_err(|e| e.to_string())?;
            let mut params = PatchParams { field_manager: Some(FIELD_MANAGER.into()), ..Default::default() };
            params.dry_run = dry_run;
            api.patch(name, &params, &Patch::Json::<()>(patch)).await.map_err(|e| describe(&e, "patch", plural))
        }
    };
    result.and_then(|o| serde_json::to_value(o).map_err(|e| e.to_string()))
}

/// Records a Kubernetes Event about `object` (best effort: the error is returned for a warning).
pub async fn record_event(
    client: &kube::Client,
    namespace: &str,
    object: &Value,
    reason: &str,
    message: &str,
) -> Result<(), String> {
    use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
    let text = |p: &str| object.pointer(p).and_then(Value::as_str).map(str::to_string);
    let now = k8s_openapi::jiff::Timestamp::now();
    let name = text("/metadata/name").unwrap_or_default();
    let event = Event {
        metadata: ObjectMeta {
            name: Some(format!("{name}.helm-drift.{}", now.as_nanosecond())),
            namespace: Some(namespace.to_string()),
            ..Default::default()
        },
        involved_object: ObjectReference {
            api_version: text("/apiVersion"),
            kind: text("/kind"),
            name: Some(name),
            namespace: text("/metadata/namespace"),
            uid: text("/metadata/uid"),
            ..Default::default()
        },
        reason: Some(reason.to_string()),
        message: Some(message.to_string()),
        type_: Some("Normal".to_string()),
        source: Some(EventSource { component: Some("helm-drift".into()), ..Default::default() }),
        reporting_component: Some("helm-drift".into()),
        reporting_instance: Some("helm-drift".into()),
        action: Some("Repair".into()),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        event_time: Some(MicroTime(now)),
        count: Some(1),
        ..Default::default()
    };
    let api: Api<Event> = Api::namespaced(client.clone(), namespace);
    api.create(&Default::default(), &event).await.map(|_| ()).map_err(|e| describe(&e, "create", "events"))
}

type Listing = Result<std::collections::HashMap<String, Value>, String>;
/// A listing whose objects are handed out (and dropped from memory) as they are read.
type Shared = Result<std::sync::Mutex<std::collections::HashMap<String, Value>>, String>;
type Cell<T> = std::sync::Arc<tokio::sync::OnceCell<T>>;
/// group, version, plural, namespace.
type ListKey = (String, String, String, Option<String>);
type Cells<K, T> = std::sync::Mutex<std::collections::HashMap<K, Cell<T>>>;

/// Live objects shared by every release of a run: a kind with several objects in one namespace
/// is read with one LIST (made once, whoever asks first), single objects with a GET; HPAs are
/// listed once per namespace. Requests grow with kinds and namespaces, not with objects.
#[derive(Default)]
pub struct LiveCache {
    lists: Cells<ListKey, Shared>,
    hpas: Cells<String, Result<Vec<Scaled>, String>>,
}

impl LiveCache {
    /// The live object; `listed` reads it from the LIST of its kind in its namespace.
    pub async fn get(&self, client: &kube::Client, target: &Target, name: &str, listed: bool) -> LiveState {
        if !listed {
            return get(client, target, name).await;
        }
        let r = &target.resource;
        let key = (r.group.clone(), r.version.clone(), r.plural.clone(), target.namespace.clone());
        let cell = self.lists.lock().expect("cache lock").entry(key).or_default().clone();
        let listing = cell.get_or_init(|| async { list(client, target).await.map(std::sync::Mutex::new) }).await;
        match listing {
            // Each desired object is read once: hand it over rather than copy it. Not in the
            // listing (or already handed over to another release claiming the same object):
            // ask for it alone, so an absence is always confirmed.
            Ok(objects) => {
                let found = objects.lock().expect("listing lock").remove(name);
                match found {
                    Some(v) => LiveState::Present(v),
                    None => get(client, target, name).await,
                }
            }
            // No `list` right (get only): read this object alone.
            Err(e) if e.starts_with(FORBIDDEN) => get(client, target, name).await,
            Err(e) => LiveState::Failed(e.clone()),
        }
    }

    /// The HPAs of a namespace, listed once per run.
    pub async fn hpa_targets(&self, client: &kube::Client, namespace: &str) -> Result<Vec<Scaled>, String> {
        let cell = self.hpas.lock().expect("cache lock").entry(namespace.to_string()).or_default().clone();
        cell.get_or_init(|| hpa_targets(client, namespace)).await.clone()
    }
}

/// Every object of a kind in a namespace (or cluster-wide for cluster-scoped kinds), by name,
/// with `apiVersion`/`kind` filled in (list items come without them). The response is parsed
/// once, straight into JSON values.
async fn list(client: &kube::Client, target: &Target) -> Listing {
    let r = &target.resource;
    let api = api(client, target);
    let request = kube::core::Request::new(api.resource_url());
    let lp = ListParams::default();
    let fail = |e: kube::Error| describe(&e, "list", &r.plural);
    let mut body: Value = crate::cluster::retry(|| async {
        let req = request.list(&lp).map_err(kube::Error::BuildRequest)?;
        client.request::<Value>(req).await
    })
    .await
    .map_err(fail)?;
    let items = match body.get_mut("items").map(Value::take) {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let mut out = std::collections::HashMap::with_capacity(items.len());
    for mut obj in items {
        if let Some(map) = obj.as_object_mut() {
            map.insert("apiVersion".into(), r.api_version.clone().into());
            map.insert("kind".into(), r.kind.clone().into());
        }
        let name = obj.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
        out.insert(name, obj);
    }
    Ok(out)
}

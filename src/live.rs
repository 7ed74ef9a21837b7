//! Live state: resolves each desired object's kind by discovery and fetches it from the cluster.

use crate::desired::DesiredObject;
use futures::{StreamExt, stream};
use kube::api::{Api, DynamicObject};
use kube::core::GroupVersionKind;
use kube::discovery::{Discovery, Scope};

/// How many GETs run at once.
const CONCURRENCY: usize = 16;

/// What the cluster holds for one desired object.
#[derive(Debug)]
pub enum LiveState {
    Present(Box<DynamicObject>),
    Absent,
    /// The cluster does not serve this kind (e.g. its CRD was deleted).
    NotServed,
    /// The lookup failed (forbidden, ...): the message says why.
    Failed(String),
}

/// A desired object placed in the cluster: its effective namespace and live state.
#[derive(Debug)]
pub struct Located {
    pub namespace: Option<String>,
    pub state: LiveState,
}

/// Runs discovery once for the run.
pub async fn discover(client: &kube::Client) -> Result<Discovery, kube::Error> {
    Discovery::new(client.clone()).run_aggregated().await
}

/// Fetches the live counterpart of every desired object, in order, with bounded concurrency.
pub async fn fetch(
    client: &kube::Client,
    discovery: &Discovery,
    objects: &[DesiredObject],
    release_namespace: &str,
) -> Vec<Located> {
    stream::iter(objects.iter().map(|o| locate(client, discovery, o, release_namespace)))
        .buffered(CONCURRENCY)
        .collect()
        .await
}

async fn locate(
    client: &kube::Client,
    discovery: &Discovery,
    object: &DesiredObject,
    release_namespace: &str,
) -> Located {
    let gvk = GroupVersionKind::gvk(object.group(), object.version(), &object.kind);
    let Some((resource, caps)) = discovery.resolve_gvk(&gvk) else {
        return Located { namespace: object.namespace.clone(), state: LiveState::NotServed };
    };
    let (namespace, api) = match caps.scope {
        Scope::Namespaced => {
            let ns = object.namespace.clone().unwrap_or_else(|| release_namespace.to_string());
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &resource);
            (Some(ns), api)
        }
        Scope::Cluster => (None, Api::all_with(client.clone(), &resource)),
    };
    let state = match api.get_opt(&object.name).await {
        Ok(Some(live)) => LiveState::Present(Box::new(live)),
        Ok(None) => LiveState::Absent,
        Err(e) => LiveState::Failed(describe(&e, "get", &resource.plural)),
    };
    Located { namespace, state }
}

/// A one-line reason for a failed request, naming the missing RBAC verb when forbidden.
pub fn describe(e: &kube::Error, verb: &str, resource: &str) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 => {
            format!("forbidden: the identity may not {verb} {resource} ({})", s.message)
        }
        other => other.to_string(),
    }
}

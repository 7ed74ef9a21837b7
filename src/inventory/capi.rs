//! Cluster API's inventory: `Cluster` objects with a ready control plane, each reached through
//! its `<cluster>-kubeconfig` Secret (key `value`).

use super::entry::{Inventory, Member, Scope};
use super::unreachable::{Unreachable, Why};
use super::vet::vetted;
use crate::api::ApiError;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::config::Kubeconfig;
use serde_json::Value;

/// The data key of a Cluster API kubeconfig Secret.
const KUBECONFIG_KEY: &str = "value";

/// Cluster API's `Cluster`, as served.
pub(super) fn clusters() -> ApiResource {
    ApiResource {
        group: "cluster.x-k8s.io".into(),
        version: "v1beta2".into(),
        api_version: "cluster.x-k8s.io/v1beta2".into(),
        kind: "Cluster".into(),
        plural: "clusters".into(),
    }
}

/// A Cluster as the inventory keeps it: its namespace, name and whether its control plane is
/// ready.
pub(super) fn cluster_of(cluster: DynamicObject) -> Option<(String, String, bool)> {
    let status = cluster.data.get("status").unwrap_or(&Value::Null);
    Some((cluster.metadata.namespace.clone()?, cluster.metadata.name.clone()?, control_plane_ready(status)))
}

pub(super) async fn read(client: &kube::Client, scope: &Scope) -> Result<Inventory, ApiError> {
    let resource = clusters();
    let api: Api<DynamicObject> = match &scope.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    let mut params = ListParams::default();
    if let Some(selector) = &scope.selector {
        params = params.labels(selector);
    }
    let path = format!(
        "/apis/cluster.x-k8s.io/v1beta2/{}clusters",
        scope.namespace.as_ref().map_or(String::new(), |n| format!("namespaces/{n}/"))
    );
    // In pages (the namespace's writers may make it long): one page of response held at a time,
    // each Cluster kept only as its name and whether its control plane is ready.
    let list = crate::api::list_kept(client, &api, &params, cluster_of)
        .await
        .map_err(|e| ApiError::from_kube(&e, "list", &path))?;
    let mut out = Inventory::default();
    for (namespace, name, ready) in list {
        let member = format!("{namespace}/{name}");
        if !ready {
            out.skipped.push((member, "its control plane is not ready".into()));
            continue;
        }
        let kubeconfig = reach(client, &namespace, &name).await;
        out.members.push(Member { name: member, kubeconfig, proxies: Vec::new(), proxies_past_cap: Vec::new() });
    }
    Ok(out)
}

/// How Cluster `namespace/name` is reached: its `<name>-kubeconfig` Secret, vetted; why not
/// when it cannot be.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn reach(client: &kube::Client, namespace: &str, name: &str) -> Result<Kubeconfig, Unreachable> {
    let secret = format!("{name}-kubeconfig");
    let at = format!("Secret {namespace}/{secret}");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    match secrets.get_opt(&secret).await {
        Ok(Some(s)) => kubeconfig_of(&s, &at),
        Ok(None) => Err(Unreachable::new(&at, Why::NoSecret)),
        Err(e) => Err(Unreachable::new(&at, Why::Unread(ApiError::from_kube(&e, "get", &at).to_string()))),
    }
}

/// Whether a Cluster's status says its control plane accepts requests: `v1beta2`'s
/// `initialization.controlPlaneInitialized`, or its `ControlPlaneInitialized` or
/// `ControlPlaneAvailable` condition.
pub(crate) fn control_plane_ready(status: &Value) -> bool {
    if status.pointer("/initialization/controlPlaneInitialized") == Some(&Value::Bool(true)) {
        return true;
    }
    let conditions = status.get("conditions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    conditions.iter().any(|c| {
        matches!(c.get("type").and_then(Value::as_str), Some("ControlPlaneInitialized" | "ControlPlaneAvailable"))
            && c.get("status").and_then(Value::as_str) == Some("True")
    })
}

/// The kubeconfig a Secret holds, vetted (`at` names the Secret in errors).
fn kubeconfig_of(secret: &Secret, at: &str) -> Result<Kubeconfig, Unreachable> {
    let refused = |why| Unreachable::new(at, why);
    let data =
        secret.data.as_ref().and_then(|d| d.get(KUBECONFIG_KEY)).ok_or_else(|| refused(Why::NoKey(KUBECONFIG_KEY)))?;
    let text = std::str::from_utf8(&data.0).map_err(|_| refused(Why::NotText(None)))?;
    // Whoever may write Secrets in the Cluster's namespace writes it: bounded by the one
    // budgeted parser before the kubeconfig library reads it.
    crate::yaml::to_json_within(text, &mut crate::yaml::Budget::for_manifest(text.len()))
        .map_err(|e| refused(Why::NotKubeconfig(e.to_string())))?;
    let kubeconfig = Kubeconfig::from_yaml(text).map_err(|e| refused(Why::NotKubeconfig(e.to_string())))?;
    vetted(kubeconfig, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cluster_counts_once_its_control_plane_accepts_requests() {
        assert!(control_plane_ready(&json!({"initialization": {"controlPlaneInitialized": true}})));
        assert!(!control_plane_ready(&json!({"initialization": {"controlPlaneInitialized": false}})));
        assert!(control_plane_ready(&json!({"conditions": [{"type": "ControlPlaneAvailable", "status": "True"}]})));
        assert!(!control_plane_ready(&json!({"conditions": [{"type": "ControlPlaneAvailable", "status": "False"}]})));
        assert!(!control_plane_ready(&json!({"conditions": [{"type": "InfrastructureReady", "status": "True"}]})));
        assert!(!control_plane_ready(&Value::Null), "no status yet");
    }
}

//! Cluster inventories that already exist, read from a management cluster: Cluster API's
//! `Cluster` objects (`cluster.x-k8s.io`) and their `<cluster>-kubeconfig` Secrets. Whoever may
//! write a Secret in a Cluster's namespace writes the kubeconfig it is reached with, so a
//! kubeconfig read here may only hold inline data: a command to run (`exec`, an auth provider)
//! or a local file to read (a token file, a certificate or key path) would give its writer this
//! process's hands or eyes, and is refused for that cluster alone.

use super::ApiError;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::config::Kubeconfig;
use serde_json::Value;

/// Where a fleet's clusters come from (`--clusters`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Cluster API: `Cluster` objects with a ready control plane, reached through their
    /// `<cluster>-kubeconfig` Secret.
    Capi,
}

/// Which inventory entries to read: a namespace (else every one the identity may list) and a
/// label selector.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scope {
    pub(crate) namespace: Option<String>,
    pub(crate) selector: Option<String>,
}

/// One cluster of the inventory: its name (`namespace/name`) and how to reach it, or why it
/// cannot be reached.
#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub(crate) name: String,
    pub(crate) kubeconfig: Result<Kubeconfig, String>,
}

/// The clusters to look at, and those left out with the reason (a control plane not ready).
#[derive(Clone, Debug, Default)]
pub(crate) struct Inventory {
    pub(crate) members: Vec<Member>,
    pub(crate) skipped: Vec<(String, String)>,
}

/// The data key of a Cluster API kubeconfig Secret.
const KUBECONFIG_KEY: &str = "value";

/// Reads the inventory through `client` (the management cluster).
pub(crate) async fn read(client: &kube::Client, source: Source, scope: &Scope) -> Result<Inventory, ApiError> {
    match source {
        Source::Capi => capi(client, scope).await,
    }
}

async fn capi(client: &kube::Client, scope: &Scope) -> Result<Inventory, ApiError> {
    let resource = ApiResource {
        group: "cluster.x-k8s.io".into(),
        version: "v1beta2".into(),
        api_version: "cluster.x-k8s.io/v1beta2".into(),
        kind: "Cluster".into(),
        plural: "clusters".into(),
    };
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
    let list = api.list(&params).await.map_err(|e| ApiError::from_kube(&e, "list", &path))?;
    let mut out = Inventory::default();
    for cluster in list.items {
        let (Some(namespace), Some(name)) = (cluster.metadata.namespace.clone(), cluster.metadata.name.clone()) else {
            continue;
        };
        let member = format!("{namespace}/{name}");
        let status = cluster.data.get("status").cloned().unwrap_or(Value::Null);
        if !control_plane_ready(&status) {
            out.skipped.push((member, "its control plane is not ready".into()));
            continue;
        }
        let secret = format!("{name}-kubeconfig");
        let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
        let kubeconfig = match secrets.get_opt(&secret).await {
            Ok(Some(s)) => kubeconfig_of(&s, &format!("Secret {namespace}/{secret}")),
            Ok(None) => Err(format!("Secret {namespace}/{secret} not found: the cluster cannot be reached")),
            Err(e) => Err(ApiError::from_kube(&e, "get", &format!("Secret {namespace}/{secret}")).to_string()),
        };
        out.members.push(Member { name: member, kubeconfig });
    }
    Ok(out)
}

/// Whether a Cluster's status says its control plane accepts requests: `v1beta2`'s
/// `initialization.controlPlaneInitialized`, or its `ControlPlaneInitialized` or
/// `ControlPlaneAvailable` condition.
fn control_plane_ready(status: &Value) -> bool {
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
fn kubeconfig_of(secret: &Secret, at: &str) -> Result<Kubeconfig, String> {
    let data = secret
        .data
        .as_ref()
        .and_then(|d| d.get(KUBECONFIG_KEY))
        .ok_or_else(|| format!("{at} has no `{KUBECONFIG_KEY}` key"))?;
    let text = std::str::from_utf8(&data.0).map_err(|_| format!("{at}: the kubeconfig is not UTF-8 text"))?;
    let kubeconfig = Kubeconfig::from_yaml(text).map_err(|e| format!("{at}: not a kubeconfig: {e}"))?;
    vetted(kubeconfig, at)
}

/// A kubeconfig from an inventory, refused when it would run a command or read a local file.
fn vetted(kubeconfig: Kubeconfig, at: &str) -> Result<Kubeconfig, String> {
    let refuse = |what: &str| {
        Err(format!(
            "{at}: the kubeconfig {what}, which helm-drift does not do for a kubeconfig read from the cluster (only inline credentials and certificates)"
        ))
    };
    for user in kubeconfig.auth_infos.iter().filter_map(|u| u.auth_info.as_ref()) {
        if user.exec.is_some() {
            return refuse("runs a command (exec)");
        }
        if user.auth_provider.is_some() {
            return refuse("uses an auth provider (which runs or reads outside the kubeconfig)");
        }
        if user.token_file.is_some() || user.client_certificate.is_some() || user.client_key.is_some() {
            return refuse("reads a local file (tokenFile, client-certificate or client-key)");
        }
    }
    for cluster in kubeconfig.clusters.iter().filter_map(|c| c.cluster.as_ref()) {
        if cluster.certificate_authority.is_some() {
            return refuse("reads a local file (certificate-authority)");
        }
        if cluster.proxy_url.is_some() {
            return refuse("sends its requests through a proxy (proxy-url)");
        }
    }
    Ok(kubeconfig)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kubeconfig(user: &str, cluster: &str) -> Kubeconfig {
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n{cluster}users:\n- name: u\n  user:\n{user}contexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
        );
        Kubeconfig::from_yaml(&text).unwrap()
    }

    #[test]
    fn only_inline_credentials_are_taken_from_an_inventory() {
        let inline = kubeconfig("    token: abc\n", "    certificate-authority-data: Zm9v\n");
        assert!(vetted(inline, "Secret a/b").is_ok());
        for (user, cluster, said) in [
            ("    exec: {apiVersion: client.authentication.k8s.io/v1, command: touch}\n", "", "runs a command"),
            ("    auth-provider: {name: gcp}\n", "", "auth provider"),
            ("    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n", "", "reads a local file"),
            ("    client-certificate: /etc/cert\n    client-key: /etc/key\n", "", "reads a local file"),
            ("    token: abc\n", "    certificate-authority: /etc/ca\n", "certificate-authority"),
            ("    token: abc\n", "    proxy-url: http://127.0.0.1:3128\n", "proxy"),
        ] {
            let e = vetted(kubeconfig(user, cluster), "Secret a/b-kubeconfig").unwrap_err();
            assert!(e.starts_with("Secret a/b-kubeconfig: the kubeconfig ") && e.contains(said), "{e}");
        }
    }

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

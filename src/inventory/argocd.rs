//! Argo CD's inventory: its cluster Secrets (label `argocd.argoproj.io/secret-type: cluster`),
//! each with `server` and `config` (JSON: a bearer token, a user and password, or a client
//! certificate, with the CA). An entry that would run a command (`execProviderConfig`,
//! `awsAuthConfig`), go through a proxy, or holds no credential of its own (helm-drift would
//! reach it as itself) is refused for that cluster alone.

use super::entry::{Inventory, Member, Scope};
use super::unreachable::{Unreachable, Why};
use super::vet::vetted;
use crate::api::ApiError;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ListParams};
use kube::config::Kubeconfig;
use serde_json::{Value, json};

/// The label Argo CD marks its cluster Secrets with.
pub(super) const SECRET_TYPE: &str = "argocd.argoproj.io/secret-type=cluster";

pub(super) async fn read(client: &kube::Client, scope: &Scope) -> Result<Inventory, ApiError> {
    let api: Api<Secret> = match &scope.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let selector = match &scope.selector {
        Some(s) => format!("{SECRET_TYPE},{s}"),
        None => SECRET_TYPE.to_string(),
    };
    let path = format!(
        "/api/v1/{}secrets?labelSelector={SECRET_TYPE}",
        scope.namespace.as_ref().map_or(String::new(), |n| format!("namespaces/{n}/"))
    );
    // In pages (the namespace's writers may make it long): one page of response held at a time,
    // each Secret kept only as the member it vets to.
    let members = crate::api::list_kept(client, &api, &ListParams::default().labels(&selector), member_of)
        .await
        .map_err(|e| ApiError::from_kube(&e, "list", &path))?;
    Ok(Inventory { members, ..Inventory::default() })
}

/// The member an Argo CD cluster Secret amounts to.
pub(super) fn member_of(secret: Secret) -> Option<Member> {
    let (namespace, name) = (secret.metadata.namespace.clone()?, secret.metadata.name.clone()?);
    let at = format!("Argo CD cluster Secret {namespace}/{name}");
    Some(Member {
        name: format!("{namespace}/{name}"),
        kubeconfig: kubeconfig_of(&secret, &at),
        proxies: Vec::new(),
        proxies_past_cap: Vec::new(),
    })
}

/// The kubeconfig an Argo CD cluster Secret amounts to, vetted (`at` names it in errors).
fn kubeconfig_of(secret: &Secret, at: &str) -> Result<Kubeconfig, Unreachable> {
    let refused = |why| Unreachable::new(at, why);
    let text = |key: &str| -> Result<Option<String>, Unreachable> {
        let Some(bytes) = secret.data.as_ref().and_then(|d| d.get(key)) else { return Ok(None) };
        String::from_utf8(bytes.0.clone()).map(Some).map_err(|_| refused(Why::NotText(Some(key.to_string()))))
    };
    let server = text("server")?.filter(|s| !s.is_empty()).ok_or_else(|| refused(Why::NoKey("server")))?;
    let config: Value = match text("config")? {
        Some(c) => serde_json::from_str(&c).map_err(|e| refused(Why::NotJson(e.to_string())))?,
        None => json!({}),
    };
    from_config(&server, &config).map_err(refused).and_then(|k| vetted(k, at))
}

/// Argo CD's cluster `config` as a kubeconfig for `server`.
fn from_config(server: &str, config: &Value) -> Result<Kubeconfig, Why> {
    let present = |key: &str| config.get(key).is_some_and(|v| !v.is_null());
    for (key, what) in [
        ("execProviderConfig", "runs a command (execProviderConfig)"),
        ("awsAuthConfig", "runs a command (awsAuthConfig: aws-iam-authenticator)"),
        ("proxyUrl", "sends its requests through a proxy (proxyUrl)"),
    ] {
        if present(key) {
            return Err(Why::EntryDoes(what));
        }
    }
    let tls = config.get("tlsClientConfig").cloned().unwrap_or(Value::Null);
    let s = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let mut user = serde_json::Map::new();
    for (from, to, source) in [
        ("bearerToken", "token", config),
        ("username", "username", config),
        ("password", "password", config),
        ("certData", "client-certificate-data", &tls),
        ("keyData", "client-key-data", &tls),
    ] {
        if let Some(v) = s(source, from) {
            user.insert(to.into(), Value::String(v));
        }
    }
    let certificate = user.contains_key("client-certificate-data") && user.contains_key("client-key-data");
    let password = user.contains_key("username") && user.contains_key("password");
    if !(user.contains_key("token") || certificate || password) {
        return Err(Why::NoCredential);
    }
    let mut cluster = serde_json::Map::from_iter([("server".to_string(), Value::String(server.into()))]);
    if let Some(ca) = s(&tls, "caData") {
        cluster.insert("certificate-authority-data".into(), Value::String(ca));
    }
    if let Some(name) = s(&tls, "serverName") {
        cluster.insert("tls-server-name".into(), Value::String(name));
    }
    if tls.get("insecure") == Some(&Value::Bool(true)) {
        cluster.insert("insecure-skip-tls-verify".into(), Value::Bool(true));
    }
    let kubeconfig = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "argocd", "cluster": cluster}],
        "users": [{"name": "argocd", "user": user}],
        "contexts": [{"name": "argocd", "context": {"cluster": "argocd", "user": "argocd"}}],
        "current-context": "argocd",
    });
    serde_json::from_value(kubeconfig).map_err(|e| Why::NotKubeconfig(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_argo_cd_entry_is_reached_with_its_own_inline_credentials_only() {
        let token = json!({"bearerToken": "abc", "tlsClientConfig": {"caData": "Zm9v", "serverName": "api"}});
        let k = from_config("https://10.0.0.1:6443", &token).unwrap();
        let cluster = k.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://10.0.0.1:6443"));
        assert_eq!(cluster.certificate_authority_data.as_deref(), Some("Zm9v"));
        assert_eq!(cluster.tls_server_name.as_deref(), Some("api"));
        let user = k.auth_infos[0].auth_info.as_ref().unwrap();
        assert!(user.token.is_some() && user.client_certificate_data.is_none());
        let cert = json!({"tlsClientConfig": {"certData": "Y2VydA==", "keyData": "a2V5", "insecure": true}});
        let k = from_config("https://x", &cert).unwrap();
        assert_eq!(k.clusters[0].cluster.as_ref().unwrap().insecure_skip_tls_verify, Some(true));
        for (config, said) in [
            (json!({"execProviderConfig": {"command": "touch"}, "bearerToken": "a"}), "runs a command"),
            (json!({"awsAuthConfig": {"clusterName": "x"}}), "aws-iam-authenticator"),
            (json!({"bearerToken": "a", "proxyUrl": "http://127.0.0.1:3128"}), "proxy"),
            (json!({}), "no credential of its own"),
            (json!({"tlsClientConfig": {"certData": "Y2VydA=="}}), "no credential of its own"),
            (json!({"username": "admin"}), "no credential of its own"),
        ] {
            let e = Unreachable::new("entry", from_config("https://x", &config).unwrap_err()).to_string();
            assert!(e.contains(said), "{config}: {e}");
        }
    }
}

//! Helm's connection settings, as Helm hands them to a plugin (HELM_* variables) and as the
//! plugin's own flags: kubeconfig path lists, contexts, token + API server, CA and TLS options,
//! and impersonation, against the real control plane with RBAC on.

use crate::support::{Env, Helm, REFUSED};
use std::path::PathBuf;

fn pki(env: &Env, file: &str) -> String {
    env.cp.dir().join("pki").join(file).display().to_string()
}

/// A kubeconfig file with a `broken` context (nothing listens there) as the current one and a
/// `local` one for the real cluster in namespace `ns`.
fn two_contexts(env: &Env, ns: &str) -> PathBuf {
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: broken\nclusters:\n- name: dead\n  cluster:\n    server: https://{REFUSED}\n- name: real\n  cluster:\n    server: {server}\n    certificate-authority: {ca}\nusers:\n- name: admin\n  user:\n    client-certificate: {cert}\n    client-key: {key}\ncontexts:\n- name: broken\n  context: {{cluster: dead, user: admin}}\n- name: local\n  context: {{cluster: real, user: admin, namespace: {ns}}}\n",
        server = env.cp.server(),
        ca = pki(env, "ca.crt"),
        cert = pki(env, "admin.crt"),
        key = pki(env, "admin.key"),
    );
    let path = env.home().join("two-contexts.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn contexts_kubeconfig_lists_and_context_namespace() {
    let env = Env::new("conn-ctx");
    env.install(Helm::V4, "web", "basic", &[]);
    let kc = two_contexts(&env, &env.ns);
    env.drift(&["check", "web"]).env("KUBECONFIG", &kc).code(1).stderr_has("Connection refused");
    env.drift(&["check", "web"]).env("KUBECONFIG", &kc).env("HELM_KUBECONTEXT", "local").success();
    // The plugin's own flags, as when run directly; the context's namespace applies without -n.
    env.drift(&["--kubeconfig", kc.to_str().unwrap(), "--kube-context", "local", "check", "web"])
        .env_remove("HELM_NAMESPACE")
        .env_remove("KUBECONFIG")
        .success()
        .stdout_has(&format!("[namespace {}", env.ns));
    // A KUBECONFIG path list: the first file to set current-context wins, later files add entries.
    let first = env.home().join("current.yaml");
    std::fs::write(&first, "apiVersion: v1\nkind: Config\ncurrent-context: local\n").unwrap();
    let list = std::env::join_paths([first, kc]).unwrap();
    env.drift(&["check", "web"]).env("KUBECONFIG", &list).success();
}

/// A service account with `admin` in the test namespace and a token for it.
fn token(env: &Env) -> String {
    env.kubectl(&["create", "serviceaccount", "ci"]).success();
    let sa = format!("{}:ci", env.ns);
    env.kubectl(&["create", "rolebinding", "ci-admin", "--clusterrole=admin", &format!("--serviceaccount={sa}")])
        .success();
    env.wait_until_allowed(&format!("system:serviceaccount:{sa}"), "get", "secrets", false);
    env.kubectl(&["create", "token", "ci"]).success().stdout().trim().to_string()
}

#[test]
fn token_api_server_ca_and_tls_options() {
    let env = Env::new("conn-token");
    env.install(Helm::V3, "web", "basic", &[]);
    let token = token(&env);
    let home = env.home().join("empty-home");
    std::fs::create_dir_all(&home).unwrap();
    let with_token = |extra: &[(&str, &str)]| {
        let mut run = env
            .drift(&["check", "web"])
            .env_remove("KUBECONFIG")
            .env("HOME", &home)
            .env("HELM_KUBEAPISERVER", env.cp.server())
            .env("HELM_KUBETOKEN", &token);
        for (k, v) in extra {
            run = run.env(k, v);
        }
        run
    };
    let ca = pki(&env, "ca.crt");
    with_token(&[("HELM_KUBECAFILE", &ca)]).success().stdout_has("web: in sync");
    with_token(&[]).code(1).stderr_has("certificate");
    with_token(&[("HELM_KUBEINSECURE_SKIP_TLS_VERIFY", "true")]).success();
    let by_name = env.cp.server().replace("127.0.0.1", "localhost");
    with_token(&[
        ("HELM_KUBECAFILE", &ca),
        ("HELM_KUBEAPISERVER", &by_name),
        ("HELM_KUBETLS_SERVER_NAME", "kubernetes"),
    ])
    .success();
    with_token(&[("HELM_KUBECAFILE", &ca), ("HELM_KUBETLS_SERVER_NAME", "wrong.example")])
        .code(1)
        .stderr_has("certificate");
    // The token's identity may not read another namespace's releases: a clear RBAC message.
    env.drift(&["check", "web", "-n", "default"])
        .env_remove("KUBECONFIG")
        .env("HOME", &home)
        .env("HELM_KUBEAPISERVER", env.cp.server())
        .env("HELM_KUBETOKEN", &token)
        .env("HELM_KUBECAFILE", &ca)
        .code(1)
        .stderr_has("the identity may not list secrets")
        .stderr_has("Helm stores releases in Secrets by default")
        .stderr_has("HELM_DRIVER=configmap");
    assert!(!env.drift(&["check", "web"]).env("HELM_KUBETOKEN", &token).output().stderr().contains(&token));
}

#[test]
fn impersonation_of_users_and_groups() {
    let env = Env::new("conn-as");
    env.install(Helm::V4, "web", "basic", &[]);
    env.drift(&["check", "web"])
        .env("HELM_KUBEASUSER", "nobody")
        .code(1)
        .stderr_has("the identity may not list secrets");
    env.drift(&["check", "web"])
        .env("HELM_KUBEASUSER", "nobody")
        .env("HELM_KUBEASGROUPS", "dev,system:masters")
        .success();
    env.drift(&["--kube-as-user", "nobody", "--kube-as-group", "system:masters", "check", "web"]).success();
}

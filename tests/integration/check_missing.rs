//! The first slice end to end: a release installed by real helm v3 and v4, checked against the
//! real control plane; a deleted object is found and named.

use crate::support::{Env, Helm};

fn clean_then_deleted(helm: Helm) {
    let env = Env::new(&format!("missing-{}", helm.tag()));
    env.install(helm, "shop", "basic", &[]);

    env.drift(&["check", "shop"]).success().stdout_has("shop: in sync (4 objects)");

    env.kubectl(&["delete", "deployment", "shop-web"]).success();
    let out = env.drift(&["check", "shop"]).code(2);
    out.stdout_has("shop: 1 of 4 objects drifted")
        .stdout_has(&format!("missing  Deployment {}/shop-web  (from basic/templates/deployment.yaml)", env.ns));
    assert!(!out.stdout().contains("ConfigMap"), "only the deleted object is listed\n{}", out.dump());
}

#[test]
fn helm3_release_clean_then_deleted_deployment() {
    clean_then_deleted(Helm::V3);
}

#[test]
fn helm4_release_clean_then_deleted_deployment() {
    clean_then_deleted(Helm::V4);
}

#[test]
fn unknown_release_is_an_error_naming_namespace() {
    let env = Env::new("missing-unknown");
    let out = env.drift(&["check", "nope"]).code(1);
    out.stderr_has(&format!("release \"nope\" not found in namespace \"{}\" (storage driver: secrets)", env.ns));
    assert!(out.stdout().is_empty(), "{}", out.dump());
}

#[test]
fn unreachable_cluster_is_a_one_line_error() {
    let env = Env::new("missing-unreachable");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let out = env.drift(&["check", "shop"]).env("HELM_KUBEAPISERVER", format!("https://127.0.0.1:{port}")).code(1);
    out.stderr_has("Error: cannot reach the cluster at https://127.0.0.1:").stderr_has("Connection refused");
    assert_eq!(out.stderr().lines().count(), 1, "{}", out.dump());
}

#[test]
fn plugin_runs_through_helm3_and_helm4() {
    for helm in Helm::ALL {
        let env = Env::new(&format!("plugin-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let dir = env.plugin_dir();
        env.helm(helm, &["plugin", "install", dir.to_str().unwrap()]).success();
        env.helm(helm, &["drift", "check", "web"]).success().stdout_has("web: in sync");
        env.kubectl(&["delete", "configmap", "web-config"]).success();
        env.helm(helm, &["drift", "check", "web"]).code(2).stdout_has("missing  ConfigMap");
        env.helm(helm, &["drift", "check", "absent"]).code(1).stderr_has("release \"absent\" not found");
    }
}

//! The first slice end to end: a release installed by real helm v3 and v4, checked against the
//! real control plane; a deleted object is found and named.

use crate::support::{Env, Helm, REFUSED};

fn clean_then_deleted(helm: Helm) {
    let env = Env::new(&format!("missing-{}", helm.tag()));
    env.install(helm, "shop", "basic", &[]);

    env.drift(&["check", "shop"]).success().stdout_has("shop: in sync (4 objects)");

    env.kubectl(&["delete", "deployment", "shop-web"]).success();
    let out = env.drift(&["check", "shop"]).code(2);
    out.stdout_has("shop: 1 of 4 objects drifted")
        .stdout_has(&format!("missing      Deployment {}/shop-web  (from basic/templates/deployment.yaml)", env.ns));
    assert!(!out.stdout().contains("ConfigMap"), "only the deleted object is listed\n{}", out.dump());
}

helm_matrix! {
    fn release_clean_then_deleted_deployment(helm: Helm) {
        clean_then_deleted(helm);
    }
}

#[test]
fn unknown_release_is_an_error_naming_namespace() {
    let env = Env::new("missing-unknown");
    let out = env.drift(&["check", "nope"]).code(1);
    out.stderr_has(&format!("release \"nope\" not found in namespace \"{}\" (storage driver: secrets)", env.ns));
    assert!(out.stdout().is_empty(), "{}", out.dump());
}

/// A release looked for in the wrong namespace: the error says where it is.
#[test]
fn release_in_another_namespace_is_named_in_the_error() {
    let env = Env::new("missing-elsewhere");
    env.install(Helm::V4, "strayed", "basic", &[]);
    let hint = format!(": it is in namespace \"{0}\" (-n {0}, or -A for every namespace)", env.ns);
    for command in ["check", "repair"] {
        let out = env.drift(&[command, "strayed"]).env("HELM_NAMESPACE", "default").code(1);
        out.stderr_has("release \"strayed\" not found in namespace \"default\" (storage driver: secrets)")
            .stderr_has(&hint);
    }
}

#[test]
fn unreachable_cluster_is_a_one_line_error() {
    let env = Env::new("missing-unreachable");
    let out = env.drift(&["check", "shop"]).env("HELM_KUBEAPISERVER", format!("https://{REFUSED}")).code(1);
    out.stderr_has("Error: cannot reach the cluster at https://127.0.0.1:").stderr_has("Connection refused");
    assert_eq!(out.stderr().lines().count(), 1, "{}", out.dump());

    // Machine outputs are a document all the same: each release named, or `*` for the selection,
    // in error with the reason (a CI step that publishes the file gets one).
    let server = format!("https://{REFUSED}");
    let json = env.drift(&["check", "shop", "cart", "-o", "json"]).env("HELM_KUBEAPISERVER", &server).code(1).stdout();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json:?}"));
    let names: Vec<&str> = doc["releases"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["shop", "cart"]);
    assert_eq!(doc["releases"][0]["verdict"], "error");
    assert!(doc["releases"][0]["error"].as_str().unwrap().contains("cannot reach the cluster"), "{json}");
    let xml = env.drift(&["check", "-A", "-o", "junit"]).env("HELM_KUBEAPISERVER", &server).code(1).stdout();
    assert!(
        xml.starts_with("<?xml")
            && xml.contains("errors=\"1\"")
            && xml.contains("<error message=\"cannot reach the cluster"),
        "{xml}"
    );
    assert!(xml.contains("name=\"/*\""), "the whole selection: {xml}");
}

helm_matrix! {
    fn plugin_runs_through_helm3_and_helm4(helm: Helm) {
        let env = Env::new(&format!("plugin-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let dir = env.plugin_dir();
        env.helm(helm, &["plugin", "install", dir.to_str().unwrap()]).success();
        env.helm(helm, &["drift", "check", "web"]).success().stdout_has("web: in sync");
        env.kubectl(&["delete", "configmap", "web-config"]).success();
        env.helm(helm, &["drift", "check", "web"]).code(2).stdout_has("missing      ConfigMap");
        env.helm(helm, &["drift", "check", "absent"]).code(1).stderr_has("release \"absent\" not found");
    }
}

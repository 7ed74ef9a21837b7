//! Failing safely: tight permissions, broken documents, and no secret or token in any output.

use crate::support::{Env, Helm};
use base64::Engine;

#[test]
fn a_forbidden_kind_is_that_object_s_error_and_the_rest_is_checked() {
    let env = Env::new("rel-blind");
    env.install(Helm::V4, "web", "basic", &[]);
    env.kubectl(&["delete", "deployment", "web-web"]).success();
    // get/list on the release's kinds and its records, but not on ConfigMaps.
    env.kubectl(&[
        "create",
        "role",
        "blind",
        "--verb=get,list",
        "--resource=secrets,services,serviceaccounts,deployments.apps,horizontalpodautoscalers.autoscaling",
    ])
    .success();
    env.kubectl(&["create", "rolebinding", "blind", "--role=blind", "--user=blind"]).success();
    env.wait_until_allowed("blind", "get", "services", false);
    let out = env.drift(&["check", "web"]).env("HELM_KUBEASUSER", "blind").code(1);
    out.stdout_has(&format!("error        ConfigMap {}/web-config", env.ns))
        .stdout_has("forbidden: the identity may not get configmaps")
        .stdout_has(&format!("missing      Deployment {}/web-web", env.ns));
}

#[test]
fn get_list_only_identity_checks_but_repair_refuses_before_changing_anything() {
    let env = Env::new("rel-viewer");
    env.install(Helm::V4, "web", "basic", &[]);
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    env.drift_as_viewer(&["check", "web"]).code(2).stdout_has("compared client-side, with the read-only engine");
    let out = env.drift_as_viewer(&["repair", "web"]).code(1);
    out.stdout_has("refused by the server dry-run: forbidden: the identity may not patch configmaps")
        .stdout_has("nothing was changed");
    let greeting = env.get("configmap", "web-config", "{.data.greeting}");
    assert_eq!(greeting, "edited");
}

#[test]
fn a_broken_document_is_its_own_error_and_the_rest_is_checked() {
    let env = Env::new("rel-docs");
    let manifest = "---\n# Source: c/templates/ok.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\n# Source: c/templates/nokind.yaml\napiVersion: v1\nmetadata:\n  name: what\n---\n# Source: c/templates/bad.yaml\nkind: [\n---\n# Source: c/templates/gone.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n";
    env.forge_record("docs", manifest, "");
    env.kubectl(&["create", "configmap", "ok"]).success();
    env.kubectl(&["label", "configmap", "ok", "app.kubernetes.io/managed-by=Helm"]).success();
    env.kubectl(&[
        "annotate",
        "configmap",
        "ok",
        "meta.helm.sh/release-name=docs",
        &format!("meta.helm.sh/release-namespace={}", env.ns),
    ])
    .success();
    let out = env.drift(&["check", "docs", "-v"]).code(1);
    out.stdout_has("error        Document c/templates/nokind.yaml")
        .stdout_has("not a Kubernetes object (missing kind)")
        .stdout_has("error        Document c/templates/bad.yaml")
        .stdout_has(&format!("in sync      ConfigMap {}/ok", env.ns))
        .stdout_has(&format!("missing      ConfigMap {}/gone", env.ns));
}

#[test]
fn no_secret_value_or_token_in_any_output() {
    let env = Env::new("rel-secrets");
    let other = format!("{}-other", env.ns);
    env.kubectl(&["create", "namespace", &other]).success();
    let values = [format!("otherNamespace={other}"), "password=hunter2pw".to_string()];
    env.install(Helm::V4, "app", "full", &["--set", &values.join(",")]);
    env.merge_patch("secret", "app-creds", r#"{"stringData":{"password":"leakedpw"}}"#);
    env.kubectl(&["create", "serviceaccount", "ci"]).success();
    env.kubectl(&[
        "create",
        "clusterrolebinding",
        "rel-secrets-ci",
        "--clusterrole=cluster-admin",
        &format!("--serviceaccount={}:ci", env.ns),
    ])
    .success();
    env.wait_until_allowed(&format!("system:serviceaccount:{}:ci", env.ns), "get", "secrets", true);
    let token = env.kubectl(&["create", "token", "ci"]).success().stdout().trim().to_string();
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let forbidden = ["hunter2pw".to_string(), "leakedpw".to_string(), b64("hunter2pw"), b64("leakedpw"), token.clone()];
    let runs: Vec<Vec<&str>> = vec![
        vec!["check", "app"],
        vec!["check", "app", "-v"],
        vec!["check", "app", "-o", "json"],
        vec!["check", "app", "-o", "junit"],
        vec!["check", "app", "--summary"],
        vec!["check", "-A", "-o", "json", "-v"],
        vec!["repair", "app", "--dry-run", "-v"],
        vec!["--debug", "check", "app", "--read-only"],
        vec!["check", "app", "--explain"],
        vec!["check", "app", "--explain", "-o", "json"],
        vec!["check", "app", "--rerender", "-v"],
        vec!["render", "app"],
    ];
    for args in &runs {
        let out = env
            .drift(args)
            .env("HELM_BIN", env.helm_bin(Helm::V4))
            .env("HELM_DEBUG", "true")
            .env("HELM_KUBETOKEN", &token)
            .env("HELM_KUBECAFILE", env.cp.dir().join("pki/ca.crt"))
            .output();
        let all = out.dump();
        let reported = if args.contains(&"--summary") {
            "1 of 20 objects drifted"
        } else if args[0] == "render" {
            "documents"
        } else {
            "app-creds"
        };
        assert!(all.contains(reported), "the secret's drift is reported: {args:?}\n{all}");
        for f in &forbidden {
            assert!(!all.contains(f.as_str()), "{args:?} printed {f:?}:\n{all}");
        }
    }
    let shown = env.drift(&["check", "app", "--show-secrets"]).code(2).stdout();
    assert!(shown.contains(&b64("leakedpw")), "--show-secrets shows values\n{shown}");
}

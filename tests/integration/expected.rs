//! Expected changes: routine writes outside Helm are shown (`-v`, JSON) but do not fail the
//! gate; `--strict` counts them; the config file adds rules; Helm's own request changed at
//! admission (a registry mirror webhook, served by the test on loopback) is drift for neither
//! engine, while a later edit by anyone else is.

use crate::admission::Step;
use crate::support::{Env, Helm};
use crate::watching::Watching;

helm_matrix! {
    fn rollout_restart_is_expected_and_strict_counts_it(helm: Helm) {
        let env = Env::new(&format!("exp-restart-{}", helm.tag()));
        env.install(helm, "app", "repairable", &[]);
        env.kubectl(&["rollout", "restart", "deployment/app-web"]).success();
        env.drift(&["check", "app"]).code(0).stdout_has("app: in sync (6 objects)");
        env.drift(&["check", "app", "-v"])
            .code(0)
            .stdout_has("expected     Deployment")
            .stdout_has(r#"≈ spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"]: "#)
            .stdout_has("(expected: kubectl rollout restart (kubectl-rollout)");
        let json = env.drift(&["check", "app", "-o", "json"]).code(0).stdout();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        let web = doc["releases"][0]["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["kind"] == "Deployment")
            .unwrap()
            .clone();
        assert_eq!(web["verdict"], "expected", "{web}");
        assert_eq!(
            web["expected"][0]["path"],
            "/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"
        );
        assert_eq!(web["expected"][0]["changedBy"]["manager"], "kubectl-rollout");
        env.drift(&["check", "app", "--strict"]).code(2).stdout_has("fields added Deployment");
        // A real edit next to it is still drift.
        env.kubectl(&["set", "env", "deployment/app-web", "EXTRA=1"]).success();
        env.drift(&["check", "app"]).code(2).stdout_has("env[name=EXTRA]");
    }
}

helm_matrix! {
    fn an_injected_ca_bundle_is_expected(helm: Helm) {
        let env = Env::new(&format!("exp-ca-{}", helm.tag()));
        env.install(helm, "hooks", "webhook", &[]);
        let name = format!("{}-hooks-guard", env.ns);
        let bundle = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==";
        let ops = format!(r#"[{{"op":"add","path":"/webhooks/0/clientConfig/caBundle","value":"{bundle}"}}]"#);
        env.kubectl(&[
            "patch",
            "validatingwebhookconfiguration",
            &name,
            "--type",
            "json",
            "-p",
            &ops,
            "--field-manager",
            "cainjector",
        ])
        .success();
        env.drift(&["check", "hooks", "-v"])
            .code(0)
            .stdout_has("≈ webhooks[name=guard.never.helm-drift.io].clientConfig.caBundle: ")
            .stdout_has("(expected: CA bundle injected by a certificate injector (cainjector)");
        env.drift(&["check", "hooks", "--strict"]).code(2);
    }
}

#[test]
fn config_rules_extend_and_disable_the_built_in_ones() {
    let env = Env::new("exp-config");
    env.install(Helm::V4, "app", "repairable", &[]);
    env.kubectl(&["label", "deployment", "app-web", "team=ops"]).success();
    env.kubectl(&["rollout", "restart", "deployment/app-web"]).success();
    env.drift(&["check", "app"]).code(2);
    let config = env.home().join("drift.yaml");
    std::fs::write(
        &config,
        "expected:\n  - paths: [/metadata/labels/team]\n    manager: kubectl-label\n    reason: teams label their workloads\n",
    )
    .unwrap();
    let cfg = config.to_str().unwrap();
    env.drift(&["check", "app", "--config", cfg, "-v"])
        .code(0)
        .stdout_has("(expected: teams label their workloads (kubectl-label)");
    // The built-in rule disabled (the label still expected): the restart alone is the drift.
    std::fs::write(
        &config,
        "expected:\n  - paths: [/metadata/labels/team]\n    manager: kubectl-label\n  - {name: rollout-restart, disabled: true}\n",
    )
    .unwrap();
    let out = env.drift(&["check", "app", "--config", cfg]).code(2);
    out.stdout_has("app: 1 of 6 objects drifted")
        .stdout_has(r#"+ spec.template.metadata.annotations: {"kubectl.kubernetes.io/restartedAt":"#);
    assert!(!out.stdout().contains("metadata.labels.team"), "{}", out.dump());
    std::fs::write(&config, "expected:\n  - {paths: [spec]}\n").unwrap();
    env.drift(&["check", "app", "--config", cfg]).code(1).stderr_has("expected[0]: \"spec\" is not a JSON pointer");
}

helm_matrix! {
    /// A value written as field manager `helm` differs from the record: whoever chose that
    /// name, it is drift for both engines (a hand edit under Helm's name, issue 34), in check and
    /// in the watcher. A registry mirror that rewrites Helm's own request is expected only where
    /// the operator's rule names its path and writer; a later edit by someone else is drift again.
    fn a_value_written_under_helms_name_is_drift_unless_a_rule_names_it(helm: Helm) {
        let env = Env::new(&format!("exp-admission-{}", helm.tag()));
        env.install(helm, "app", "repairable", &[]);
        let mirror =
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"mirror.example/web:1.0"}]}}}}"#;
        env.kubectl(&["patch", "deployment", "app-web", "-p", mirror, "--field-manager", "helm"]).success();
        env.drift_as_viewer(&["check", "app"]).code(2).stdout_has("spec.template.spec.containers[name=web].image");
        env.drift(&["check", "app"]).code(2).stdout_has("spec.template.spec.containers[name=web].image");
        let w = Watching::start(&env, &["--all", "--read-only"]).ready();
        w.wait_for(&Watching::drifted(&env.ns, "app"), 1.0);
        w.stop();
        let config = env.home().join("mirror.yaml");
        std::fs::write(
            &config,
            "expected:\n  - paths: [/spec/template/spec/containers/*/image]\n    target: {kind: Deployment}\n    manager: helm\n    reason: the registry mirror\n",
        )
        .unwrap();
        let cfg = config.to_str().unwrap();
        env.drift_as_viewer(&["check", "app", "-v", "--config", cfg])
            .code(0)
            .stdout_has("≈ spec.template.spec.containers[name=web].image: \"mirror.example/web:1.0\" (expected: the registry mirror");
        env.drift_as_viewer(&["check", "app", "--strict", "--config", cfg]).code(2);
        env.kubectl(&["set", "image", "deployment/app-web", "web=mirror.example/web:2.0"]).success();
        env.drift_as_viewer(&["check", "app", "--config", cfg]).code(2).stdout_has("(kubectl-set");
    }
}

/// A registry mirror: a mutating webhook (served by this test on loopback) rewrites
/// `registry.example/` images to `mirror.example/` in every Deployment of this test's namespace.
fn mirror(request: &serde_json::Value) -> Vec<serde_json::Value> {
    let containers = request.pointer("/object/spec/template/spec/containers").and_then(|c| c.as_array());
    containers
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, c)| {
            let image = c.get("image")?.as_str()?.strip_prefix("registry.example/")?;
            Some(serde_json::json!({"op": "replace", "path": format!("/spec/template/spec/containers/{i}/image"), "value": format!("mirror.example/{image}")}))
        })
        .collect()
}

helm_matrix! {
    /// Helm's own request changed at admission is in sync for both engines: the exact engine's
    /// dry-run passes the same webhook; the read-only one (a viewer's rights) tells from what the
    /// cluster recorded of the write that it was Helm's apply. A later write under Helm's name,
    /// by `kubectl patch` or by `kubectl apply --server-side`, is drift for both (issue 50), and
    /// so is a later edit by someone else.
    fn a_registry_mirror_webhook_is_not_drift_for_either_engine(helm: Helm) {
        let hook = testcluster::webhook::start(mirror).expect("the webhook server");
        let env = Env::new(&format!("exp-mirror-{}", helm.tag()));
        let probe = [
            "create",
            "deployment",
            "probe",
            "--image=registry.example/p:1",
            "--dry-run=server",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ];
        let mirrored = || env.kubectl(&probe).output().stdout() == "mirror.example/p:1";
        let _registered = env.admit_through(&hook, Step::Mutating, ("apps", "v1", "deployments"), mirrored);
        env.install(helm, "app", "repairable", &[]);
        let image = env
            .kubectl(&["get", "deployment", "app-web", "-o", "jsonpath={.spec.template.spec.containers[0].image}"])
            .success()
            .stdout();
        assert_eq!(image, "mirror.example/web:1.0", "the webhook rewrote Helm's request");
        env.drift(&["check", "app"]).code(0);
        env.drift_as_viewer(&["check", "app", "-v"])
            .code(0)
            .stdout_has("engine: read-only")
            .stdout_has("≈ spec.template.spec.containers[name=web].image: \"mirror.example/web:1.0\" (expected: Helm's own request, as mutated at admission: ");
        env.drift_as_viewer(&["check", "app", "--strict", "-v"]).code(2).stdout_has("= Helm's apply (--strict counts it): ");
        // A ConfigMap value patched afterwards under Helm's name (an Update, whatever Helm applies).
        let patch = r#"{"data":{"greeting":"patched"}}"#;
        env.kubectl(&["patch", "configmap", "app-config", "--type", "merge", "-p", patch, "--field-manager", "helm"])
            .success();
        let edited = "~ data.greeting: \"hello\" -> \"patched\"  (helm";
        env.drift(&["check", "app"]).code(2).stdout_has(edited);
        let out = env.drift_as_viewer(&["check", "app", "-v", "-o", "json"]).code(2).stdout();
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let config = doc["releases"][0]["objects"].as_array().unwrap().iter().find(|o| o["kind"] == "ConfigMap").unwrap();
        assert_eq!(config["verdict"], "changed", "{config}");
        assert_eq!(config["differences"][0]["provenance"]["helmsApply"], false, "{config}");
        env.drift(&["repair", "app"]).success();
        env.drift_as_viewer(&["check", "app"]).code(0);
        // The same under Helm's name by a server-side apply.
        let applied = env.home().join("config.yaml");
        std::fs::write(&applied, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  greeting: applied\n")
            .unwrap();
        let file = applied.to_str().unwrap();
        env.kubectl(&["apply", "--server-side", "--force-conflicts", "--field-manager=helm", "-f", file]).success();
        env.drift(&["check", "app"]).code(2).stdout_has("~ data.greeting: \"hello\" -> \"applied\"");
        env.drift_as_viewer(&["check", "app"]).code(2).stdout_has("~ data.greeting: \"hello\" -> \"applied\"  (helm");
        // An upgrade that changes the Deployment sends the image again; when the record is
        // written in the second of that write, the cluster cannot tell it from a later edit, and
        // the report says so rather than calling it a plain change.
        let chart = crate::support::chart_path("repairable");
        env.helm(helm, &["upgrade", "app", chart.to_str().unwrap(), "--set", "replicas=3"]).success();
        env.drift(&["check", "app"]).code(0);
        let after = env.drift_as_viewer(&["check", "app"]).output();
        match after.out.status.code().unwrap_or(-1) {
            0 => {}
            2 => _ = after.stdout_has("? not known to be Helm's apply, so counted as drift: written at "),
            other => panic!("exit {other}: {}", after.dump()),
        }
        env.kubectl(&["set", "image", "deployment/app-web", "web=other.example/web:2.0"]).success();
        env.drift(&["check", "app"]).code(2).stdout_has("~ spec.template.spec.containers[name=web].image: ");
        env.drift_as_viewer(&["check", "app"]).code(2).stdout_has("(kubectl-set");
    }
}

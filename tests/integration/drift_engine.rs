//! The drift engine against the real control plane: releases installed by Helm 3 (client-side
//! apply) and Helm 4 (server-side apply), edited the ways people edit them, checked with the
//! exact engine (admin) and the read-only engine (a get/list-only identity).

use crate::support::{Env, Helm, by_drift, eventually};
use std::time::Duration;

const OBJECTS: &str = "20 objects";

/// The evidence lines of a report (everything but the engine line).
fn evidence(out: &str) -> Vec<String> {
    let out = crate::support::neutral(out);
    out.lines().filter(|l| !l.trim_start().starts_with("engine:")).map(str::to_string).collect()
}

/// Checks release `app` with both engines, expecting `code` and the same verdicts; returns the
/// exact engine's output.
fn check_both(env: &Env, extra: &[&str], code: i32) -> String {
    check_release_both(env, "app", extra, code)
}

pub(crate) fn check_release_both(env: &Env, release: &str, extra: &[&str], code: i32) -> String {
    let mut args = vec!["check", release];
    args.extend_from_slice(extra);
    let exact = env.drift(&args).code(code).stdout();
    let read_only = env.drift_as_viewer(&args).code(code).stdout();
    assert_eq!(
        evidence(&exact),
        evidence(&read_only),
        "engines disagree\n--- exact\n{exact}--- read-only\n{read_only}"
    );
    // Modified objects need a dry-run, which the read-only identity may not do.
    if exact.contains("\n  changed ") {
        assert!(
            read_only.contains("read-only engine (server-side dry-run forbidden")
                || read_only.contains("engine: read-only client-side comparison (server-side dry-run forbidden"),
            "{read_only}"
        );
        assert!(!exact.contains("read-only"), "{exact}");
    }
    exact
}

fn clean_after_install_and_after_controllers(helm: Helm) {
    let env = Env::with_full_chart(helm, &format!("clean-{}", helm.tag()));
    let mark = env.audit_mark();
    let out = check_both(&env, &[], 0);
    assert!(out.contains(&format!("app: in sync ({OBJECTS})")), "{out}");
    let events = env.audit_since(mark);
    assert!(!by_drift(&events, "get").is_empty(), "the audit log shows helm-drift's requests");
    assert_eq!(by_drift(&events, "patch").len(), 0, "a clean release costs no PATCH");

    // Let the controllers touch the objects (revision annotation, HPA status), then check again.
    eventually("the deployment controller", Duration::from_secs(60), || {
        let out = env.kubectl(&["get", "deployment", "app-web", "-o", "jsonpath={.metadata.annotations}"]).output();
        out.stdout().contains("deployment.kubernetes.io/revision")
    });
    eventually("the HPA controller", Duration::from_secs(60), || {
        let out = env.kubectl(&["get", "hpa", "app-scaled", "-o", "jsonpath={.status.conditions}"]).output();
        !out.stdout().trim().is_empty()
    });
    let out = check_both(&env, &["-v"], 0);
    assert!(out.contains("in sync      Secret"), "verbose lists in-sync objects\n{out}");
}

helm_matrix! {
    fn clean_release_is_quiet(helm: Helm) {
        clean_after_install_and_after_controllers(helm);
    }
}

fn edits_are_found(helm: Helm) {
    let env = Env::with_full_chart(helm, &format!("edits-{}", helm.tag()));
    let ns = env.ns.clone();
    let k = |args: &[&str]| {
        env.kubectl(args).success();
    };
    k(&["set", "image", "deployment/app-web", "web=registry.example/web:2.0"]);
    k(&["set", "env", "deployment/app-web", "EXTRA=1"]);
    k(&["patch", "configmap", "app-config", "--type", "merge", "-p", r#"{"data":{"greeting":"bye"}}"#]);
    k(&["annotate", "configmap", "app-config", "owner=someone"]);
    k(&["patch", "secret", "app-creds", "--type", "merge", "-p", r#"{"stringData":{"password":"n3w-pa55"}}"#]);
    k(&["label", "service", "app-web", "app-"]);
    let role = format!("{ns}-app-nodes");
    k(&[
        "patch",
        "clusterrole",
        &role,
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/rules/0/verbs","value":["get","list","watch"]}]"#,
    ]);
    k(&["patch", "widget", "app-widget", "--type", "merge", "-p", r#"{"spec":{"size":5}}"#]);
    k(&["delete", "deployment", "app-scaled"]);

    let mark = env.audit_mark();
    let out = check_both(&env, &[], 2);
    for want in [
        format!("app: 7 of {OBJECTS} drifted"),
        format!("missing      Deployment {ns}/app-scaled  (from full/templates/scaled.yaml)"),
        format!("changed      Deployment {ns}/app-web  (from full/templates/deployment.yaml)"),
        r#"~ spec.template.spec.containers[name=web].image: "registry.example/web:1.0" -> "registry.example/web:2.0"  (kubectl-set, "#.into(),
        r#"+ spec.template.spec.containers[name=web].env[name=EXTRA]: {"name":"EXTRA","value":"1"} (added by kubectl-set, "#.into(),
        format!("changed      ConfigMap {ns}/app-config"),
        r#"~ data.greeting: "hello" -> "bye""#.into(),
        r#"+ metadata.annotations.owner: "someone" (added by kubectl-annotate, "#.into(),
        format!("changed      Secret {ns}/app-creds"),
        "~ data.password: (hidden) -> (hidden)".into(),
        format!("changed      Service {ns}/app-web"),
        r#"- metadata.labels.app: "app-web" (removed)"#.into(),
        format!("changed      ClusterRole {role}"),
        r#"~ rules[0].verbs: ["get","list"] -> ["get","list","watch"]"#.into(),
        format!("changed      Widget {ns}/app-widget"),
        "~ spec.size: 3 -> 5".into(),
    ] {
        assert!(out.contains(&want), "missing {want:?} in\n{out}");
    }
    for secret in ["s3cret", "n3w-pa55", "czNjcmV0", "bjN3LXBhNTU="] {
        assert!(!out.contains(secret), "secret value {secret:?} printed\n{out}");
    }
    let events = env.audit_since(mark);
    let patches = by_drift(&events, "patch");
    assert!(
        patches.iter().all(|e| e.get("requestURI").and_then(|u| u.as_str()).is_some_and(|u| u.contains("dryRun=All")))
    );
    // One dry-run per drifted object whose fields differ client-side; 5 of them are in this
    // namespace (the ClusterRole is cluster-scoped).
    assert_eq!(patches.len(), 5, "one dry-run per drifted namespaced object: {patches:#?}");

    // Attribution: who changed each field, and that it was a person at kubectl.
    let json = env.drift(&["check", "app", "-o", "json"]).code(2).stdout();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let objects = doc["releases"][0]["objects"].as_array().unwrap();
    let web = objects.iter().find(|o| o["kind"] == "Deployment" && o["name"] == "app-web").unwrap();
    let image = &web["differences"][0];
    assert_eq!(image["path"], "/spec/template/spec/containers/0/image");
    assert_eq!(image["changedBy"]["manager"], "kubectl-set", "{image}");
    assert_eq!(image["changedBy"]["person"], true);
    assert_eq!(image["changedBy"]["operation"], "Update");
    assert!(image["changedBy"]["time"].as_str().is_some_and(|t| t.starts_with("20")), "{image}");
    assert_eq!(web["addedOutsideHelm"][0]["changedBy"]["manager"], "kubectl-set");
    let cm = objects.iter().find(|o| o["kind"] == "ConfigMap" && o["name"] == "app-config").unwrap();
    assert_eq!(cm["differences"][0]["changedBy"]["manager"], "kubectl-patch", "{cm}");
}

helm_matrix! {
    fn edits_are_found(helm: Helm) {
        edits_are_found(helm);
    }
}

fn scaled_replicas(helm: Helm) {
    let env = Env::with_full_chart(helm, &format!("scale-{}", helm.tag()));
    env.kubectl(&["scale", "deployment", "app-web", "--replicas=5"]).success();
    let out = check_both(&env, &[], 2);
    assert!(out.contains("~ spec.replicas: 2 -> 5"), "{out}");

    let out = check_both(&env, &["--ignore", "kind=Deployment,name=app-web:/spec/replicas", "-v"], 0);
    assert!(out.contains("= spec.replicas ignored (--ignore kind=Deployment,name=app-web:/spec/replicas)"), "{out}");

    let config = env.home().join("drift.yaml");
    std::fs::write(&config, "ignore:\n  - paths: [/spec/replicas]\n    target:\n      kind: Deploy.*\n").unwrap();
    check_both(&env, &["--config", config.to_str().unwrap()], 0);

    env.kubectl(&["autoscale", "deployment", "app-web", "--min=1", "--max=10", "--cpu-percent=80"]).success();
    let out = check_both(&env, &["-v"], 0);
    assert!(out.contains("= spec.replicas ignored (HorizontalPodAutoscaler app-web manages replicas)"), "{out}");
    check_both(&env, &["--check-hpa-replicas"], 2);
}

helm_matrix! {
    fn scaled_replicas_and_ignore_rules(helm: Helm) {
        scaled_replicas(helm);
    }
}

fn opt_out_annotations(helm: Helm) {
    let env = Env::with_full_chart(helm, &format!("optout-{}", helm.tag()));
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"bye"}}"#);
    check_both(&env, &[], 2);
    // Added live, an opt-out hides nothing: it is drift itself, named with who added it.
    env.kubectl(&["annotate", "configmap", "app-config", "helm-drift.io/ignore=/data/greeting"]).success();
    let out = check_both(&env, &[], 2);
    assert!(out.contains("~ data.greeting"), "{out}");
    assert!(
        out.contains(r#"+ metadata.annotations["helm-drift.io/ignore"]: "/data/greeting" (added by kubectl-annotate"#),
        "{out}"
    );
    // Trusted (Flux's behaviour): honoured, and not drift itself.
    check_both(&env, &["--trust-live-annotations"], 0);
    env.kubectl(&["annotate", "configmap", "app-config", "helm-drift.io/ignore-"]).success();
    env.kubectl(&["annotate", "configmap", "app-config", "helm.toolkit.fluxcd.io/driftDetection=disabled"]).success();
    let out = check_both(&env, &["-v"], 2);
    assert!(out.contains(r#"+ metadata.annotations["helm.toolkit.fluxcd.io/driftDetection"]: "disabled""#), "{out}");
    let out = check_both(&env, &["-v", "--trust-live-annotations"], 0);
    assert!(out.contains("excluded     ConfigMap"), "{out}");
}

helm_matrix! {
    fn opt_out_annotations(helm: Helm) {
        opt_out_annotations(helm);
    }
}

/// The gadget chart's CRD is cluster-scoped and its test deletes it.
static GADGET_CRD: std::sync::Mutex<()> = std::sync::Mutex::new(());

helm_matrix! {
    fn deleted_crd_makes_custom_resources_unknown(helm: Helm) {
        // Both flavours install and delete the same cluster-scoped CRD: one at a time.
        let _crd = super::GADGET_CRD.lock().unwrap_or_else(|e| e.into_inner());
        let env = Env::new(&format!("crdgone-{}", helm.tag()));
        env.install(helm, "gone", "gadget", &[]);
        // YAML 1.1 as Helm reads it: the live object holds what Helm sent, and it is in sync.
        let spec = env.get("gadget", "gone-yaml11", "{.spec}");
        let spec: serde_json::Value = serde_json::from_str(&spec).unwrap();
        assert_eq!(
            spec,
            serde_json::json!({"enabled": true, "mode": true, "perms": 493, "big": 1000, "hex": 31, "ratio": 1,
                "quoted": "yes", "day": "2024-01-01"})
        );
        check_release_both(&env, "gone", &[], 0);
        env.merge_patch("gadget", "gone-yaml11", r#"{"spec":{"perms":755}}"#);
        let out = check_release_both(&env, "gone", &[], 2);
        assert!(out.contains("~ spec.perms: 493 -> 755"), "{out}");
        env.merge_patch("gadget", "gone-yaml11", r#"{"spec":{"perms":493}}"#);
        env.kubectl(&["delete", "crd", "gadgets.gone.helm-drift.io"]).success();
        eventually("the CRD to leave discovery", Duration::from_secs(30), || {
            env.drift(&["check", "gone"]).output().out.status.code() == Some(2)
        });
        let out = check_release_both(&env, "gone", &[], 2);
        assert!(out.contains("gone: 2 of 3 objects drifted"), "{out}");
        assert!(out.contains("unknown      Gadget gone-gadget  (from gadget/templates/gadget.yaml)"), "{out}");
        assert!(out.contains("unknown      Gadget gone-yaml11"), "{out}");
        assert!(out.contains("the cluster does not serve gone.helm-drift.io/v1 Gadget"), "{out}");
    }
}

helm_matrix! {
    /// Templates pasted from `kubectl create --dry-run=client -o yaml` (`creationTimestamp: null`,
    /// `status: {}`, `strategy: {}`, `resources: {}`) are in sync in both engines, and an edit is
    /// still found in both.
    fn null_and_empty_fields_of_pasted_templates_are_in_sync_in_both_engines(helm: Helm) {
        let env = Env::new(&format!("pasted-{}", helm.tag()));
        env.install(helm, "p", "pasted", &[]);
        check_release_both(&env, "p", &[], 0);
        check_release_both(&env, "p", &["--read-only"], 0);
        env.merge_patch("configmap", "p-config", r#"{"data":{"greeting":"edited"}}"#);
        let out = check_release_both(&env, "p", &[], 2);
        assert!(out.contains(r#"~ data.greeting: "hello" -> "edited""#), "{out}");
    }
}

/// A keyed list whose key repeats (two env entries named MODE: Kubernetes accepts them with a
/// warning, the server-side dry-run refuses the merge, Helm 4 refuses such a chart at install):
/// items are compared by their rank among equals in both engines, so an untouched release is in
/// sync, an edit of the second MODE is drift at its place, and repair puts it back.
#[test]
fn a_repeated_list_key_is_compared_by_rank_helm3() {
    let env = Env::new("engine-repeated-key");
    env.install(Helm::V3, "dup", "repeated", &[]);
    check_release_both(&env, "dup", &[], 0);
    let edit = r#"[{"op":"replace","path":"/spec/template/spec/containers/0/env/2/value","value":"edited"}]"#;
    env.kubectl(&["patch", "deployment", "dup-web", "--type", "json", "-p", edit]).success();
    // The server refuses the dry-run (duplicate entries for key [name="MODE"]): both engines
    // compare client-side, and agree.
    let exact = env.drift(&["check", "dup"]).code(2).stdout();
    let read_only = env.drift_as_viewer(&["check", "dup"]).code(2).stdout();
    assert_eq!(evidence(&exact), evidence(&read_only), "--- exact\n{exact}--- read-only\n{read_only}");
    assert!(exact.contains("duplicate entries for key [name=\"MODE\"]"), "the engine line says why\n{exact}");
    assert!(
        exact.contains("~ spec.template.spec.containers[name=web].env[name=MODE].value: \"b\" -> \"edited\""),
        "{exact}"
    );
    assert_eq!(exact.matches("\n      ~ ").count(), 1, "one change, the second MODE's\n{exact}");
    env.drift(&["repair", "dup"]).success();
    assert_eq!(env.get("deployment", "dup-web", "{.spec.template.spec.containers[0].env[*].value}"), "a o b");
    check_release_both(&env, "dup", &[], 0);
}

helm_matrix! {
    /// An honest release whose objects the API server defaults deep inside (a downward-API
    /// resource reference's divisor, a projected token's expiry, a gRPC probe's service, an
    /// ephemeral volume's mode) and a Role whose rules render empty: in sync with both engines
    /// after the install, after an upgrade with another value, and after the deployment
    /// controller wrote status.
    fn nested_server_defaults_and_empty_values_are_no_drift(helm: Helm) {
        let env = Env::new(&format!("engine-defaults-{}", helm.tag()));
        env.install(helm, "app", "defaulted", &[]);
        check_release_both(&env, "app", &[], 0);
        let chart = crate::support::chart_path("defaulted");
        env.helm(helm, &["upgrade", "app", chart.to_str().unwrap(), "--set", "greeting=again"]).success();
        eventually("the deployment controller's status write", Duration::from_secs(30), || {
            let (generation, observed) = (
                env.get("deployment", "app-web", "{.metadata.generation}"),
                env.get("deployment", "app-web", "{.status.observedGeneration}"),
            );
            !observed.is_empty() && observed == generation
        });
        check_release_both(&env, "app", &["-v"], 0);
    }
}

helm_matrix! {
    /// One JSON patch that replaces a recorded key and adds another (Helm 3's entry is left
    /// holding `f:data: {}`): the added key is reported once, and `repair --remove-foreign`
    /// removes it once (its patch applies), leaving the release in sync.
    fn a_key_added_beside_a_replaced_one_is_reported_and_removed_once(helm: Helm) {
        let env = Env::new(&format!("engine-json-patch-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let patch = r#"[{"op":"replace","path":"/data/greeting","value":"patched"},{"op":"add","path":"/data/extra","value":"x"}]"#;
        env.kubectl(&["patch", "configmap", "web-config", "--type=json", "-p", patch]).success();
        let out = check_release_both(&env, "web", &[], 2);
        assert_eq!(out.matches("+ data.extra: \"x\"").count(), 1, "{out}");
        let repair = env.drift(&["repair", "web", "--remove-foreign", "--trust-namespace", &env.ns]).code(0).stdout();
        assert!(repair.contains("      remove: data.extra\n"), "removed once: {repair}");
        assert_eq!(env.get("configmap", "web-config", "{.data}"), r#"{"greeting":"hello"}"#);
        check_release_both(&env, "web", &[], 0);
    }
}

helm_matrix! {
    /// `before-first-apply` is the server's name for what an object held before its first
    /// server-side apply, and a name any client can send: an annotation written under it is
    /// drift in both engines, and `--remove-foreign` removes it.
    fn a_field_under_before_first_apply_is_judged_by_its_value(helm: Helm) {
        let env = Env::new(&format!("engine-first-apply-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let patch = r#"{"metadata":{"annotations":{"planted":"x"}}}"#;
        env.kubectl(&["patch", "deployment", "web-web", "--field-manager=before-first-apply", "-p", patch]).success();
        let out = check_release_both(&env, "web", &[], 2);
        assert!(out.contains("+ metadata.annotations.planted: \"x\""), "{out}");
        env.drift(&["repair", "web", "--remove-foreign"]).code(0);
        check_release_both(&env, "web", &[], 0);
    }
}

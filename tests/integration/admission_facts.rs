//! What admission adds is no drift in either engine, and a verdict does not flip with a
//! controller's timing. The exact engine asks the server (dry-runs pass the same admission); the
//! read-only engine reads admission's configuration as a reader can: a mutating webhook whose
//! rules and selectors cover the object (served by the test on loopback, for its namespace only),
//! and the default IngressClass (created and removed by the test, on a control plane of its own
//! kind so that no other test's Ingress meets it). Without the admission that explains a field,
//! the field is drift in both.

use crate::admission::Step;
use crate::drift_engine::check_release_both;
use crate::support::{Env, Helm, chart_path, eventually};
use std::time::Duration;

/// A webhook that labels a Deployment's pod template `admitted.example/mesh: "on"` at create and
/// update (a service mesh's injector, a policy engine's mutation).
fn pod_labelling_webhook() -> testcluster::webhook::Webhook {
    testcluster::webhook::start(|request| {
        let labelled = request.pointer("/object/spec/template/metadata/labels/admitted.example~1mesh").is_some();
        if labelled || request.pointer("/object/spec/template/metadata/labels").is_none() {
            return Vec::new();
        }
        let path = "/spec/template/metadata/labels/admitted.example~1mesh";
        vec![serde_json::json!({"op": "add", "path": path, "value": "on"})]
    })
    .expect("the webhook server")
}

/// Whether a Deployment created now (a server dry-run) gets the webhook's label at admission.
fn labelled_at_admission(env: &Env) -> bool {
    let dry = [
        "create",
        "deployment",
        "probe",
        "--image=x",
        "--dry-run=server",
        "-o",
        "jsonpath={.spec.template.metadata.labels}",
    ];
    env.kubectl(&dry).output().stdout().contains("admitted.example/mesh")
}

/// The deployment controller has written the Deployment's status for its current generation.
fn status_written(env: &Env, name: &str) {
    eventually("the deployment controller's status write", Duration::from_secs(30), || {
        let generation = env.get("deployment", name, "{.metadata.generation}");
        env.get("deployment", name, "{.status.observedGeneration}") == generation
    });
}

helm_matrix! {
    /// A webhook labelling the pod template at create and update: in sync in both engines after
    /// the install, after an upgrade with another value, before and after the controller's status
    /// write (the same verdict: the read-only engine says the label was added at admission as far
    /// as a reader can tell); once the webhook is gone, the label nobody owns is drift in both.
    fn what_admission_adds_is_no_drift_in_either_engine_and_a_status_write_changes_no_verdict(helm: Helm) {
        let env = Env::new(&format!("admitted-{}", helm.tag()));
        let hook = pod_labelling_webhook();
        let probe = || labelled_at_admission(&env);
        let registered = env.admit_through(&hook, Step::Mutating, ("apps", "v1", "deployments"), probe);
        env.install(helm, "web", "basic", &[]);
        let label = || env.get("deployment", "web-web", "{.spec.template.metadata.labels.admitted\\.example/mesh}");
        assert_eq!(label(), "on");
        check_release_both(&env, "web", &[], 0);
        let chart = chart_path("basic");
        env.helm(helm, &["upgrade", "web", chart.to_str().unwrap(), "--set", "greeting=again"]).success();
        assert_eq!(label(), "on");
        // The verdicts and their evidence, before and after the controller's status write (which
        // moves the object's resourceVersion, nothing else).
        let verdicts = |out: String| -> Vec<String> {
            let out = crate::support::neutral(&out);
            out.lines().filter(|l| !l.trim_start().starts_with("writer:")).map(str::to_string).collect()
        };
        let before = verdicts(env.drift_as_viewer(&["check", "web", "-v"]).code(0).stdout());
        status_written(&env, "web-web");
        let after = check_release_both(&env, "web", &[], 0);
        let read_only = env.drift_as_viewer(&["check", "web", "-v"]).code(0).stdout();
        assert_eq!(before, verdicts(read_only.clone()), "one state, one verdict");
        assert!(read_only.contains("added at admission by mutating webhook test.helm-drift.io"), "{read_only}");
        assert!(after.contains("in sync"), "{after}");

        // No admission covers it any more: a label nobody owns is drift in both engines.
        drop(registered);
        eventually("the webhook gone", Duration::from_secs(30), || !probe());
        check_release_both(&env, "web", &[], 2);
        env.drift_as_viewer(&["check", "web"]).code(2).stdout_has("added under no field manager");
    }
}

/// The built-in DefaultIngressClass plugin sets `spec.ingressClassName` on an Ingress that names
/// none: in sync in both engines after the install (Helm 3 and Helm 4, a release each), an upgrade
/// and an ingress controller's status write; once the default IngressClass is removed, the class
/// nobody owns is drift in both.
#[test]
fn the_default_ingress_class_is_the_servers_in_both_engines() {
    let env = Env::without_admission_policies("default-class");
    let class = format!("{}-default", env.ns);
    let doc = format!(
        "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: {class}\n  annotations: {{ingressclass.kubernetes.io/is-default-class: \"true\"}}\nspec:\n  controller: example.invalid/ingress\n"
    );
    env.apply_yaml("default-class", &doc);
    let probe = [
        "create",
        "ingress",
        "probe",
        "--rule=a.invalid/=b:80",
        "--dry-run=server",
        "-o",
        "jsonpath={.spec.ingressClassName}",
    ];
    eventually("the class taken as the default", Duration::from_secs(30), || {
        env.kubectl(&probe).output().stdout() == class
    });
    let chart = chart_path("defaulted");
    for (helm, release) in [(Helm::V3, "app3"), (Helm::V4, "app4")] {
        env.install(helm, release, "defaulted", &[]);
        assert_eq!(env.get("ingress", &format!("{release}-web"), "{.spec.ingressClassName}"), class);
        check_release_both(&env, release, &[], 0);
        env.helm(helm, &["upgrade", release, chart.to_str().unwrap(), "--set", "port=8080"]).success();
        let status = r#"{"status":{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}}"#;
        let ingress = format!("{release}-web");
        env.kubectl(&["patch", "ingress", &ingress, "--subresource=status", "--type=merge", "-p", status]).success();
        check_release_both(&env, release, &[], 0);
    }
    env.kubectl(&["delete", "ingressclass", &class]).success();
    eventually("no default class", Duration::from_secs(30), || env.kubectl(&probe).output().stdout().is_empty());
    for release in ["app3", "app4"] {
        check_release_both(&env, release, &[], 2);
    }
}

/// A webhook that moves every container image to a registry mirror (`registry.example/` to
/// `mirror.example/`) at create and update.
fn mirroring_webhook() -> testcluster::webhook::Webhook {
    testcluster::webhook::start(|request| {
        let containers = request.pointer("/object/spec/template/spec/containers").and_then(|c| c.as_array());
        let mut ops = Vec::new();
        for (i, c) in containers.into_iter().flatten().enumerate() {
            let image = c["image"].as_str().unwrap_or_default();
            if let Some(rest) = image.strip_prefix("registry.example/") {
                let path = format!("/spec/template/spec/containers/{i}/image");
                ops.push(serde_json::json!({"op": "replace", "path": path, "value": format!("mirror.example/{rest}")}));
            }
        }
        ops
    })
    .expect("the webhook server")
}

helm_matrix! {
    /// A value Helm owns that a webhook rewrites (an image moved to a registry mirror): the exact
    /// engine's dry-run passes the same webhook, so it is in sync. The read-only engine takes it
    /// as Helm's create while the Deployment is unchanged since (generation 1); after an upgrade
    /// it cannot tell it from an edit, so it is drift there, before and after the controller's
    /// status write alike, and the report names the covering webhook.
    fn a_value_admission_rewrites_is_named_a_possible_cause_by_the_read_only_engine(helm: Helm) {
        let env = Env::new(&format!("mirrored-{}", helm.tag()));
        let hook = mirroring_webhook();
        let probe = || {
            let dry = ["create", "deployment", "probe", "--image=registry.example/x:1", "--dry-run=server", "-o", "jsonpath={.spec.template.spec.containers[0].image}"];
            env.kubectl(&dry).output().stdout().starts_with("mirror.example/")
        };
        let _registered = env.admit_through(&hook, Step::Mutating, ("apps", "v1", "deployments"), probe);
        env.install(helm, "web", "basic", &[]);
        let image = env.get("deployment", "web-web", "{.spec.template.spec.containers[0].image}");
        assert_eq!(image, "mirror.example/web:1.0");
        env.drift(&["check", "web"]).code(0);
        env.drift_as_viewer(&["check", "web"]).code(0);
        let chart = chart_path("basic");
        env.helm(helm, &["upgrade", "web", chart.to_str().unwrap(), "--set", "greeting=again"]).success();
        env.drift(&["check", "web"]).code(0);
        let before = env.drift_as_viewer(&["check", "web"]).code(2).stdout();
        status_written(&env, "web-web");
        let out = env.drift_as_viewer(&["check", "web"]).code(2).stdout();
        assert_eq!(crate::support::neutral(&before), crate::support::neutral(&out), "one state, one verdict");
        assert!(out.contains("registry.example/web:1.0") && out.contains("mirror.example/web:1.0"), "{out}");
        assert!(out.contains("may be admission's: mutating webhook test.helm-drift.io"), "{out}");
        let json = env.drift_as_viewer(&["check", "web", "-o", "json"]).code(2).stdout();
        assert!(json.contains("\"mayBeAdmissions\""), "{json}");
    }
}

helm_matrix! {
    /// Issue 91, case 4: under a mutating webhook that covers Deployments, a hand edit adding a
    /// pod-template label and then a patch that replaces `metadata.managedFields` with `[{}]`
    /// (wiping whose word each field is) is drift in both engines, the read-only one included,
    /// and the report says the ownership record was wiped: evidence destroyed is no excuse.
    fn wiped_evidence_is_a_finding_not_admission(helm: Helm) {
        let env = Env::new(&format!("wiped-{}", helm.tag()));
        let hook = pod_labelling_webhook();
        let probe = || labelled_at_admission(&env);
        let _registered = env.admit_through(&hook, Step::Mutating, ("apps", "v1", "deployments"), probe);
        env.install(helm, "web", "basic", &[]);
        env.drift_as_viewer(&["check", "web"]).code(0);
        let edit = r#"{"spec":{"template":{"metadata":{"labels":{"hand.example/edit":"yes"}}}}}"#;
        env.kubectl(&["patch", "deployment", "web-web", "--type=merge", "-p", edit]).success();
        let wipe = r#"[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]"#;
        env.kubectl(&["patch", "deployment", "web-web", "--type=json", "-p", wipe]).success();
        let managed = env.get("deployment", "web-web", "{.metadata.managedFields}");
        assert!(!managed.contains("\"helm"), "the writer's entry is gone: {managed}");
        let read_only = env.drift_as_viewer(&["check", "web"]).code(2).stdout();
        assert!(read_only.contains("hand.example/edit"), "{read_only}");
        assert!(read_only.contains("the ownership record was wiped"), "{read_only}");
        assert!(!read_only.contains("added at admission by"), "{read_only}");
        let exact = env.drift(&["check", "web", "-o", "json"]).code(2).stdout();
        assert!(exact.contains("hand.example~1edit") && exact.contains("\"ownershipWiped\""), "{exact}");
    }
}

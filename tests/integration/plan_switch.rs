//! `plan --server-side`: the switch of a release Helm 3 installed (client-side, three-way merge)
//! to Helm 4's server-side apply, predicted field by field (whose field the unforced apply
//! meets) and checked against the real `helm upgrade --server-side=true` run right after it:
//! it fails exactly when the plan says so; after `repair`, or with `--force-conflicts`, it lands.

use crate::plan::{fate, plan_then_upgrade};
use crate::support::{Env, Helm, chart_path};

/// A namespace with `basic` installed by Helm 3 as `web`, its Deployment scaled by hand.
fn scaled(name: &str) -> Env {
    let env = Env::new(name);
    env.install(Helm::V3, "web", "basic", &[]);
    env.kubectl(&["scale", "deployment", "web-web", "--replicas=3"]).success();
    env
}

/// The Deployment's entry of a plan document.
fn deployment(doc: &serde_json::Value) -> &serde_json::Value {
    let objects = doc["objects"].as_array().unwrap();
    objects.iter().find(|o| o["kind"] == "Deployment").unwrap_or_else(|| panic!("no Deployment: {doc:#}"))
}

#[test]
fn plan_names_the_fields_the_switch_to_server_side_apply_meets() {
    let env = scaled("plan-switch");
    let basic = chart_path("basic");
    let doc = plan_then_upgrade(&env, Helm::V4, &basic, &["--reuse-values", "--server-side=true"], 3);
    assert_eq!((doc["apply"].as_str(), doc["switchedFrom"].as_str()), (Some("server-side"), Some("client-side")));
    let conflicts = &deployment(&doc)["conflicts"];
    assert_eq!(
        conflicts,
        &serde_json::json!([{"field": ".spec.replicas", "manager": "kubectl", "subresource": "scale"}]),
        "{doc:#}"
    );
    assert_eq!(fate(&doc, "spec.replicas"), "conflicts", "{doc:#}");
    let plan = |helm: Helm, extra: &[&str]| {
        let args =
            [&["plan", "web", basic.to_str().unwrap(), "--reuse-values", "--server-side", "true"][..], extra].concat();
        env.drift(&args).env("HELM_BIN", env.helm_bin(helm))
    };
    plan(Helm::V4, &[])
        .code(3)
        .stdout_has("(server-side apply, switched from client-side)")
        .stdout_has("conflict: .spec.replicas is kubectl (through /scale)'s")
        .stdout_has("helm drift repair web gives the fields back to helm");
    // Helm 3 has no --server-side: it renders, the plan applies as Helm 4 would.
    plan(Helm::V3, &[])
        .code(3)
        .stdout_has("note: helm v3 renders the chart; --server-side=true planned as Helm 4 applies")
        .stdout_has("conflict: .spec.replicas is kubectl (through /scale)'s");
    // auto follows the release: Helm 3's three-way merge writes the chart's replicas back.
    let doc: serde_json::Value = serde_json::from_str(
        &env.drift(&["plan", "web", basic.to_str().unwrap(), "--reuse-values", "-o", "json"])
            .env("HELM_BIN", env.helm_bin(Helm::V4))
            .code(2)
            .stdout(),
    )
    .unwrap();
    assert_eq!((doc["apply"].as_str(), &doc["switchedFrom"]), (Some("client-side"), &serde_json::Value::Null));
}

#[test]
fn after_a_repair_or_with_force_conflicts_the_switch_lands() {
    let basic = chart_path("basic");
    let env = scaled("plan-switch-repaired");
    env.drift(&["repair", "web"]).code(0);
    let doc = plan_then_upgrade(&env, Helm::V4, &basic, &["--reuse-values", "--server-side=true"], 0);
    assert_eq!(deployment(&doc)["conflicts"], serde_json::json!([]), "{doc:#}");
    assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "2");

    let env = scaled("plan-switch-forced");
    let flags = ["--reuse-values", "--server-side=true", "--force-conflicts"];
    let doc = plan_then_upgrade(&env, Helm::V4, &basic, &flags, 2);
    assert_eq!(fate(&doc, "spec.replicas"), "wiped", "{doc:#}");
    assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "2");
}

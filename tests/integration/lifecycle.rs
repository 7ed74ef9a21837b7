//! API lifecycle: a recorded apiVersion the cluster stopped serving names the served
//! replacement and how to fix the record; a chart CRD that differs from the live one is a
//! release-level finding (Helm never upgrades `crds/`).

use crate::support::{Env, Helm, eventually};
use std::time::Duration;

#[test]
fn a_removed_version_names_its_replacement() {
    let env = Env::new("lifecycle");
    env.install(Helm::V4, "app", "lifecycle", &[]);
    env.drift(&["check", "app"]).success();
    let schema = r#"{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}"#;
    let versions = format!(
        r#"[{{"op":"replace","path":"/spec/versions","value":[{{"name":"v1","served":false,"storage":false,"schema":{schema}}},{{"name":"v2","served":true,"storage":true,"schema":{schema}}}]}}]"#
    );
    env.kubectl(&["patch", "crd", "things.lifecycle.helm-drift.io", "--type", "json", "-p", &versions]).success();
    eventually("v1 to leave discovery", Duration::from_secs(30), || {
        env.drift(&["check", "app"]).output().out.status.code() == Some(2)
    });
    let out = env.drift(&["check", "app"]).code(2);
    out.stdout_has("unknown      Thing app-thing")
        .stdout_has("the cluster does not serve lifecycle.helm-drift.io/v1 Thing; it serves lifecycle.helm-drift.io/v2 Thing instead")
        .stdout_has("helm mapkubeapis app -n lifecycle");
    env.drift(&["check", "app", "--include-crds"])
        .code(2)
        .stdout_has("finding: CustomResourceDefinition things.lifecycle.helm-drift.io differs from the chart's crds/ copy: Helm never upgrades crds/");
}

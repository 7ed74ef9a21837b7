//! `plan`: what the next `helm upgrade` would do, checked against the real upgrade run right
//! after it: the objects it said would change are those whose resourceVersion changed, and it
//! said the upgrade would fail exactly when the upgrade failed.

use crate::support::{Env, Helm, chart_path};

/// The resourceVersion of each object of the `basic` chart's release `web`.
fn versions(env: &Env) -> Vec<(String, String)> {
    ["deployment/web-web", "service/web-web", "configmap/web-config", "serviceaccount/web-sa"]
        .iter()
        .map(|o| {
            let rv = env.kubectl(&["get", o, "-o", "jsonpath={.metadata.resourceVersion}"]).output();
            (o.to_string(), rv.stdout())
        })
        .collect()
}

/// The objects `plan -o json` says the upgrade changes, as `kind/name` in kubectl's words.
fn planned(doc: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = doc["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["change"] != "none")
        .map(|o| format!("{}/{}", o["kind"].as_str().unwrap().to_lowercase(), o["name"].as_str().unwrap()))
        .collect();
    out.sort();
    out
}

/// Runs `plan` with `flags`, then the real upgrade with them; asserts they agree.
fn plan_then_upgrade(env: &Env, helm: Helm, flags: &[&str], expect: i32) -> serde_json::Value {
    let bin = env.helm_bin(helm);
    let chart = chart_path("basic");
    let chart = chart.to_str().unwrap();
    let args = [&["plan", "web", chart, "-o", "json"][..], flags].concat();
    let out = env.drift(&args).env("HELM_BIN", &bin).code(expect);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout()).expect("a JSON document");
    let before = versions(env);
    let upgrade = env.helm(helm, &[&["upgrade", "web", chart][..], flags].concat()).output();
    let after = versions(env);
    let mut changed: Vec<String> =
        before.iter().zip(&after).filter(|(b, a)| b.1 != a.1).map(|(b, _)| b.0.clone()).collect();
    changed.sort();
    let failed = !upgrade.out.status.success();
    assert_eq!(
        failed,
        doc["wouldFail"] == true,
        "plan said wouldFail={}, upgrade: {}\n{doc:#}",
        doc["wouldFail"],
        upgrade.dump()
    );
    if !failed {
        assert_eq!(planned(&doc), changed, "{doc:#}");
    }
    doc
}

helm_matrix! {
    fn plan_predicts_the_upgrade(helm: Helm) {
        let env = Env::new(&format!("plan-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        // A value change on a clean release: the ConfigMap and the Deployment that read it.
        let doc = plan_then_upgrade(&env, helm, &["--reuse-values", "--set", "greeting=planned"], 2);
        assert_eq!(planned(&doc), ["configmap/web-config", "deployment/web-web"], "{doc:#}");
        // Nothing new: nothing changes.
        plan_then_upgrade(&env, helm, &["--reuse-values"], 0);
        // Scaled by hand: Helm 4's server-side apply conflicts with kubectl's field; Helm 3's
        // three-way merge writes the chart's replicas back.
        env.kubectl(&["scale", "deployment", "web-web", "--replicas=3"]).success();
        let expect = if helm == Helm::V4 { 3 } else { 2 };
        let doc = plan_then_upgrade(&env, helm, &["--reuse-values"], expect);
        let fate = doc["drift"].as_array().unwrap().iter().find(|d| d["drift"].as_str().unwrap().ends_with("spec.replicas"));
        let fate = fate.expect("the replicas drift")["fate"].clone();
        assert_eq!(fate, if helm == Helm::V4 { "conflicts" } else { "wiped" }, "{doc:#}");
        if helm == Helm::V4 {
            // The way out it names: repair gives the field back, and the upgrade then changes nothing.
            let chart = chart_path("basic");
            let text = env.drift(&["plan", "web", chart.to_str().unwrap(), "--reuse-values"]).env("HELM_BIN", env.helm_bin(helm)).code(3);
            text.stdout_has(&format!("update  Deployment {}/web-web", env.ns))
                .stdout_has("~ spec.replicas: 3 -> 2")
                .stdout_has("would fail: ")
                .stdout_has("helm drift repair web gives the fields back to Helm")
                .stdout_has(&format!("conflicts Deployment {}/web-web spec.replicas", env.ns))
                .stdout_has("web: the upgrade would fail");
            env.drift(&["repair", "web"]).code(0);
            plan_then_upgrade(&env, helm, &["--reuse-values"], 0);
        }
    }
}

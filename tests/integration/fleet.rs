//! A fleet in one run: `check` over two control planes through two kubeconfig contexts (the
//! shared one and the one tests may freeze), one report with the cluster of every release; a
//! cluster that stops answering is an error for that cluster only, and the exit code is the
//! worst of all. `repair RELEASE` over the same two, one cluster after the other. A writer
//! pinned for one member (`--helm-manager MEMBER:NAMESPACE=NAME`) is that member's alone.

use crate::restart::SERIAL;
use crate::support::{Env, Helm};
use std::path::PathBuf;

/// One kubeconfig with a context per control plane, named as given (each control plane's own
/// kubeconfig names its cluster, user and context `local`/`admin`, so they are renamed).
fn merged_kubeconfig(at: &Env, planes: &[(&str, &testcluster::ControlPlane)]) -> PathBuf {
    use serde_yaml::{Mapping, Value};
    let (mut clusters, mut users, mut contexts) = (Vec::new(), Vec::new(), Vec::new());
    for (name, cp) in planes {
        let doc: Value = serde_yaml::from_str(&std::fs::read_to_string(cp.kubeconfig()).unwrap()).unwrap();
        let renamed = |list: &str| {
            let mut entry = doc[list][0].clone();
            entry["name"] = Value::from(*name);
            entry
        };
        clusters.push(renamed("clusters"));
        users.push(renamed("users"));
        let mut context = renamed("contexts");
        context["context"]["cluster"] = Value::from(*name);
        context["context"]["user"] = Value::from(*name);
        contexts.push(context);
    }
    let mut doc = Mapping::new();
    doc.insert("apiVersion".into(), "v1".into());
    doc.insert("kind".into(), "Config".into());
    doc.insert("clusters".into(), Value::Sequence(clusters));
    doc.insert("users".into(), Value::Sequence(users));
    doc.insert("contexts".into(), Value::Sequence(contexts));
    doc.insert("current-context".into(), planes[0].0.into());
    let path = at.home().join("fleet-kubeconfig");
    std::fs::write(&path, serde_yaml::to_string(&doc).unwrap()).unwrap();
    path
}

#[test]
fn a_fleet_of_two_clusters_in_one_run() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let alpha = Env::new("fleet");
    let beta = Env::disturbable("fleet");
    alpha.install(Helm::V4, "web", "basic", &[]);
    beta.install(Helm::V3, "web", "basic", &[]);
    beta.install(Helm::V4, "db", "basic", &[]);
    alpha.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited in alpha"}}"#);
    let kubeconfig = merged_kubeconfig(&alpha, &[("alpha", alpha.cp), ("beta", beta.cp)]);
    let fleet = |args: &[&str]| alpha.drift(args).env("KUBECONFIG", &kubeconfig);

    // Text: each cluster under its name, in the order named, then the fleet's tally.
    let text = fleet(&["check", "--all", "--kube-context", "alpha", "--kube-context", "beta"]).code(2).stdout();
    let a = text.find("cluster alpha: 1 release: 0 in sync, 1 drifted, 0 errors").expect(&text);
    let b = text.find("cluster beta: 2 releases: 2 in sync, 0 drifted, 0 errors").expect(&text);
    assert!(a < b && text[a..b].contains("web: 1 of 4 objects drifted"), "{text}");
    assert!(text.contains("2 clusters, 3 releases: 2 in sync, 1 drifted, 0 errors"), "{text}");

    // JSON: schema version 2, the cluster on every release; every context of the kubeconfig.
    let json = fleet(&["check", "--all", "--all-contexts", "-o", "json"]).code(2).stdout();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["schemaVersion"], 3);
    assert_eq!(doc["summary"]["clusters"], 2);
    assert_eq!(doc["summary"]["exitCode"], 2);
    let mut releases: Vec<String> = doc["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}/{}/{} {}",
                r["cluster"].as_str().unwrap(),
                r["namespace"].as_str().unwrap(),
                r["name"].as_str().unwrap(),
                r["verdict"].as_str().unwrap()
            )
        })
        .collect();
    releases.sort();
    assert_eq!(releases, ["alpha/fleet/web drifted", "beta/fleet/db in-sync", "beta/fleet/web in-sync"]);
    let names: Vec<&str> = doc["clusters"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["alpha", "beta"]);

    // A writer pinned for one member's namespace is that member's alone.
    let json =
        fleet(&["check", "--all", "--all-contexts", "-o", "json", "--helm-manager", "beta:fleet=manager"]).output();
    let doc: serde_json::Value =
        serde_json::from_str(&json.stdout()).unwrap_or_else(|e| panic!("{e}: {}", json.dump()));
    let mut writers: Vec<String> = doc["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{}/{} {} {}",
                r["cluster"].as_str().unwrap(),
                r["name"].as_str().unwrap(),
                r["writer"]["manager"],
                r["writer"]["found"]
            )
        })
        .collect();
    writers.sort();
    assert_eq!(
        writers,
        [r#"alpha/web "helm" "learnt""#, r#"beta/db "manager" "given""#, r#"beta/web "manager" "given""#],
        "{doc:#}"
    );

    // JUnit: the cluster starts each suite's name.
    let junit = fleet(&["check", "--all", "--all-contexts", "-o", "junit"]).code(2).stdout();
    for suite in ["alpha/fleet/web", "beta/fleet/web", "beta/fleet/db"] {
        assert!(junit.contains(&format!("<testsuite name=\"{suite}\"")), "{suite}\n{junit}");
    }

    // beta stops answering: an error for beta alone, alpha still reported; the worst exit code.
    beta.cp.pause_apiserver().unwrap();
    let started = std::time::Instant::now();
    let out = fleet(&["check", "--all", "--all-contexts", "--timeout", "300ms"]).output();
    beta.cp.resume_apiserver().unwrap();
    assert_eq!(out.out.status.code(), Some(1), "{}", out.dump());
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "bounded: {:?}", started.elapsed());
    out.stdout_has("cluster alpha: 1 release: 0 in sync, 1 drifted, 0 errors")
        .stdout_has("cluster beta: 1 release: 0 in sync, 0 drifted, 1 error")
        .stderr_has("Error: [cluster beta] cannot reach the cluster at");
    assert!(!out.stderr().contains("[cluster alpha]"), "{}", out.dump());

    // A repair of the named release in each cluster, one after the other; beta frozen: alpha is
    // still repaired, beta is an error for beta alone.
    beta.cp.pause_apiserver().unwrap();
    let out =
        fleet(&["repair", "web", "--kube-context", "alpha", "--kube-context", "beta", "--timeout", "1s"]).output();
    beta.cp.resume_apiserver().unwrap();
    assert_eq!(out.out.status.code(), Some(1), "{}", out.dump());
    out.stdout_has("cluster alpha: repaired, in sync")
        .stdout_has("restore: data.greeting")
        .stdout_has("cluster beta: error (see stderr)")
        .stderr_has("Error: [cluster beta] cannot reach the cluster at");
    alpha.drift(&["check", "web"]).code(0);
    // Both answering: nothing left to repair anywhere.
    fleet(&["repair", "web", "--kube-context", "alpha", "--kube-context", "beta"])
        .code(0)
        .stdout_has("cluster alpha: in sync\nweb: in sync")
        .stdout_has("cluster beta: in sync");
    // Other commands work on one cluster; repair --upgrade too.
    fleet(&["render", "web", "--kube-context", "alpha", "--kube-context", "beta"])
        .code(1)
        .stderr_has("only `check` and `repair` run over a fleet of clusters");
    fleet(&["repair", "web", "--upgrade", "--kube-context", "alpha", "--kube-context", "beta"])
        .code(1)
        .stderr_has("--upgrade runs helm against one cluster");
}

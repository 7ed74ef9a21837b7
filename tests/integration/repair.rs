//! Repair against the real control plane, for Helm 3 (client-side apply) and Helm 4
//! (server-side apply) releases: every drift undone, the release record untouched, ownership
//! left so the next `helm upgrade` works, all-or-nothing when a step would fail.

use crate::support::{Env, Helm};

/// `helm history` and the release Secret's resourceVersion: what a same-revision repair keeps.
fn record_state(env: &Env, helm: Helm) -> (String, String) {
    let history = env.helm(helm, &["history", "app", "-o", "json"]).success().stdout();
    let rv = env
        .kubectl(&["get", "secret", "sh.helm.release.v1.app.v1", "-o", "jsonpath={.metadata.resourceVersion}"])
        .success()
        .stdout();
    (history, rv)
}

fn repair_everything(helm: Helm) {
    let env = Env::with_full_chart(helm, &format!("repair-{}", helm.tag()));
    let state = record_state(&env, helm);
    let k = |args: &[&str]| {
        env.kubectl(args).success();
    };
    k(&["delete", "deployment", "app-scaled"]);
    k(&["patch", "configmap", "app-config", "--type", "merge", "-p", r#"{"data":{"greeting":"edited"}}"#]);
    k(&["scale", "deployment", "app-web", "--replicas=5"]);
    k(&["patch", "secret", "app-creds", "--type", "merge", "-p", r#"{"stringData":{"password":"leaked"}}"#]);
    k(&["patch", "widget", "app-widget", "--type", "merge", "-p", r#"{"spec":{"size":9}}"#]);
    k(&["set", "env", "deployment/app-web", "EXTRA=1"]);

    // The plan: the same diff check shows, validated by server dry-runs, nothing changed.
    let plan = env.drift(&["repair", "app", "--dry-run"]).code(2);
    plan.stdout_has("repair plan (dry run: nothing changed)")
        .stdout_has(&format!("recreate Deployment {}/app-scaled: would apply", env.ns))
        .stdout_has("~ spec.replicas: 2 -> 5");
    env.drift(&["check", "app"]).code(2).stdout_has("app: 5 of 20 objects drifted");

    // Repair: everything but the env var added outside Helm, which needs --remove-foreign; what
    // repair keeps on purpose is still drift, and its exit code says so (2), as check does.
    let out = env.drift(&["repair", "app"]).code(2);
    out.stdout_has(&format!("recreate Deployment {}/app-scaled: applied", env.ns))
        .stdout_has("fields added outside Helm are kept (use --remove-foreign to remove them)")
        .stdout_has("after repair:")
        .stdout_has("app: 1 of 20 objects drifted")
        .stdout_has("kept fields added outside Helm: helm drift check reports them until they are removed (helm drift repair app --remove-foreign) or accepted (helm drift accept app)");
    assert!(!out.stdout().contains("leaked"), "{}", out.dump());
    env.drift(&["check", "app"]).code(2).stdout_has("app: 1 of 20 objects drifted");
    env.drift(&["repair", "app", "--remove-foreign"]).success().stdout_has("app: in sync (20 objects)");
    env.drift(&["check", "app"]).success();
    let env_vars = env
        .kubectl(&["get", "deployment", "app-web", "-o", "jsonpath={.spec.template.spec.containers[0].env}"])
        .success()
        .stdout();
    assert!(!env_vars.contains("EXTRA"), "{env_vars}");
    assert_eq!(record_state(&env, helm), state, "same revision: the release record and history are untouched");

    // Auditable: an Event per repaired object, naming the paths.
    let events = env
        .kubectl(&[
            "get",
            "events",
            "--field-selector",
            "reason=DriftRepaired",
            "-o",
            "jsonpath={range .items[*]}{.involvedObject.kind}/{.involvedObject.name}: {.message}{\"\\n\"}{end}",
        ])
        .success()
        .stdout();
    for want in [
        "Deployment/app-scaled",
        "ConfigMap/app-config: ",
        "Secret/app-creds",
        "Widget/app-widget",
        "Deployment/app-web",
    ] {
        assert!(events.contains(want), "no event for {want}:\n{events}");
    }
    assert!(events.contains("/data/greeting"), "{events}");

    // Ownership is Helm's again: a normal upgrade that changes a value succeeds and lands.
    let chart = crate::support::chart_path("full");
    env.helm(helm, &["upgrade", "app", chart.to_str().unwrap(), "--reuse-values", "--set", "greeting=changed"])
        .success();
    let greeting = env.get("configmap", "app-config", "{.data.greeting}");
    assert_eq!(greeting, "changed");
    env.drift(&["check", "app"]).success().stdout_has("revision 2 deployed");
}

helm_matrix! {
    fn repair_everything(helm: Helm) {
        repair_everything(helm);
    }
}

fn ignored_and_only(helm: Helm) {
    let env = Env::with_full_chart(helm, &format!("repair-only-{}", helm.tag()));
    env.kubectl(&["scale", "deployment", "app-web", "--replicas=5"]).success();
    env.kubectl(&["autoscale", "deployment", "app-web", "--min=1", "--max=10", "--cpu-percent=80"]).success();
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"edited"}}"#);
    env.merge_patch("widget", "app-widget", r#"{"spec":{"size":9}}"#);
    // --only limits the repair (kinds as kubectl users write them); the HPA-managed replica
    // count is never touched.
    env.drift(&["repair", "app", "--only", "cm/app-config"]).code(2).stdout_has("app: 1 of 20 objects drifted");
    let greeting = env.get("configmap", "app-config", "{.data.greeting}");
    assert_eq!(greeting, "hello");
    env.drift(&["repair", "app"]).success();
    let replicas = env.get("deployment", "app-web", "{.spec.replicas}");
    assert_eq!(replicas, "5", "ignored paths (HPA replicas) are never touched");
    env.drift(&["repair", "app", "--only", "Deployment/nope"])
        .code(1)
        .stderr_has("--only Deployment/nope: no such object")
        .stderr_has("its objects: ")
        .stderr_has("ConfigMap/app-config");
}

helm_matrix! {
    fn repair_only_and_ignored(helm: Helm) {
        ignored_and_only(helm);
    }
}

fn refused_changes_nothing(helm: Helm) {
    let env = Env::with_full_chart(helm, &format!("repair-refused-{}", helm.tag()));
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"edited"}}"#);
    // Someone recreated the StatefulSet with another serviceName, which is immutable.
    let sts = env.kubectl(&["get", "statefulset", "app-db", "-o", "json"]).success().stdout();
    let mut sts: serde_json::Value = serde_json::from_str(&sts).unwrap();
    sts["spec"]["serviceName"] = "elsewhere".into();
    for k in ["resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"] {
        sts["metadata"].as_object_mut().unwrap().remove(k);
    }
    sts.as_object_mut().unwrap().remove("status");
    let file = env.home().join("sts.json");
    std::fs::write(&file, sts.to_string()).unwrap();
    env.kubectl(&["delete", "statefulset", "app-db"]).success();
    env.kubectl(&["create", "-f", file.to_str().unwrap()]).success();

    let out = env.drift(&["repair", "app"]).code(1);
    out.stdout_has(&format!("StatefulSet {}/app-db: refused by the server dry-run", env.ns))
        .stdout_has("nothing was changed");
    let greeting = env.get("configmap", "app-config", "{.data.greeting}");
    assert_eq!(greeting, "edited", "all or nothing: the ConfigMap was not repaired either");
    let events =
        env.kubectl(&["get", "events", "--field-selector", "reason=DriftRepaired", "-o", "name"]).success().stdout();
    assert!(events.trim().is_empty(), "{events}");
}

helm_matrix! {
    fn repair_refused_changes_nothing(helm: Helm) {
        refused_changes_nothing(helm);
    }
}

helm_matrix! {
    fn repair_through_helm_upgrade(helm: Helm) {
        let env = Env::new(&format!("repair-upgrade-{}", helm.tag()));
        let bin = env.helm_bin(helm);
        env.install(helm, "web", "basic", &["--set", "greeting=hi"]);
        env.kubectl(&["delete", "deployment", "web-web"]).success();
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
        let ns = env.ns.clone();
        env.drift(&["repair", "web", "--upgrade", "--trust-namespace", &ns])
            .env("HELM_BIN", &bin)
            .success()
            .stdout_has("web: in sync (4 objects) [namespace")
            .stdout_has("revision 2 deployed");
        let greeting =
            env.get("configmap", "web-config", "{.data.greeting}");
        assert_eq!(greeting, "hi", "the stored user values were used");

        // A release with an operation in progress is refused.
        env.kubectl(&["label", "secret", "sh.helm.release.v1.web.v2", "status=pending-upgrade", "--overwrite"])
            .success();
        env.drift(&["repair", "web", "--upgrade", "--trust-namespace", &ns])
            .env("HELM_BIN", &bin)
            .code(1)
            .stderr_has("has a pending operation (revision 2 is pending-upgrade)");

        env.install(helm, "p", "parent", &[]);
        env.drift(&["repair", "p", "--upgrade", "--trust-namespace", &ns])
            .env("HELM_BIN", &bin)
            .code(1)
            .stderr_has("declares dependencies (subcharts)");
        let chart = crate::support::chart_path("parent");
        env.drift(&["repair", "p", "--upgrade", "--trust-namespace", &ns, "--chart", chart.to_str().unwrap()])
            .env("HELM_BIN", &bin)
            .success();
    }
}

helm_matrix! {
    /// `repair -o json`: the plan (each step, what it restores and removes, how far it got), what
    /// it kept, and the check afterwards, with the exit code the command returns; a dry run has
    /// no check afterwards. `--upgrade -o json` is refused.
    fn a_repair_reports_as_json(helm: Helm) {
        let env = Env::new(&format!("repair-json-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
        env.kubectl(&["label", "service", "web-web", "team=someone"]).success();
        let read = |args: &[&str], code: i32| -> serde_json::Value {
            serde_json::from_str(&env.drift(args).code(code).stdout()).expect("a JSON document")
        };
        let plan = read(&["repair", "web", "-o", "json", "--dry-run"], 2);
        assert_eq!(plan["repair"]["dryRun"], true, "{plan:#}");
        assert_eq!(plan["repair"]["after"], serde_json::Value::Null);
        let done = read(&["repair", "web", "-o", "json"], 2);
        let r = &done["repair"];
        assert_eq!(r["exitCode"], 2, "the label is kept: {done:#}");
        let cm = r["steps"].as_array().unwrap().iter().find(|s| s["object"] == format!("ConfigMap {}/web-config", env.ns));
        let cm = cm.expect("a step for the ConfigMap");
        assert_eq!((&cm["action"], &cm["status"], &cm["restore"][0]), (&"patch".into(), &"applied".into(), &"/data/greeting".into()));
        assert_eq!(r["skipped"][0]["reason"], "fields added outside Helm are kept", "{done:#}");
        assert_eq!(r["after"]["verdict"], "drifted", "{done:#}");
        let clean = read(&["repair", "web", "-o", "json", "--remove-foreign"], 0);
        assert_eq!(clean["repair"]["after"]["verdict"], "in-sync", "{clean:#}");
        env.drift(&["repair", "web", "--upgrade", "-o", "json"]).code(1).stderr_has("-o json is for a repair in place");
    }
}

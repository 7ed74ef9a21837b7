//! Restored and re-created objects are not drift: a namespace restored from a backup (objects
//! re-created from their own `kubectl get -o json`, by `kubectl create` or under Velero's field
//! manager) holds the server's defaults under another manager's name. Both engines say *owned
//! elsewhere* (exit 0, `--strict` 2), a real edit after the restore is exactly that edit,
//! `repair --remove-foreign` removes nothing the server would put back, and a later `helm
//! upgrade` lands. The chart (tests/charts/restorable) also sends the empty values that let the
//! server choose (`clusterIP: ""`, `nodePort: 0`, `imagePullPolicy: ""`, `volumeName: ""`).

use crate::support::{Env, Helm};
use serde_json::Value;

/// The release's objects as `KIND/NAME`, and the field manager that re-creates each: the
/// workloads, a Service and the custom resource by `kubectl create` (each from its own `get -o
/// json`), the rest as Velero would restore them.
const OBJECTS: [(&str, Option<&str>); 9] = [
    ("deployment/app-web", None),
    ("statefulset/app-db", None),
    ("service/app-web", None),
    ("widget.test.helm-drift.io/app-widget", None),
    ("service/app-node", Some("velero-server")),
    ("service/app-db", Some("velero-server")),
    ("configmap/app-config", Some("velero-server")),
    ("secret/app-secret", Some("velero-server")),
    ("persistentvolumeclaim/app-cache", Some("velero-server")),
];

/// Deletes each object and creates it again from its own `get -o json`.
fn restore(env: &Env) {
    for (object, manager) in OBJECTS {
        let saved = env.home().join(format!("{}.json", object.replace('/', "_")));
        std::fs::write(&saved, env.kubectl(&["get", object, "-o", "json"]).success().stdout()).unwrap();
        if object.starts_with("persistentvolumeclaim") {
            // Nothing binds the claim: its protection finalizer would hold the delete forever.
            env.kubectl(&[
                "patch",
                object,
                "--type",
                "json",
                "-p",
                r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
            ])
            .success();
        }
        env.kubectl(&["delete", object, "--wait=true"]).success();
        let mut create = vec!["create".to_string(), "-f".into(), saved.display().to_string()];
        if let Some(m) = manager {
            create.push(format!("--field-manager={m}"));
        }
        env.kubectl(&create.iter().map(String::as_str).collect::<Vec<_>>()).success();
    }
}

/// The objects of a JSON check report, by `Kind/name`.
fn objects(json: &str) -> Vec<(String, Value)> {
    let doc: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let objects = doc["releases"][0]["objects"].as_array().expect("objects").clone();
    objects
        .into_iter()
        .map(|o| (format!("{}/{}", o["kind"].as_str().unwrap(), o["name"].as_str().unwrap()), o))
        .collect()
}

/// What a live object holds apart from what the server changes on every write.
fn content(env: &Env, object: &str) -> Value {
    let mut v: Value = serde_json::from_str(&env.kubectl(&["get", object, "-o", "json"]).success().stdout()).unwrap();
    let meta = v["metadata"].as_object_mut().unwrap();
    for server in ["managedFields", "resourceVersion", "generation"] {
        meta.remove(server);
    }
    v.as_object_mut().unwrap().remove("status");
    v
}

const ENGINES: [&[&str]; 2] = [&[], &["--read-only"]];

helm_matrix! {
    /// Helm 3 sends the empty values as they are; the server fills them in. Both engines are in
    /// sync, with no object owned elsewhere.
    fn empty_values_that_let_the_server_choose_are_in_sync(helm: Helm) {
        let env = Env::new(&format!("restore-empty-{}", helm.tag()));
        env.install(helm, "app", "restorable", &[]);
        for engine in ENGINES {
            let mut args = vec!["check", "app", "-o", "json"];
            args.extend_from_slice(engine);
            let out = env.drift(&args).code(0).stdout();
            for (id, o) in objects(&out) {
                assert_eq!(o["verdict"], "in-sync", "{id} with {engine:?}: {o:#}");
            }
        }
    }
}

helm_matrix! {
    /// A namespace restored: every object re-created outside Helm is owned elsewhere with its
    /// short story, nothing is added outside Helm, and --strict fails it. Then one real edit
    /// each to two objects is exactly what is reported; repair --remove-foreign puts back the
    /// edits and nothing else (the server's defaults, the allocated IPs and ports stay); a
    /// helm upgrade that changes a value lands.
    fn a_restored_namespace_is_owned_elsewhere_not_drifted(helm: Helm) {
        let env = Env::new(&format!("restore-{}", helm.tag()));
        env.install(helm, "app", "restorable", &[]);
        let ip = env.get("service", "app-node", "{.spec.clusterIP}");
        restore(&env);
        assert_eq!(env.get("service", "app-node", "{.spec.clusterIP}"), ip, "the backup keeps the allocated IP");

        for engine in ENGINES {
            let mut args = vec!["check", "app", "-o", "json"];
            args.extend_from_slice(engine);
            let found = objects(&env.drift(&args).code(0).stdout());
            assert_eq!(found.len(), OBJECTS.len());
            for (id, o) in &found {
                assert_eq!(o["verdict"], "taken-over", "{id} with {engine:?}: {o:#}");
                assert_eq!(o["addedOutsideHelm"], serde_json::json!([]), "{id} with {engine:?}: {o:#}");
                assert_eq!(o["differences"], serde_json::json!([]), "{id} with {engine:?}");
            }
            let by = |id: &str| found.iter().find(|(i, _)| i == id).unwrap().1["recreatedBy"]["manager"].clone();
            assert_eq!(by("Deployment/app-web"), "kubectl-create");
            assert_eq!(by("ConfigMap/app-config"), "velero-server");
            let mut strict = args.clone();
            strict.push("--strict");
            env.drift(&strict).code(2);
        }
        // An identity that reads only this namespace (a namespaced watcher) cannot read the
        // CRD: the custom resource's schema defaults come from the published OpenAPI document.
        let viewer = format!("restore-viewer-{}", helm.tag());
        env.kubectl(&["create", "role", &viewer, "--verb=get,list,watch", "--resource=*.*"]).success();
        env.kubectl(&["create", "rolebinding", &viewer, "--role", &viewer, "--user", &viewer]).success();
        env.wait_until_allowed(&viewer, "list", "secrets", false);
        let crd = env.kubectl(&["get", "customresourcedefinition", "widgets.test.helm-drift.io", "--as", &viewer]).output();
        assert!(crd.stderr().contains("forbidden"), "{}", crd.stderr());
        let mine = env.drift(&["check", "app", "-o", "json"]).env("HELM_KUBEASUSER", &viewer).code(0).stdout();
        for (id, o) in objects(&mine) {
            assert_eq!(o["verdict"], "taken-over", "{id} as {viewer}: {o:#}");
        }

        let text = if helm == Helm::V4 {
            crate::support::example("example-restored-check", &env, &["check", "app"], "shop")
        } else {
            env.drift(&["check", "app"]).code(0)
        }
        .stdout();
        assert!(text.contains("taken over   Deployment"), "{text}");
        assert!(text.contains("re-created by velero-server") && text.contains("values as recorded"), "{text}");
        assert!(!text.contains("(added by"), "no field listed as added: {text}");

        // One real edit to each of two objects, after the restore.
        env.kubectl(&["set", "image", "deployment/app-web", "web=registry.example/web:2.0"]).success();
        env.merge_patch("service", "app-web", r#"{"spec":{"selector":{"tier":"edited"}}}"#);
        let before: Vec<Value> = OBJECTS.iter().map(|(o, _)| content(&env, o)).collect();
        for engine in ENGINES {
            let mut args = vec!["check", "app", "-o", "json"];
            args.extend_from_slice(engine);
            let found = objects(&env.drift(&args).code(2).stdout());
            for (id, o) in &found {
                let changed: Vec<&str> =
                    o["differences"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
                let added: Vec<&str> =
                    o["addedOutsideHelm"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
                let (want_changed, want_added): (&[&str], &[&str]) = match id.as_str() {
                    "Deployment/app-web" => (&["/spec/template/spec/containers/0/image"], &[]),
                    "Service/app-web" => (&[], &["/spec/selector/tier"]),
                    _ => (&[], &[]),
                };
                assert_eq!((changed.as_slice(), added.as_slice()), (want_changed, want_added), "{id} with {engine:?}: {o:#}");
            }
        }

        env.drift(&["repair", "app", "--remove-foreign"]).success();
        for ((object, _), was) in OBJECTS.iter().zip(&before) {
            let mut now = content(&env, object);
            if *object == "deployment/app-web" {
                assert_eq!(now.pointer("/spec/template/spec/containers/0/image").unwrap(), "registry.example/web:1.0");
                now["spec"]["template"]["spec"]["containers"][0]["image"] = was["spec"]["template"]["spec"]["containers"][0]["image"].clone();
                // The controller counts the rollouts the edit and its repair made.
                now["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = was["metadata"]["annotations"]["deployment.kubernetes.io/revision"].clone();
            }
            if *object == "service/app-web" {
                assert!(now.pointer("/spec/selector/tier").is_none(), "the edit is removed");
                now["spec"]["selector"]["tier"] = "edited".into();
            }
            assert_eq!(&now, was, "{object}: the repair changed something else");
        }
        let after = env.drift(&["check", "app", "-o", "json"]).code(0).stdout();
        for (id, o) in objects(&after) {
            let fine = if helm == Helm::V4 { ["in-sync", "in-sync"] } else { ["in-sync", "taken-over"] };
            assert!(fine.contains(&o["verdict"].as_str().unwrap()), "{id}: {o:#}");
        }

        // A later upgrade that changes a value lands, server-side (Helm 4) or client-side.
        env.helm(helm, &["upgrade", "app", crate::support::chart_path("restorable").to_str().unwrap(), "--set", "replicas=3"]).success();
        assert_eq!(env.get("deployment", "app-web", "{.spec.replicas}"), "3");
        env.drift(&["check", "app"]).code(0);

        // A value the server chose, changed later by someone else, is theirs: drift.
        // Other tests allocate node ports on the shared cluster: a port taken meanwhile is
        // refused, and the next one is tried.
        let port: u32 = env.get("service", "app-node", "{.spec.ports[0].nodePort}").parse().unwrap();
        let moved = (1..=50).map(|i| if port < 32000 { port + 700 + i } else { port - 700 - i }).find(|moved| {
            let patch = format!(r#"[{{"op":"replace","path":"/spec/ports/0/nodePort","value":{moved}}}]"#);
            let done = env.kubectl(&["patch", "service", "app-node", "--type", "json", "-p", &patch]).output();
            done.out.status.success() || !done.stderr().contains("provided port is already allocated")
        });
        assert!(moved.is_some(), "no free node port near {port}");
        assert_eq!(env.get("service", "app-node", "{.spec.ports[0].nodePort}"), moved.unwrap().to_string());
        for engine in ENGINES {
            let mut args = vec!["check", "app", "-o", "json"];
            args.extend_from_slice(engine);
            let found = objects(&env.drift(&args).code(2).stdout());
            let node = &found.iter().find(|(id, _)| id == "Service/app-node").unwrap().1;
            assert_eq!(node["addedOutsideHelm"][0]["path"], "/spec/ports/0/nodePort", "{engine:?}: {node:#}");
            assert_eq!(node["addedOutsideHelm"][0]["manager"], "kubectl-patch");
        }
    }
}

helm_matrix! {
    /// A self-healing watcher that removes foreign fields, started on a restored namespace:
    /// nothing is drift, so nothing is written and no Event raised; a real edit afterwards is
    /// healed, and the server's values (the allocated IP and port, the defaults) stay as they were.
    fn a_healing_watcher_leaves_a_restored_namespace_alone(helm: Helm) {
        use crate::watching::{Watching, events};
        let env = Env::new(&format!("restore-watch-{}", helm.tag()));
        env.install(helm, "app", "restorable", &["--labels", "helm-drift.io/repair=true"]);
        restore(&env);
        let node = content(&env, "service/app-node");
        let args = ["--all", "--repair", "--remove-foreign", "--repair-cooldown", "1s", "--trust-namespace", env.ns.as_str()];
        let w = Watching::start(&env, &args).ready();
        w.wait_for(&Watching::drifted(&env.ns, "app"), 0.0);
        let owned = format!("helm_drift_objects{{namespace=\"{}\",release=\"app\",verdict=\"taken-over\"}}", env.ns);
        w.wait_for(&owned, OBJECTS.len() as f64);
        assert_eq!(w.sample("helm_drift_repairs_total{result=\"applied\"}").unwrap_or(0.0), 0.0, "{}", w.logs_text());
        assert!(events(&env, "DriftDetected").is_empty(), "{:?}", events(&env, "DriftDetected"));

        env.kubectl(&["set", "image", "deployment/app-web", "web=registry.example/web:2.0"]).success();
        let image = || env.get("deployment", "app-web", "{.spec.template.spec.containers[0].image}");
        crate::support::eventually("the edit healed", std::time::Duration::from_secs(30), || image() == "registry.example/web:1.0");
        w.wait_for("helm_drift_repairs_total{result=\"applied\"}", 1.0);
        assert_eq!(content(&env, "service/app-node"), node, "a Service the watcher had no reason to touch");
        assert_eq!(env.get("deployment", "app-web", "{.spec.revisionHistoryLimit}"), "10");
        w.stop();
    }
}

//! A field manager's name is whatever the writing client sends: an edit made under a
//! control-plane name (`kubectl patch --field-manager=kube-controller-manager`) is drift like any
//! other, found in both engines and removed by `--remove-foreign`; what that controller writes by
//! design (a Deployment's `deployment.kubernetes.io/revision`) stays expected. The same under
//! the release's own writer's name (`helm`): only what Helm's apply makes is Helm's, and the
//! exact engine asks the server for it (a field a webhook adds at Helm's apply stays in sync).
//! And under no name at all (managedFields cleared, admission's additions): the values decide,
//! with the object's resourceVersion or the server's dry-runs as the only evidence.

use crate::support::{Env, Helm};

helm_matrix! {
    fn an_edit_under_a_control_plane_name_is_drift(helm: Helm) {
        planted_under(helm, "kube-controller-manager", "borrowed");
    }
}

helm_matrix! {
    fn an_edit_under_helms_own_name_is_drift(helm: Helm) {
        planted_under(helm, "helm", "own-name");
    }
}

/// A container, `hostNetwork` and a ConfigMap key planted under `manager`'s name: added, in
/// both engines, and removed by `repair --remove-foreign`.
fn planted_under(helm: Helm, manager: &str, prefix: &str) {
    let env = Env::new(&format!("{prefix}-{}", helm.tag()));
    env.install(helm, "web", "basic", &[]);
    env.drift(&["check", "web"]).code(0);
    env.drift(&["check", "web", "--read-only"]).code(0);
    let manager = format!("--field-manager={manager}");
    let patch =
        r#"{"spec":{"template":{"spec":{"hostNetwork":true,"containers":[{"name":"miner","image":"evil/x"}]}}}}"#;
    env.kubectl(&["patch", "deployment", "web-web", &manager, "-p", patch]).success();
    let data = r#"{"data":{"extra":"planted"}}"#;
    env.kubectl(&["patch", "configmap", "web-config", "--type=merge", &manager, "-p", data]).success();
    for engine in [&[][..], &["--read-only"][..]] {
        let args = [&["check", "web", "-o", "json"][..], engine].concat();
        let out = env.drift(&args).code(2);
        let doc: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap();
        let objects = doc["releases"][0]["objects"].as_array().unwrap();
        let added = |kind: &str| -> Vec<String> {
            let o = objects.iter().find(|o| o["kind"] == kind).unwrap();
            let added = o["addedOutsideHelm"].as_array().into_iter().flatten();
            added.map(|a| format!("{} {}", a["path"].as_str().unwrap(), a["value"])).collect()
        };
        let deployment = added("Deployment");
        assert!(deployment.iter().any(|p| p.contains("hostNetwork")), "{engine:?} {doc:#}");
        assert!(deployment.iter().any(|p| p.contains("miner")), "{engine:?} {doc:#}");
        assert!(!deployment.iter().any(|p| p.contains("revision")), "by design: {doc:#}");
        assert!(added("ConfigMap").iter().any(|p| p.contains("extra")), "{engine:?} {doc:#}");
    }
    env.drift(&["repair", "web", "--remove-foreign"]).code(0);
    assert_eq!(env.get("deployment", "web-web", "{.spec.template.spec.hostNetwork}"), "");
    assert_eq!(env.get("configmap", "web-config", "{.data.extra}"), "");
    env.drift(&["check", "web"]).code(0);
}

helm_matrix! {
    /// A label a mutating webhook adds to Helm's create (where none is) is in sync for both
    /// engines (the server records it under no manager). The same label written later by hand
    /// under Helm's name, with another value, is drift for both: the exact engine's dry-run as
    /// Helm without it passes the same webhook and gets the webhook's value back, not the hand's;
    /// the read-only engine cannot ask, so nothing proves it Helm's.
    fn a_field_admission_adds_to_helms_create_is_helms_and_a_later_hand_value_is_not(helm: Helm) {
        let hook = labelling_webhook(false);
        let env = Env::new(&format!("own-admitted-{}", helm.tag()));
        let _registered = admit_configmaps(&env, &hook);
        env.install(helm, "web", "basic", &[]);
        assert_eq!(env.get("configmap", "web-config", "{.metadata.labels.admitted\\.example/by}"), "webhook");
        env.drift(&["check", "web"]).code(0);
        env.drift(&["check", "web", "--read-only"]).code(0);
        let relabel = ["label", "configmap", "web-config", "admitted.example/by=hand", "--overwrite", "--field-manager=helm"];
        env.kubectl(&relabel).success();
        env.drift(&["check", "web"]).code(2).stdout_has("admitted.example/by");
        env.drift(&["check", "web", "--read-only"]).code(2).stdout_has("admitted.example/by");
    }
}

helm_matrix! {
    /// The read-only engine takes neither a managedFields entry's time nor a record written
    /// since by someone else as proof that a value was Helm's apply: an image changed by a
    /// `kubectl replace` that put the old entries back, and one patched under Helm's name before
    /// the record Secret was annotated (moving its time and resourceVersion), are drift.
    fn a_time_is_not_proof_for_the_read_only_engine(helm: Helm) {
        let env = Env::new(&format!("own-time-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        // A replace of the object as read, its entries with it: read again when the Deployment
        // controller wrote its status in between (a conflict).
        let file = env.home().join("replaced.json");
        let mut entries = serde_json::Value::Null;
        crate::support::eventually("a replace the controller did not overtake", std::time::Duration::from_secs(30), || {
            let out = env.kubectl(&["get", "deployment", "web-web", "-o", "json"]).success().stdout();
            let mut deployment: serde_json::Value = serde_json::from_str(&out).unwrap();
            entries = deployment["metadata"]["managedFields"].clone();
            deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "evil/x:1".into();
            std::fs::write(&file, deployment.to_string()).unwrap();
            env.kubectl(&["replace", "-f", file.to_str().unwrap()]).output().out.status.success()
        });
        let after = env.kubectl(&["get", "deployment", "web-web", "-o", "json"]).success().stdout();
        let after: serde_json::Value = serde_json::from_str(&after).unwrap();
        assert_eq!(after["metadata"]["managedFields"], entries, "the old entries were put back");
        for engine in [&[][..], &["--read-only"][..]] {
            let args = [&["check", "web"][..], engine].concat();
            env.drift(&args).code(2).stdout_has("evil/x:1");
        }
        env.drift(&["repair", "web"]).code(0);
        env.drift(&["check", "web", "--read-only"]).code(0);
        let patch = r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"evil/y:1"}]}}}}"#;
        env.kubectl(&["patch", "deployment", "web-web", "--field-manager=helm", "-p", patch]).success();
        let record = ["annotate", "secret", "sh.helm.release.v1.web.v1", "moved=1", "--field-manager=helm"];
        env.kubectl(&record).success();
        env.drift(&["check", "web", "--read-only"]).code(2).stdout_has("evil/y:1");
    }
}

helm_matrix! {
    /// Fields left under no field manager are judged by their values: a container,
    /// `hostNetwork` and a ConfigMap key planted by a JSON patch that also clears
    /// `metadata.managedFields` (the server then records no owner for anything) are added, in
    /// both engines, and nothing the chart or the server holds is; `--remove-foreign` removes
    /// them.
    fn an_edit_left_under_no_manager_is_drift(helm: Helm) {
        let env = Env::new(&format!("no-manager-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        env.drift(&["check", "web"]).code(0);
        let cleared = r#"{"op":"replace","path":"/metadata/managedFields","value":[{}]}"#;
        let planted = r#"{"op":"add","path":"/spec/template/spec/hostNetwork","value":true},{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"miner","image":"evil/x"}}"#;
        env.kubectl(&["patch", "deployment", "web-web", "--type=json", "-p", &format!("[{planted},{cleared}]")]).success();
        let data = r#"{"op":"add","path":"/data/extra","value":"planted"}"#;
        env.kubectl(&["patch", "configmap", "web-config", "--type=json", "-p", &format!("[{data},{cleared}]")]).success();
        let entries = env.get("configmap", "web-config", "{.metadata.managedFields}");
        assert!(!entries.contains("extra"), "nobody owns the planted key: {entries}");
        for engine in [&[][..], &["--read-only"][..]] {
            let args = [&["check", "web", "-o", "json"][..], engine].concat();
            let out = env.drift(&args).code(2);
            let doc: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap();
            let added: Vec<(String, String)> = doc["releases"][0]["objects"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|o| o["addedOutsideHelm"].as_array().cloned().unwrap_or_default())
                .map(|a| (a["path"].as_str().unwrap().to_string(), a["manager"].as_str().unwrap().to_string()))
                .collect();
            let planted = ["hostNetwork", "containers/1", "extra"];
            for name in planted {
                assert!(added.iter().any(|(p, m)| p.contains(name) && m.is_empty()), "{engine:?} {name}: {added:?}");
            }
            assert!(added.iter().all(|(p, _)| planted.iter().any(|n| p.contains(n))), "only what was planted: {added:?}");
        }
        env.drift(&["check", "web"]).code(2).stdout_has("added under no field manager");
        env.drift(&["repair", "web", "--remove-foreign"]).code(0);
        assert_eq!(env.get("deployment", "web-web", "{.spec.template.spec.hostNetwork}"), "");
        assert_eq!(env.get("configmap", "web-config", "{.data.extra}"), "");
        env.drift(&["check", "web"]).code(0);
    }
}

helm_matrix! {
    /// A label a mutating webhook adds only when an object is created is recorded under no
    /// manager. Once the object is written again (a repair of another field), the exact engine
    /// proves it, by a dry-run create of the recorded object that passes the same webhook; the
    /// read-only engine reads the webhook's configuration (it covers ConfigMaps of this namespace
    /// at create and update) and says the label was added at admission, as far as a reader can
    /// tell (shown, not counted: exit 0), before and after the repair alike.
    fn a_field_admission_adds_only_at_create_is_proven_by_a_dry_run_create(helm: Helm) {
        let hook = labelling_webhook(true);
        let env = Env::new(&format!("create-admitted-{}", helm.tag()));
        let _registered = admit_configmaps(&env, &hook);
        env.install(helm, "web", "basic", &[]);
        assert_eq!(env.get("configmap", "web-config", "{.metadata.labels.admitted\\.example/by}"), "webhook");
        env.drift(&["check", "web"]).code(0);
        env.drift(&["check", "web", "--read-only"]).code(0);
        env.kubectl(&["patch", "configmap", "web-config", "--type=merge", "-p", r#"{"data":{"greeting":"changed"}}"#])
            .success();
        env.drift(&["repair", "web"]).code(0);
        assert_eq!(env.get("configmap", "web-config", "{.metadata.labels.admitted\\.example/by}"), "webhook");
        env.drift(&["check", "web"]).code(0);
        env.drift(&["check", "web", "--read-only", "-v"])
            .code(0)
            .stdout_has("added at admission by mutating webhook test.helm-drift.io");
        // A value nobody owns that the webhook would not make is drift for both.
        let relabel = r#"[{"op":"replace","path":"/metadata/labels/admitted.example~1by","value":"hand"},{"op":"replace","path":"/metadata/managedFields","value":[{}]}]"#;
        env.kubectl(&["patch", "configmap", "web-config", "--type=json", "-p", relabel]).success();
        env.drift(&["check", "web"]).code(2).stdout_has("admitted.example/by");
    }
}

/// A webhook that labels an object `admitted.example/by: webhook` where no such label is (a
/// later value by hand stays): on creates, and on updates too unless `create_only`.
fn labelling_webhook(create_only: bool) -> testcluster::webhook::Webhook {
    testcluster::webhook::start(move |request| {
        let labelled_so = request.pointer("/object/metadata/labels/admitted.example~1by").is_some();
        if labelled_so || (create_only && request["operation"] != "CREATE") {
            return Vec::new();
        }
        let labelled = request.pointer("/object/metadata/labels").is_some_and(|l| l.is_object());
        let (path, value) = match labelled {
            true => ("/metadata/labels/admitted.example~1by", serde_json::json!("webhook")),
            false => ("/metadata/labels", serde_json::json!({"admitted.example/by": "webhook"})),
        };
        vec![serde_json::json!({"op": "add", "path": path, "value": value})]
    })
    .expect("the webhook server")
}

/// `hook` called on the ConfigMaps of `env`'s namespace, once a dry-run create shows its label.
fn admit_configmaps<'a>(env: &'a Env, hook: &testcluster::webhook::Webhook) -> crate::admission::Registered<'a> {
    let probe = ["create", "configmap", "probe", "--dry-run=server", "-o", "jsonpath={.metadata.labels}"];
    let admitted = || env.kubectl(&probe).output().stdout().contains("admitted.example/by");
    env.admit_through(hook, crate::admission::Step::Mutating, ("", "v1", "configmaps"), admitted)
}

//! A field manager's name is whatever the writing client sends: an edit made under a
//! control-plane name (`kubectl patch --field-manager=kube-controller-manager`) is drift like any
//! other, found in both engines and removed by `--remove-foreign`; what that controller writes by
//! design (a Deployment's `deployment.kubernetes.io/revision`) stays expected.

use crate::support::{Env, Helm};

helm_matrix! {
    fn an_edit_under_a_control_plane_name_is_drift(helm: Helm) {
        let env = Env::new(&format!("borrowed-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let patch = r#"{"spec":{"template":{"spec":{"hostNetwork":true,"containers":[{"name":"miner","image":"evil/x"}]}}}}"#;
        env.kubectl(&["patch", "deployment", "web-web", "--field-manager=kube-controller-manager", "-p", patch]).success();
        let data = r#"{"data":{"extra":"planted"}}"#;
        env.kubectl(&["patch", "configmap", "web-config", "--type=merge", "--field-manager=kube-controller-manager", "-p", data])
            .success();
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
}

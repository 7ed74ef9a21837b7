//! A real chart (ingress-nginx 4.15.1, tests/charts/ingress-nginx, copied unchanged) installed
//! with Helm 3 and Helm 4: in sync as installed; the edits people make by hand (scale, a new
//! image, an argument appended, a ConfigMap key, a label, a Service's traffic policy, a deleted
//! IngressClass) each reported where they are, `--explain` naming the values (the argument as an
//! entry of the chart's empty `extraArgs`, the variable and the ConfigMap key as its
//! `extraEnvs` and `config`); repair puts everything back without a new revision;
//! the next `helm upgrade` with those values goes through and is in sync.

use crate::support::{Env, Helm, chart_path};

helm_matrix! {
    fn ingress_nginx_edited_by_hand_is_found_and_repaired(helm: Helm) {
        let env = Env::new(&format!("real-nginx-{}", helm.tag()));
        let release = format!("nginx-{}", helm.tag());
        let class = format!("nginx-{}", env.ns);
        let chart = chart_path("ingress-nginx");
        let chart = chart.to_str().unwrap();
        // No admission webhook (its hook Jobs need a kubelet); an IngressClass of its own.
        let values = [
            "--set".to_string(), "controller.admissionWebhooks.enabled=false".to_string(),
            "--set".to_string(), format!("controller.ingressClassResource.name={class}"),
        ];
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        let mut install = vec!["install", release.as_str(), chart];
        install.extend_from_slice(&values);
        env.helm(helm, &install).success();
        // In sync with no dry-run at all: every field under Helm's name that the chart does not
        // set is one the server holds for Helm's object (nothing for the server to be asked).
        let mark = env.audit_mark();
        env.drift(&["check", &release]).code(0).stdout_has("in sync (9 objects)");
        let events = env.audit_since(mark);
        for verb in ["create", "update", "patch"] {
            let asked = crate::support::by_drift(&events, verb);
            assert!(asked.is_empty(), "an in-sync check sent a {verb}: {asked:#?}");
        }

        let deploy = format!("deploy/{release}-ingress-nginx-controller");
        let name = format!("{release}-ingress-nginx-controller");
        env.kubectl(&["scale", &deploy, "--replicas", "3"]).success();
        env.kubectl(&["set", "image", &deploy, "controller=registry.k8s.io/ingress-nginx/controller:v1.0.0"]).success();
        let arg = r#"[{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--v=5"}]"#;
        env.kubectl(&["patch", "deployment", &name, "--type", "json", "-p", arg]).success();
        env.kubectl(&["set", "env", &deploy, "DEBUG=1"]).success();
        env.merge_patch("configmap", &name, r#"{"data":{"use-forwarded-headers":"true"}}"#);
        env.kubectl(&["label", "service", &name, "team=x"]).success();
        env.merge_patch("service", &name, r#"{"spec":{"externalTrafficPolicy":"Local"}}"#);
        env.kubectl(&["delete", "ingressclass", &class]).success();

        let found = env.drift(&["check", &release]).code(2);
        found
            .stdout_has("4 of 9 objects drifted")
            .stdout_has(&format!("missing      IngressClass {class}"))
            .stdout_has("~ spec.replicas: 1 -> 3  (kubectl)")
            // A long list shown around the change: the argument appended is in sight.
            .stdout_has(r#"-controller","--v=5"]  (kubectl-patch"#)
            .stdout_has(r#"controller:v1.0.0"  (kubectl-set"#)
            .stdout_has(r#"+ data: {"use-forwarded-headers":"true"} (added by kubectl-patch"#)
            .stdout_has(r#"+ metadata.labels.team: "x" (added by kubectl-label"#)
            .stdout_has(r#"+ spec.externalTrafficPolicy: "Local" (added by kubectl-patch"#);

        // --explain names the values: the replicas, and the argument as an entry of the map the
        // chart leaves empty for extra arguments.
        let bin = env.helm_bin(helm);
        env.drift(&["check", &release, "--explain"])
            .env("HELM_BIN", &bin)
            .code(2)
            .stdout_has("--set-json 'controller.replicaCount=3'")
            .stdout_has(r#"from values controller.extraArgs as "--{KEY}={VALUE}": --set-json 'controller.extraArgs={"v":"5"}'"#)
            // An image without the digest the template's shape ends with: the digest emptied.
            .stdout_has(r#"--set-json 'controller.image.digest=""' --set-json 'controller.image.tag="v1.0.0"'"#)
            // Added by hand where the chart leaves an empty value to fill: named too.
            .stdout_has(r#"data: from values controller.config as "{KEY}: {VALUE}": --set-json 'controller.config={"use-forwarded-headers":"true"}'"#)
            .stdout_has(r#"env: from values controller.extraEnvs as "{ITEM}": --set-json 'controller.extraEnvs=[{"name":"DEBUG","value":"1"}]'"#);

        // Its ClusterRole and ClusterRoleBinding lie outside the namespace: trusted.
        let trusted = ["repair", &release, "--remove-foreign", "--trust-namespace", &env.ns];
        env.drift(&trusted).success().stdout_has("in sync (9 objects)");
        env.drift(&["check", &release]).code(0).stdout_has("revision 1 deployed");
        assert_eq!(env.get("deployment", &name, "{.spec.replicas}"), "1");

        // The upgrade with what --explain said writes the argument as the hand edit did.
        let explained = [
            r#"controller.extraArgs={"v":"5"}"#,
            r#"controller.config={"use-forwarded-headers":"true"}"#,
            r#"controller.extraEnvs=[{"name":"DEBUG","value":"1"}]"#,
            r#"controller.image.digest="""#,
            r#"controller.image.tag="v1.0.0""#,
        ];
        let mut upgrade = vec!["upgrade", release.as_str(), chart, "--set", "controller.replicaCount=2"];
        for set in &explained {
            upgrade.extend(["--set-json", set]);
        }
        upgrade.extend_from_slice(&values);
        env.helm(helm, &upgrade).success();
        env.drift(&["check", &release]).code(0).stdout_has("revision 2 deployed");
        let args = env.get("deployment", &name, "{.spec.template.spec.containers[0].args}");
        assert!(args.ends_with(r#"-controller","--v=5"]"#), "{args}");
        assert_eq!(env.get("configmap", &name, "{.data.use-forwarded-headers}"), "true");
        let image = env.get("deployment", &name, "{.spec.template.spec.containers[0].image}");
        assert_eq!(image, "registry.k8s.io/ingress-nginx/controller:v1.0.0");
        let debug = env.get("deployment", &name, "{.spec.template.spec.containers[0].env[?(@.name=='DEBUG')].value}");
        assert_eq!(debug, "1");
        env.helm(helm, &["uninstall", &release]).success();
    }
}

//! `check --explain`: which value produced each modified field, and the `helm upgrade` that
//! makes the live state the desired state: applied, it leaves the release clean.

use crate::support::{Env, Helm, chart_path};

/// The words of a printed command line (single quotes group, as a shell would).
fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Runs the `helm upgrade` line `check --explain` printed, with the test chart for CHART.
fn run_upgrade_line(env: &Env, helm: Helm, stdout: &str, chart: &str) {
    let line = stdout.lines().map(str::trim).find(|l| l.starts_with("helm upgrade ")).expect("an upgrade line");
    let chart = chart_path(chart);
    let args: Vec<String> =
        words(line).into_iter().skip(1).map(|w| if w == "CHART" { chart.display().to_string() } else { w }).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.helm(helm, &args).success();
}

/// A chart shaped like podinfo and ingress-nginx: twelve values equal 1 beside `replicaCount`,
/// an image built from registry, repository and tag, a port inside an argument, a host inside a
/// list, a log level the chart checks with a pattern, a flag. Every edit is traced to its value,
/// the one upgrade line undoes them all, and a field no value writes is named with its template.
fn shaped(helm: Helm) {
    let env = Env::new(&format!("explain-shaped-{}", helm.tag()));
    env.install(helm, "p", "shaped", &[]);
    let bin = env.helm_bin(helm);
    let d = format!("Deployment {}/p-shaped", env.ns);
    let image = format!(
        "{d} spec.template.spec.containers[name=podinfo].image: from values image.registry, image.repository, image.tag as \"{{image.registry}}/{{image.repository}}:{{image.tag}}\": --set-json 'image.tag=\"6.6.0\"'"
    );
    // The image alone: `info` (the log level, which the chart checks) is in `podinfo`, so the
    // first render fails and its halves each see part of the image; the parts are put together.
    env.kubectl(&["set", "image", "deployment/p-shaped", "podinfo=registry.example/team/podinfo:6.6.0"]).success();
    env.drift(&["check", "p", "--explain"]).env("HELM_BIN", &bin).code(2).stdout_has(&image);
    env.kubectl(&["scale", "deployment", "p-shaped", "--replicas=3"]).success();
    let patch = r#"[{"op":"replace","path":"/spec/template/spec/containers/0/args/0","value":"--port=9999"},
        {"op":"replace","path":"/spec/template/spec/containers/0/args/1","value":"--level=debug"},
        {"op":"replace","path":"/spec/template/spec/automountServiceAccountToken","value":false}]"#;
    env.kubectl(&["patch", "deployment", "p-shaped", "--type=json", "-p", patch]).success();
    env.merge_patch("configmap", "p-shaped-hosts", r#"{"data":{"second":"c.example"}}"#);
    let out = if helm == Helm::V4 {
        crate::support::example("example-explain-check", &env, &["check", "p", "--explain"], "shop")
    } else {
        env.drift(&["check", "p", "--explain"]).env("HELM_BIN", &bin).code(2)
    };
    out.stdout_has(&format!("{d} spec.replicas: from value replicaCount: --set-json 'replicaCount=3'"))
        .stdout_has(&image)
        .stdout_has(&format!(
            "{d} spec.template.spec.containers[name=podinfo].args[0]: from values service.httpPort as \"--port={{service.httpPort}}\": --set-json 'service.httpPort=9999'"
        ))
        .stdout_has("args[1]: from values logLevel as \"--level={logLevel}\": --set-json 'logLevel=\"debug\"'")
        .stdout_has(&format!(
            "{d} spec.template.spec.automountServiceAccountToken: from value serviceAccount.automount: --set-json 'serviceAccount.automount=false'"
        ))
        .stdout_has(&format!(
            "ConfigMap {}/p-shaped-hosts data.second: from value hosts[1].name: --set-json 'hosts=[{{\"name\":\"a.example\"}},{{\"name\":\"c.example\"}}]'",
            env.ns
        ));
    assert!(!out.stdout().contains("no value"), "every field is explained\n{}", out.dump());
    run_upgrade_line(&env, helm, &out.stdout(), "shaped");
    env.drift(&["check", "p"]).code(0).stdout_has("revision 2 deployed");

    // Twelve values equal 1 and none writes revisionHistoryLimit: all are tried, the template named.
    env.kubectl(&["patch", "deployment", "p-shaped", "--type=merge", "-p", r#"{"spec":{"revisionHistoryLimit":5}}"#])
        .success();
    // An image that does not have the template's shape: no value gives it.
    env.kubectl(&["set", "image", "deployment/p-shaped", "podinfo=busybox"]).success();
    // A value the chart accepts from a list only: no probe renders, the search says why.
    env.merge_patch("service", "p-shaped", r#"{"spec":{"type":"NodePort"}}"#);
    let out = env.drift(&["check", "p", "--explain"]).env("HELM_BIN", &bin).code(2);
    out.stdout_has(&format!(
        "{d} spec.revisionHistoryLimit: no value produces it: written as is by shaped/templates/deployment.yaml (change the chart)"
    ))
    .stdout_has("image: from values image.registry, image.repository, image.tag as \"{image.registry}/{image.repository}:{image.tag}\", but the live value does not have the template's shape");
    out.stdout_has(&format!(
        "Service {}/p-shaped spec.type: no value found: the chart does not render with service.type changed (Error: execution error at (shaped/templates/service.yaml:2:4): service.type must be ClusterIP, NodePort or LoadBalancer)",
        env.ns
    ));
    assert!(!out.stdout().contains("helm upgrade p"), "no line to suggest\n{}", out.dump());
    let json = env.drift(&["check", "p", "--explain", "-o", "json"]).env("HELM_BIN", &bin).code(2).stdout();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let image = doc["releases"][0]["explanations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"].as_str().is_some_and(|p| p.ends_with("/image")))
        .cloned()
        .unwrap_or_default();
    assert_eq!(image["valueKeys"], serde_json::json!(["image.registry", "image.repository", "image.tag"]), "{json}");
    assert!(image["reason"].as_str().is_some_and(|r| r.contains("shape")), "{json}");
}

helm_matrix! {
    fn explain_traces_values_in_a_chart_shaped_like_podinfo(helm: Helm) {
        shaped(helm);
    }
}

fn explained(helm: Helm) {
    let env = Env::new(&format!("explain-{}", helm.tag()));
    env.install(helm, "app", "repairable", &[]);
    env.kubectl(&["scale", "deployment", "app-web", "--replicas=4"]).success();
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"bye"}}"#);
    let bin = env.helm_bin(helm);
    let explain = |args: &[&str]| env.drift(args).env("HELM_BIN", &bin);
    let out = explain(&["check", "app", "--explain"]).code(2);
    let ns = &env.ns;
    out.stdout_has(&format!("Deployment {ns}/app-web spec.replicas: from value replicas: --set-json 'replicas=4'"))
        .stdout_has(&format!(
            "ConfigMap {ns}/app-config data.greeting: from value greeting: --set-json 'greeting=\"bye\"'"
        ));
    run_upgrade_line(&env, helm, &out.stdout(), "repairable");
    env.drift(&["check", "app"]).code(0).stdout_has("revision 2 deployed");

    // A field no value produces is named with its template.
    env.kubectl(&["label", "deployment", "app-web", "tier=back", "--overwrite"]).success();
    explain(&["check", "app", "--explain"])
        .code(2)
        .stdout_has("metadata.labels.tier: no value produces it: written as is by repairable/templates/workload.yaml");
    let json = explain(&["check", "app", "--explain", "-o", "json"]).code(2).stdout();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["releases"][0]["explanations"][0]["template"], "repairable/templates/workload.yaml", "{json}");
}

helm_matrix! {
    fn explained_drift_and_the_upgrade_that_makes_it_desired(helm: Helm) {
        explained(helm);
    }
}

helm_matrix! {
    /// `check --rerender`: the chart rendered now with its stored values, `lookup` answered by the
    /// cluster when the namespace is trusted (so the lookup template renders as recorded, unlike
    /// `helm template`), random values and `.Release.IsUpgrade` not: what a `helm upgrade` with
    /// the same values would change. Untrusted, `lookup` answers nothing, and the output says so.
    fn rerender_shows_what_an_upgrade_with_the_same_values_would_change(helm: Helm) {
        let env = Env::new(&format!("rerender-{}", helm.tag()));
        env.install(helm, "r", "rendered", &["--set", "greeting=hi"]);
        let bin = env.helm_bin(helm);
        let ns = env.ns.clone();
        env.drift(&["check", "r"]).code(0);
        let trusted = ["check", "r", "--rerender", "--trust-namespace", ns.as_str()];
        let out = if helm == Helm::V4 {
            crate::support::example("example-rerender-check", &env, &trusted, "apps")
        } else {
            env.drift(&trusted).env("HELM_BIN", &bin).code(2)
        };
        out.stdout_has("r: in sync with the record (4 objects); rendered now, 2 objects would change")
            .stdout_has(
                "rendered now (stored values, lookup answered by the cluster): 2 of 4 documents render differently",
            )
            .stdout_has("changed  rendered/templates/random.yaml")
            .stdout_has("changed  rendered/templates/capabilities.yaml")
            .stdout_has("a helm upgrade with the same values would change (live -> after the upgrade):")
            .stdout_has(&format!("      ConfigMap {ns}/r-random\n        ~ data.token: "));
        assert!(!out.stdout().contains("would also undo"), "no drift to undo\n{}", out.dump());
        // Untrusted: the lookup template renders without the cluster, and the output says why.
        let out = env.drift(&["check", "r", "--rerender"]).env("HELM_BIN", &bin).code(2);
        out.stdout_has(&format!("lookup answered nothing: namespace {ns} is not trusted"))
            .stdout_has("2 of 4 documents render differently")
            .stdout_has("not predictable without the namespace's trust: rendered/templates/lookup.yaml");
        // Drift by hand: listed once, in the drift section; the upgrade's section says it undoes it.
        env.merge_patch("configmap", "r-static", r#"{"data":{"greeting":"edited"}}"#);
        let out = env.drift(&trusted).env("HELM_BIN", &bin).code(2);
        let text = out.stdout();
        assert_eq!(text.matches("data.greeting").count(), 1, "the drift is not repeated\n{text}");
        out.stdout_has(r#"~ data.greeting: "hi" -> "edited""#)
            .stdout_has("a helm upgrade with the same values would also undo the drift listed above");
        assert!(!out.stdout().contains("templates/lookup.yaml"), "lookup is answered by the cluster\n{}", out.dump());
        let mut json = trusted.to_vec();
        json.extend(["-o", "json"]);
        let json = env.drift(&json).env("HELM_BIN", &bin).code(2).stdout();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["releases"][0]["rerender"]["documents"], 4, "{json}");
        assert_eq!(doc["releases"][0]["rerender"]["lookup"], "cluster", "{json}");
    }
}

helm_matrix! {
    /// The shape `helm create` writes: a tag that defaults to the appVersion, a key values.yaml
    /// lacks read through `default`, a value rendered with `tpl`, `coalesce` of an empty value
    /// and an absent one, a `required` value. Each edit is traced to the value
    /// that writes it, and the one upgrade line makes the release clean.
    fn explain_follows_default_and_tpl(helm: Helm) {
        let env = Env::new(&format!("explain-created-{}", helm.tag()));
        env.install(helm, "web", "created", &[]);
        let bin = env.helm_bin(helm);
        let d = format!("Deployment {}/web-created", env.ns);
        env.kubectl(&["set", "image", "deployment/web-created", "created=nginx:1.27"]).success();
        let patch = r#"[{"op":"replace","path":"/spec/template/spec/containers/0/args/0","value":"--level=debug"},
            {"op":"replace","path":"/spec/template/spec/containers/0/env/0/value","value":"hi-by-hand"},
            {"op":"replace","path":"/metadata/labels/extra","value":"web-other"}]"#;
        env.kubectl(&["patch", "deployment", "web-created", "--type=json", "-p", patch]).success();
        env.merge_patch("configmap", "web-created", r#"{"data":{"mode":"fast","port":"9090","extra":"by hand"}}"#);
        let out = env.drift(&["check", "web", "--explain"]).env("HELM_BIN", &bin).code(2);
        // No value writes the key added by hand: said, not claimed by the upgrade line.
        out.stdout_has(&format!(
            "  not explained (no value writes them: the upgrade below does not keep them):\n      ConfigMap {}/web-created data.extra\n",
            env.ns
        ));
        env.kubectl(&["patch", "configmap", "web-created", "--type=json", "-p", r#"[{"op":"remove","path":"/data/extra"}]"#]).success();
        let c = format!("ConfigMap {}/web-created", env.ns);
        out.stdout_has(&format!("{c} data.mode: from value mode: --set-json 'mode=\"fast\"'"))
            .stdout_has(&format!("{c} data.port: from value port: --set-json 'port=\"9090\"'"));
        out.stdout_has(&format!(
            "{d} spec.template.spec.containers[name=created].image: from values image.repository, image.tag as \"{{image.repository}}:{{image.tag}}\": --set-json 'image.tag=\"1.27\"'"
        ))
        .stdout_has(&format!(
            "{d} spec.template.spec.containers[name=created].args[0]: from values logLevel as \"--level={{logLevel}}\": --set-json 'logLevel=\"debug\"'"
        ))
        .stdout_has(&format!("{d} metadata.labels.extra: from value nameTemplate: --set-json 'nameTemplate=\"web-other\"'"))
        // The greeting also writes a ConfigMap that is in sync today: the explanation says so.
        .stdout_has(&format!(
            "{d} spec.template.spec.containers[name=created].env[name=GREETING].value: from value greeting: --set-json 'greeting=\"hi-by-hand\"'\n        that --set also changes ConfigMap {}/web-created data.greeting\n",
            env.ns
        ));
        assert_eq!(out.stdout().matches("that --set also changes").count(), 1, "{}", out.dump());
        let json = env.drift(&["check", "web", "--explain", "-o", "json"]).env("HELM_BIN", &bin).code(2).stdout();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        let also: Vec<&serde_json::Value> =
            doc["releases"][0]["explanations"].as_array().unwrap().iter().map(|e| &e["alsoChanges"]).collect();
        assert!(also.contains(&&serde_json::json!([format!("ConfigMap {}/web-created data.greeting", env.ns)])), "{json}");
        run_upgrade_line(&env, helm, &out.stdout(), "created");
        env.drift(&["check", "web"]).code(0).stdout_has("revision 2 deployed");
    }
}

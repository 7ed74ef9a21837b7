//! `plan`: what the next `helm upgrade` would do, checked against the real upgrade run right
//! after it, on Helm 3 and Helm 4: the objects it said would change are those whose
//! resourceVersion changed (or that appeared or went), and it said the upgrade would fail
//! exactly when the upgrade failed.

use crate::support::{Env, Helm, chart_path};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `kind/name` → the content of the objects of the kinds the test charts hold: everything but
/// what the server and the controllers keep (`resourceVersion`, `generation`, `managedFields`,
/// `status`), so a write that only shares a field's ownership (Helm 4 applying the value a hand
/// edit already set) is no change, and a re-created object is one (its `uid`).
pub(crate) fn versions(env: &Env) -> BTreeMap<String, String> {
    let kinds = "deployments,services,configmaps,serviceaccounts,secrets";
    let out = env.kubectl(&["get", kinds, "-o", "json"]).success().stdout();
    let list: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut found = BTreeMap::new();
    for item in list["items"].as_array().unwrap() {
        let key = format!("{}/{}", item["kind"].as_str().unwrap(), item["metadata"]["name"].as_str().unwrap());
        let key = key.to_lowercase();
        if key.ends_with("kube-root-ca.crt") || key.starts_with("secret/sh.helm.release.") {
            continue;
        }
        let mut content = item.clone();
        content.as_object_mut().unwrap().remove("status");
        let meta = content["metadata"].as_object_mut().unwrap();
        for server in ["resourceVersion", "generation", "managedFields"] {
            meta.remove(server);
        }
        found.insert(key, content.to_string());
    }
    found
}

/// The objects `plan -o json` says the upgrade changes (`kind/name`, lower case).
pub(crate) fn planned(doc: &serde_json::Value) -> Vec<String> {
    let changes = doc["objects"].as_array().unwrap().iter().filter(|o| o["change"] != "none");
    let mut out: Vec<String> = changes
        .map(|o| format!("{}/{}", o["kind"].as_str().unwrap(), o["name"].as_str().unwrap()).to_lowercase())
        .collect();
    out.sort();
    out
}

/// A copy of the `basic` chart changed by `edit` (a file name and its new text; empty text
/// removes the file).
fn variant(env: &Env, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let dir = env.home().join(name);
    copy(&chart_path("basic"), &dir);
    for (file, text) in edits {
        let at = dir.join(file);
        if text.is_empty() {
            std::fs::remove_file(&at).unwrap();
        } else {
            std::fs::write(&at, text).unwrap();
        }
    }
    dir
}

pub fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Runs `plan` of `chart` with `flags`, then the real upgrade; asserts they agree and that
/// `plan` exited `expect`.
pub(crate) fn plan_then_upgrade(env: &Env, helm: Helm, chart: &Path, flags: &[&str], expect: i32) -> serde_json::Value {
    let chart = chart.to_str().unwrap();
    let args = [&["plan", "web", chart, "-o", "json"][..], flags].concat();
    let out = env.drift(&args).env("HELM_BIN", env.helm_bin(helm)).code(expect);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout()).expect("a JSON document");
    let before = versions(env);
    let upgrade = env.helm(helm, &[&["upgrade", "web", chart][..], flags].concat()).output();
    let after = versions(env);
    let keys: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let changed: Vec<String> = keys.into_iter().filter(|k| before.get(*k) != after.get(*k)).cloned().collect();
    let failed = !upgrade.out.status.success();
    assert_eq!(
        failed,
        doc["wouldFail"] == true,
        "wouldFail={}; upgrade: {}\n{doc:#}",
        doc["wouldFail"],
        upgrade.dump()
    );
    if !failed {
        assert_eq!(planned(&doc), changed, "{doc:#}");
    }
    doc
}

/// The fate `plan` gives the drift whose text ends with `end`.
pub(crate) fn fate(doc: &serde_json::Value, end: &str) -> String {
    let d = doc["drift"].as_array().unwrap().iter().find(|d| d["drift"].as_str().unwrap().ends_with(end));
    d.unwrap_or_else(|| panic!("no drift ending {end}: {doc:#}"))["fate"].as_str().unwrap().to_string()
}

helm_matrix! {
    /// A value change, nothing new, a Deployment scaled by hand (Helm 4 conflicts, Helm 3
    /// writes the chart's replicas back), and the way out `plan` names.
    fn plan_predicts_the_upgrade(helm: Helm) {
        let env = Env::new(&format!("plan-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let basic = chart_path("basic");
        let doc = plan_then_upgrade(&env, helm, &basic, &["--reuse-values", "--set", "greeting=planned"], 2);
        assert_eq!(planned(&doc), ["configmap/web-config", "deployment/web-web"], "{doc:#}");
        plan_then_upgrade(&env, helm, &basic, &["--reuse-values"], 0);
        env.kubectl(&["scale", "deployment", "web-web", "--replicas=3"]).success();
        let v4 = helm == Helm::V4;
        let doc = plan_then_upgrade(&env, helm, &basic, &["--reuse-values"], if v4 { 3 } else { 2 });
        assert_eq!(fate(&doc, "spec.replicas"), if v4 { "conflicts" } else { "wiped" }, "{doc:#}");
        if v4 {
            let text = env.drift(&["plan", "web", basic.to_str().unwrap(), "--reuse-values"]).env("HELM_BIN", env.helm_bin(helm)).code(3);
            text.stdout_has(&format!("update  Deployment {}/web-web", env.ns))
                .stdout_has("~ spec.replicas: 3 -> 2")
                .stdout_has("would fail: ")
                .stdout_has("helm drift repair web gives the fields back to helm")
                .stdout_has(&format!("conflicts Deployment {}/web-web spec.replicas", env.ns))
                .stdout_has("web: the upgrade would fail");
            let md = env.drift(&["plan", "web", basic.to_str().unwrap(), "--reuse-values", "-o", "markdown"]).env("HELM_BIN", env.helm_bin(helm)).code(3);
            md.stdout_has("**helm drift plan: the upgrade would fail**")
                .stdout_has(&format!("| Deployment {}/web-web | update | `spec.replicas` | 409 Conflict", env.ns))
                .stdout_has(&format!("| Deployment {}/web-web spec.replicas | conflicts |", env.ns));
            let summary = env.home().join("summary.md");
            env.drift(&["plan", "web", basic.to_str().unwrap(), "--reuse-values", "--summary-file", summary.to_str().unwrap()]).env("HELM_BIN", env.helm_bin(helm)).code(3);
            let written = std::fs::read_to_string(&summary).unwrap();
            assert!(written.contains("**helm drift plan: the upgrade would fail**"), "{written}");
            let junit = env.drift(&["plan", "web", basic.to_str().unwrap(), "--reuse-values", "-o", "junit"]).env("HELM_BIN", env.helm_bin(helm)).code(3);
            junit.stdout_has("failures=\"1\"").stdout_has("type=\"would-fail\"");
            env.drift(&["repair", "web"]).code(0);
            plan_then_upgrade(&env, helm, &basic, &["--reuse-values"], 0);
        }
    }
}

helm_matrix! {
    /// The flags that decide the render reach helm as given (`-f`, `--set-string`, `--set-json`,
    /// `--set-file`; Helm 3's `--post-renderer`, a program), and a hand edit the new values
    /// write as it is is **adopted**.
    fn plan_takes_the_flags_that_decide_the_render(helm: Helm) {
        let env = Env::new(&format!("plan-flags-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let basic = chart_path("basic");
        let home = env.home();
        let values = home.join("values.yaml");
        std::fs::write(&values, "replicas: 4\n").unwrap();
        let greeting = home.join("greeting.txt");
        std::fs::write(&greeting, "from a file").unwrap();
        let set_file = format!("greeting={}", greeting.display());
        let flags = ["-f", values.to_str().unwrap(), "--set-file", &set_file, "--set-string", "servicePort=8080"];
        let doc = plan_then_upgrade(&env, helm, &basic, &flags, 2);
        assert_eq!(planned(&doc), ["configmap/web-config", "deployment/web-web", "service/web-web"], "{doc:#}");
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "from a file");
        let doc = plan_then_upgrade(&env, helm, &basic, &["--reuse-values", "--set-json", "replicas=2"], 2);
        assert_eq!(planned(&doc), ["deployment/web-web"], "{doc:#}");
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"by hand"}}"#);
        let doc = plan_then_upgrade(&env, helm, &basic, &["--reuse-values", "--set", "greeting=by hand"], 2);
        assert_eq!(fate(&doc, "data.greeting"), "adopted", "{doc:#}");
        assert_eq!(planned(&doc), ["deployment/web-web"], "the ConfigMap already holds it: {doc:#}");
        if helm == Helm::V3 {
            let renderer = home.join("post-render.sh");
            std::fs::write(&renderer, "#!/bin/sh\nsed 's/greeting: .*/greeting: post-rendered/'\n").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&renderer, std::fs::Permissions::from_mode(0o755)).unwrap();
            let flags = ["--reuse-values", "--post-renderer", renderer.to_str().unwrap()];
            let doc = plan_then_upgrade(&env, helm, &basic, &flags, 2);
            assert_eq!(planned(&doc), ["configmap/web-config"], "{doc:#}");
            assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "post-rendered");
        }
    }
}

helm_matrix! {
    /// Hand edits and the upgrade: a variable added (kept by both), a ConfigMap value and a
    /// label edited (Helm 3 writes them back, Helm 4 conflicts), an object deleted (created
    /// again).
    fn plan_knows_what_the_upgrade_does_to_hand_edits(helm: Helm) {
        let env = Env::new(&format!("plan-edits-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let basic = chart_path("basic");
        let v4 = helm == Helm::V4;
        env.kubectl(&["set", "env", "deployment/web-web", "EXTRA=1"]).success();
        let doc = plan_then_upgrade(&env, helm, &basic, &["--reuse-values"], 0);
        assert_eq!(fate(&doc, "env[name=EXTRA]"), "kept", "{doc:#}");
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"by hand"}}"#);
        let doc = plan_then_upgrade(&env, helm, &basic, &["--reuse-values"], if v4 { 3 } else { 2 });
        assert_eq!(fate(&doc, "data.greeting"), if v4 { "conflicts" } else { "wiped" }, "{doc:#}");
        if v4 {
            env.drift(&["repair", "web", "--remove-foreign"]).code(0);
        }
        env.kubectl(&["label", "service", "web-web", "app=other", "--overwrite"]).success();
        let doc = plan_then_upgrade(&env, helm, &basic, &["--reuse-values"], if v4 { 3 } else { 2 });
        assert_eq!(fate(&doc, "metadata.labels.app"), if v4 { "conflicts" } else { "wiped" }, "{doc:#}");
        if v4 {
            env.drift(&["repair", "web", "--remove-foreign"]).code(0);
        }
        env.kubectl(&["delete", "serviceaccount", "web-sa"]).success();
        let doc = plan_then_upgrade(&env, helm, &basic, &["--reuse-values"], 2);
        assert_eq!(planned(&doc), ["serviceaccount/web-sa"], "{doc:#}");
    }
}

helm_matrix! {
    /// A new chart: an object it drops is deleted; a selector it changes is immutable (the
    /// upgrade fails); a new object whose name exists outside Helm fails it too.
    fn plan_knows_what_a_new_chart_does(helm: Helm) {
        let env = Env::new(&format!("plan-chart-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let dropped = variant(&env, "dropped", &[("templates/service.yaml", "")]);
        let doc = plan_then_upgrade(&env, helm, &dropped, &["--reuse-values"], 2);
        assert_eq!(planned(&doc), ["service/web-web"], "{doc:#}");
        let deployment = std::fs::read_to_string(chart_path("basic").join("templates/deployment.yaml")).unwrap();
        let selector = deployment.replace("      app: {{ .Release.Name }}-web\n  template:", "      app: {{ .Release.Name }}-web\n      tier: web\n  template:")
            .replace("        app: {{ .Release.Name }}-web\n    spec:", "        app: {{ .Release.Name }}-web\n        tier: web\n    spec:");
        assert_ne!(selector, deployment, "the selector edit applies");
        let immutable = variant(&env, "immutable", &[("templates/service.yaml", ""), ("templates/deployment.yaml", &selector)]);
        let doc = plan_then_upgrade(&env, helm, &immutable, &["--reuse-values"], 3);
        assert!(doc["failures"][0].as_str().unwrap().contains("immutable"), "{doc:#}");
        env.kubectl(&["create", "configmap", "web-extra", "--from-literal=a=b"]).success();
        let extra = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\ndata:\n  a: b\n";
        let taken = variant(&env, "taken", &[("templates/service.yaml", ""), ("templates/extra.yaml", extra)]);
        let doc = plan_then_upgrade(&env, helm, &taken, &["--reuse-values"], 3);
        assert!(doc["failures"][0].as_str().unwrap().contains("cannot be imported into the current release"), "{doc:#}");
    }
}

helm_matrix! {
    /// A Secret's value changed by hand: the upgrade writes the chart's back (on Helm 4 too:
    /// the chart sets `stringData`, the edit wrote `data`); no secret value is printed, in text
    /// or JSON.
    fn plan_hides_secret_values(helm: Helm) {
        let env = Env::new(&format!("plan-secret-{}", helm.tag()));
        let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-creds\nstringData:\n  password: {{ .Values.password | default \"s3cret-v4lue\" | quote }}\n";
        let chart = variant(&env, "with-secret", &[("templates/secret.yaml", secret)]);
        env.helm(helm, &["install", "web", chart.to_str().unwrap()]).success();
        env.kubectl(&["patch", "secret", "web-creds", "--type=merge", "-p", r#"{"stringData":{"password":"l3aked-by-hand"}}"#]).success();
        let text = env.drift(&["plan", "web", chart.to_str().unwrap(), "--reuse-values"]).env("HELM_BIN", env.helm_bin(helm)).code(2);
        text.stdout_has(&format!("update  Secret {}/web-creds", env.ns)).stdout_has("~ data.password: (hidden) -> (hidden)");
        let doc = plan_then_upgrade(&env, helm, &chart, &["--reuse-values"], 2);
        assert_eq!(fate(&doc, "data.password"), "wiped", "{doc:#}");
        for shown in [text.stdout(), doc.to_string()] {
            for secret in ["s3cret-v4lue", "l3aked-by-hand", "czNjcmV0LXY0bHVl", "bDNha2VkLWJ5LWhhbmQ="] {
                assert!(!shown.contains(secret), "secret value {secret} printed:\n{shown}");
            }
        }
    }
}

helm_matrix! {
    /// A variable the new chart no longer sets is removed by the upgrade (Helm 3's three-way
    /// merge deletes it, Helm 4's apply lets go of it): planned as a removal.
    fn plan_knows_what_the_chart_stops_setting(helm: Helm) {
        let env = Env::new(&format!("plan-unset-{}", helm.tag()));
        let deployment = std::fs::read_to_string(chart_path("basic").join("templates/deployment.yaml")).unwrap();
        let more = deployment.replace(
            "              value: {{ .Values.greeting | quote }}\n",
            "              value: {{ .Values.greeting | quote }}\n            - name: EXTRA_CHART\n              value: \"1\"\n",
        );
        assert_ne!(more, deployment, "the env edit applies");
        let before = variant(&env, "more", &[("templates/deployment.yaml", &more)]);
        env.helm(helm, &["install", "web", before.to_str().unwrap()]).success();
        let doc = plan_then_upgrade(&env, helm, &chart_path("basic"), &["--reuse-values"], 2);
        assert_eq!(planned(&doc), ["deployment/web-web"], "{doc:#}");
        let fields = doc["objects"].as_array().unwrap().iter().find(|o| o["kind"] == "Deployment").unwrap()["fields"].clone();
        assert_eq!(fields[0]["after"], serde_json::Value::Null, "{fields:#}");
        assert!(fields[0]["path"].as_str().unwrap().contains("/env/1"), "{fields:#}");
        assert_eq!(env.get("deployment", "web-web", "{.spec.template.spec.containers[0].env[*].name}"), "GREETING");
    }
}

helm_matrix! {
    /// `--install` of a release that does not exist: every object created; one whose name exists
    /// outside Helm makes the install fail, as it does.
    fn plan_an_install(helm: Helm) {
        let env = Env::new(&format!("plan-install-{}", helm.tag()));
        env.kubectl(&["create", "configmap", "web-config", "--from-literal=greeting=mine"]).success();
        let basic = chart_path("basic");
        let doc = plan_then_upgrade(&env, helm, &basic, &["--install"], 3);
        assert!(doc["failures"][0].as_str().unwrap().contains("web-config"), "{doc:#}");
        env.kubectl(&["delete", "configmap", "web-config"]).success();
        // A failed install leaves a failed revision behind; helm installs over it.
        let doc = plan_then_upgrade(&env, helm, &basic, &["--install"], 2);
        assert_eq!(planned(&doc), ["configmap/web-config", "deployment/web-web", "service/web-web", "serviceaccount/web-sa"], "{doc:#}");
    }
}

helm_matrix! {
    /// An object the new chart drops but `helm.sh/resource-policy: keep` keeps: no change; the
    /// hooks the upgrade would run are named, and none runs.
    fn plan_names_hooks_and_keeps_what_helm_keeps(helm: Helm) {
        let env = Env::new(&format!("plan-keep-{}", helm.tag()));
        let service = std::fs::read_to_string(chart_path("basic").join("templates/service.yaml")).unwrap();
        let kept = service.replace("  labels:\n", "  annotations:\n    helm.sh/resource-policy: keep\n  labels:\n");
        assert_ne!(kept, service, "the annotation edit applies");
        let before = variant(&env, "kept", &[("templates/service.yaml", &kept)]);
        env.helm(helm, &["install", "web", before.to_str().unwrap()]).success();
        let hook = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hook\n  annotations:\n    helm.sh/hook: pre-upgrade\ndata:\n  a: b\n";
        let next = variant(&env, "next", &[("templates/service.yaml", ""), ("templates/hook.yaml", hook)]);
        let out = env.drift(&["plan", "web", next.to_str().unwrap(), "--reuse-values", "-v"]).env("HELM_BIN", env.helm_bin(helm)).code(0);
        out.stdout_has(&format!("none    Service {}/web-web", env.ns))
            .stdout_has("dropped by the new chart, kept by helm.sh/resource-policy: keep")
            .stdout_has("hooks it would run (not run now): ConfigMap web-hook (pre-upgrade)")
            .stdout_has("web: the upgrade changes nothing");
        env.kubectl(&["get", "configmap", "web-hook"]).code(1);
        // The real upgrade: the hook runs (its ConfigMap appears), the kept Service stays as it was.
        let before = versions(&env);
        env.helm(helm, &["upgrade", "web", next.to_str().unwrap(), "--reuse-values"]).success();
        let after = versions(&env);
        assert_eq!(before.get("service/web-web"), after.get("service/web-web"), "the Service is kept as it was");
        assert!(after.contains_key("configmap/web-hook"), "the hook ran in the real upgrade: {after:?}");
    }
}

/// A plan by someone who may read the release's records but not all of its objects, nor
/// dry-run a write: what could not be read is named as unknown, and the plan exits 1, never 0
/// ("no other owner", "no fields gone" are never taken from a failed read).
#[test]
fn what_cannot_be_read_is_unknown_never_clean() {
    let env = Env::new("plan-unknown");
    env.install(Helm::V4, "web", "basic", &[]);
    let user = format!("{}-reader", env.ns);
    let rbac = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\nrules:\n- apiGroups: [\"\", \"apps\"]\n  resources: [secrets, services, deployments]\n  verbs: [get, list, watch]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: reader\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: reader\nsubjects:\n- kind: User\n  name: {user}\n  apiGroup: rbac.authorization.k8s.io\n"
    );
    env.apply_yaml("reader", &rbac);
    env.wait_until_allowed(&user, "list", "secrets", false);
    let basic = chart_path("basic");
    let plan = |extra: &[&str]| {
        let mut args = vec!["plan", "web", basic.to_str().unwrap(), "--reuse-values"];
        args.extend_from_slice(extra);
        env.drift(&args).env("HELM_BIN", env.helm_bin(Helm::V4)).env("HELM_KUBEASUSER", &user)
    };
    let out = plan(&[]).code(1);
    out.stdout_has(&format!("unknown ConfigMap {}/web-config", env.ns))
        .stdout_has("unknown: it cannot be read: forbidden")
        .stdout_has("unknown: the server did not dry-run the upgrade's write: forbidden")
        .stdout_has("what the upgrade does is unknown");
    let doc: serde_json::Value = serde_json::from_str(&plan(&["-o", "json"]).code(1).stdout()).unwrap();
    assert_eq!(doc["wouldFail"], false, "{doc:#}");
    let changes: Vec<&str> = doc["objects"].as_array().unwrap().iter().filter_map(|o| o["change"].as_str()).collect();
    assert!(changes.iter().all(|c| *c == "unknown"), "every object unknown (reads or dry-runs refused): {doc:#}");
}

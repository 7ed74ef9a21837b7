//! Flux's own drift rules, read from the cluster: the HelmRelease of the record's namespace that
//! installs a release (its spec naming the release, target and storage, as helm-controller
//! finds it) states `spec.driftDetection.ignore`; check (both engines, one release and a scan),
//! repair and the watcher's heal leave what those rules name alone, with no flag, and say which
//! rule hid which field. A rule of another namespace's HelmRelease, or of one that installs
//! another release, hides nothing; an opt-out annotation counts where helm-controller reads it
//! (the chart's objects), not on a live object alone.

use crate::drift_engine::check_release_both;
use crate::flux_layout::helm_release_crd;
use crate::support::{Env, Helm, eventually_or};
use crate::watching::Watching;
use std::time::Duration;

/// A HelmRelease `name` of `ns` installing release `web` into `ns` (its record there too), with
/// this `spec.driftDetection` (YAML flow text).
fn helm_release(env: &Env, ns: &str, name: &str, spec: &str) {
    env.serve_crd("helmrelease-crd", &helm_release_crd());
    let hr = format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  chart: {{spec: {{chart: basic}}}}\n{spec}\n"
    );
    let file = env.home().join(format!("hr-{ns}-{name}.yaml"));
    std::fs::write(&file, hr).unwrap();
    env.kubectl(&["-n", ns, "apply", "-f", file.to_str().unwrap()]).success();
}

/// The replicas rule of the issue: `/spec/replicas` of Deployments, mode enabled.
const REPLICAS: &str = "  releaseName: web\n  driftDetection:\n    mode: enabled\n    ignore:\n      - paths: [/spec/replicas]\n        target: {kind: Deployment}";

helm_matrix! {
    /// An autoscaler's replicas, declared in the HelmRelease: check is clean in both engines and
    /// in a scan, `-v` and JSON name the rule that hid the field; a ConfigMap edit is still drift,
    /// and repair puts it back while the scale stays.
    fn a_helmreleases_ignore_rule_keeps_the_scale_and_finds_the_rest(helm: Helm) {
        let env = Env::new(&format!("flux-rules-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        helm_release(&env, &env.ns, "web", REPLICAS);
        env.kubectl(&["scale", "deployment", "web-web", "--replicas=5"]).success();

        let out = check_release_both(&env, "web", &["-v"], 0);
        let rule = format!("HelmRelease {}/web spec.driftDetection.ignore[0]", env.ns);
        assert!(out.contains(&format!("spec.replicas ignored ({rule})")), "{out}");
        let json = env.drift(&["check", "web", "-o", "json"]).success().stdout();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        let deployment = doc["releases"][0]["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["kind"] == "Deployment")
            .cloned()
            .unwrap();
        assert_eq!(deployment["ignored"][0]["reason"], rule.as_str(), "{json}");
        env.drift(&["check", "--all"]).success().stdout_has("web: in sync");
        // A scan of every namespace (one listing of HelmReleases for all) finds the same.
        let every = env.drift(&["check", "-A", "-o", "json"]).output().stdout();
        let doc: serde_json::Value = serde_json::from_str(&every).unwrap();
        let mine = doc["releases"].as_array().unwrap().iter().find(|r| r["name"] == "web" && r["namespace"] == env.ns.as_str());
        assert_eq!(mine.map(|r| r["counts"]["drifted"].clone()), Some(serde_json::json!(0)), "{every}");

        // What no rule names is still drift, and repair puts it back, leaving the scale.
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
        let out = check_release_both(&env, "web", &[], 2);
        assert!(out.contains("ConfigMap") && out.contains("greeting") && !out.contains("replicas"), "{out}");
        env.drift(&["repair", "web"]).success();
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "hello");
        assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "5", "the repair fought the autoscaler");
        env.drift(&["check", "web"]).success();
    }
}

/// A target by label selector (over the object as Helm applied it), one that selects nothing,
/// and a rule for the whole object (path `""`): a deleted ConfigMap it names is not missing. An
/// opt-out annotation added to a live object alone hides nothing (helm-controller reads it from
/// the release's manifest), and a rule that cannot be read is named and left out.
#[test]
fn label_selectors_the_whole_object_and_annotations_as_helm_controller_reads_them() {
    let env = Env::new("flux-rules-select");
    env.install(Helm::V4, "web", "basic", &[]);
    let rules = "  releaseName: web\n  driftDetection:\n    ignore:\n      - paths: [/spec/replicas]\n        target: {labelSelector: 'app=web-web,app.kubernetes.io/managed-by=Helm'}\n      - paths: [/spec/ports]\n        target: {labelSelector: 'app in (other)'}\n      - paths: ['']\n        target: {kind: ConfigMap, annotationSelector: 'meta.helm.sh/release-name=web'}\n      - paths: [/metadata/labels]\n        target: {name: '('}";
    helm_release(&env, &env.ns, "web", rules);
    env.kubectl(&["scale", "deployment", "web-web", "--replicas=3"]).success();
    env.kubectl(&["delete", "configmap", "web-config"]).success();
    let out = env.drift(&["check", "web", "-v"]).success().stdout();
    assert!(out.contains("ignores the whole object"), "{out}");
    assert!(out.contains("invalid regex") && out.contains("the rule is not applied"), "{out}");
    assert!(!out.contains("deleted"), "{out}");

    // The Service's rule selects nothing: its edit is drift.
    env.kubectl(&[
        "patch",
        "service",
        "web-web",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/ports/0/port","value":81}]"#,
    ])
    .success();
    let out = env.drift(&["check", "web"]).code(2).stdout();
    assert!(out.contains("Service") && !out.contains("replicas"), "{out}");
    env.drift(&["repair", "web"]).success();
    assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "3");
    assert!(
        !env.kubectl(&["get", "configmap", "web-config"]).output().out.status.success(),
        "the ignored object was made"
    );

    // The rules hide drift, not what helm-controller's upgrade writes: the plan shows the
    // replicas it resets and the ConfigMap it creates again.
    let chart = crate::support::chart_path("basic");
    let plan = env
        .drift(&["plan", "--helmrelease", "web", chart.to_str().unwrap(), "-o", "json"])
        .env("HELM_BIN", env.helm_bin(Helm::V4))
        .code(2)
        .stdout();
    let doc: serde_json::Value = serde_json::from_str(&plan).unwrap();
    let object = |kind: &str| doc["objects"].as_array().unwrap().iter().find(|o| o["kind"] == kind).cloned().unwrap();
    assert_eq!(object("ConfigMap")["change"], "create", "{doc:#}");
    let replicas =
        object("Deployment")["fields"].as_array().unwrap().iter().find(|f| f["path"] == "/spec/replicas").cloned();
    assert_eq!(replicas.map(|f| (f["live"].clone(), f["after"].clone())), Some((3.into(), 2.into())), "{doc:#}");

    // Flux's opt-out annotation on the live object (helm-controller honours it in the cluster):
    // the edit is still reported (whoever edits the object could hide it otherwise), and repair
    // leaves the object as helm-controller does; --trust-live-annotations excludes it.
    env.kubectl(&["annotate", "serviceaccount", "web-sa", "helm.toolkit.fluxcd.io/driftDetection=disabled"]).success();
    env.kubectl(&["label", "serviceaccount", "web-sa", "team=hand"]).success();
    let out = env.drift(&["check", "web"]).code(2).stdout();
    assert!(out.contains("ServiceAccount") && out.contains("team") && out.contains("left alone by repair"), "{out}");
    env.drift(&["repair", "web", "--remove-foreign"]).code(2);
    assert_eq!(env.get("serviceaccount", "web-sa", "{.metadata.labels.team}"), "hand");
    env.drift(&["check", "web", "--trust-live-annotations"]).success();
}

/// A HelmRelease of another namespace naming this release, target and storage, and one of this
/// namespace installing another release: neither hides a field of this release, in check or
/// repair.
#[test]
fn another_namespaces_helmrelease_hides_nothing() {
    let env = Env::new("flux-rules-other");
    let other = format!("{}-tenant", env.ns);
    env.kubectl(&["create", "namespace", &other]).success();
    env.install(Helm::V4, "web", "basic", &[]);
    let aimed = format!(
        "  releaseName: web\n  targetNamespace: {ns}\n  storageNamespace: {ns}\n  driftDetection:\n    ignore:\n      - paths: [/spec/replicas, /data]",
        ns = env.ns
    );
    helm_release(&env, &other, "web", &aimed);
    let another = "  releaseName: not-web\n  driftDetection:\n    ignore:\n      - paths: [/spec/replicas, /data]";
    helm_release(&env, &env.ns, "web", another);
    env.kubectl(&["scale", "deployment", "web-web", "--replicas=4"]).success();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    let out = check_release_both(&env, "web", &[], 2);
    assert!(out.contains("replicas") && out.contains("greeting"), "{out}");
    assert!(!out.contains("HelmRelease"), "{out}");
    env.drift(&["repair", "web"]).success();
    assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "2");
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "hello");
}

/// A self-healing watcher leaves the scale the HelmRelease's rule names (no repair for it, the
/// release in sync) and heals the ConfigMap edit beside it.
#[test]
fn the_watcher_heals_around_a_helmreleases_rule() {
    let env = Env::new("flux-rules-watch");
    env.install(Helm::V4, "web", "basic", &["--labels", "helm-drift.io/repair=true"]);
    helm_release(&env, &env.ns, "web", REPLICAS);
    let args = ["--all", "--repair", "--repair-cooldown", "1s", "--resync", "2s", "--trust-namespace", &env.ns];
    let w = Watching::start(&env, &args).ready();
    env.kubectl(&["scale", "deployment", "web-web", "--replicas=5"]).success();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    let greeting = || env.get("configmap", "web-config", "{.data.greeting}");
    eventually_or("the ConfigMap healed", Duration::from_secs(30), || greeting() == "hello", || w.logs_text());
    let checks = w.checks();
    eventually_or("two more checks", Duration::from_secs(30), || w.checks() >= checks + 2.0, || w.logs_text());
    assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "5", "{}", w.logs_text());
    w.stop();
}

/// A record speaks for an object in another namespace on Helm's ownership annotations there, but
/// its HelmRelease's rules reach it only on that namespace's own evidence (the HelmRelease's
/// origin labels, put there by whoever writes there) or the operator's trust: an edit of the
/// ConfigMap the `full` chart puts in `<ns>-other` stays drift until then.
#[test]
fn a_helmreleases_rules_reach_another_namespace_only_on_its_evidence() {
    let env = Env::with_full_chart(Helm::V4, "flux-rules-reach");
    let other = format!("{}-other", env.ns);
    let rules =
        "  releaseName: app\n  driftDetection:\n    ignore:\n      - paths: [/data]\n        target: {kind: ConfigMap}";
    helm_release(&env, &env.ns, "app", rules);
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"edited"}}"#);
    let elsewhere = r#"{"data":{"where":"edited"}}"#;
    env.kubectl(&["-n", &other, "patch", "configmap", "app-elsewhere", "--type=merge", "-p", elsewhere]).success();
    let out = env.drift(&["check", "app"]).code(2).stdout();
    assert!(out.contains("app-elsewhere") && !out.contains("app-config"), "{out}");
    let trusting = ["check", "app", "--trust-namespace", env.ns.as_str()];
    env.drift(&trusting).success();
    let origin = format!("helm.toolkit.fluxcd.io/name=app,helm.toolkit.fluxcd.io/namespace={}", env.ns);
    let labels: Vec<&str> = origin.split(',').collect();
    env.kubectl(&[&["-n", other.as_str(), "label", "configmap", "app-elsewhere"][..], &labels].concat()).success();
    // The labels put by hand are drift themselves; the field they reach is no longer.
    let out = env.drift(&["check", "app", "-v"]).code(2).stdout();
    assert!(out.contains("data.where ignored") && out.contains("added by kubectl-label"), "{out}");
}

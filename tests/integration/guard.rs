//! `helm drift guard`: a ValidatingAdmissionPolicy on the real API server. A hand edit, scale or
//! deletion of an object Helm manages warns at the prompt (kubectl's stderr) and is audited with
//! the release; Helm's upgrades, `helm drift repair` and a rollout restart pass without a word;
//! `deny` refuses the edit with the same words; removing it leaves nothing.

use crate::support::{Env, Helm, eventually, repo_root};
use crate::watching::Watching;
use serde::Deserialize;
use std::time::Duration;

const WARNED: &str = "Warning: Validation failed for ValidatingAdmissionPolicy";

/// Whether a server-side dry-run of an edit gets an answer from a guard (a warning or a refusal).
fn guard_answers(env: &Env) -> bool {
    let patch = r#"{"data":{"probe":"1"}}"#;
    let args = ["patch", "configmap", "web-config", "--type", "merge", "--dry-run=server", "-p", patch];
    env.kubectl(&args).output().stderr().contains("ValidatingAdmissionPolicy")
}

/// Waits until the guard answers (a policy is compiled and its binding seen within moments).
fn until_guarded(env: &Env) {
    eventually("the guard to answer", Duration::from_secs(30), || guard_answers(env));
}

helm_matrix! {
    fn warns_at_the_prompt_and_lets_helm_through(helm: Helm) {
        let env = Env::new(&format!("guard-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let name = format!("helm-drift-guard-{}", env.ns);
        let install = ["guard", "install", "--all"];
        env.drift(&install)
            .success()
            .stdout_has(&format!("guard written: {name} [mode warn, namespace {}, releases *, 5 kinds]", env.ns));
        if helm == Helm::V4 {
            // Written again, as it was (install is idempotent): what the guard page shows.
            crate::support::example("example-guard-install", &env, &install, "shop");
        }
        until_guarded(&env);

        // Hand edits, a scale and a deletion: warned, naming the release and what to do instead.
        let mark = env.audit_mark();
        let edit = env.kubectl(&["patch", "configmap", "web-config", "--type", "merge", "-p", r#"{"data":{"greeting":"by hand"}}"#]).success();
        edit.stderr_has(WARNED)
            .stderr_has(&format!("managed by Helm release web (namespace {}): this change by", env.ns))
            .stderr_has("(field manager kubectl-patch) will be reported as drift by helm drift check")
            .stderr_has("helm drift accept");
        // The command the warning names shows the value to set instead.
        let hint = format!("change the release instead (helm drift check web -n {} --explain", env.ns);
        edit.stderr_has(&hint);
        let bin = env.helm_bin(helm);
        env.drift(&["check", "web", "--explain"]).env("HELM_BIN", &bin).code(2).stdout_has("helm upgrade").stdout_has("greeting");
        // `kubectl edit`, with an editor that changes the value as a person would.
        let edited = env.kubectl(&["edit", "configmap", "web-config"]).env("KUBE_EDITOR", "sed -i s/by.hand/edited/").success();
        edited.stderr_has(WARNED).stderr_has("(field manager kubectl-edit)");
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "edited");
        env.kubectl(&["scale", "deployment", "web-web", "--replicas", "3"]).success().stderr_has("the scale of web-web");
        // A Deployment no release has is scaled without a word (a Scale has no labels: the
        // guard knows the releases' own by name).
        env.kubectl(&["create", "deployment", "by-hand", "--image", "example.invalid/x"]).success();
        let other = env.kubectl(&["scale", "deployment", "by-hand", "--replicas", "2"]).success();
        assert!(!other.stderr().contains(WARNED), "{}", other.dump());
        env.kubectl(&["label", "service", "web-web", "team=x"]).success().stderr_has(WARNED);

        // What Helm and helm-drift write as the release wants passes without a word.
        let repaired = env.drift(&["repair", "web", "--remove-foreign"]).success();
        assert!(!repaired.stderr().contains("ValidatingAdmissionPolicy"), "{}", repaired.dump());
        env.drift(&["check", "web"]).code(0);
        let upgrade = env.helm(helm, &["upgrade", "web", crate::support::chart_path("basic").to_str().unwrap(), "--set", "greeting=upgraded"]).success();
        assert!(!upgrade.stderr().contains("ValidatingAdmissionPolicy"), "{}", upgrade.dump());
        let restart = env.kubectl(&["rollout", "restart", "deployment", "web-web"]).success();
        assert!(!restart.stderr().contains(WARNED), "{}", restart.dump());
        let rollback = env.helm(helm, &["rollback", "web", "1"]).success();
        assert!(!rollback.stderr().contains("ValidatingAdmissionPolicy"), "{}", rollback.dump());

        // The audit log holds the release and the writer of each drifting write, and nothing
        // for the repair's writes.
        let events = env.audit_since(mark);
        let flagged: Vec<&serde_json::Value> = events
            .iter()
            .filter(|e| e.pointer("/annotations/validation.policy.admission.k8s.io~1validation_failure").is_some())
            .collect();
        assert!(flagged.iter().any(|e| e["objectRef"]["name"] == "web-config" && e["verb"] == "patch"), "{flagged:?}");
        let release = format!("{}/web", env.ns);
        assert!(
            flagged.iter().any(|e| e["annotations"][format!("{name}/release")] == release.as_str()),
            "{flagged:?}"
        );
        assert!(
            !flagged.iter().any(|e| e["userAgent"].as_str().is_some_and(|u| u.starts_with("helm-drift"))),
            "a repair is no drift: {flagged:?}"
        );

        // A deletion warns too (and says to ignore it during helm uninstall).
        env.kubectl(&["delete", "serviceaccount", "web-sa"]).success().stderr_has("this deletion by");
        env.drift(&["guard", "status"]).success().stdout_has(&format!("guards: {name} [mode warn"));
        // check says which guard covers the release, in its line and in JSON.
        env.drift(&["check", "web"]).code(2).stdout_has(", guard: warn]");
        let doc: serde_json::Value =
            serde_json::from_str(&env.drift(&["check", "web", "-o", "json"]).code(2).stdout()).unwrap();
        assert_eq!(doc["releases"][0]["guard"], "warn");

        // Removed: nothing left behind, and edits are silent again.
        if helm == Helm::V4 {
            crate::support::example("example-guard-remove", &env, &["guard", "remove"], "shop");
        } else {
            env.drift(&["guard", "remove"]).success().stdout_has(&format!("removed {name}"));
        }
        for kind in ["validatingadmissionpolicy", "validatingadmissionpolicybinding"] {
            env.kubectl(&["get", kind, &name]).code(1).stderr_has("NotFound");
        }
        env.drift(&["guard", "remove"]).success().stdout_has("no guard to remove here");
        let after: serde_json::Value =
            serde_json::from_str(&env.drift(&["check", "web", "-o", "json"]).code(2).stdout()).unwrap();
        assert!(after["releases"][0]["guard"].is_null(), "{after}");
    }
}

/// `--mode deny`: a hand edit is refused with the same words; Helm still upgrades; a user the
/// guard allows edits without a word; deletions pass (helm uninstall deletes as its user does).
#[test]
fn deny_refuses_hand_edits_but_not_helm() {
    let env = Env::new("guard-deny");
    env.install(Helm::V4, "web", "basic", &[]);
    env.drift(&["guard", "install", "web", "--mode", "deny"]).success().stdout_has("[mode deny");
    until_guarded(&env);
    let refused = env
        .kubectl(&["patch", "configmap", "web-config", "--type", "merge", "-p", r#"{"data":{"greeting":"x"}}"#])
        .code(1);
    refused.stderr_has("denied request").stderr_has("managed by Helm release web").stderr_has(
        "change the release instead (helm drift check web -n guard-deny --explain names the helm upgrade --set line)",
    );
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "hello", "nothing changed");
    env.helm(
        Helm::V4,
        &["upgrade", "web", crate::support::chart_path("basic").to_str().unwrap(), "--set", "greeting=upgraded"],
    )
    .success();
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "upgraded");
    // An object being deleted lets its finalizers go (as their owners remove them).
    env.drift(&["guard", "remove"]).success();
    eventually("the guard to be gone", Duration::from_secs(30), || !guard_answers(&env));
    env.merge_patch("serviceaccount", "web-sa", r#"{"metadata":{"finalizers":["example.com/hold"]}}"#);
    env.drift(&["guard", "install", "web", "--mode", "deny"]).success();
    until_guarded(&env);
    env.kubectl(&["delete", "serviceaccount", "web-sa", "--wait=false"]).success();
    let remove = r#"[{"op":"remove","path":"/metadata/finalizers"}]"#;
    let let_go = env.kubectl(&["patch", "serviceaccount", "web-sa", "--type", "json", "-p", remove]).success();
    assert!(!let_go.stderr().contains("ValidatingAdmissionPolicy"), "{}", let_go.dump());
    env.kubectl(&["get", "serviceaccount", "web-sa"]).code(1).stderr_has("NotFound");
    env.helm(Helm::V4, &["uninstall", "web"]).success();
    env.drift(&["guard", "remove"]).success();
}

/// Whether a server-side dry-run edit by `user` (impersonated) with field `manager` is warned.
fn warned_as(env: &Env, user: &str, manager: &str) -> bool {
    let patch = r#"{"data":{"probe":"1"}}"#;
    let args = ["patch", "configmap", "web-config", "--type", "merge", "--dry-run=server", "-p", patch];
    let mut args: Vec<&str> = args.to_vec();
    args.extend(["--as", user, "--field-manager", manager]);
    let out = env.kubectl(&args).success();
    out.stderr().contains(WARNED)
}

/// Who writes without a word: `--allow-user`; a manager the config file names (an Argo CD
/// Application's managedFieldsManagers); service accounts unless `--judge-service-accounts`, and
/// kube-system's even then.
#[test]
fn allowed_writers_write_without_a_word() {
    let env = Env::new("guard-allowed");
    env.install(Helm::V3, "web", "basic", &[]);
    let who = env.kubectl(&["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]).success().stdout();
    env.drift(&["guard", "install", "--all"]).success();
    until_guarded(&env);
    env.drift(&["guard", "install", "--all", "--allow-user", &who]).success();
    eventually("the allowed user to pass", Duration::from_secs(30), || !guard_answers(&env));

    // Service accounts (impersonated, with the right to edit here).
    let bot = format!("system:serviceaccount:{}:ci-bot", env.ns);
    let controller = "system:serviceaccount:kube-system:replicaset-controller";
    let hpa = "system:serviceaccount:kube-system:horizontal-pod-autoscaler";
    let users =
        [("ci-bot", bot.as_str()), ("kube-system-controller", controller), ("hpa", hpa), ("k3s-admin", "system:admin")];
    for (name, user) in users {
        env.kubectl(&["create", "rolebinding", name, "--clusterrole", "edit", "--user", user]).success();
    }
    let config = env.home().join("argo.yaml");
    std::fs::write(
        &config,
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web}\nspec:\n  ignoreDifferences:\n    - {kind: ConfigMap, managedFieldsManagers: [rollouts-controller]}\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    env.drift(&["guard", "install", "--all", "--config", config]).success();
    eventually("the guard to answer the admin again", Duration::from_secs(30), || guard_answers(&env));
    assert!(!warned_as(&env, &bot, "kubectl-patch"), "a service account is let through by default");
    assert!(warned_as(&env, "system:admin", "kubectl-patch"), "system:admin (k3s, OpenShift) is a person");
    let judged = ["guard", "install", "--all", "--config", config, "--judge-service-accounts"];
    env.drift(&judged).success();
    eventually("the service account to be judged", Duration::from_secs(30), || warned_as(&env, &bot, "kubectl-patch"));
    assert!(!warned_as(&env, controller, "kubectl-patch"), "kube-system's controllers are never judged");
    // An HPA scales through the scale subresource as its controller: no word.
    let scaled =
        env.kubectl(&["scale", "deployment", "web-web", "--replicas", "2", "--dry-run=server", "--as", hpa]).success();
    assert!(!scaled.stderr().contains(WARNED), "{}", scaled.dump());
    let by_hand =
        env.kubectl(&["scale", "deployment", "web-web", "--replicas", "2", "--dry-run=server", "--as", &bot]).success();
    by_hand.stderr_has("the scale of web-web");
    assert!(!warned_as(&env, &bot, "rollouts-controller"), "the Argo CD Application's managedFieldsManagers");
    assert!(!warned_as(&env, &bot, "helm-controller"), "Flux's helm-controller writes as the release wants");
    env.drift(&["guard", "remove"]).success();
}

/// An API server that does not serve ValidatingAdmissionPolicy (before Kubernetes 1.30, or turned
/// off): `install` is refused with a clear error and writes nothing; `check` goes on without a
/// guard column.
#[test]
fn refused_cleanly_where_the_api_is_not_served() {
    let env = Env::without_admission_policies("guard-unserved");
    env.install(Helm::V3, "web", "basic", &[]);
    env.drift(&["guard", "install", "--all"])
        .code(1)
        .stderr_has("does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (Kubernetes 1.30 or later): nothing was written");
    env.drift(&["guard", "status"]).code(1).stderr_has("does not serve");
    env.kubectl(&["get", "validatingadmissionpolicies"]).code(1).stderr_has("the server doesn't have a resource type");
    let doc: serde_json::Value =
        serde_json::from_str(&env.drift(&["check", "web", "-o", "json"]).code(0).stdout()).unwrap();
    assert!(doc["releases"][0]["guard"].is_null(), "{doc}");
    // --dry-run needs no such API: it prints what it would write.
    let printed = env.drift(&["guard", "install", "--all", "--dry-run"]).success().stdout();
    assert!(
        printed.contains("kind: ValidatingAdmissionPolicy\n")
            && printed.contains("kind: ValidatingAdmissionPolicyBinding\n"),
        "{printed}"
    );
}

/// YAML documents, parsed.
fn documents(text: &str) -> Vec<serde_json::Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde_json::Value::deserialize(d).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

helm_matrix! {
    /// The chart's `guard.*` values write the guard `helm drift guard install --every-kind`
    /// writes (the same expressions, compared with its --dry-run), Helm writes it, it refuses a
    /// hand edit, `check` and the watcher report it (`helm_drift_release_guard`), and uninstalling
    /// the chart takes it away.
    fn the_chart_writes_the_guard_and_the_watcher_reports_it(helm: Helm) {
        let env = Env::new(&format!("guard-chart-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let ns = env.ns.clone();
        let namespaces = format!("guard.namespaces={{{ns}}}");
        let set = [
            "--set", "guard.enabled=true", "--set", "guard.mode=deny", "--set", &namespaces,
            "--set", "guard.releases={web}", "--set", "guard.allowUsers={alice}",
            "--set", "guard.allowManagers={cainjector}", "--set", "guard.judgeServiceAccounts=true",
        ];
        let chart = repo_root().join("charts/helm-drift");
        let chart = chart.to_str().unwrap();
        let mut args = vec!["template", "drift", chart, "--kube-version", "1.36.0", "--show-only", "templates/guard.yaml"];
        args.extend_from_slice(&set);
        let rendered = documents(&env.helm(helm, &args).success().stdout());
        let cli = [
            "guard", "install", "web", "--every-kind", "--mode", "deny", "--allow-user", "alice",
            "--allow-manager", "cainjector", "--judge-service-accounts", "--dry-run",
        ];
        let planned = documents(&env.drift(&cli).success().stdout());
        assert_eq!(rendered.len(), 2, "{rendered:?}");
        assert_eq!(rendered[0]["spec"], planned[0]["spec"], "the chart's policy is the CLI's");
        assert_eq!(rendered[0]["metadata"]["annotations"], planned[0]["metadata"]["annotations"]);
        assert_eq!(rendered[1]["spec"]["validationActions"], planned[1]["spec"]["validationActions"]);
        assert_eq!(rendered[1]["spec"]["matchResources"], planned[1]["spec"]["matchResources"]);

        let release = format!("drift-guard-{}", helm.tag());
        let mut install = vec!["install", release.as_str(), chart];
        install.extend_from_slice(&set);
        env.helm(helm, &install).success();
        until_guarded(&env);
        env.kubectl(&["patch", "configmap", "web-config", "--type", "merge", "-p", r#"{"data":{"greeting":"x"}}"#])
            .code(1)
            .stderr_has("denied request")
            .stderr_has(&format!("change the release instead (helm drift check web -n {ns} --explain names the helm upgrade --set line)"));
        let doc: serde_json::Value =
            serde_json::from_str(&env.drift(&["check", "web", "-o", "json"]).code(0).stdout()).unwrap();
        assert_eq!(doc["releases"][0]["guard"], "deny");
        env.drift(&["guard", "status"]).success().stdout_has("[mode deny, namespace ").stdout_has("releases web, every kind]");

        let w = Watching::start(&env, &["web"]).ready();
        let series = |mode: &str| format!("helm_drift_release_guard{{namespace=\"{ns}\",release=\"web\",mode=\"{mode}\"}}");
        w.wait_for(&series("deny"), 1.0);
        w.stop();

        env.helm(helm, &["uninstall", &release]).success();
        let left = env.kubectl(&["get", "validatingadmissionpolicies,validatingadmissionpolicybindings", "-l", "helm-drift.io/guard=true", "-o", "name"]).success().stdout();
        assert!(!left.contains(&format!("{release}-helm-drift-{ns}-guard")), "{left}");
        eventually("edits to pass again", Duration::from_secs(30), || !guard_answers(&env));
        let w = Watching::start(&env, &["web"]).ready();
        w.wait_for(&series("none"), 1.0);
        w.stop();
    }
}

/// A release of many kinds, hundreds of allowed writers and releases: the policy stays within the
/// API server's CEL cost limits (it is accepted and answers), and a hostile name stays a name.
#[test]
fn many_kinds_and_writers_stay_within_the_cel_cost_limits() {
    let env = Env::new("guard-cost");
    env.install(Helm::V4, "many", "full", &[]);
    let mut args: Vec<String> = ["guard", "install", "many"].iter().map(|s| s.to_string()).collect();
    for i in 0..300 {
        args.extend(["--allow-user".into(), format!("user-{i}@example.com")]);
        args.extend(["--allow-group".into(), format!("group-{i}")]);
        args.extend(["--allow-manager".into(), format!("manager-{i}")]);
    }
    args.extend(["--allow-user".into(), r#"x"] || true || ["#.into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let written = env.drift(&args).success().stdout();
    let kinds: usize = written.split(", ").last().unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(kinds >= 12, "{written}");
    // It answers: the full chart's ConfigMap, edited by hand, is warned.
    let config =
        env.kubectl(&["get", "configmap", "-l", "app.kubernetes.io/managed-by=Helm", "-o", "name"]).success().stdout();
    let config =
        config.lines().next().expect("a ConfigMap of the full chart").trim_start_matches("configmap/").to_string();
    eventually("the guard to answer", Duration::from_secs(30), || {
        env.kubectl(&["label", "configmap", &config, "probe=1", "--overwrite", "--dry-run=server"])
            .output()
            .stderr()
            .contains("ValidatingAdmissionPolicy")
    });
    // A cluster-scoped object of the release is guarded, with the release's namespace in the
    // message; the same release name's ClusterRole from another namespace is not this guard's.
    let warned = |name: &str| {
        let out = env.kubectl(&["label", "clusterrole", name, "probe=1", "--overwrite", "--dry-run=server"]).success();
        out.stderr().to_string()
    };
    let own = warned("guard-cost-many-nodes");
    assert!(own.contains("managed by Helm release many (namespace guard-cost)"), "{own}");
    assert!(!own.contains("failed expression"), "{own}");
    let other = Env::new("guard-cost-other");
    other.install(Helm::V4, "many", "full", &[]);
    let theirs = warned("guard-cost-other-many-nodes");
    assert!(!theirs.contains("ValidatingAdmissionPolicy"), "{theirs}");
    env.drift(&["guard", "remove"]).success();
}

/// A watcher whose identity may not list ValidatingAdmissionPolicies (a namespace's admin, as the
/// chart's namespaced Role) does not know whether a guard covers a release: no guard series,
/// rather than a `none` that would not be true; everything else goes on.
#[test]
fn a_watcher_that_cannot_read_the_guards_exports_no_guard_series() {
    let env = Env::new("guard-blind");
    env.install(Helm::V3, "web", "basic", &[]);
    let user = "guard-blind-admin";
    env.kubectl(&["create", "rolebinding", "blind", "--clusterrole", "admin", "--user", user]).success();
    env.wait_until_allowed(user, "list", "secrets", false);
    let w = Watching::start_with(&env, &["web"], &[("HELM_KUBEASUSER", user)]).ready();
    w.wait_for(&Watching::drifted(&env.ns, "web"), 0.0);
    let metrics = w.metrics();
    assert!(!metrics.contains("helm_drift_release_guard{"), "{metrics}");
    assert!(w.logs_text().contains("the admission guards cannot be read"), "{}", w.logs_text());
    w.stop();
}

//! `helm drift guard`: a ValidatingAdmissionPolicy on the real API server. A hand edit, scale or
//! deletion of an object Helm manages warns at the prompt (kubectl's stderr) and is audited with
//! the release; Helm's upgrades, `helm drift repair` and a rollout restart pass without a word;
//! `deny` refuses the edit with the same words; removing it leaves nothing.

use crate::support::{Env, Helm, eventually};
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
        env.drift(&["guard", "install", "--all"])
            .success()
            .stdout_has(&format!("guard written: {name} [mode warn, namespace {}, releases *, 5 kinds]", env.ns));
        until_guarded(&env);

        // Hand edits, a scale and a deletion: warned, naming the release and what to do instead.
        let mark = env.audit_mark();
        let edit = env.kubectl(&["patch", "configmap", "web-config", "--type", "merge", "-p", r#"{"data":{"greeting":"by hand"}}"#]).success();
        edit.stderr_has(WARNED)
            .stderr_has(&format!("managed by Helm release web (namespace {}): this change by", env.ns))
            .stderr_has("(field manager kubectl-patch) will be reported as drift by helm drift check")
            .stderr_has("helm drift accept");
        env.kubectl(&["scale", "deployment", "web-web", "--replicas", "3"]).success().stderr_has("the scale of web-web");
        env.kubectl(&["label", "service", "web-web", "team=x"]).success().stderr_has(WARNED);

        // What Helm and helm-drift write as the release wants passes without a word.
        let repaired = env.drift(&["repair", "web", "--remove-foreign"]).success();
        assert!(!repaired.stderr().contains("ValidatingAdmissionPolicy"), "{}", repaired.dump());
        env.drift(&["check", "web"]).code(0);
        let upgrade = env.helm(helm, &["upgrade", "web", crate::support::chart_path("basic").to_str().unwrap(), "--set", "greeting=upgraded"]).success();
        assert!(!upgrade.stderr().contains("ValidatingAdmissionPolicy"), "{}", upgrade.dump());
        let restart = env.kubectl(&["rollout", "restart", "deployment", "web-web"]).success();
        assert!(!restart.stderr().contains(WARNED), "{}", restart.dump());

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
        env.drift(&["guard", "remove"]).success().stdout_has(&format!("removed {name}"));
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
    refused
        .stderr_has("denied request")
        .stderr_has("managed by Helm release web")
        .stderr_has("change the release instead (helm upgrade --set ...)");
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "hello", "nothing changed");
    env.helm(
        Helm::V4,
        &["upgrade", "web", crate::support::chart_path("basic").to_str().unwrap(), "--set", "greeting=upgraded"],
    )
    .success();
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "upgraded");
    env.helm(Helm::V4, &["uninstall", "web"]).success();
    env.drift(&["guard", "remove"]).success();
}

/// `--allow-user`: the named user writes without a word.
#[test]
fn allowed_users_write_without_a_word() {
    let env = Env::new("guard-allowed");
    env.install(Helm::V3, "web", "basic", &[]);
    let who = env.kubectl(&["auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"]).success().stdout();
    env.drift(&["guard", "install", "--all"]).success();
    until_guarded(&env);
    env.drift(&["guard", "install", "--all", "--allow-user", &who]).success();
    eventually("the allowed user to pass", Duration::from_secs(30), || !guard_answers(&env));
    env.drift(&["guard", "remove"]).success();
}

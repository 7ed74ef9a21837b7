//! A CI gate that cannot go green by mistake: a selection that matches no release is an error
//! that says what was selected and where (`--allow-empty` lets it pass), and a repair that
//! leaves drift exits 2.

use crate::support::{Env, Helm};

#[test]
fn an_empty_selection_is_an_error_that_names_it() {
    let env = Env::new("gate-empty");
    let ns = env.ns.clone();
    let out = env.drift(&["check", "--all"]).code(1);
    out.stderr_has(&format!("no release matched: no Helm release in namespace {ns}"));
    out.stderr_has("--allow-empty");
    // A typo in a selector over every namespace: the same.
    let out = env.drift(&["check", "-A", "-l", "team=nobody-gate-empty"]).code(1);
    out.stderr_has("in any namespace with labels team=nobody-gate-empty");
    // A machine output is still a document, and says it.
    let json = env.drift(&["check", "--all", "-o", "json"]).code(1).stdout();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["summary"]["exitCode"], 1, "{json}");
    assert!(doc["releases"][0]["error"].as_str().unwrap().contains("no release matched"), "{json}");
    // Asked for: an empty selection passes.
    env.drift(&["check", "--all", "--allow-empty"]).success();
}

/// A baseline is read only where the user can see it: every check that reads one says which
/// (and how many entries), one found in the working directory says so, and a named file that
/// does not exist is an error, not an empty baseline.
#[test]
fn a_baseline_read_is_said_and_a_named_one_must_exist() {
    let env = Env::new("gate-baseline");
    env.install(Helm::V4, "web", "basic", &[]);
    env.drift(&["check", "web", "--baseline", "nosuch.yaml"])
        .code(1)
        .stderr_has("--baseline nosuch.yaml: no such file");
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    env.drift(&["accept", "web"]).success();
    env.drift(&["check", "web"]).success().stderr_has(
        "note: accepted drift read from .helm-drift-baseline.yaml (1 entry; found in the working directory, --baseline names another)",
    );
    // From another directory nothing is read, and nothing is said to be.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = env.drift(&["check", "web"]).current_dir(elsewhere.path()).code(2);
    assert!(!out.stderr().contains("accepted drift read"), "{}", out.dump());
    let named = env.home().join(".helm-drift-baseline.yaml");
    env.drift(&["check", "web", "--baseline", named.to_str().unwrap()])
        .current_dir(elsewhere.path())
        .success()
        .stderr_has("(1 entry)");
}

/// Kinds as kubectl users write them, in `--ignore` and `--only`: any case, plurals, short
/// names (a lower-case kind used to match nothing, silently).
#[test]
fn kinds_are_read_as_kubectl_users_write_them() {
    let env = Env::new("gate-kinds");
    env.install(Helm::V3, "web", "basic", &[]);
    let recorded = env.get("deployment", "web-web", "{.spec.replicas}");
    env.kubectl(&["scale", "deployment", "web-web", "--replicas=7"]).success();
    env.drift(&["check", "web"]).code(2);
    for kind in ["deployment", "deploy", "Deployments"] {
        env.drift(&["check", "web", "--ignore", &format!("kind={kind}:/spec/replicas")]).success();
    }
    env.drift(&["check", "web", "--ignore", "kind=svc:/spec/replicas"]).code(2);
    env.drift(&["repair", "web", "--only", "deploy/web-web"]).success();
    assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), recorded);
}

/// An object owned elsewhere (replicas scaled and put back) with an accepted label is owned
/// elsewhere, not drift: the exit code says what the verdict says (it counted as drift, exit 2).
#[test]
fn an_accepted_field_leaves_an_owned_elsewhere_object_in_sync() {
    let env = Env::new("gate-owned");
    env.install(Helm::V4, "web", "basic", &[]);
    let recorded = env.get("deployment", "web-web", "{.spec.replicas}");
    env.kubectl(&["scale", "deployment", "web-web", "--replicas=3"]).success();
    env.kubectl(&["scale", "deployment", "web-web", &format!("--replicas={recorded}")]).success();
    env.drift(&["check", "web"]).success();
    env.kubectl(&["label", "deployment", "web-web", "team=x"]).success();
    env.drift(&["check", "web"]).code(2);
    env.drift(&["accept", "web", "--path", "/metadata/labels/team"]).success();
    let json = env.drift(&["check", "web", "-o", "json"]).code(0).stdout();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let web = doc["releases"][0]["objects"].as_array().unwrap().iter().find(|o| o["kind"] == "Deployment").unwrap();
    assert_eq!(web["verdict"], "taken-over", "{json}");
    assert_eq!(doc["releases"][0]["counts"]["drifted"], 0, "{json}");
}

//! A CI gate that cannot go green by mistake: a selection that matches no release is an error
//! that says what was selected and where (`--allow-empty` lets it pass), and a repair that
//! leaves drift exits 2.

use crate::support::Env;

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

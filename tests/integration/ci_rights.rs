//! The CI page's least privilege (issue 85): the read-only ClusterRole it gives
//! (docs/src/ci/check-reader.yaml) is enough for `check`, drift and all, and not for `plan`,
//! whose server-side dry-runs RBAC authorizes as writes.

use crate::support::{Env, Helm, chart_path, repo_root};

#[test]
fn the_ci_pages_read_only_role_checks_and_cannot_plan() {
    let env = Env::new("ci-rights");
    env.install(Helm::V4, "web", "basic", &[]);
    // The page's file as given, its subject renamed to this test's user.
    let page = std::fs::read_to_string(repo_root().join("docs/src/ci/check-reader.yaml")).unwrap();
    let user = "ci-rights-reader";
    let yaml = page.replace(
        "{kind: ServiceAccount, name: ci-drift-check, namespace: ci}",
        &format!("{{apiGroup: rbac.authorization.k8s.io, kind: User, name: {user}}}"),
    );
    assert_ne!(yaml, page, "the page's subject is where the test expects it");
    env.apply_yaml("check-reader", &yaml);
    env.wait_until_allowed(user, "list", "secrets", true);
    let check = |code: i32| env.drift(&["check", "web"]).env("HELM_KUBEASUSER", user).code(code);
    check(0);
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    check(2).stdout_has("web-config");
    let chart = chart_path("basic");
    let plan = env
        .drift(&["plan", "web", chart.to_str().unwrap()])
        .env("HELM_BIN", env.helm_bin(Helm::V4))
        .env("HELM_KUBEASUSER", user)
        .code(1);
    assert!(plan.dump().to_lowercase().contains("forbidden"), "{}", plan.dump());
}

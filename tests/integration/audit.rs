//! Who made each drift, from the API server's audit (its log backend here, Metadata level): an
//! edit by a person impersonated by the admin, one made with a ServiceAccount token and a
//! `kubectl delete`, each named in `check --audit-log` (text and JSON); a write the log does not
//! hold is said to have no audit record, never guessed.

use crate::support::{Env, Helm};
use serde_json::Value;

/// A kubeconfig that authenticates with `token` alone (no client certificate) to `env`'s API
/// server.
fn token_kubeconfig(env: &Env, token: &str) -> std::path::PathBuf {
    let ca = env.cp.dir().join("pki").join("ca.crt");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: u\n  user:\n    token: {token}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u, namespace: {}}}\ncurrent-context: c\n",
        env.cp.server(),
        ca.display(),
        env.ns
    );
    let path = env.home().join("token-kubeconfig");
    std::fs::write(&path, text).unwrap();
    path
}

/// The audit log written since `mark`, as an operator would fetch it from a control-plane node.
fn log_since(env: &Env, mark: u64) -> std::path::PathBuf {
    env.audit_since(mark); // waits until the log holds what was done before now
    let text = std::fs::read(env.cp.audit_log()).unwrap();
    let path = env.home().join("audit.log");
    std::fs::write(&path, &text[mark as usize..]).unwrap();
    path
}

fn object<'a>(report: &'a Value, kind: &str) -> &'a Value {
    let objects = report["releases"][0]["objects"].as_array().unwrap();
    objects.iter().find(|o| o["kind"] == kind).unwrap_or_else(|| panic!("no {kind} in {report:#}"))
}

helm_matrix! {
    /// Alice (impersonated by the admin) edits the ConfigMap, a ServiceAccount's token scales the
    /// Deployment, the admin deletes the Service: each is named, with the impersonator, the
    /// deciding group and the client; without the log's events, "no audit record".
    fn check_names_who_made_each_drift(helm: Helm) {
        let env = Env::new(&format!("audit-check-{}", helm.tag()));
        let ns = env.ns.clone();
        env.install(helm, "app", "basic", &[]);
        let rbac = format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: editor}}\nrules:\n- apiGroups: [\"\", apps]\n  resources: [configmaps, deployments, deployments/scale]\n  verbs: [get, list, patch, update]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: editor}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: editor}}\nsubjects:\n- {{kind: User, name: alice@example.com, apiGroup: rbac.authorization.k8s.io}}\n- {{kind: ServiceAccount, name: editor, namespace: {ns}}}\n"
        );
        env.kubectl(&["create", "serviceaccount", "editor"]).success();
        env.apply_yaml("editor-rbac", &rbac);
        env.wait_until_allowed("alice@example.com", "patch", "configmaps", false);
        env.wait_until_allowed(&format!("system:serviceaccount:{ns}:editor"), "patch", "deployments", false);
        let token = env.kubectl(&["create", "token", "editor"]).success().stdout().trim().to_string();
        let as_sa = token_kubeconfig(&env, &token);

        let mark = env.audit_mark();
        env.kubectl(&["--as", "alice@example.com", "patch", "configmap", "app-config", "--type", "merge", "-p", r#"{"data":{"greeting":"by alice"}}"#]).success();
        env.kubectl(&["--kubeconfig", as_sa.to_str().unwrap(), "scale", "deployment", "app-web", "--replicas", "3"]).success();
        env.kubectl(&["delete", "service", "app-web"]).success();
        let log = log_since(&env, mark);

        let done = env.drift(&["check", "app", "--audit-log", log.to_str().unwrap(), "-o", "json"]).code(2);
        let report: Value = serde_json::from_str(&done.stdout()).unwrap();
        let cm = object(&report, "ConfigMap");
        let by = &cm["differences"][0]["changedBy"];
        assert_eq!((by["user"].as_str(), by["impersonatedBy"].as_str()), (Some("alice@example.com"), Some("admin")), "{cm:#}");
        assert_eq!((by["auditRecord"].as_str(), by["manager"].as_str()), (Some("found"), Some("kubectl-patch")));
        assert!(by["userAgent"].as_str().unwrap().starts_with("kubectl/"), "{by}");
        assert!(by["auditId"].as_str().is_some_and(|id| !id.is_empty()) && by["sourceIPs"][0] == "127.0.0.1", "{by}");
        let deploy = object(&report, "Deployment");
        let replicas = deploy["differences"].as_array().unwrap().iter().find(|d| d["path"] == "/spec/replicas").expect("replicas");
        assert_eq!(replicas["changedBy"]["user"].as_str(), Some(format!("system:serviceaccount:{ns}:editor").as_str()), "{deploy:#}");
        assert_eq!(replicas["changedBy"]["impersonatedBy"], Value::Null);
        let svc = object(&report, "Service");
        assert_eq!(svc["verdict"], "missing");
        assert_eq!(svc["deletedBy"]["user"], "admin", "{svc:#}");
        assert_eq!(svc["deletedBy"]["groups"], serde_json::json!(["system:masters"]), "the group that decided");

        let text = env.drift(&["check", "app", "--audit-log", log.to_str().unwrap()]).code(2);
        text.says("(kubectl-patch by alice@example.com via admin,");
        text.says(&format!("by system:serviceaccount:{ns}:editor"));
        text.says("deleted by admin [system:masters] (kubectl/");

        // A log that holds none of it: said, never guessed.
        let empty = env.home().join("empty.log");
        std::fs::write(&empty, "").unwrap();
        let none = env.drift(&["check", "app", "--audit-log", empty.to_str().unwrap()]).code(2);
        none.says("(kubectl-patch, no audit record,").says("deleted: no audit record");
        // Without the flag, nothing about the audit.
        let plain = env.drift(&["check", "app", "-o", "json"]).code(2);
        let plain: Value = serde_json::from_str(&plain.stdout()).unwrap();
        assert_eq!(object(&plain, "ConfigMap")["differences"][0]["changedBy"].get("user"), None);
        // An unreadable log is an error that names it, not a report without names.
        env.drift(&["check", "app", "--audit-log", "/nonexistent/audit.log"]).code(1).stderr_has("/nonexistent/audit.log");
    }
}

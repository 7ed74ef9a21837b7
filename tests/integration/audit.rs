//! Who made each drift, from the API server's audit (its log backend here, Metadata level): an
//! edit by a person impersonated by the admin, one made with a ServiceAccount token and a
//! `kubectl delete`, each named in `check --audit-log` (text and JSON); a write the log does not
//! hold is said to have no audit record, never guessed.

use crate::support::{Env, Helm};
use crate::watching::Watching;
use serde_json::Value;
use std::time::Duration;

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

/// Alice (a user the admin impersonates) and the ServiceAccount `editor` may edit ConfigMaps
/// and Deployments of `env`'s namespace; a kubeconfig with the ServiceAccount's token.
pub fn editors(env: &Env) -> std::path::PathBuf {
    let ns = env.ns.clone();
    let rbac = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: editor}}\nrules:\n- apiGroups: [\"\", apps]\n  resources: [configmaps, deployments, deployments/scale]\n  verbs: [get, list, patch, update]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: editor}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: editor}}\nsubjects:\n- {{kind: User, name: alice@example.com, apiGroup: rbac.authorization.k8s.io}}\n- {{kind: ServiceAccount, name: editor, namespace: {ns}}}\n"
    );
    env.kubectl(&["create", "serviceaccount", "editor"]).success();
    env.apply_yaml("editor-rbac", &rbac);
    env.wait_until_allowed("alice@example.com", "patch", "configmaps", false);
    env.wait_until_allowed(&format!("system:serviceaccount:{ns}:editor"), "patch", "deployments", false);
    let token = env.kubectl(&["create", "token", "editor"]).success().stdout().trim().to_string();
    token_kubeconfig(env, &token)
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
        let as_sa = editors(&env);

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

/// One watcher at a time serves the audited control plane's webhook port.
static SINK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A watcher of `env` serving the audit webhook the audited control plane posts to, its
/// senders authenticated by the control plane's token (and client certificates of its CA).
pub fn audit_watcher(env: &Env, extra: &[&str]) -> Watching {
    let sink = env.cp.audit_sink().expect("an audited control plane (Env::audited)");
    let tokens = env.home().join("audit-tokens");
    std::fs::write(&tokens, format!("# the API server's webhook token\n{}\n", sink.token)).unwrap();
    let address = format!("127.0.0.1:{}", sink.port);
    let mut args = vec!["--ui", "--audit-address", &address, "--audit-tokens", tokens.to_str().unwrap()];
    let (cert, key, ca) = (sink.cert.to_str().unwrap(), sink.key.to_str().unwrap(), sink.ca.to_str().unwrap());
    args.extend(["--audit-tls-cert", cert, "--audit-tls-key", key, "--audit-client-ca", ca]);
    args.extend_from_slice(extra);
    Watching::start(env, &args).ready()
}

/// The drift of `object` (its `Kind ns/name` prefix) at `/drifts.json` once `ok` holds for it.
fn life(w: &Watching, object: &str, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(45);
    let mut last = Value::Null;
    while std::time::Instant::now() < deadline {
        let (status, body) = w.get("/drifts.json");
        assert_eq!(status, 200, "{body}");
        last = serde_json::from_str(&body).unwrap();
        let mine = |d: &&Value| d["object"].as_str().is_some_and(|o| o.starts_with(object)) && ok(d);
        if let Some(found) = last["drifts"].as_array().unwrap().iter().find(mine) {
            return found.clone();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("timed out waiting for {what}: {last:#}\n{}", w.logs_text())
}

fn made_by(d: &Value) -> String {
    d["madeBy"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect::<Vec<_>>().join(", ")
}

helm_matrix! {
    /// The watcher names who made each drift from the audit webhook and keeps each drift's
    /// life: alice's edit (impersonated by the admin) undone by hand, a ServiceAccount's scale
    /// repaired with `helm drift repair`, a delete ended by `helm upgrade`, and alice's edit of a
    /// release that opts in, healed by the watcher itself. Names are on the page and its JSON,
    /// not in Events (no --audit-publish-names).
    fn watch_names_who_made_each_drift_and_how_it_ended(helm: Helm) {
        let _port = SINK.lock().unwrap_or_else(|e| e.into_inner());
        let env = Env::audited(&format!("audit-watch-{}", helm.tag()));
        let ns = env.ns.clone();
        env.install(helm, "app", "basic", &[]);
        env.install(helm, "healed", "basic", &["--labels", "helm-drift.io/repair=true"]);
        let as_sa = editors(&env);
        let w = audit_watcher(&env, &["app", "healed", "--repair", "--trust-namespace", &ns]);

        // Alice's edit, undone by the admin by hand.
        env.kubectl(&["--as", "alice@example.com", "patch", "configmap", "app-config", "--type", "merge", "-p", r#"{"data":{"greeting":"by alice"}}"#]).success();
        let open = life(&w, &format!("ConfigMap {ns}/app-config"), "alice named", |d| made_by(d).contains("by alice@example.com via admin"));
        assert_eq!(open["open"], true, "{open:#}");
        let page = w.get("/").1;
        assert!(page.contains("alice@example.com via admin") && page.contains("Drift timeline"), "{page}");
        let detected = crate::watching::events(&env, "DriftDetected");
        assert!(!detected.is_empty() && !format!("{detected:?}").contains("alice"), "names stay out of Events: {detected:#?}");
        env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"hello"}}"#);
        let ended = life(&w, &format!("ConfigMap {ns}/app-config"), "undone by the admin", |d| d["ended"]["by"] == "admin");
        assert_eq!(ended["ended"]["how"], "hand", "{ended:#}");

        // The ServiceAccount's scale, repaired by a person with helm drift repair.
        env.kubectl(&["--kubeconfig", as_sa.to_str().unwrap(), "scale", "deployment", "app-web", "--replicas", "3"]).success();
        let sa = format!("system:serviceaccount:{ns}:editor");
        life(&w, &format!("Deployment {ns}/app-web"), "the ServiceAccount named", |d| made_by(d).contains(&sa));
        env.drift(&["repair", "app"]).success();
        let repaired = life(&w, &format!("Deployment {ns}/app-web"), "repaired", |d| d["ended"]["how"] == "repair");
        assert_eq!(repaired["ended"]["by"], "admin", "{repaired:#}");

        // A delete, ended by helm upgrade.
        env.kubectl(&["delete", "service", "app-web"]).success();
        life(&w, &format!("Service {ns}/app-web"), "the delete named", |d| made_by(d).contains("deleted by admin"));
        let chart = crate::support::chart_path("basic");
        env.helm(helm, &["upgrade", "app", chart.to_str().unwrap(), "--reuse-values"]).success();
        let upgraded = life(&w, &format!("Service {ns}/app-web"), "ended by the upgrade", |d| !d["ended"].is_null());
        assert_eq!(upgraded["ended"]["how"], "revision", "{upgraded:#}");

        // Alice's edit of the release that opts in: healed by the watcher.
        env.kubectl(&["--as", "alice@example.com", "patch", "configmap", "healed-config", "--type", "merge", "-p", r#"{"data":{"greeting":"by alice"}}"#]).success();
        let healed = life(&w, &format!("ConfigMap {ns}/healed-config"), "healed", |d| d["ended"]["how"] == "watcher");
        assert_eq!(healed["ended"]["by"], "helm-drift watch", "{healed:#}");
        assert!(made_by(&healed).contains("kubectl-patch") , "{healed:#}");

        // How long drifts live here, in the metrics.
        let metrics = w.metrics();
        for how in ["hand", "repair", "revision", "watcher"] {
            let series = format!("helm_drift_drift_lifetime_seconds_count{{ended_by=\"{how}\"}}");
            assert!(w.sample(&series).is_some_and(|n| n >= 1.0), "{series}:\n{metrics}");
        }
        assert!(metrics.contains("helm_drift_audit_window{unit=\"events\"}"), "{metrics}");
    }
}

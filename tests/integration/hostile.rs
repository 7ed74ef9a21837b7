//! Hostile input, as someone who may only create Secrets and Events in their own namespace would
//! write it: forged release records, forged Events, a pre-created Event name, an upgrade in
//! flight, opt-out annotations added live, secrets in `render` and `repair --upgrade --dry-run`.
//! Each attack is refused or harmless, and the watcher stays ready.

use crate::support::{Env, Helm, eventually, eventually_or};
use crate::watching::{Receiver, Watching, events};
use std::time::Duration;

/// Whether the cluster holds this object (`kubectl get` succeeds).
fn exists(env: &Env, args: &[&str]) -> bool {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    env.kubectl(&all).output().out.status.success()
}

fn greeting(env: &Env, name: &str) -> String {
    env.get("configmap", name, "{.data.greeting}")
}

/// Waits until the watcher has checked the releases `n` more times (resyncs at 2s).
fn checks_later(w: &Watching, n: f64) {
    let start = w.checks();
    eventually("more checks", Duration::from_secs(30), || w.checks() >= start + n);
}

/// A forged record that opts in to self-healing and holds a ClusterRoleBinding to cluster-admin,
/// a ConfigMap in kube-system (record `evil`) and another release's ConfigMap (record `thief`):
/// nothing of it is written. Without trust or impersonation nothing is written at all, each
/// refusal said with its rule; objects outside the record's namespace are not even compared;
/// impersonating a ServiceAccount of the namespace, the real release heals and the thief is
/// refused by Helm's ownership rule.
fn forged_records_cannot_escalate(helm: Helm) {
    let env = Env::new(&format!("hostile-rec-{}", helm.tag()));
    let (ns, crb, planted) = (&env.ns, format!("{}-is-admin", env.ns), format!("{}-planted", env.ns));
    let evil = format!(
        "---\n# Source: evil/templates/crb.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: {crb}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n  - kind: ServiceAccount\n    name: default\n    namespace: {ns}\n---\n# Source: evil/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {planted}\n  namespace: kube-system\ndata:\n  a: b\n"
    );
    let thief = "---\n# Source: thief/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  greeting: pwned\n";
    env.install(helm, "web", "basic", &["--labels", "helm-drift.io/repair=true"]);
    env.forge_record("evil", &evil, "helm-drift.io/repair: \"true\"");
    env.forge_record("thief", thief, "helm-drift.io/repair: \"true\"");
    let untouched = |w: &Watching| {
        assert!(!exists(&env, &["clusterrolebinding", &crb]), "the ClusterRoleBinding was created\n{}", w.logs_text());
        assert!(!exists(&env, &["-n", "kube-system", "configmap", &planted]), "kube-system was written");
        assert_ne!(greeting(&env, "web-config"), "pwned", "another release's object was taken");
    };

    // Neither trusted nor impersonated: nothing is written, each refusal said once.
    let hook = Receiver::start();
    let args = ["--all", "--repair", "--repair-cooldown", "1s", "--resync", "2s", "--notify", &hook.url];
    let w = Watching::start(&env, &args).ready();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    let refused = |release: &str| {
        events(&env, "DriftRepairRefused").iter().any(|e| {
            e.pointer("/metadata/annotations/helm-drift.io~1release").and_then(|r| r.as_str())
                == Some(&format!("{ns}/{release}"))
                && e["message"].as_str().unwrap_or_default().contains("is not trusted")
        })
    };
    eventually_or(
        "the repairs refused",
        Duration::from_secs(30),
        || refused("web") && refused("thief"),
        || w.logs_text(),
    );
    assert!(w.sample("helm_drift_repairs_total{result=\"refused\"}").is_some_and(|n| n >= 2.0));
    eventually("the refusals notified with their rule", Duration::from_secs(20), || {
        let notes = hook.received();
        notes.iter().any(|n| {
            n["event"] == "DriftRepairRefused" && n["message"].as_str().is_some_and(|m| m.contains("--trust-namespace"))
        })
    });
    checks_later(&w, 6.0);
    untouched(&w);
    assert_eq!(greeting(&env, "web-config"), "edited", "nothing written without trust");
    let settled = hook.count("DriftRepairRefused");
    checks_later(&w, 4.0);
    assert_eq!(hook.count("DriftRepairRefused"), settled, "a refusal is notified once, not at every resync");
    let logs = w.logs_text();
    assert!(!logs.contains(&crb), "objects outside the record's namespace are not even compared\n{logs}");
    w.stop();

    // Impersonating a ServiceAccount that may edit the namespace: the real release heals as it,
    // the thief never takes its object, the rest is still not compared.
    env.kubectl(&["create", "serviceaccount", "fixer"]).success();
    let subject = format!("--serviceaccount={ns}:fixer");
    env.kubectl(&["create", "rolebinding", "fixer-edit", "--clusterrole=edit", &subject]).success();
    let args = ["--all", "--repair", "--repair-cooldown", "1s", "--resync", "2s", "--repair-service-account", "fixer"];
    let w = Watching::start(&env, &args).ready();
    eventually("healed as the ServiceAccount", Duration::from_secs(30), || greeting(&env, "web-config") == "hello");
    let by_ownership = || {
        w.log_lines().iter().any(|l| {
            l["msg"] == "repair"
                && l["result"] == "refused"
                && l["reason"].as_str().is_some_and(|r| r.contains("not owned by release"))
        })
    };
    eventually_or("the thief refused by ownership", Duration::from_secs(30), by_ownership, || w.logs_text());
    checks_later(&w, 6.0);
    untouched(&w);
}

#[test]
fn forged_records_cannot_escalate_helm3() {
    forged_records_cannot_escalate(Helm::V3);
}

#[test]
fn forged_records_cannot_escalate_helm4() {
    forged_records_cannot_escalate(Helm::V4);
}

/// An Event in the namespace with helm-drift's reason and annotation, written by someone else.
fn forge_event(env: &Env, name: &str, component: &str, signature: &str) {
    let yaml = format!(
        "apiVersion: v1\nkind: Event\nmetadata:\n  name: {name}\n  annotations:\n    helm-drift.io/signature: {signature:?}\ninvolvedObject:\n  apiVersion: v1\n  kind: ConfigMap\n  name: web-config\n  namespace: {ns}\nreason: DriftDetected\nmessage: forged\ntype: Warning\nsource:\n  component: {component}\n",
        ns = env.ns
    );
    env.apply_yaml(name, &yaml);
}

/// Malformed or foreign drift Events do not stop the watcher (it panicked on a short signature
/// once), are counted as rejected, and drift is still detected and notified.
#[test]
fn forged_events_are_rejected_and_the_watcher_stays_ready() {
    let env = Env::new("hostile-events");
    env.install(Helm::V4, "web", "basic", &[]);
    forge_event(&env, "short", "helm-drift", "x");
    forge_event(&env, "wide", "helm-drift", &"é".repeat(20));
    forge_event(&env, "foreign", "someone", &"ab".repeat(32));
    let hook = Receiver::start();
    let w = Watching::start(&env, &["web", "--notify", &hook.url]).ready();
    assert_eq!(w.sample("helm_drift_rejected_inputs_total{input=\"event\"}"), Some(3.0), "{}", w.logs_text());
    w.wait_for(&Watching::drifted(&env.ns, "web"), 0.0);
    assert_eq!(hook.count("DriftResolved"), 0, "a forged Event is no drift to resolve");
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    eventually("the drift notified", Duration::from_secs(20), || hook.count("DriftDetected") == 1);
    assert_eq!(w.get("/readyz").0, 200);
}

/// The name of the Event a drift gets, known from an earlier Event (its signature is keyed, so it
/// cannot be computed), is taken by a forged Event before the drift comes back: still notified.
#[test]
fn a_pre_created_event_name_is_still_notified() {
    let env = Env::new("hostile-name");
    env.install(Helm::V4, "web", "basic", &[]);
    let hook = Receiver::start();
    let w = Watching::start(&env, &["web", "--notify", &hook.url]).ready();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    eventually("the first Event", Duration::from_secs(20), || events(&env, "DriftDetected").len() == 1);
    let first = events(&env, "DriftDetected")[0].clone();
    let (name, signature) = (first["metadata"]["name"].as_str().unwrap(), &first["metadata"]["annotations"]);
    let signature = signature["helm-drift.io/signature"].as_str().unwrap();
    assert!(signature.len() == 64 && name.ends_with(&signature[..16]), "{first}");
    env.drift(&["repair", "web"]).success();
    w.wait_for(&Watching::drifted(&env.ns, "web"), 0.0);
    w.stop();
    env.kubectl(&["delete", "events", "--all"]).success();
    forge_event(&env, name, "someone", signature);

    let hook = Receiver::start();
    let w = Watching::start(&env, &["web", "--notify", &hook.url]).ready();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    eventually("the same drift notified again", Duration::from_secs(20), || hook.count("DriftDetected") == 1);
    assert!(w.sample("helm_drift_rejected_inputs_total{input=\"event\"}").is_some_and(|n| n >= 1.0));
}

/// A `helm upgrade --wait` held pending (its Deployment never becomes ready: this control plane
/// runs no pods) while the watcher resyncs every 2s with self-healing on: nothing rolled back.
fn no_rollback_during_a_pending_upgrade(helm: Helm) {
    let env = Env::new(&format!("hostile-pending-{}", helm.tag()));
    env.install(helm, "web", "basic", &["--labels", "helm-drift.io/repair=true"]);
    // In sync and checked at every resync: the proof that resyncs go on.
    env.install(helm, "other", "basic", &[]);
    let args = ["--all", "--repair", "--repair-cooldown", "1s", "--resync", "2s", "--trust-namespace", env.ns.as_str()];
    let w = Watching::start(&env, &args).ready();
    let chart = crate::support::chart_path("basic");
    let upgrade = ["upgrade", "web", chart.to_str().unwrap(), "--reuse-values", "--set", "greeting=upgraded"];
    let mut upgrade: Vec<&str> = upgrade.to_vec();
    upgrade.extend(["--wait", "--timeout", "120s"]);
    let mut helm_run = env.helm(helm, &upgrade).into_command().spawn().unwrap();
    eventually("the upgrade applied and pending", Duration::from_secs(30), || {
        let status =
            env.kubectl(&["get", "secret", "sh.helm.release.v1.web.v2", "-o", "jsonpath={.metadata.labels.status}"]);
        status.output().stdout() == "pending-upgrade" && greeting(&env, "web-config") == "upgraded"
    });
    checks_later(&w, 6.0);
    assert_eq!(greeting(&env, "web-config"), "upgraded", "the upgrade in flight was undone\n{}", w.logs_text());
    assert_eq!(w.sample("helm_drift_repairs_total{result=\"applied\"}"), Some(0.0), "{}", w.logs_text());
    let _ = helm_run.kill();
    let _ = helm_run.wait();
}

/// `helm uninstall` under way (Helm marks the record `uninstalling`, then deletes the objects):
/// the watcher with self-healing on neither recreates what is being deleted nor counts an error.
#[test]
fn nothing_recreated_or_counted_during_an_uninstall() {
    let env = Env::new("hostile-uninstalling");
    env.install(Helm::V3, "web", "basic", &["--labels", "helm-drift.io/repair=true"]);
    env.install(Helm::V3, "other", "basic", &[]);
    let args = ["--all", "--repair", "--repair-cooldown", "1s", "--resync", "2s", "--trust-namespace", env.ns.as_str()];
    let w = Watching::start(&env, &args).ready();
    // What Helm does first, then the deletions it goes on with.
    env.kubectl(&["label", "secret", "sh.helm.release.v1.web.v1", "status=uninstalling", "--overwrite"]).success();
    env.kubectl(&["delete", "configmap", "web-config"]).success();
    checks_later(&w, 6.0);
    assert!(!exists(&env, &["configmap", "web-config"]), "recreated during the uninstall\n{}", w.logs_text());
    assert_eq!(w.sample("helm_drift_errors_total{reason=\"evaluate\"}"), Some(0.0), "{}", w.logs_text());
    assert_eq!(w.sample("helm_drift_repairs_total{result=\"applied\"}"), Some(0.0), "{}", w.logs_text());
    w.stop();
    // check, a gate, says what the release is in the middle of.
    env.drift(&["check", "web"]).code(1).stderr_has(
        "status uninstalling): helm uninstall is under way, or was interrupted (helm uninstall again finishes it)",
    );
}

#[test]
fn no_rollback_during_a_pending_upgrade_helm3() {
    no_rollback_during_a_pending_upgrade(Helm::V3);
}

#[test]
fn no_rollback_during_a_pending_upgrade_helm4() {
    no_rollback_during_a_pending_upgrade(Helm::V4);
}

helm_matrix! {
    /// `render` and `repair --upgrade --dry-run` of a release whose Secret renders differently each
    /// time: no value of it in any output; `--show-secrets` shows them.
    fn render_and_upgrade_dry_run_hide_secret_values(helm: Helm) {
        use base64::Engine;
        let env = Env::new(&format!("hostile-render-{}", helm.tag()));
        env.install(helm, "s", "secretive", &["--set", "password=hunter2pw"]);
        let bin = env.helm_bin(helm);
        let stored = env.get("secret", "s-creds", "{.data.random}");
        let stored = String::from_utf8(base64::engine::general_purpose::STANDARD.decode(stored).unwrap()).unwrap();
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let forbidden = ["hunter2pw".to_string(), b64("hunter2pw"), stored.clone(), b64(&stored)];
        let ns = env.ns.clone();
        let upgrade = ["repair", "s", "--upgrade", "--dry-run", "--trust-namespace", ns.as_str()];
        for args in [&["render", "s"][..], &["render", "s", "-o", "json"], &upgrade] {
            let out = env.drift(args).env("HELM_BIN", &bin).output();
            let all = out.dump();
            assert!(all.contains("(hidden"), "{args:?} shows the Secret\n{all}");
            for f in &forbidden {
                assert!(!all.contains(f.as_str()), "{args:?} printed {f:?}:\n{all}");
            }
        }
        let shown = env.drift(&["render", "s", "--show-secrets"]).env("HELM_BIN", &bin).code(2).stdout();
        assert!(shown.contains("hunter2pw") && shown.contains(&stored), "--show-secrets shows values\n{shown}");
    }
}

/// Terminal control sequences written into an object by whoever may edit it (an OSC title, a
/// screen clear, a conceal) reach neither `check`'s output, in colour or not, nor its errors:
/// they are shown escaped.
#[test]
fn control_sequences_in_edited_values_are_shown_escaped() {
    let env = Env::new("hostile-controls");
    env.install(Helm::V4, "web", "basic", &[]);
    let hostile = "x\u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}[8mhidden\r\u{9b}31m";
    let patch = serde_json::json!({"data": {"greeting": hostile}}).to_string();
    env.merge_patch("configmap", "web-config", &patch);
    for colour in ["never", "always"] {
        let out = env.drift(&["check", "web", "--color", colour, "-v"]).code(2);
        let text = out.stdout();
        assert!(text.contains("\\u001b]0;owned\\u0007"), "{text}");
        let allowed = |c: char| c == '\n' || c == '\t' || (colour == "always" && c == '\u{1b}');
        let bad: Vec<char> = text.chars().filter(|c| c.is_control() && !allowed(*c)).collect();
        assert!(bad.is_empty(), "{bad:?}\n{text}");
        assert!(!text.contains("\u{1b}[8m") && !text.contains("\u{1b}]0;"), "{text}");
    }
}

/// A field manager is whatever its writer names: one named like an audit finding is shown
/// quoted, so it never reads as who the audit found.
#[test]
fn a_manager_named_like_an_audit_finding_is_quoted() {
    let env = Env::new("hostile-manager");
    env.install(Helm::V4, "web", "basic", &[]);
    env.kubectl(&[
        "patch",
        "configmap",
        "web-config",
        "--type",
        "merge",
        "-p",
        r#"{"data":{"greeting":"x"}}"#,
        "--field-manager",
        "kubectl-edit by alice@example.com",
    ])
    .success();
    let out = env.drift(&["check", "web"]).code(2);
    out.stdout_has("(\"kubectl-edit by alice@example.com\", ");
    assert!(!out.stdout().contains("(kubectl-edit by alice@example.com"), "{}", out.dump());
}

//! A flaky cluster: the API server restarts in the middle of a check. Transient failures are
//! retried with backoff; the check finishes with the right verdict, no hang, no panic. This
//! test has a control plane of its own (restarting it would disturb other tests).

mod support;
use std::time::Duration;
use support::{Env, Helm, eventually};

#[test]
fn api_server_restart_during_a_check() {
    let env = Env::new("restart");
    env.install(Helm::V4, "web", "basic", &[]);
    env.kubectl(&["delete", "configmap", "web-config"]).success();
    let mark = env.audit_mark();
    // Paced to about 4 requests a second, so the restart lands in the middle of the run.
    let run = env.drift(&["check", "web"]).env("HELM_QPS", "4").env("HELM_BURST_LIMIT", "1");
    let check = std::thread::spawn(move || run.output());
    eventually("the check's first requests", Duration::from_secs(20), || {
        let text = std::fs::read_to_string(env.cp.audit_log()).unwrap_or_default();
        text[(mark as usize).min(text.len())..].contains("helm-drift/")
    });
    env.cp.restart_apiserver().expect("restart kube-apiserver");
    let out = check.join().expect("the check thread");
    assert_eq!(out.out.status.code(), Some(2), "{}", out.dump());
    assert!(out.stdout().contains("missing  ConfigMap restart/web-config"), "{}", out.dump());
}

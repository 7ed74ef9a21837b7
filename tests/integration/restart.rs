//! A flaky cluster: the API server restarts in the middle of a check, someone edits an object in
//! the middle of a repair. Transient failures are retried with backoff; no hang, no panic, and
//! a repair says exactly what it did. The tests that restart or freeze the API server have a
//! control plane of their own ([`Env::disturbable`]), one test at a time.

use crate::admission::Step;
use crate::support::{Env, Helm, eventually};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// Resumes a frozen API server when dropped (also when the test fails).
struct Resume(&'static testcluster::ControlPlane);

impl Drop for Resume {
    fn drop(&mut self) {
        self.0.resume_apiserver().ok();
    }
}

/// The tests of this file disturb the cluster: one at a time.
pub static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn api_server_restart_during_a_check() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::disturbable("restart");
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
    // The run is paced (4 requests a second): requests logged from here on mean it was still
    // going when the server went away, and the exit code says it finished right all the same.
    let before_restart = env.audit_mark();
    env.cp.restart_apiserver().expect("restart kube-apiserver");
    let out = check.join().expect("the check thread");
    assert_eq!(out.out.status.code(), Some(2), "{}", out.dump());
    assert!(out.stdout().contains("missing      ConfigMap restart/web-config"), "{}", out.dump());
    let text = std::fs::read_to_string(env.cp.audit_log()).unwrap_or_default();
    let since = &text[(before_restart as usize).min(text.len())..];
    assert!(since.contains("helm-drift/"), "the run ended before the restart: nothing was proven");
}

helm_matrix! {
    /// Someone edits an object between the dry-run and the real change: that step fails its
    /// guard (a JSON patch's test on Helm 3's client-side releases, the apply's precondition on
    /// Helm 4's server-side ones), the report says exactly what was applied and what was not,
    /// and running repair again finishes. No window to hit: the repair's real write of the
    /// ConfigMap waits at admission (a webhook this test serves) until the edit is done.
    fn repair_interrupted_by_a_concurrent_edit_can_be_run_again(helm: Helm) {
        let env = Env::new(&format!("interrupted-{}", helm.tag())).full_chart(helm);
        env.merge_patch("secret", "app-creds", r#"{"stringData":{"password":"x"}}"#);
        env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"first"}}"#);
        let (held, holding) = mpsc::channel::<()>();
        let (release, go) = mpsc::channel::<()>();
        let gate = Mutex::new(Some((held, go)));
        let seen = Arc::new(AtomicBool::new(false));
        let called = seen.clone();
        let hook = testcluster::webhook::start(move |request| {
            called.store(true, Ordering::SeqCst);
            let restoring = request["dryRun"] != true
                && request["name"] == "app-config"
                && request.pointer("/object/data/greeting").is_some_and(|g| g == "hello");
            if restoring && let Some((held, go)) = gate.lock().unwrap().take() {
                held.send(()).ok();
                go.recv_timeout(Duration::from_secs(25)).ok();
            }
            Vec::new()
        })
        .expect("the webhook server");
        let called = || {
            env.kubectl(&["annotate", "configmap", "app-config", "probe=1", "--dry-run=server"]).success();
            seen.load(Ordering::SeqCst)
        };
        let _registered = env.admit_through(&hook, Step::Validating, ("", "v1", "configmaps"), called);
        let run = env.drift(&["repair", "app"]);
        let repair = std::thread::spawn(move || run.output());
        holding.recv_timeout(Duration::from_secs(60)).expect("the repair's write of the ConfigMap");
        env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"second"}}"#);
        release.send(()).unwrap();
        let out = repair.join().unwrap();
        assert_eq!(out.out.status.code(), Some(1), "{}", out.dump());
        let text = out.stdout();
        assert!(text.contains(&format!("Secret {}/app-creds: applied", env.ns)), "{text}");
        assert!(text.contains(&format!("ConfigMap {}/app-config: FAILED", env.ns)), "{text}");
        assert!(text.contains("run repair again to finish"), "{text}");
        assert_eq!(env.get("configmap", "app-config", "{.data.greeting}"), "second", "the edit was not overwritten");
        env.drift(&["repair", "app"]).success().stdout_has("app: in sync (20 objects)");
    }
}

/// A server that stops answering: each request gives up after `--timeout`, is retried, and the
/// check completes once the server answers again; a server that never answers in time is a
/// clear error, not a hang.
#[test]
fn a_hanging_api_server_is_bounded_by_the_timeout() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::disturbable("hanging");
    env.install(Helm::V4, "web", "basic", &[]);
    let _resume = Resume(env.cp);

    // Frozen for a moment: retried until it answers.
    env.cp.pause_apiserver().unwrap();
    let run = env.drift(&["check", "web", "--timeout", "1s"]);
    let check = std::thread::spawn(move || run.output());
    std::thread::sleep(Duration::from_secs(2)); // the outage being simulated, not a wait for a result
    env.cp.resume_apiserver().unwrap();
    let out = check.join().unwrap();
    assert_eq!(out.out.status.code(), Some(0), "{}", out.dump());

    // Frozen for longer than the retries last: a one-line error naming the cluster.
    env.cp.pause_apiserver().unwrap();
    let started = std::time::Instant::now();
    let out = env.drift(&["check", "web", "--timeout", "300ms"]).code(1);
    env.cp.resume_apiserver().unwrap();
    assert!(started.elapsed() < Duration::from_secs(60), "bounded: {:?}", started.elapsed());
    out.stderr_has("Error: cannot reach the cluster at")
        .stderr_has("retried, 300ms per request")
        .stderr_has("deadline has elapsed");
    assert_eq!(out.stderr().lines().count(), 1, "{}", out.dump());
}

/// `watch` while the API server restarts: the watches fail, back off and resume (re-listing),
/// and edits and a deletion made after the restart are detected.
#[test]
fn watch_recovers_from_an_api_server_restart() {
    use crate::watching::Watching;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::disturbable("watch-restart");
    env.install(Helm::V4, "web", "basic", &[]);
    let w = Watching::start(&env, &["web"]).ready();
    let drifted = Watching::drifted(&env.ns, "web");
    w.wait_for(&drifted, 0.0);
    env.cp.restart_apiserver().expect("restart kube-apiserver");
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"after-restart"}}"#);
    w.wait_for(&drifted, 1.0);
    env.kubectl(&["delete", "service", "web-web"]).success();
    eventually("the deleted Service seen", Duration::from_secs(60), || {
        w.sample(&format!("helm_drift_objects{{namespace=\"{}\",release=\"web\",verdict=\"missing\"}}", env.ns))
            == Some(1.0)
    });
    let logs = w.log_lines();
    assert!(logs.iter().any(|l| l["msg"] == "watch interrupted, retrying with backoff"), "{}", w.logs_text());
    assert!(logs.iter().any(|l| l["msg"] == "watch resumed"), "{}", w.logs_text());
    w.stop();
}

/// SIGTERM stops the watcher also while the API server does not answer during its first full
/// check (which retries for as long as the server is away).
#[test]
fn watch_stops_on_sigterm_while_the_api_server_is_away() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::disturbable("stop-away");
    env.install(Helm::V4, "web", "basic", &[]);
    let _resume = Resume(env.cp);
    let mark = env.audit_mark();
    // Paced to one request a second, so the first full check is still running when the server
    // freezes: it has listed the release records and goes on reading.
    let w = crate::watching::Watching::start_with(&env, &["web"], &[("HELM_QPS", "1"), ("HELM_BURST_LIMIT", "1")]);
    eventually("the first full check's listing of records", Duration::from_secs(60), || {
        let text = std::fs::read_to_string(env.cp.audit_log()).unwrap_or_default();
        text[(mark as usize).min(text.len())..]
            .lines()
            .any(|l| l.contains("\"verb\":\"list\"") && l.contains("/secrets") && l.contains("helm-drift/"))
    });
    env.cp.pause_apiserver().unwrap();
    assert_eq!(w.sample("helm_drift_ready"), Some(0.0), "the first full check is not done");
    w.stop();
}

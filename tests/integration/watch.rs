//! `helm drift watch` against the real control plane, with Helm 3 and Helm 4 releases: drift
//! shows in metrics, one Event and one notification per drift signature (not repeated by a resync
//! or a restart), resolved drift and new revisions are picked up, uninstalls drop the series,
//! self-healing repairs without a new revision and gives up on a fighting editor, and with
//! leader election only one of two watchers acts.

use crate::support::{Env, Helm, eventually};
use crate::watching::{Receiver, Watching, events};
use std::time::Duration;

fn detects_once_resolves_and_follows_the_release(helm: Helm) {
    let env = Env::new(&format!("watch-life-{}", helm.tag()));
    env.install(helm, "web", "basic", &[]);
    let hook = Receiver::start();
    // Its own namespace named (as the chart names it): the signature key is kept there, so a
    // restarted watcher derives the same signatures.
    let home = ["--pause-namespace", env.ns.as_str()];
    let args = [&["web", "--resync", "2s", "--notify", &hook.url][..], &home[..]].concat();
    let w = Watching::start(&env, &args).ready();
    let drifted = Watching::drifted(&env.ns, "web");
    w.wait_for(&drifted, 0.0);
    assert_eq!(
        w.sample(&format!("helm_drift_release_revision{{namespace=\"{}\",release=\"web\"}}", env.ns)),
        Some(1.0)
    );

    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    w.wait_for(&drifted, 1.0);
    eventually("one DriftDetected Event", Duration::from_secs(20), || events(&env, "DriftDetected").len() == 1);
    eventually("one notification", Duration::from_secs(20), || hook.count("DriftDetected") == 1);
    let event = &events(&env, "DriftDetected")[0];
    assert_eq!(event["involvedObject"]["name"], "web-config");
    let message = event["message"].as_str().unwrap();
    assert!(message.contains("/data/greeting") && !message.contains("edited"), "{message}");
    let note = &hook.received()[0];
    assert_eq!(note["release"]["name"], "web");
    assert_eq!(note["object"]["kind"], "ConfigMap");
    assert_eq!(note["object"]["verdict"], "changed");
    assert_eq!(note["object"]["differences"][0]["path"], "/data/greeting");
    // The README's metrics, each with what it says.
    assert_eq!(w.sample("helm_drift_events_total{reason=\"DriftDetected\"}"), Some(1.0));
    assert!(w.sample("helm_drift_api_requests_total{verb=\"list\"}").unwrap_or(0.0) >= 1.0, "{}", w.metrics());
    assert!(w.sample("helm_drift_api_requests_total{verb=\"get\"}").unwrap_or(0.0) >= 1.0, "{}", w.metrics());
    assert!(w.sample("helm_drift_watches").unwrap_or(0.0) >= 2.0, "records and ConfigMaps at least\n{}", w.metrics());
    assert_eq!(w.sample("helm_drift_ready"), Some(1.0));
    let checked =
        w.sample(&format!("helm_drift_last_check_timestamp_seconds{{namespace=\"{}\",release=\"web\"}}", env.ns));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    assert!(checked.is_some_and(|t| (now - t).abs() < 120.0), "{checked:?} vs {now}");

    // Two resyncs later: nothing repeated.
    let checks = w.checks();
    eventually("two resyncs", Duration::from_secs(20), || w.checks() >= checks + 2.0);
    assert_eq!(events(&env, "DriftDetected").len(), 1);
    assert_eq!(hook.count("DriftDetected"), 1);

    // A restarted watcher derives the same signature: nothing repeated either. (Its receiver
    // comes from HELM_DRIFT_NOTIFY, the README's other way to name one.)
    w.stop();
    let hook2 = Receiver::start();
    let w =
        Watching::start_with(&env, &[&["web"][..], &home[..]].concat(), &[("HELM_DRIFT_NOTIFY", hook2.url.as_str())])
            .ready();
    w.wait_for(&drifted, 1.0);
    assert_eq!(events(&env, "DriftDetected").len(), 1, "{}", w.logs_text());
    assert!(hook2.received().is_empty(), "{:?}", hook2.bodies());

    assert!(!w.logs_text().contains("edited"), "no value in the logs\n{}", w.logs_text());

    // Repaired by hand while no watcher runs: the next one says it is resolved, once.
    w.stop();
    env.drift(&["repair", "web"]).success();
    let w =
        Watching::start_with(&env, &[&["web"][..], &home[..]].concat(), &[("HELM_DRIFT_NOTIFY", hook2.url.as_str())])
            .ready();
    w.wait_for(&drifted, 0.0);
    eventually("one DriftResolved Event", Duration::from_secs(20), || events(&env, "DriftResolved").len() == 1);
    eventually("one resolved notification", Duration::from_secs(20), || hook2.count("DriftResolved") == 1);

    // A new revision is picked up.
    let chart = crate::support::chart_path("basic");
    env.helm(helm, &["upgrade", "web", chart.to_str().unwrap(), "--reuse-values", "--set", "replicas=3"]).success();
    w.wait_for(&format!("helm_drift_release_revision{{namespace=\"{}\",release=\"web\"}}", env.ns), 2.0);
    w.wait_for(&drifted, 0.0);

    // Uninstalled: its series go away.
    env.helm(helm, &["uninstall", "web"]).success();
    eventually("the release's series dropped", Duration::from_secs(30), || !w.metrics().contains(&drifted));
    assert_eq!(hook2.count("DriftDetected"), 0, "{:?}", hook2.bodies());
    let logs = w.log_lines();
    assert!(logs.iter().all(|l| l["time"].is_string() && l["level"].is_string() && l["msg"].is_string()));
    assert!(logs.iter().any(|l| l["msg"] == "drift resolved" && l["object"].as_str().unwrap().contains("web-config")));
    w.stop();
}

#[test]
fn detects_once_resolves_and_follows_the_release_helm3() {
    detects_once_resolves_and_follows_the_release(Helm::V3);
}

#[test]
fn detects_once_resolves_and_follows_the_release_helm4() {
    detects_once_resolves_and_follows_the_release(Helm::V4);
}

/// A deleted object and a secret's edit: both detected; the notification for the Secret carries
/// its path, never its value.
#[test]
fn deleted_objects_and_secrets_without_their_values() {
    let env = Env::with_full_chart(Helm::V4, "watch-secret");
    let hook = Receiver::start();
    let w = Watching::start(&env, &["app", "--notify", &hook.url]).ready();
    w.wait_for(&Watching::drifted(&env.ns, "app"), 0.0);
    env.merge_patch("secret", "app-creds", r#"{"stringData":{"password":"hunter2-watch"}}"#);
    env.kubectl(&["delete", "service", "app-web"]).success();
    eventually("two notifications", Duration::from_secs(30), || hook.count("DriftDetected") == 2);
    let bodies = hook.bodies().join("\n");
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode("hunter2-watch");
    assert!(!bodies.contains("hunter2-watch") && !bodies.contains(&encoded), "{bodies}");
    let notes = hook.received();
    let secret = notes.iter().find(|n| n["object"]["kind"] == "Secret").expect("the Secret's notification");
    assert_eq!(secret["object"]["differences"][0]["path"], "/data/password");
    let service = notes.iter().find(|n| n["object"]["kind"] == "Service").expect("the Service's notification");
    assert_eq!(service["object"]["verdict"], "missing");
    assert_eq!(
        w.sample(&format!("helm_drift_objects{{namespace=\"{}\",release=\"app\",verdict=\"missing\"}}", env.ns)),
        Some(1.0)
    );
}

/// Self-healing for a release that opted in (its storage label): the edit is undone without a new
/// revision; an editor that keeps re-applying its value makes the watcher give up on the object,
/// naming the editor; a release that did not opt in is left alone.
fn heals_and_gives_up_on_a_fight(helm: Helm) {
    let env = Env::new(&format!("watch-heal-{}", helm.tag()));
    env.install(helm, "web", "basic", &["--labels", "helm-drift.io/repair=true"]);
    env.install(helm, "other", "basic", &[]);
    let hook = Receiver::start();
    let args = [
        "--all",
        "--repair",
        "--repair-cooldown",
        "1s",
        "--fight-limit",
        "3",
        "--notify",
        &hook.url,
        "--trust-namespace",
        env.ns.as_str(),
    ];
    let w = Watching::start(&env, &args).ready();
    let greeting = |name: &str| env.get("configmap", name, "{.data.greeting}");
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    env.merge_patch("configmap", "other-config", r#"{"data":{"greeting":"edited"}}"#);
    eventually("the edit undone", Duration::from_secs(30), || greeting("web-config") == "hello");
    w.wait_for(&Watching::drifted(&env.ns, "web"), 0.0);
    w.wait_for(&Watching::drifted(&env.ns, "other"), 1.0);
    assert_eq!(greeting("other-config"), "edited", "a release that did not opt in is not repaired");
    let history = env.helm(helm, &["history", "web", "-o", "json"]).success().stdout();
    assert_eq!(serde_json::from_str::<serde_json::Value>(&history).unwrap().as_array().unwrap().len(), 1);
    assert_eq!(w.sample("helm_drift_repairs_total{result=\"applied\"}"), Some(1.0));

    // Something insists: a loop that puts its value back whenever it is gone.
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while events(&env, "DriftRepairAbandoned").is_empty() {
        assert!(std::time::Instant::now() < deadline, "no DriftRepairAbandoned:\n{}", w.logs_text());
        if greeting("web-config") != "mine" {
            env.kubectl(&[
                "patch",
                "configmap",
                "web-config",
                "--type",
                "merge",
                "-p",
                r#"{"data":{"greeting":"mine"}}"#,
                "--field-manager",
                "fighter",
            ])
            .success();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let abandoned = &events(&env, "DriftRepairAbandoned")[0];
    assert!(abandoned["message"].as_str().unwrap().contains("fighter"), "{abandoned}");
    eventually("the abandonment notified", Duration::from_secs(20), || hook.count("DriftRepairAbandoned") == 1);
    // The repair stopped: the fighter's value stays, drift is still reported.
    let repairs = w.sample("helm_drift_repairs_total{result=\"applied\"}");
    eventually("the fighter's value live", Duration::from_secs(20), || greeting("web-config") == "mine");
    // Two touches, one after the other: the watcher evaluates in turn, so once the second
    // evaluation is counted, the first one's healing decision has been made.
    for touch in ["once", "twice"] {
        let checks = w.checks();
        let label = format!(r#"{{"metadata":{{"labels":{{"touched":"{touch}"}}}}}}"#);
        env.merge_patch("configmap", "web-config", &label);
        eventually("the watcher to look again", Duration::from_secs(20), || w.checks() > checks);
    }
    assert_eq!(greeting("web-config"), "mine");
    assert_eq!(w.sample("helm_drift_repairs_total{result=\"applied\"}"), repairs);
    w.wait_for(&Watching::drifted(&env.ns, "web"), 1.0);
}

#[test]
fn heals_and_gives_up_on_a_fight_helm3() {
    heals_and_gives_up_on_a_fight(Helm::V3);
}

#[test]
fn heals_and_gives_up_on_a_fight_helm4() {
    heals_and_gives_up_on_a_fight(Helm::V4);
}

/// Two watchers with --leader-elect: one acts (metrics, Events), the other stands by; when the
/// leader goes away the standby takes over.
#[test]
fn two_watchers_one_leader() {
    let env = Env::new("watch-leader");
    env.install(Helm::V4, "web", "basic", &[]);
    // The Lease's namespace named: the watchers' own, where their signature key is kept.
    let lease =
        ["web", "--leader-elect", "--lease-name", "drift-test", "--lease-duration", "4s", "--lease-namespace", &env.ns];
    let a = Watching::start(&env, &lease).ready();
    let b = Watching::start(&env, &lease).ready();
    let drifted = Watching::drifted(&env.ns, "web");
    let leader = |w: &Watching| w.sample("helm_drift_leader");
    eventually("one leader", Duration::from_secs(30), || {
        let (x, y) = (leader(&a), leader(&b));
        (x == Some(1.0)) != (y == Some(1.0))
    });
    let (acting, standby) = if leader(&a) == Some(1.0) { (a, b) } else { (b, a) };
    acting.wait_for(&drifted, 0.0);
    assert_eq!(standby.sample(&drifted), None, "the standby reports nothing");
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    acting.wait_for(&drifted, 1.0);
    eventually("one Event", Duration::from_secs(20), || events(&env, "DriftDetected").len() == 1);
    assert_eq!(standby.sample(&drifted), None);
    assert_eq!(standby.get("/healthz").0, 200);
    acting.kill();
    eventually("the standby takes over", Duration::from_secs(40), || standby.sample(&drifted) == Some(1.0));
    // Its first full check (which records Events) is over once it says so: only then count.
    eventually("the new leader's first check", Duration::from_secs(20), || {
        standby.log_lines().iter().any(|l| l["msg"] == "ready: first full check done")
    });
    assert_eq!(events(&env, "DriftDetected").len(), 1, "the new leader repeats nothing");
}

helm_matrix! {
    /// `helm drift watch` through helm: helm does not pass SIGTERM on to a plugin, so the watcher
    /// notices that helm is gone and stops rather than run on alone.
    fn watch_through_helm_stops_with_helm(helm: Helm) {
        let env = Env::new(&format!("watch-via-helm-{}", helm.tag()));
        let dir = env.plugin_dir();
        env.helm(helm, &["plugin", "install", dir.to_str().unwrap()]).success();
        let marker = format!("gone-{}-{}", helm.tag(), std::process::id());
        let args = ["drift", "watch", "-l", &format!("name={marker}"), "--metrics-address", "127.0.0.1:0"];
        let mut helm_process = env.helm(helm, &args).into_command();
        let mut child =
            helm_process.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
        let running = || {
            let out = std::process::Command::new("pgrep").args(["-f", &marker]).output().unwrap();
            String::from_utf8_lossy(&out.stdout).lines().count()
        };
        eventually("helm and the plugin running", Duration::from_secs(20), || running() >= 2);
        let _ = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let _ = child.wait();
        eventually("the plugin gone with helm", Duration::from_secs(20), || running() == 0);
        env.helm(helm, &["plugin", "uninstall", "drift"]).success();
    }
}

/// The same drift again after it was resolved is news again (the Event is counted up, a new
/// notification goes out); a release installed while watching is picked up.
#[test]
fn recurring_drift_and_new_releases() {
    let env = Env::new("watch-again");
    let hook = Receiver::start();
    let w = Watching::start(&env, &["--all", "--notify", &hook.url]).ready();
    env.install(Helm::V3, "late", "basic", &[]);
    let drifted = Watching::drifted(&env.ns, "late");
    w.wait_for(&drifted, 0.0);
    for round in 1..=2 {
        env.merge_patch("configmap", "late-config", r#"{"data":{"greeting":"again"}}"#);
        w.wait_for(&drifted, 1.0);
        eventually("the drift notified", Duration::from_secs(20), || hook.count("DriftDetected") == round);
        env.merge_patch("configmap", "late-config", r#"{"data":{"greeting":"hello"}}"#);
        w.wait_for(&drifted, 0.0);
        eventually("the resolution notified", Duration::from_secs(20), || hook.count("DriftResolved") == round);
    }
    let detected = events(&env, "DriftDetected");
    assert_eq!(detected.len(), 1, "one Event, counted up");
    assert_eq!(detected[0]["count"], 2);
    let sigs: Vec<_> = hook.received().iter().map(|n| n["signature"].as_str().unwrap().to_string()).collect();
    assert!(sigs.iter().all(|s| *s == sigs[0]), "the same drift, the same signature: {sigs:?}");
}

/// A receiver that is down: the notification fails after its retries and is counted, and
/// detection goes on meanwhile (the metric and the Event do not wait for it).
#[test]
fn a_failing_receiver_never_holds_up_detection() {
    let env = Env::new("watch-hook-down");
    env.install(Helm::V4, "web", "basic", &[]);
    // A receiver that takes connections and never answers, held open by the test.
    let hanging = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = hanging.local_addr().unwrap();
    let url = format!("http://{address}/hook");
    let w = Watching::start(&env, &["web", "--notify", &url]).ready();
    let drifted = Watching::drifted(&env.ns, "web");
    let missing = format!("helm_drift_objects{{namespace=\"{}\",release=\"web\",verdict=\"missing\"}}", env.ns);
    env.kubectl(&["delete", "configmap", "web-config"]).success();
    w.wait_for(&drifted, 1.0);
    eventually("the Event", Duration::from_secs(10), || events(&env, "DriftDetected").len() == 1);
    // While that notification hangs, a second deletion is still detected and recorded.
    env.kubectl(&["delete", "service", "web-web"]).success();
    w.wait_for(&missing, 2.0);
    eventually("the second Event", Duration::from_secs(10), || events(&env, "DriftDetected").len() == 2);
    assert_eq!(
        w.sample("helm_drift_notifications_total{result=\"failed\"}"),
        Some(0.0),
        "the first notification is still pending: detection went on without it"
    );
    // The receiver goes away: the pending notifications fail after their attempts, counted.
    drop(hanging);
    eventually("the failures counted", Duration::from_secs(60), || {
        w.sample("helm_drift_notifications_total{result=\"failed\"}") == Some(2.0)
    });
    let logs = w.log_lines();
    let failed = logs.iter().find(|l| l["msg"] == "notification failed").expect("logged");
    assert_eq!(failed["url"], format!("http://{address}/…"), "the URL without its path");
    assert!(failed["error"].as_str().unwrap().contains("after 4 attempts"), "{failed}");
}

/// `--debounce`: changes close together are compared once, after the quiet period. Two
/// deletions by one kubectl call make one comparison that sees both, and it comes no sooner than
/// the debounce after the first (a lower bound: a loaded machine only makes it later). The
/// objects the install just wrote are touched by the watcher's first lists (written after the
/// full check began): that comparison is waited for first (`helm_drift_pending_releases` 0).
#[test]
fn changes_within_the_debounce_are_compared_once() {
    let env = Env::new("watch-debounce");
    env.install(Helm::V4, "web", "basic", &[]);
    let debounce = Duration::from_secs(6);
    let w = Watching::start(&env, &["web", "--debounce", "6s", "--resync", "10m"]).ready();
    let missing = format!("helm_drift_objects{{namespace=\"{}\",release=\"web\",verdict=\"missing\"}}", env.ns);
    eventually("no comparison pending", Duration::from_secs(30), || {
        w.sample("helm_drift_pending_releases") == Some(0.0)
    });
    let before = w.checks();
    let started = std::time::Instant::now();
    env.kubectl(&["delete", "configmap/web-config", "service/web-web"]).success();
    let mut compared = None;
    eventually("the comparison after the changes", Duration::from_secs(60), || {
        let checks = w.checks();
        if checks > before {
            compared = Some((started.elapsed(), checks, w.sample(&missing)));
        }
        compared.is_some()
    });
    let (after, checks, seen) = compared.unwrap();
    assert!(after >= debounce, "compared {after:?} after the first change, before the {debounce:?} debounce");
    assert_eq!(checks, before + 1.0, "one comparison for both changes\n{}", w.logs_text());
    assert_eq!(seen, Some(2.0), "that comparison saw both deletions\n{}", w.metrics());
    eventually("one Event per deleted object", Duration::from_secs(20), || events(&env, "DriftDetected").len() == 2);
}

/// A release installed with the opt-in label while the watcher runs heals without waiting for
/// the resync.
#[test]
fn a_release_that_opts_in_while_watching_heals() {
    let env = Env::new("watch-opt-in");
    let w =
        Watching::start(&env, &["--all", "--repair", "--repair-cooldown", "1s", "--trust-namespace", env.ns.as_str()])
            .ready();
    env.install(Helm::V3, "late", "basic", &["--labels", "helm-drift.io/repair=true"]);
    w.wait_for(&Watching::drifted(&env.ns, "late"), 0.0);
    env.merge_patch("configmap", "late-config", r#"{"data":{"greeting":"edited"}}"#);
    let greeting = || env.get("configmap", "late-config", "{.data.greeting}");
    eventually("the edit undone", Duration::from_secs(30), || greeting() == "hello");
    w.wait_for("helm_drift_repairs_total{result=\"applied\"}", 1.0);
}

/// Usage errors are one clear line and exit 1, before anything starts.
#[test]
fn watch_usage_errors() {
    let env = Env::new("watch-usage");
    env.drift(&["watch"]).code(1).stderr_has("name a release to watch, or use --all");
    env.drift(&["watch", "-A", "--show-secrets"]).code(1).stderr_has("never with secret values");
    env.drift(&["watch", "-A", "--metrics-address", "not-an-address"])
        .code(1)
        .stderr_has("cannot listen on --metrics-address not-an-address");
    env.drift(&["watch", "-A", "--notify", "ftp://example.invalid/x", "--metrics-address", "127.0.0.1:0"])
        .code(1)
        .stderr_has("only http and https URLs are supported");
}

/// A name that matches no release (a typo in a deployment's arguments): the watcher says so at
/// start and in `/readyz`, and `helm_drift_selected_releases` counts what it watches; once the
/// release exists the warning is gone.
#[test]
fn names_that_match_no_release_are_said() {
    let env = Env::new("watch-missing");
    env.install(Helm::V4, "web", "basic", &[]);
    let w = Watching::start(&env, &["web", "wbe", "--resync", "2s"]).ready();
    assert_eq!(w.sample("helm_drift_selected_releases"), Some(1.0));
    let (_, body) = w.get("/readyz");
    assert!(body.contains("warning: no release named wbe"), "{body}");
    assert!(w.log_lines().iter().any(|l| l["level"] == "warn" && l["releases"] == "wbe"), "{}", w.logs_text());
    env.install(Helm::V4, "wbe", "basic", &[]);
    w.wait_for("helm_drift_selected_releases", 2.0);
    assert_eq!(w.get("/readyz").1, "ready\n");
}

/// `--notify-format slack`: the receiver gets `{"text": ...}` naming the release, the object and
/// the path, and no value.
#[test]
fn slack_notifications_are_one_text() {
    let env = Env::new("watch-slack");
    env.install(Helm::V4, "web", "basic", &[]);
    let hook = Receiver::start();
    let w = Watching::start(&env, &["web", "--notify", &hook.url, "--notify-format", "slack", "--cluster", "prod-eu"])
        .ready();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"s3cr3t-edit"}}"#);
    w.wait_for(&Watching::drifted(&env.ns, "web"), 1.0);
    eventually("the notification", Duration::from_secs(20), || !hook.bodies().is_empty());
    let note = &hook.received()[0];
    let keys: Vec<&String> = note.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["text"], "{note}");
    let text = note["text"].as_str().unwrap();
    assert!(text.starts_with("[prod-eu] DriftDetected "), "the cluster first: {text}");
    assert!(text.contains("web-config") && text.contains(&env.ns) && text.contains("/data/greeting"), "{text}");
    assert!(!text.contains("s3cr3t-edit"), "no value in a notification: {text}");
}

/// The watcher on Helm's other storage drivers: ConfigMap records are watched like Secrets (drift
/// seen at once, a new revision followed); SQL records cannot be watched, so a new revision is
/// seen at the next resync.
#[test]
fn watch_with_the_configmap_and_sql_drivers() {
    let chart = crate::support::chart_path("basic");
    let chart = chart.to_str().unwrap();
    let revision = |env: &Env| format!("helm_drift_release_revision{{namespace=\"{}\",release=\"web\"}}", env.ns);

    let env = Env::new("watch-cm-driver");
    let cm = [("HELM_DRIVER", "configmap")];
    env.helm(Helm::V4, &["install", "web", chart]).env("HELM_DRIVER", "configmap").success();
    let w = Watching::start_with(&env, &["web"], &cm).ready();
    let drifted = Watching::drifted(&env.ns, "web");
    w.wait_for(&drifted, 0.0);
    env.kubectl(&["delete", "configmap", "web-config"]).success();
    w.wait_for(&drifted, 1.0);
    env.helm(Helm::V4, &["upgrade", "web", chart, "--reuse-values", "--set", "replicas=3"])
        .env("HELM_DRIVER", "configmap")
        .success();
    w.wait_for(&revision(&env), 2.0);
    w.wait_for(&drifted, 0.0);
    w.stop();

    let conn = testcluster::postgres().connection_string("watch_sql").unwrap();
    let env = Env::new("watch-sql-driver");
    let sql = [("HELM_DRIVER", "sql"), ("HELM_DRIVER_SQL_CONNECTION_STRING", conn.as_str())];
    env.helm(Helm::V4, &["install", "web", chart]).env("HELM_DRIVER", "sql").env(sql[1].0, &conn).success();
    let w = Watching::start_with(&env, &["web", "--resync", "2s"], &sql).ready();
    let drifted = Watching::drifted(&env.ns, "web");
    w.wait_for(&drifted, 0.0);
    env.kubectl(&["delete", "configmap", "web-config"]).success();
    w.wait_for(&drifted, 1.0);
    env.helm(Helm::V4, &["upgrade", "web", chart, "--reuse-values", "--set", "replicas=3"])
        .env("HELM_DRIVER", "sql")
        .env(sql[1].0, &conn)
        .success();
    w.wait_for(&revision(&env), 2.0);
    w.wait_for(&drifted, 0.0);
    assert!(
        w.log_lines()
            .iter()
            .any(|l| l["msg"] == "the sql driver cannot be watched: new revisions are seen at each resync"),
        "{}",
        w.logs_text()
    );
    w.stop();
}

/// Errors are counted by reason (`helm_drift_errors_total`) and logged: here a baseline file
/// that cannot be read.
#[test]
fn errors_are_counted_by_reason() {
    let env = Env::new("watch-errors");
    env.install(Helm::V4, "web", "basic", &[]);
    let file = env.home().join("broken-baseline.yaml");
    std::fs::write(&file, "entries: [not: a: baseline\n").unwrap();
    let w = Watching::start(&env, &["web", "--baseline", file.to_str().unwrap()]);
    eventually("the error counted", Duration::from_secs(30), || {
        w.sample("helm_drift_errors_total{reason=\"baseline\"}").unwrap_or(0.0) >= 1.0
    });
    assert!(w.log_lines().iter().any(|l| l["msg"] == "cannot read the baseline"), "{}", w.logs_text());
}

/// One drift is one Event over a minute (issue 84): without a signature key in the cluster (no
/// `--pause-namespace`, Helm 3's release, `-n NS --all`) and with one (Helm 4's), through a
/// resync every 2 s and the same value written again. A signature that changed inside the
/// process would write a second Event. (Another value on the same path is another drift, with
/// its own Event: `recurring_drift_and_new_releases`.)
#[test]
fn one_drift_is_one_event_over_a_minute_with_and_without_a_key() {
    let keyless = Env::new("watch-once-nokey");
    let keyed = Env::new("watch-once-key");
    keyless.install(Helm::V3, "web", "basic", &[]);
    keyed.install(Helm::V4, "web", "basic", &[]);
    let ns_keyless = ["-n", keyless.ns.as_str(), "--all", "--resync", "2s"];
    let a = Watching::start(&keyless, &ns_keyless).ready();
    let b = Watching::start(&keyed, &["web", "--resync", "2s", "--pause-namespace", keyed.ns.as_str()]).ready();
    for env in [&keyless, &keyed] {
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    }
    for (env, w) in [(&keyless, &a), (&keyed, &b)] {
        w.wait_for(&Watching::drifted(&env.ns, "web"), 1.0);
        eventually("the drift's Event", Duration::from_secs(20), || events(env, "DriftDetected").len() == 1);
    }
    // The same value written again (an apply that changes nothing): the same drift, not news.
    for env in [&keyless, &keyed] {
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    }
    let until = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < until {
        for (env, w) in [(&keyless, &a), (&keyed, &b)] {
            let seen = events(env, "DriftDetected");
            assert_eq!(seen.len(), 1, "{}: one Event per drift\n{seen:#?}\n{}", env.ns, w.logs_text());
            assert_eq!(seen[0]["count"].as_u64().unwrap_or(1), 1, "{}: counted once\n{:#?}", env.ns, seen[0]);
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    assert!(a.checks() >= 20.0 && b.checks() >= 20.0, "resyncs ran: {} and {}", a.checks(), b.checks());
    a.stop();
    b.stop();
}

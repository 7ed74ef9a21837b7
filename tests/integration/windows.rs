//! Repair windows (`watch --repair-window`, `--repair-deny-window`), as Argo CD's sync windows:
//! outside its window a drifted release is reported as waiting, with when the window opens,
//! and healed once it opens (a window a few seconds ahead); a deny window holds self-healing
//! for the releases its selector names, and `helm drift repair` by hand is never held.

use crate::support::{Env, Helm, eventually};
use crate::watching::Watching;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `HH:MM:SS` (UTC) of a Unix time.
fn clock(unix: u64) -> String {
    let s = unix % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

helm_matrix! {
    fn self_healing_waits_for_its_window_and_a_deny_window_holds_it(helm: Helm) {
        let env = Env::new(&format!("windows-{}", helm.tag()));
        env.install(helm, "web", "basic", &["--labels", "helm-drift.io/repair=true"]);
        env.install(helm, "held", "basic", &["--labels", "helm-drift.io/repair=true"]);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let opens = now + 12;
        let window = format!("* {}-{} UTC", clock(opens), clock(opens + 3600));
        let ns = env.ns.clone();
        let args = [
            "--all", "--repair", "--repair-cooldown", "1s", "--trust-namespace", &ns, "--repair-window", &window,
            "--repair-deny-window", "* 00:00-23:59:59 UTC @ name=held",
            "--repair-deny-window", "* 00:00-23:59:59 UTC @ freeze=now",
        ];
        let w = Watching::start(&env, &args).ready();
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
        env.merge_patch("configmap", "held-config", r#"{"data":{"greeting":"edited"}}"#);
        let waiting = |release: &str| {
            format!("helm_drift_repair_window_opens_timestamp_seconds{{namespace=\"{ns}\",release=\"{release}\"}}")
        };
        w.wait_for(&waiting("web"), opens as f64);
        let greeting = |name: &str| env.get("configmap", &format!("{name}-config"), "{.data.greeting}");
        let early = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        if early < opens {
            assert_eq!(greeting("web"), "edited", "healed before its window opened");
        }
        let said = w.log_lines();
        let line = said.iter().find(|l| l["msg"] == "repair waits for its window" && l["release"] == format!("{ns}/web"));
        let reason = line.map(|l| l["reason"].as_str().unwrap().to_string()).unwrap_or_default();
        assert!(reason.starts_with(&format!("waiting for window {window} (opens ")), "{}", w.logs_text());
        // The window opens: healed, and no longer waiting.
        eventually("web healed once its window opened", Duration::from_secs(40), || greeting("web") == "hello");
        let healed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        assert!(healed >= opens, "healed at {healed}, the window opened at {opens}");
        eventually("web no longer waiting", Duration::from_secs(10), || w.sample(&waiting("web")).is_none());
        // The deny window holds `held`, whatever the allow window says; by hand it is repaired.
        // Its metric says when it may heal again: when the deny window closes, later today.
        eventually("held waiting", Duration::from_secs(20), || w.sample(&waiting("held")).is_some_and(|t| t > now as f64));
        assert_eq!(greeting("held"), "edited");
        let held = said.iter().chain(w.log_lines().iter()).any(|l| {
            l["release"] == format!("{ns}/held")
                && l["reason"].as_str().is_some_and(|r| r.starts_with("deny window * 00:00-23:59:59 UTC @ name=held is open"))
        });
        assert!(held, "{}", w.logs_text());
        env.drift(&["repair", "held"]).success();
        assert_eq!(greeting("held"), "hello");
        assert!(w.sample("helm_drift_repairs_total{result=\"waiting\"}").unwrap_or(0.0) >= 2.0, "{}", w.metrics());
        // Labelled into a deny window while watching: held from then on, not at the next resync.
        let before = w.checks();
        env.kubectl(&["label", "secret", "-l", "owner=helm,name=web", "freeze=now"]).success();
        eventually("the label seen", Duration::from_secs(20), || w.checks() > before);
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"frozen"}}"#);
        eventually("web held by the freeze window", Duration::from_secs(20), || w.sample(&waiting("web")).is_some());
        assert_eq!(greeting("web"), "frozen");
        w.stop();
    }
}

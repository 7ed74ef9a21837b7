//! Break-glass (`helm drift pause`): a pause held for a short while is reported (metric, a
//! DriftPaused Event with its reason and who wrote it) and the drift is not healed, then healed
//! once the pause ends by itself; `check` still reports the drift; a pause written next to the
//! release (where whoever may write Secrets or ConfigMaps there could write one) has no effect.

use crate::support::{Env, Helm, eventually};
use crate::watching::{Watching, events};
use std::time::{Duration, Instant};

helm_matrix! {
    fn a_pause_holds_healing_until_it_ends_and_one_next_to_the_release_does_nothing(helm: Helm) {
        let env = Env::new(&format!("pause-{}", helm.tag()));
        let home = format!("{}-pauses", env.ns);
        env.kubectl(&["create", "namespace", &home]).success();
        env.install(helm, "web", "basic", &["--labels", "helm-drift.io/repair=true"]);
        env.install(helm, "other", "basic", &["--labels", "helm-drift.io/repair=true"]);
        let ns = env.ns.clone();
        // A tenant's forged pause for `other`, in the release's own namespace: not read.
        let forged = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: helm-drift-pause-forged\n  labels: {{helm-drift.io/pause: \"true\"}}\ndata: {{namespace: {ns}, release: other, reason: mine, by: tenant, until: \"2999-01-01T00:00:00Z\"}}\n"
        );
        env.apply_yaml("forged-pause", &forged);
        let args = [
            "--all", "--repair", "--repair-cooldown", "1s", "--trust-namespace", &ns, "--pause-namespace", &home,
        ];
        let w = Watching::start(&env, &args).ready();
        // The pause ends 10 s after it is written: not before `ends`.
        let ends = Instant::now() + Duration::from_secs(10);
        // A tenant who may write ConfigMaps in its own namespace announces 256 watchers that heal
        // every namespace: `pause` without --pause-namespace reads announcements only in the
        // chart's usual home (none here), so it refuses, names where the others are, and
        // writes nothing, neither the pause nor its reason.
        let forged: String = (0..256)
            .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: helm-drift-watcher-f{i:03}\n  labels: {{helm-drift.io/watcher: \"true\"}}\ndata: {{namespaces: \"*\", fleet: \"false\", renewed: \"{}\", everySeconds: \"86400\"}}\n", jiff::Timestamp::now()))
            .collect();
        env.apply_yaml("forged-announcements", &forged);
        let refused = env.drift(&["pause", "web", "--for", "60s", "--reason", "INC-41: secret plan"]).code(1);
        refused.stderr_has(&format!("no running watcher that heals releases of namespace {ns} reads pauses in namespace helm-drift"));
        refused.stderr_has("are not read: a pause goes only to a namespace you name");
        let pauses = env.kubectl(&["get", "configmaps", "-l", "helm-drift.io/pause", "-o", "name"]).success().stdout();
        assert_eq!(pauses.trim(), "configmap/helm-drift-pause-forged", "nothing written for the tenant: {pauses}");
        // Where the watcher reads pauses is named (or $HELM_DRIFT_PAUSE_NAMESPACE).
        // The reason carries a terminal control sequence: it reaches no terminal as one.
        let paused = env
            .drift(&["pause", "web", "--for", "10s", "--reason", "INC-42: kept by hand\u{1b}[2J", "--pause-namespace", &home])
            .success();
        paused.stdout_has(&format!("release {ns}/web paused until ")).stdout_has("(INC-42: kept by hand\\u001b[2J)");
        paused.stdout_has(&format!("ConfigMap {home}/helm-drift-pause-"));
        assert!(!paused.stdout().contains(" by unknown"), "who paused, from the API server: {}", paused.stdout());

        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"kept"}}"#);
        env.merge_patch("configmap", "other-config", r#"{"data":{"greeting":"edited"}}"#);
        let greeting = |name: &str| env.get("configmap", &format!("{name}-config"), "{.data.greeting}");
        eventually("other healed: the forged pause is not read", Duration::from_secs(30), || greeting("other") == "hello");
        let series = format!("helm_drift_release_paused{{namespace=\"{ns}\",release=\"web\"}}");
        eventually("web reported paused", Duration::from_secs(20), || w.sample(&series).is_some());
        eventually("a DriftPaused Event", Duration::from_secs(20), || !events(&env, "DriftPaused").is_empty());
        let event = &events(&env, "DriftPaused")[0];
        assert_eq!(event["involvedObject"]["name"], "web-config");
        let message = event["message"].as_str().unwrap();
        assert!(message.contains("is paused until ") && message.contains(", as the pause says)") && message.contains("INC-42: kept by hand\\u001b[2J"), "{message}");
        assert!(!message.contains('\u{1b}'), "every Event message escaped: {message:?}");
        // A pause hides nothing from check.
        env.drift(&["check", "web"]).code(2).stdout_has("changed      ConfigMap");
        if Instant::now() < ends {
            assert_eq!(greeting("web"), "kept", "healed during its pause");
        }
        // It ends by itself: healed.
        eventually("web healed once the pause ended", Duration::from_secs(40), || greeting("web") == "hello");
        assert!(Instant::now() >= ends, "healed before the pause ended");
        eventually("no longer paused", Duration::from_secs(20), || w.sample(&series).is_none());
        // A pause where no watcher reads them is refused at the prompt, and nothing is written.
        let empty = format!("{ns}-nowhere");
        let nowhere = env.drift(&["pause", "other", "--for", "1h", "--reason", "x", "--pause-namespace", &empty]).code(1);
        nowhere.stderr_has(&format!("no running watcher that heals releases of namespace {ns} reads pauses in namespace {empty}"));
        let written = env.kubectl(&["get", "configmaps", "-l", "helm-drift.io/pause", "-o", "name"]).success().stdout();
        assert_eq!(written.trim(), "configmap/helm-drift-pause-forged", "only the tenant's own forged pause: {written}");
        // Ended by hand.
        env.drift(&["pause", "other", "--for", "1h", "--reason", "x", "--pause-namespace", &home]).success();
        env.drift(&["pause", "other", "--end", "--pause-namespace", &home]).success().stdout_has("pause of release");
        w.stop();
    }
}

/// A fleet's pauses live in its management cluster: `helm drift pause --cluster eu` there holds
/// that release on cluster eu (paused, then healed once the pause ends), and a pause written on
/// the workload cluster itself, where whoever may write there could write one, holds nothing.
#[test]
fn a_fleets_pauses_are_read_from_its_management_cluster() {
    let m = Env::new("pause-fleet-m");
    crate::inventory::serve_cluster_crd(&m);
    let w = Env::without_admission_policies("pause-fleet-w");
    w.install(Helm::V3, "web3", "basic", &["--labels", "helm-drift.io/repair=true"]);
    w.install(Helm::V4, "web4", "basic", &["--labels", "helm-drift.io/repair=true"]);
    let kubeconfig = w.kubectl(&["config", "view", "--raw", "--flatten", "--minify"]).success().stdout();
    crate::inventory::cluster(&m, "eu", "fleet: pause", true, Some(&kubeconfig));
    // On the workload cluster, a namespace named as the fleet's home, and a pause in it for web3.
    w.kubectl(&["create", "namespace", &m.ns]).success();
    let at_home = ["--pause-namespace", m.ns.as_str()];
    // `helm drift pause` refuses it there (no watcher announces it reads pauses on that
    // cluster), so it is written by hand, as whoever may write there could.
    let forged = ["pause", "web3", "-n", &w.ns, "--for", "1h", "--reason", "forged"];
    w.drift(&[&forged[..], &at_home[..]].concat()).code(1).stderr_has("would hold nothing");
    let cm = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: helm-drift-pause-forged\n  labels: {{helm-drift.io/pause: \"true\"}}\ndata: {{namespace: {}, release: web3, reason: forged, by: tenant, until: \"2999-01-01T00:00:00Z\"}}\n",
        w.ns
    );
    let file = w.home().join("forged-fleet-pause.yaml");
    std::fs::write(&file, cm).unwrap();
    // The last -n wins: in the namespace named as the fleet's home, on the workload cluster.
    w.kubectl(&["apply", "-n", &m.ns, "-f", file.to_str().unwrap()]).success();
    let args = [
        "--all",
        "-n",
        &w.ns,
        "--clusters",
        "capi",
        "--clusters-namespace",
        &m.ns,
        "--clusters-interval",
        "1s",
        "--lease-namespace",
        &m.ns,
        "--repair",
        "--repair-cooldown",
        "1s",
        "--trust-namespace",
        &w.ns,
    ];
    let watcher = Watching::start(&m, &args).ready();
    let ends = Instant::now() + Duration::from_secs(10);
    let pause = ["pause", "web4", "-n", &w.ns, "--cluster", "eu", "--for", "10s", "--reason", "INC-7"];
    m.drift(&[&pause[..], &at_home[..]].concat())
        .success()
        .stdout_has(&format!("release {}/web4 on cluster eu paused until", w.ns));

    for release in ["web3", "web4"] {
        w.merge_patch("configmap", &format!("{release}-config"), r#"{"data":{"greeting":"kept"}}"#);
    }
    let greeting = |r: &str| w.get("configmap", &format!("{r}-config"), "{.data.greeting}");
    eventually("web3 healed: a pause on the workload cluster is not read", Duration::from_secs(30), || {
        greeting("web3") == "hello"
    });
    let series =
        format!("helm_drift_release_paused{{cluster=\"pause-fleet-m/eu\",namespace=\"{}\",release=\"web4\"}}", w.ns);
    eventually("web4 reported paused on eu", Duration::from_secs(20), || {
        let found = watcher.sample(&series).is_some();
        if !found && Instant::now() > ends {
            panic!(
                "{} {}\n{}",
                greeting("web4"),
                watcher
                    .metrics()
                    .lines()
                    .filter(|l| l.contains("paused") || l.contains("repairs"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                watcher.logs_text()
            );
        }
        found
    });
    if Instant::now() < ends {
        assert_eq!(greeting("web4"), "kept", "healed during its pause");
    }
    eventually("web4 healed once the pause ended", Duration::from_secs(40), || greeting("web4") == "hello");
    assert!(Instant::now() >= ends, "healed before the pause ended");
    watcher.stop();
}

/// A watcher given no --pause-namespace reads pauses in its session's namespace, which may be a
/// tenant's: a pause written there holds only that namespace's releases (a tenant cannot pause
/// the healing of another namespace's release), and the watcher announces just that, so
/// `helm drift pause` of another namespace's release does not send the pause there.
#[test]
fn pauses_in_a_namespace_nobody_named_hold_only_its_own_releases() {
    let p = Env::new("pause-own-p");
    let t = Env::new("pause-own-t");
    let select = "pause-own=yes";
    p.install(Helm::V4, "web", "basic", &["--labels", &format!("helm-drift.io/repair=true,{select}")]);
    let pns = p.ns.clone();
    let forged = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: helm-drift-pause-tenant\n  labels: {{helm-drift.io/pause: \"true\"}}\ndata: {{namespace: {pns}, release: web, reason: mine, by: tenant, until: \"2999-01-01T00:00:00Z\"}}\n"
    );
    t.apply_yaml("tenant-pause", &forged);
    let args = ["-A", "-l", select, "--repair", "--repair-cooldown", "1s", "--trust-namespace", &pns];
    let w = Watching::start(&t, &args).ready();
    p.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    let greeting = || p.get("configmap", "web-config", "{.data.greeting}");
    eventually("healed despite the tenant's pause", Duration::from_secs(30), || greeting() == "hello");
    let said = t.kubectl(&["get", "configmaps", "-l", "helm-drift.io/watcher", "-o", "json"]).success().stdout();
    let doc: serde_json::Value = serde_json::from_str(&said).unwrap();
    let items = doc["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{said}");
    assert_eq!(items[0]["data"]["namespaces"], t.ns.as_str(), "announced for its own namespace only: {said}");
    let refused = p.drift(&["pause", "web", "--for", "1m", "--reason", "x", "--pause-namespace", &t.ns]).code(1);
    refused.stderr_has("would hold nothing");
    w.stop();
}

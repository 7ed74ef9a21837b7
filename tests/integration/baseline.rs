//! Accepted drift: `accept` records a release's drift in a baseline (a file, or a ConfigMap next
//! to the release); `check` then fails only on new or changed drift, shows accepted drift as
//! accepted, and reports entries whose drift is gone as stale.

use crate::support::{Env, Helm, eventually};
use crate::watching::Watching;
use std::time::Duration;

fn accept_then_check(helm: Helm, store: &str) {
    let env = Env::new(&format!("base-{}-{}", if store == "cluster" { "cm" } else { "file" }, helm.tag()));
    env.install(helm, "app", "repairable", &[]);
    env.kubectl(&["scale", "deployment", "app-web", "--replicas=4"]).success();
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"t0p-s3cret-value"}}"#);
    let file = env.home().join("baseline.yaml");
    // The cluster store kept where the operator names (a namespace only the platform team writes).
    let home = format!("{}-baselines", env.ns);
    if store == "cluster" {
        env.kubectl(&["create", "namespace", &home]).success();
    }
    let baseline = if store == "cluster" { format!("cluster={home}") } else { file.display().to_string() };
    let with = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["--baseline", baseline.as_str()]);
        env.drift(&a)
    };
    if store == "cluster" {
        with(&["check", "app"]).code(2);
    } else {
        // A named file that does not exist yet is an error, never an empty baseline.
        with(&["check", "app"]).code(1).stderr_has("no such file");
    }
    // The ConfigMap baseline with Helm 4 records what the accept page shows.
    let shown = store == "cluster" && helm == Helm::V4;
    let accepted = if shown {
        crate::support::example("example-accept", &env, &["accept", "app", "--baseline", &baseline], "shop")
    } else {
        with(&["accept", "app"]).success()
    };
    accepted.stdout_has("app: accepted 2 drifts into ");
    let out = if shown {
        crate::support::example("example-accepted-check", &env, &["check", "app", "--baseline", &baseline], "shop")
    } else {
        with(&["check", "app"]).code(0)
    };
    out.stdout_has("accepted     Deployment").stdout_has("✓ spec.replicas (accepted: changed)");
    // The baseline holds hashes, never values.
    let text = if store == "cluster" {
        let name = format!("helm-drift-baseline.{}.app", env.ns);
        env.kubectl(&["get", "configmap", "-n", &home, &name, "-o", "jsonpath={.data.baseline\\.yaml}"])
            .success()
            .stdout()
    } else {
        std::fs::read_to_string(&file).unwrap()
    };
    assert!(text.contains("sha256:") && text.contains("path: /spec/replicas"), "{text}");
    assert!(!text.contains("t0p-s3cret") && !text.contains(": 4\n"), "no value is written\n{text}");
    // Changing an accepted value again is new drift; the old entry says it changed (not gone).
    env.kubectl(&["scale", "deployment", "app-web", "--replicas=5"]).success();
    let out = with(&["check", "app"]).code(2);
    out.stdout_has("~ spec.replicas: 2 -> 5").stdout_has(&format!(
        "baseline: accepted apps/v1 Deployment {}/app-web /spec/replicas drifts again with another value, reported below (helm drift accept app takes the new value)",
        env.ns
    ));
    assert!(!out.stdout().contains("drift is gone"), "{}", out.dump());
    // Repaired: both entries are stale, and --prune drops them.
    env.drift(&["repair", "app"]).success();
    with(&["check", "app"]).code(0).stdout_has("baseline: stale entry v1 ConfigMap");
    with(&["accept", "app", "--prune"]).success().stdout_has("2 stale dropped");
    let json = with(&["check", "app", "-o", "json"]).code(0).stdout();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["releases"][0]["staleBaseline"], serde_json::json!([]), "{json}");
}

#[test]
fn helm3_accepted_drift_in_a_file() {
    accept_then_check(Helm::V3, "file");
}

#[test]
fn helm4_accepted_drift_in_a_configmap() {
    accept_then_check(Helm::V4, "cluster");
}

/// `--only` and `--path` accept part of the drift; the default file is used when present.
#[test]
fn accepting_part_of_the_drift() {
    let env = Env::new("base-part");
    env.install(Helm::V4, "app", "repairable", &[]);
    env.kubectl(&["scale", "deployment", "app-web", "--replicas=4"]).success();
    env.kubectl(&["label", "deployment", "app-web", "team=ops"]).success();
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"x"}}"#);
    let dir = env.home().join("repo");
    std::fs::create_dir_all(&dir).unwrap();
    let in_repo = |args: &[&str]| env.drift(args).current_dir(&dir);
    in_repo(&["accept", "app", "--only", "Deployment/app-web", "--path", "/spec"])
        .success()
        .stdout_has("accepted 1 drift into .helm-drift-baseline.yaml");
    let out = in_repo(&["check", "app"]).code(2);
    out.stdout_has("✓ spec.replicas (accepted: changed)")
        .stdout_has("+ metadata.labels.team")
        .stdout_has("changed      ConfigMap");
    env.drift(&["check", "app"]).code(2); // elsewhere, no baseline file
}

/// A baseline file and ConfigMaps both exist: `--baseline` decides; without it the file
/// (`./.helm-drift-baseline.yaml`, which `accept` writes) wins.
#[test]
fn the_flag_decides_between_a_file_and_the_cluster() {
    let env = Env::new("base-both");
    env.install(Helm::V4, "app", "repairable", &[]);
    env.kubectl(&["scale", "deployment", "app-web", "--replicas=4"]).success();
    env.drift(&["accept", "app", "--baseline", "cluster"]).success();
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"x"}}"#);
    env.drift(&["accept", "app", "--only", "ConfigMap/app-config"])
        .success()
        .stdout_has("into .helm-drift-baseline.yaml");
    // Without the flag: the file, which accepted only the ConfigMap's edit.
    let out = env.drift(&["check", "app"]).code(2);
    out.stdout_has("~ spec.replicas: 2 -> 4");
    assert!(!out.stdout().contains("~ data.greeting"), "{}", out.dump());
    // --baseline cluster (from a namespace trusted): the ConfigMaps, which accepted only the replicas.
    let out = env.drift(&["check", "app", "--baseline", "cluster", "--trust-namespace", &env.ns]).code(2);
    out.stdout_has("~ data.greeting");
    assert!(!out.stdout().contains("~ spec.replicas"), "{}", out.dump());
}

helm_matrix! {
    /// `accept --expires`: the accepted drift passes `check` until the acceptance ends by itself,
    /// then it is drift again.
    fn an_accepted_drift_expires_by_itself(helm: Helm) {
        let env = Env::new(&format!("baseline-expires-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"for a while"}}"#);
        let file = env.home().join("baseline.yaml");
        let file = file.to_str().unwrap();
        let started = std::time::Instant::now();
        env.drift(&["accept", "web", "--baseline", file, "--expires", "4s"]).success();
        let written = std::fs::read_to_string(file).unwrap();
        assert!(written.contains("expiresAt:"), "{written}");
        let check = env.drift(&["check", "web", "--baseline", file]).output();
        if started.elapsed() < std::time::Duration::from_secs(4) {
            assert_eq!(check.out.status.code(), Some(0), "accepted until it expires: {}", check.dump());
        }
        crate::support::eventually("the acceptance expired", std::time::Duration::from_secs(30), || {
            env.drift(&["check", "web", "--baseline", file]).output().out.status.code() == Some(2)
        });
        assert!(started.elapsed() >= std::time::Duration::from_secs(4), "expired early");
        // The report says why the gate turned red.
        env.drift(&["check", "web", "--baseline", file])
            .code(2)
            .stdout_has("finding: the acceptance of v1 ConfigMap")
            .stdout_has("/data/greeting ended at ");
    }
}

/// The watcher judges a release again the moment its acceptance ends (not at the next edit or
/// resync): the drift is reported then.
#[test]
fn the_watcher_sees_an_acceptance_end_when_it_ends() {
    let env = Env::new("baseline-expires-watch");
    env.install(Helm::V4, "web", "basic", &[]);
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"for a while"}}"#);
    let file = env.home().join("baseline.yaml");
    let file = file.to_str().unwrap();
    let started = std::time::Instant::now();
    env.drift(&["accept", "web", "--baseline", file, "--expires", "8s"]).success();
    let w = crate::watching::Watching::start(&env, &["web", "--baseline", file, "--resync", "10m"]).ready();
    let drifted = crate::watching::Watching::drifted(&env.ns, "web");
    if started.elapsed() < std::time::Duration::from_secs(8) {
        assert_eq!(w.sample(&drifted), Some(0.0), "accepted until it expires");
    }
    w.wait_for(&drifted, 1.0);
    assert!(started.elapsed() >= std::time::Duration::from_secs(8), "expired early");
    w.stop();
}

helm_matrix! {
    /// `accept` shows what it accepts: `--dry-run` writes nothing, `-o json` is a document;
    /// fields taken over (not drift) are never accepted; an `env` list added whole is accepted
    /// item by item (another variable added later is new drift, the accepted one stays
    /// accepted); `--prune` keeps an acceptance's end, and `check` shows it.
    fn accept_shows_what_it_accepts_and_keeps_its_end(helm: Helm) {
        let env = Env::new(&format!("base-show-{}", helm.tag()));
        env.install(helm, "web", "shaped", &[]);
        let file = env.home().join("baseline.yaml");
        let file = file.to_str().unwrap();
        // Taken over: replicas scaled away and back (not drift); then a variable added.
        env.kubectl(&["scale", "deployment", "web-shaped", "--replicas=3"]).success();
        env.kubectl(&["scale", "deployment", "web-shaped", "--replicas=1"]).success();
        env.kubectl(&["set", "env", "deployment/web-shaped", "FOO=1"]).success();
        let dry = env.drift(&["accept", "web", "--baseline", file, "--dry-run"]).success();
        dry.stdout_has("web: would accept 1 drift into ").stdout_has("(dry run: nothing written)").stdout_has(
            &format!("  ✓ apps/v1 Deployment {}/web-shaped /spec/template/spec/containers/0/env/0 (added)", env.ns),
        );
        assert!(!std::path::Path::new(file).exists(), "a dry run writes nothing");
        let json = env.drift(&["accept", "web", "--baseline", file, "-o", "json", "--expires", "1h"]).success().stdout();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["dryRun"], false, "{json}");
        let accepted = doc["accepted"].as_array().unwrap();
        assert_eq!(accepted.len(), 1, "the replicas taken over are not drift: {json}");
        let end = accepted[0]["expiresAt"].as_str().unwrap().to_string();
        // A second variable is new drift; FOO stays accepted.
        env.kubectl(&["set", "env", "deployment/web-shaped", "BAR=2"]).success();
        let out = env.drift(&["check", "web", "--baseline", file]).code(2);
        out.stdout_has(r#".env: [{"name":"BAR","value":"2"}] (added by kubectl-set"#).stdout_has(&format!("(accepted: added, until {end})"));
        assert!(!out.stdout().contains("env[name=FOO]: "), "{}", out.dump());
        // --prune re-accepts what is there: FOO keeps its end, BAR has none.
        env.drift(&["accept", "web", "--baseline", file, "--prune"]).success();
        let written = std::fs::read_to_string(file).unwrap();
        assert_eq!(written.matches("expiresAt:").count(), 1, "{written}");
        env.drift(&["check", "web", "--baseline", file]).code(0).stdout_has(&format!("until {end}"));
    }
}

helm_matrix! {
    /// A baseline next to the release is written by whoever may write ConfigMaps there (here, as
    /// a tenant would, by the same `accept` anyone with that right can run): a check names it and
    /// ignores it, in both engines, unless the operator trusts the namespace; one kept where the
    /// operator names (`--baseline cluster=NS`) is taken.
    fn a_baseline_next_to_the_release_is_taken_only_from_a_trusted_namespace(helm: Helm) {
        let env = Env::new(&format!("base-trust-{}", helm.tag()));
        env.install(helm, "app", "repairable", &[]);
        env.kubectl(&["scale", "deployment", "app-web", "--replicas=4"]).success();
        let ns = env.ns.as_str();
        env.drift(&["accept", "app", "--baseline", "cluster"]).success().stdout_has(&format!(
            "into ConfigMap {ns}/helm-drift-baseline.app (a check takes it only with --trust-namespace {ns})"
        ));
        let ignored = format!("finding: baseline ConfigMap {ns}/helm-drift-baseline.app ignored");
        for engine in [&[][..], &["--read-only"][..]] {
            let args = [&["check", "app", "--baseline", "cluster"][..], engine].concat();
            env.drift(&args).code(2).stdout_has(&ignored).stdout_has("~ spec.replicas: 2 -> 4");
            let trusted = [&args[..], &["--trust-namespace", ns][..]].concat();
            env.drift(&trusted).code(0).stdout_has("✓ spec.replicas (accepted: changed)");
        }
        // Without the flag the ConfigMap is not read, and the report says so.
        env.drift(&["check", "app"]).code(2).stdout_has(&format!(
            "finding: a cluster baseline exists (ConfigMap {ns}/helm-drift-baseline.app) but is not used: --baseline cluster applies it"
        ));
        // Kept where the operator names: taken, and labelled with the release's namespace.
        let home = format!("{ns}-baselines");
        env.kubectl(&["create", "namespace", &home]).success();
        let named = format!("cluster={home}");
        env.drift(&["accept", "app", "--baseline", &named])
            .success()
            .stdout_has(&format!("into ConfigMap {home}/helm-drift-baseline.{ns}.app (1 entry"));
        env.drift(&["check", "app", "--baseline", &named]).code(0).stdout_has("✓ spec.replicas (accepted: changed)");
        let label = env.kubectl(&["get", "configmap", "-n", &home, "-l", &format!("helm-drift.io/baseline-namespace={ns}"), "-o", "name"]);
        assert_eq!(label.success().stdout().trim(), format!("configmap/helm-drift-baseline.{ns}.app"));
        env.drift(&["check", "app", "--baseline", "cluster=Not_A_Namespace"]).code(1).stderr_has("expected cluster=NAMESPACE");
    }
}

/// A baseline ConfigMap is written by whoever may create ConfigMaps in the release's namespace;
/// even when the operator trusts that namespace (`--trust-namespace`), a stored hash made 400 KB long costs no PBKDF2 (the accepted drift is drift again, at once),
/// and a document of aliases that expands to gigabytes is refused, naming the ConfigMap, before
/// it is expanded (never "in sync").
#[test]
fn a_hostile_baseline_configmap_costs_nothing() {
    let env = Env::new("base-hostile");
    env.install(Helm::V4, "app", "secretive", &["--set", "password=p1"]);
    env.merge_patch("secret", "app-creds", r#"{"stringData":{"password":"by-hand"}}"#);
    env.drift(&["accept", "app", "--baseline", "cluster"]).success();
    env.drift(&["check", "app", "--baseline", "cluster", "--trust-namespace", &env.ns]).code(0);
    let name = "helm-drift-baseline.app";
    let text = env.kubectl(&["get", "configmap", name, "-o", "jsonpath={.data.baseline\\.yaml}"]).success().stdout();
    let write = |doc: &str| {
        let file = env.home().join("baseline-patch.json");
        std::fs::write(&file, serde_json::json!({"data": {"baseline.yaml": doc}}).to_string()).unwrap();
        env.kubectl(&["patch", "configmap", name, "--type", "merge", "--patch-file", file.to_str().unwrap()]).success();
    };
    // The salted hash, made 400 KB long.
    let at = text.find("pbkdf2-sha256$").expect("a salted hash");
    let end = text[at..].find(['\n', '\'', '"']).map_or(text.len(), |e| at + e);
    let forged = format!("{}{}{}", &text[..end], "0".repeat(400_000), &text[end..]);
    write(&forged);
    let started = std::time::Instant::now();
    env.drift(&["check", "app", "--baseline", "cluster", "--trust-namespace", &env.ns])
        .code(2)
        .stdout_has("changed      Secret");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    // 3,300 salted entries for the one drift, each of a well-formed hash asking for 100,000
    // iterations: one check verifies 16 of them, accepts nothing and says so.
    let original = text.clone();
    let at = original.find("entries:").expect("entries");
    let entry_start = original[at..].find("- ").map(|e| at + e).expect("an entry");
    let one = &original[entry_start..];
    let rest: String = one.lines().take_while(|_| true).collect::<Vec<_>>().join("\n");
    let forged_one = {
        let h = rest.find("pbkdf2-sha256$").expect("a salted hash");
        let end = rest[h..].find(['\n', '\'', '"']).map_or(rest.len(), |e| h + e);
        format!("{}pbkdf2-sha256$100000$00${}{}", &rest[..h], "00".repeat(32), &rest[end..])
    };
    let flood = format!("{}{}\n", &original[..entry_start], vec![forged_one; 3_300].join("\n"));
    write(&flood);
    let started = std::time::Instant::now();
    env.drift(&["check", "app", "--baseline", "cluster", "--trust-namespace", &env.ns])
        .code(2)
        .stdout_has("more salted entries for this release's drift than one check verifies (16)");
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "{:?}", started.elapsed());
    // Aliases: 8,000 of a 100 KB string (800 MB once expanded) in a 130 KB document.
    let mut bomb =
        format!("apiVersion: helm-drift.io/v1\nkind: Baseline\nx: &a \"{}\"\nentries: [", "x".repeat(100_000));
    bomb.push_str(&vec!["*a"; 8_000].join(","));
    bomb.push_str("]\n");
    write(&bomb);
    env.drift(&["check", "app", "--baseline", "cluster", "--trust-namespace", &env.ns])
        .code(1)
        .stderr_has(&format!("cannot read baseline ConfigMap {}/{name}", env.ns))
        .stderr_has("expands to more than");
}

helm_matrix! {
    /// Accepted means accepted: `repair` and self-healing put back what drifted besides, and
    /// keep the accepted values (client-side patches for Helm 3, server-side apply for Helm 4);
    /// `repair --include-accepted` puts them back too.
    fn repair_and_self_healing_keep_what_was_accepted(helm: Helm) {
        let env = Env::new(&format!("base-kept-{}", helm.tag()));
        env.install(helm, "app", "repairable", &["--labels", "helm-drift.io/repair=true"]);
        let home = format!("{}-baselines", env.ns);
        env.kubectl(&["create", "namespace", &home]).success();
        let baseline = format!("cluster={home}");
        env.kubectl(&["scale", "deployment", "app-web", "--replicas=4"]).success();
        env.drift(&["accept", "app", "--baseline", &baseline]).success().stdout_has("accepted 1 drift");
        let replicas = || env.kubectl(&["get", "deployment", "app-web", "-o", "jsonpath={.spec.replicas}"]).success().stdout();
        let greeting = || env.kubectl(&["get", "configmap", "app-config", "-o", "jsonpath={.data.greeting}"]).success().stdout();
        let recorded = greeting();

        env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"edited"}}"#);
        let out = env.drift(&["repair", "app", "--baseline", &baseline]).success();
        out.stdout_has("accepted     Deployment");
        assert_eq!((greeting(), replicas()), (recorded.clone(), "4".to_string()), "{}", out.dump());
        env.drift(&["check", "app", "--baseline", &baseline]).code(0);

        // The watcher heals around the accepted value as well.
        let ns = env.ns.clone();
        let args = ["--all", "--repair", "--repair-cooldown", "1s", "--baseline", &baseline, "--trust-namespace", &ns];
        let w = Watching::start(&env, &args).ready();
        env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"edited again"}}"#);
        w.wait_for("helm_drift_repairs_total{result=\"applied\"}", 1.0);
        eventually("the ConfigMap healed", Duration::from_secs(30), || greeting() == recorded);
        assert_eq!(replicas(), "4", "healing kept the accepted replicas\n{}", w.logs_text());
        drop(w);

        // Asked for: the accepted value is put back too.
        env.drift(&["repair", "app", "--include-accepted"]).success();
        assert_eq!(replicas(), "2");
        env.drift(&["repair", "app", "--include-accepted", "--baseline", &baseline]).code(1).stderr_has("cannot be used with");
    }
}

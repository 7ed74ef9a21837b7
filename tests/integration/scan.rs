//! Whole-cluster scans and report formats as users run them: several namespaces with clean,
//! drifted and broken releases; text, JSON and JUnit; exit codes; colour rules.

use crate::support::{Env, Helm};

/// A corrupt release record: a Secret with Helm's labels and data that is not Helm's encoding.
fn broken_record(env: &Env, release: &str, labels: &str) {
    env.store_record(release, Some("%%%not-base64"), labels);
}

#[test]
fn scan_namespaces_with_clean_drifted_and_broken_releases() {
    let a = Env::new("scan-a");
    let b = Env::new("scan-b");
    a.install(Helm::V3, "a1", "basic", &["--labels", "scan=yes"]);
    a.install(Helm::V4, "a2", "basic", &["--labels", "scan=yes"]);
    b.install(Helm::V4, "b1", "basic", &["--labels", "scan=yes"]);
    b.install(Helm::V3, "b3", "basic", &[]);
    broken_record(&b, "b2", r#"scan: "yes""#);
    a.kubectl(&["delete", "configmap", "a2-config"]).success();

    // One namespace: every release in it.
    let out = a.drift(&["check", "--all"]).code(2);
    out.stdout_has("a1: in sync (4 objects)")
        .stdout_has("a2: 1 of 4 objects drifted")
        .stdout_has("2 releases: 1 in sync, 1 drifted, 0 errors");

    // Named releases, and --summary / -q.
    let summary = a.drift(&["check", "a1", "a2", "--summary"]).code(2);
    assert_eq!(
        summary.stdout(),
        "a1: in sync (4 objects) [namespace scan-a, revision 1 deployed, chart basic-0.1.0]\na2: 1 of 4 objects drifted [namespace scan-a, revision 1 deployed, chart basic-0.1.0]\n2 releases: 1 in sync, 1 drifted, 0 errors\n",
        "one line per release, no objects"
    );
    let quiet = a.drift(&["check", "a1", "a2", "-q"]).code(2);
    assert!(quiet.stdout().is_empty() && quiet.stderr().is_empty(), "{}", quiet.dump());
    a.drift(&["check", "a1"]).success();

    // Every namespace, restricted by storage labels: the broken record is refused (said, counted,
    // not in the exit code: whoever may write a Secret cannot turn the scan red), the rest run.
    let out = a.drift(&["check", "-A", "-l", "scan=yes", "-o", "json"]).code(2);
    out.stderr_has("Secret scan-b/sh.helm.release.v1.b2.v1: bad base64");
    let doc: serde_json::Value = serde_json::from_str(&out.stdout()).expect("valid JSON");
    assert_eq!(doc["schemaVersion"], 2);
    assert_eq!(doc["summary"]["releases"], 4);
    assert_eq!(doc["summary"]["inSync"], 2);
    assert_eq!(doc["summary"]["drifted"], 1);
    assert_eq!(doc["summary"]["errors"], 0);
    assert_eq!(doc["summary"]["refused"], 1);
    assert_eq!(doc["summary"]["exitCode"], 2);
    let names: Vec<_> = doc["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}/{}", r["namespace"].as_str().unwrap(), r["name"].as_str().unwrap()))
        .collect();
    assert_eq!(names, ["scan-a/a1", "scan-a/a2", "scan-b/b1", "scan-b/b2"], "b3 has no scan label");
    let a2 = &doc["releases"][1];
    assert_eq!(a2["verdict"], "drifted");
    let missing: Vec<_> = a2["objects"].as_array().unwrap().iter().filter(|o| o["verdict"] == "missing").collect();
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0]["kind"], "ConfigMap");
    assert_eq!(missing[0]["source"], "basic/templates/configmap.yaml");
    assert_eq!(doc["releases"][3]["verdict"], "refused");

    // JUnit: a suite per release, a failure per drifted object, the broken one skipped (refused).
    let xml = a.drift(&["check", "-A", "-l", "scan=yes", "-o", "junit"]).code(2).stdout();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert_eq!(xml.matches("<testsuite ").count(), 4, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 1, "{xml}");
    assert_eq!(xml.matches("<error ").count(), 0, "{xml}");
    assert_eq!(xml.matches("<skipped message=\"refused: ").count(), 1, "{xml}");
    assert!(xml.contains("<testsuite name=\"scan-a/a2\" tests=\"4\" failures=\"1\" errors=\"0\""), "{xml}");

    // Text scan of every namespace, without the selector, still checks the rest (the exit code
    // is other tests' releases' too: drift at least, a2 drifts).
    let out = a.drift(&["check", "-A"]).output();
    assert!(matches!(out.out.status.code(), Some(1 | 2)), "{}", out.dump());
    out.stdout_has("b3: in sync").stdout_has("b2: refused [namespace scan-b] (see stderr)");
}

#[test]
fn usage_errors_exit_1() {
    let env = Env::new("scan-usage");
    env.drift(&["check"]).code(1).stderr_has("name a release to check, or use --all");
    env.drift(&["check", "x", "--no-such-flag"]).code(1).stderr_has("--no-such-flag");
    env.drift(&["check", "x", "y", "--revision", "2"]).code(1).stderr_has("--revision needs exactly one release");
    env.drift(&["frobnicate"]).code(1);
    env.drift(&["check", "x", "--ignore", "spec/replicas"])
        .code(1)
        .stderr_has("ignore rule \"spec/replicas\": expected");
    env.drift(&["--help"]).success().stdout_has("Exit codes:");
}

#[test]
fn colour_follows_flags_and_environment() {
    let env = Env::new("scan-colour");
    env.install(Helm::V4, "c", "basic", &[]);
    env.kubectl(&["delete", "configmap", "c-config"]).success();
    let esc = |out: &crate::support::Done| out.stdout().contains('\x1b');
    assert!(!esc(&env.drift(&["check", "c"]).code(2)), "no colour in a pipe");
    assert!(esc(&env.drift(&["check", "c", "--color", "always"]).code(2)));
    assert!(esc(&env.drift(&["check", "c"]).env("CLICOLOR_FORCE", "1").code(2)));
    assert!(!esc(&env.drift(&["check", "c"]).env("CLICOLOR_FORCE", "1").env("NO_COLOR", "1").code(2)));
    assert!(!esc(&env.drift(&["check", "c", "--color", "always", "-o", "json"]).code(2)), "never in JSON");
}

/// Seconds since the epoch from an audit timestamp like `2026-11-29T16:48:51.483820Z` (the
/// date counts: a run across midnight measures the same).
fn seconds(ts: &str) -> f64 {
    let (date, time) = ts.trim_end_matches('Z').split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|p| p.parse().unwrap()).collect();
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if d[1] <= 2 { (d[0] - 1, d[1] + 9) } else { (d[0], d[1] - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d[2] - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let t: Vec<f64> = time.split(':').map(|p| p.parse().unwrap()).collect();
    days as f64 * 86_400.0 + t[0] * 3600.0 + t[1] * 60.0 + t[2]
}

#[test]
fn audit_timestamps_count_the_date() {
    assert_eq!(seconds("1970-01-02T00:00:01Z"), 86_401.0);
    assert_eq!(seconds("2026-12-01T00:00:00.5Z") - seconds("2026-11-30T23:59:59.5Z"), 1.0);
}

#[test]
fn helm_qps_and_burst_limit_pace_requests() {
    let env = Env::new("scan-qps");
    env.install(Helm::V4, "q", "basic", &[]);
    let span = |qps: Option<&str>| {
        let mark = env.audit_mark();
        let mut run = env.drift(&["check", "q"]);
        if let Some(q) = qps {
            run = run.env("HELM_QPS", q).env("HELM_BURST_LIMIT", "1");
        }
        run.success();
        let events = env.audit_since(mark);
        let times: Vec<f64> = crate::support::by_drift(&events, "get")
            .into_iter()
            .chain(crate::support::by_drift(&events, "list"))
            .map(|e| seconds(e["requestReceivedTimestamp"].as_str().unwrap()))
            .collect();
        assert!(times.len() >= 6, "{times:?}");
        let (min, max) = times.iter().fold((f64::MAX, f64::MIN), |(a, b), t| (a.min(*t), b.max(*t)));
        (times.len(), max - min)
    };
    // At 5 requests per second, one at a time, N requests need at least N-2 windows of 200 ms.
    let (n, paced) = span(Some("5"));
    let bound = (n as f64 - 2.0) * 0.2;
    assert!(paced >= bound, "{n} requests in {paced:.3}s at HELM_QPS=5");
    // HELM_QPS=0.00, as Helm passes it by default, means no limit: far quicker than paced.
    let (n, free) = span(Some("0.00"));
    assert!(free < bound / 2.0, "{n} requests in {free:.3}s at HELM_QPS=0.00: paced?");
}

/// Every LIST comes in pages of `--chunk-size` (`limit`, then `continue` for the next page, as
/// kubectl's `--chunk-size` and client-go's pager), and the verdict is the one of a single
/// response per kind (`--chunk-size 0`). The API server's audit log shows the requests.
#[test]
fn lists_come_in_pages_of_the_chunk_size() {
    // Two Services and two Deployments of one release in one namespace: each kind is listed.
    let env = Env::with_full_chart(Helm::V4, "scan-pages");
    env.install(Helm::V3, "p2", "basic", &[]);
    env.kubectl(&["delete", "service", "app-nodeport"]).success();
    env.merge_patch("service", "app-web", r#"{"metadata":{"labels":{"edited":"on-a-later-page"}}}"#);
    let check = |chunk: &str| {
        let mark = env.audit_mark();
        let out = env.drift(&["check", "--all", "--chunk-size", chunk, "-o", "json"]).code(2).stdout();
        let lists: Vec<String> = crate::support::by_drift(&env.audit_since(mark), "list")
            .iter()
            .map(|e| e["requestURI"].as_str().unwrap().to_string())
            .collect();
        (out, lists)
    };
    let (paged, lists) = check("1");
    assert!(lists.len() >= 4, "{lists:#?}");
    for uri in &lists {
        assert!(uri.contains("limit=1"), "a LIST without the page size: {uri}");
    }
    for plural in ["services", "deployments", "secrets"] {
        let continued = lists.iter().any(|u| u.contains(&format!("/{plural}?")) && u.contains("continue="));
        assert!(continued, "the {plural} were read past their first page: {lists:#?}");
    }
    let (whole, lists) = check("0");
    for uri in &lists {
        assert!(!uri.contains("limit="), "--chunk-size 0 pages anyway: {uri}");
    }
    let verdicts = |json: &str| {
        let doc: serde_json::Value = serde_json::from_str(json).unwrap();
        let mut releases: Vec<String> = doc["releases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| format!("{} {} {}", r["name"], r["verdict"], r["counts"]))
            .collect();
        releases.sort();
        (releases, doc["summary"].clone())
    };
    assert_eq!(verdicts(&paged), verdicts(&whole));
    let (releases, _) = verdicts(&paged);
    assert_eq!(releases.len(), 2, "{releases:?}");
    assert!(releases.iter().any(|r| r.starts_with("\"app\" \"drifted\"")), "{releases:?}");
}

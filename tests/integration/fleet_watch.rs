//! `watch --clusters capi`: one watcher, run against a management control plane holding Cluster
//! API `Cluster` objects and their kubeconfig Secrets (written by the test, as Cluster API
//! would), watches two other control planes with releases installed by Helm 3 and Helm 4. Each
//! cluster's series carry its name; a cluster that stops answering is `cluster_up` 0 with its
//! releases unknown while the other is still watched; a cluster added, removed or whose
//! kubeconfig Secret is rotated while watching is followed.

use crate::dashboard::{FLEET_PANELS, Prometheus, as_grafana_sends, dashboard, queries};
use crate::inventory::{cluster, serve_cluster_crd};
use crate::support::{Env, Helm, eventually, eventually_or};
use crate::watching::{Watching, events};
use std::time::Duration;

/// Resumes a frozen API server when dropped (also when the test fails).
struct Resume(&'static testcluster::ControlPlane);

impl Drop for Resume {
    fn drop(&mut self) {
        self.0.resume_apiserver().ok();
    }
}

fn series(metric: &str, cluster: &str, release: Option<&str>) -> String {
    match release {
        Some(r) => format!("{metric}{{cluster=\"{cluster}\",namespace=\"fleet-w\",release=\"{r}\"}}"),
        None => format!("{metric}{{cluster=\"{cluster}\"}}"),
    }
}

/// The kubeconfig Cluster API would write for a workload cluster: every credential inline.
pub fn kubeconfig_of(env: &Env) -> String {
    env.kubectl(&["config", "view", "--raw", "--flatten", "--minify"]).success().stdout()
}

#[test]
fn a_fleet_is_watched_from_its_management_cluster() {
    let _serial = crate::restart::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mgmt = Env::new("fleet-mgmt");
    serve_cluster_crd(&mgmt);
    // Two workload clusters, the same namespace on each (the watcher's -n).
    let a = Env::disturbable("fleet-w");
    let b = Env::without_admission_policies("fleet-w");
    a.install(Helm::V3, "web", "basic", &[]);
    b.install(Helm::V4, "web", "basic", &[]);
    a.kubectl(&["label", "secret", "-l", "owner=helm,name=web", "helm-drift.io/repair=true"]).success();
    cluster(&mgmt, "a", "fleet: runtime", true, Some(&kubeconfig_of(&a)));
    cluster(&mgmt, "b", "fleet: runtime", true, Some(&kubeconfig_of(&b)));
    let (ca, cb, cc) = ("fleet-mgmt/a", "fleet-mgmt/b", "fleet-mgmt/c");
    let args = [
        "web",
        "-n",
        "fleet-w",
        "--clusters",
        "capi",
        "--clusters-namespace",
        "fleet-mgmt",
        "--clusters-selector",
        "fleet=runtime",
        // Ten minutes: what follows is seen through the inventory's watches, never a round.
        "--clusters-interval",
        "10m",
        "--lease-namespace",
        "fleet-mgmt",
        "--repair",
        "--repair-cooldown",
        "1s",
        "--trust-namespace",
        "fleet-w",
    ];
    let w = Watching::start(&mgmt, &args).ready();
    let drifted = |c: &str| series("helm_drift_release_drifted", c, Some("web"));
    w.wait_for(&drifted(ca), 0.0);
    w.wait_for(&drifted(cb), 0.0);
    w.wait_for(&series("helm_drift_cluster_up", ca, None), 1.0);
    w.wait_for(&series("helm_drift_cluster_up", cb, None), 1.0);

    // Drift on one cluster is that cluster's: found, and announced where it happened.
    b.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited on b"}}"#);
    w.wait_for(&drifted(cb), 1.0);
    assert_eq!(w.sample(&drifted(ca)), Some(0.0), "{}", w.metrics());
    eventually("a DriftDetected Event on cluster b", Duration::from_secs(30), || {
        events(&b, "DriftDetected").len() == 1
    });
    // Healed on the cluster whose release opts in, with that cluster's kubeconfig.
    a.kubectl(&["delete", "configmap", "web-config"]).success();
    eventually(&format!("web-config put back on cluster a\n{}", w.logs_text()), Duration::from_secs(30), || {
        a.kubectl(&["get", "configmap", "web-config"]).output().out.status.success()
    });
    let records = a.kubectl(&["get", "secret", "-l", "owner=helm,name=web", "-o", "name"]).success().stdout();
    assert_eq!(records.lines().count(), 1, "a repair made a revision: {records}");

    // The dashboard's fleet view, from a real Prometheus scraping the watcher: every fleet
    // panel has series for cluster b, drifted.
    let prometheus = Prometheus::start(&mgmt, &w.address, None);
    let fleet_queries: Vec<(String, String)> =
        queries(&dashboard()).into_iter().filter(|(t, _)| FLEET_PANELS.contains(&t.as_str())).collect();
    assert_eq!(fleet_queries.len(), 5, "{fleet_queries:?}");
    eventually("Prometheus to scrape the fleet", Duration::from_secs(60), || {
        !prometheus.query(&format!("helm_drift_release_drifted{{cluster=\"{cb}\"}} == 1")).is_empty()
    });
    for (title, expr) in fleet_queries.iter().filter(|(_, e)| !e.contains("unknown") && !e.contains("proxy")) {
        let q = as_grafana_sends(expr, cb);
        assert!(!prometheus.query(&q).is_empty(), "panel {title:?}: no series for {q}");
    }

    // Cluster a stops answering: its release is unknown (never in sync), b is still watched.
    a.cp.pause_apiserver().expect("pause cluster a's API server");
    let resume = Resume(a.cp);
    w.wait_for(&series("helm_drift_cluster_up", ca, None), 0.0);
    let down = as_grafana_sends(&fleet_queries.iter().find(|(t, _)| t == "Clusters not answering").unwrap().1, ".*");
    eventually("the dashboard to count one cluster not answering", Duration::from_secs(30), || {
        prometheus.query(&down).first().is_some_and(|r| r["value"][1] == "1")
    });
    w.wait_for(&series("helm_drift_release_unknown", ca, Some("web")), 1.0);
    assert!(!w.metrics().contains(&drifted(ca)), "an unreachable cluster has no verdict\n{}", w.metrics());
    b.kubectl(&["delete", "configmap", "web-config"]).success();
    let missing =
        format!("helm_drift_objects{{cluster=\"{cb}\",namespace=\"fleet-w\",release=\"web\",verdict=\"missing\"}}");
    w.wait_for(&missing, 1.0);
    // ...and comes back (restarted): watched again.
    drop(resume);
    a.cp.restart_apiserver().expect("restart cluster a's API server");
    w.wait_for(&series("helm_drift_cluster_up", ca, None), 1.0);
    w.wait_for(&drifted(ca), 0.0);

    // A cluster added while watching is watched; one removed leaves no series.
    cluster(&mgmt, "c", "fleet: runtime", true, Some(&kubeconfig_of(&b)));
    w.wait_for(&drifted(cc), 1.0);
    mgmt.kubectl(&["delete", "cluster.cluster.x-k8s.io", "b"]).success();
    eventually("cluster b's series gone", Duration::from_secs(30), || !w.metrics().contains(&format!("\"{cb}\"")));
    assert_eq!(w.sample(&drifted(cc)), Some(1.0));

    // Its kubeconfig Secret rotated to one that would run a command: refused for that cluster,
    // the others still watched; rotated back: watched again.
    let marker = mgmt.home().join("exec-ran");
    let exec = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: '{}', insecure-skip-tls-verify: true}}\nusers:\n- name: u\n  user:\n    exec: {{apiVersion: client.authentication.k8s.io/v1, command: touch, args: ['{}'], interactiveMode: Never}}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n",
        b.cp.server(),
        marker.display()
    );
    let rotate = |kubeconfig: &str| {
        let file = mgmt.home().join("c-rotated");
        std::fs::write(&file, kubeconfig).unwrap();
        let yaml = mgmt
            .kubectl(&[
                "create",
                "secret",
                "generic",
                "c-kubeconfig",
                &format!("--from-file=value={}", file.display()),
                "--dry-run=client",
                "-o",
                "yaml",
            ])
            .success()
            .stdout();
        let path = mgmt.home().join("c-rotated.yaml");
        std::fs::write(&path, yaml).unwrap();
        mgmt.kubectl(&["apply", "-f", path.to_str().unwrap()]).success();
    };
    rotate(&exec);
    w.wait_for(&series("helm_drift_cluster_up", cc, None), 0.0);
    w.wait_for(&series("helm_drift_rejected_inputs_total", cc, None).replace("}", ",input=\"inventory\"}"), 1.0);
    assert!(!w.metrics().contains(&drifted(cc)), "{}", w.metrics());
    rotate(&kubeconfig_of(&b));
    w.wait_for(&drifted(cc), 1.0);
    assert_eq!(w.sample(&drifted(ca)), Some(0.0));
    assert!(!marker.exists(), "a kubeconfig read from the inventory ran its command");
    let logs = w.logs_text();
    assert!(logs.contains("cluster's kubeconfig changed"), "{logs}");
    assert!(w.log_lines().iter().any(|l| l["cluster"] == cb && l["msg"] == "drift detected"), "{logs}");
    w.stop();
}

/// A management control plane serving Cluster API's `Cluster` (namespace `mgmt`), and two
/// workload namespaces named `workload`, one on this control plane (release `web` by Helm 4) and
/// one on the other (by Helm 3).
pub fn management_and_two_planes(mgmt: &str, workload: &str) -> (Env, Env, Env) {
    let management = Env::new(mgmt);
    serve_cluster_crd(&management);
    let near = Env::new(workload);
    let far = Env::without_admission_policies(workload);
    near.install(Helm::V4, "web", "basic", &[]);
    far.install(Helm::V3, "web", "basic", &[]);
    (management, near, far)
}

/// The clusters whose release `web` this watcher has a verdict for.
fn watched(w: &Watching) -> Vec<String> {
    let text = w.metrics();
    (1..=4)
        .map(|i| format!("shard-mgmt/c{i}"))
        .filter(|c| text.contains(&format!("helm_drift_release_drifted{{cluster=\"{c}\",namespace=\"shard-w\"")))
        .collect()
}

/// Issue 92: replicas place the clusters by rendezvous hashing over the live replica set, each
/// renewing one Lease of its own. Three replicas watch every cluster exactly once (none twice);
/// one killed, its clusters go to the others and theirs stay where they were; one Lease per
/// replica, whatever the fleet's size, and a clean stop gives it back.
#[test]
fn replicas_place_every_cluster_once_and_only_the_dead_ones_share_moves() {
    let (mgmt, near, far) = management_and_two_planes("shard-mgmt", "shard-w");
    // Four inventory entries, two per control plane.
    for (name, env) in [("c1", &near), ("c2", &near), ("c3", &far), ("c4", &far)] {
        cluster(&mgmt, name, "fleet: runtime", true, Some(&kubeconfig_of(env)));
    }
    let hook = crate::watching::Receiver::start();
    let args = [
        "web",
        "-n",
        "shard-w",
        "--clusters",
        "capi",
        "--clusters-namespace",
        "shard-mgmt",
        "--clusters-interval",
        "1s",
        "--leader-elect",
        "--lease-name",
        "fleet",
        "--lease-namespace",
        "shard-mgmt",
        "--lease-duration",
        "3s",
        "--notify",
        &hook.url,
    ];
    let mut replicas: Vec<Watching> = (0..3).map(|_| Watching::start(&mgmt, &args).ready()).collect();
    let placed = |replicas: &[Watching]| -> Vec<Vec<String>> { replicas.iter().map(watched).collect() };
    let exactly_once = |sets: &[Vec<String>]| {
        let mut all: Vec<&String> = sets.iter().flatten().collect();
        all.sort();
        all.len() == 4 && all.windows(2).all(|w| w[0] != w[1])
    };
    eventually_or(
        "every cluster watched by exactly one replica",
        Duration::from_secs(60),
        || exactly_once(&placed(&replicas)),
        || format!("{:?}", placed(&replicas)),
    );
    let leases = mgmt.kubectl(&["get", "leases", "-l", "helm-drift.io/fleet=fleet", "-o", "name"]).success().stdout();
    assert_eq!(leases.lines().count(), 3, "one Lease per replica: {leases}");

    // Drift on the far plane: its two entries are two clusters to the fleet, each announcing it
    // once, signed with its own key (what one member's users read confirms nothing of another's).
    far.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    eventually("one notification per entry", Duration::from_secs(30), || hook.count("DriftDetected") == 2);
    let mut clusters: Vec<String> =
        hook.received().iter().filter_map(|n| n["cluster"].as_str().map(str::to_string)).collect();
    clusters.sort();
    assert_eq!(clusters, ["shard-mgmt/c3", "shard-mgmt/c4"]);
    let signatures: std::collections::BTreeSet<String> =
        hook.received().iter().filter_map(|n| n["signature"].as_str().map(str::to_string)).collect();
    assert_eq!(signatures.len(), 2, "a key per member: {:?}", hook.bodies());
    eventually("an Event per entry", Duration::from_secs(20), || events(&far, "DriftDetected").len() == 2);

    // The replica holding most dies without giving its Lease back: the others take its
    // clusters once its Lease expires, and keep their own.
    let before = placed(&replicas);
    let most = (0..3).max_by_key(|i| before[*i].len()).unwrap();
    let killed = std::time::Instant::now();
    replicas.remove(most).kill();
    let kept: Vec<Vec<String>> =
        before.iter().enumerate().filter(|(i, _)| *i != most).map(|(_, s)| s.clone()).collect();
    eventually_or(
        "the survivors watch every cluster once, their own still",
        Duration::from_secs(30),
        || {
            let now = placed(&replicas);
            exactly_once(&now) && now.iter().zip(&kept).all(|(n, k)| k.iter().all(|c| n.contains(c)))
        },
        || format!("before {before:?}, now {:?}", placed(&replicas)),
    );
    let took = killed.elapsed();
    let drifted = |c: &str| {
        format!("helm_drift_release_drifted{{cluster=\"shard-mgmt/{c}\",namespace=\"shard-w\",release=\"web\"}}")
    };
    let holder = |c: &str| replicas.iter().find(|w| watched(w).contains(&format!("shard-mgmt/{c}"))).unwrap();
    holder("c3").wait_for(&drifted("c3"), 1.0);
    holder("c4").wait_for(&drifted("c4"), 1.0);
    holder("c1").wait_for(&drifted("c1"), 0.0);
    // Nothing announced twice across the hand-over (a member's key is the same in every replica).
    assert_eq!(hook.count("DriftDetected"), 2, "{:?}", hook.bodies());
    assert_eq!(events(&far, "DriftDetected").len(), 2);
    assert!(took < Duration::from_secs(20), "taken over in {took:?}");
    eprintln!("taken over in {took:?}");
    for w in replicas {
        w.stop();
    }
    // A replica that stops gives its Lease back (the killed one's has expired).
    let held = mgmt
        .kubectl(&[
            "get",
            "leases",
            "-l",
            "helm-drift.io/fleet=fleet",
            "-o",
            "jsonpath={.items[*].spec.holderIdentity}",
        ])
        .success()
        .stdout();
    assert_eq!(held.split_whitespace().count(), 1, "only the killed replica's Lease still names it: {held}");
}

/// A replica whose identity may not read the fleet's Leases (issue 48): a failed list is never
/// "no other replica". It says so, counts it, and watches no cluster rather than all of them.
#[test]
fn a_replica_that_cannot_read_the_leases_claims_no_cluster() {
    let mgmt = Env::new("shard-blind");
    serve_cluster_crd(&mgmt);
    let workload = Env::new("shard-blind-w");
    workload.install(Helm::V4, "web", "basic", &[]);
    for name in ["b1", "b2"] {
        cluster(&mgmt, name, "fleet: runtime", true, Some(&kubeconfig_of(&workload)));
    }
    // Everything the fleet watcher reads and writes in its namespace, except Leases.
    let user = "lease-blind";
    let role = format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: {user}}}\nrules:\n  - apiGroups: [\"\"]\n    resources: [secrets, configmaps, events]\n    verbs: [\"*\"]\n  - apiGroups: [events.k8s.io]\n    resources: [events]\n    verbs: [\"*\"]\n  - apiGroups: [cluster.x-k8s.io]\n    resources: [clusters]\n    verbs: [get, list, watch]\n  - apiGroups: [addons.cluster.x-k8s.io]\n    resources: [helmchartproxies, helmreleaseproxies]\n    verbs: [get, list, watch]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: {user}}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: {user}}}\nsubjects: [{{apiGroup: rbac.authorization.k8s.io, kind: User, name: {user}}}]\n"
    );
    mgmt.apply_yaml("lease-blind", &role);
    let args = [
        "web",
        "-n",
        "shard-blind-w",
        "--clusters",
        "capi",
        "--clusters-namespace",
        "shard-blind",
        "--clusters-interval",
        "1s",
        "--leader-elect",
        "--lease-name",
        "blind",
        "--lease-namespace",
        "shard-blind",
    ];
    let w = Watching::start_with(&mgmt, &args, &[("HELM_KUBEASUSER", user)]);
    let refused = |w: &Watching| {
        w.log_lines().iter().filter(|l| l["msg"] == "the fleet's Leases cannot be read: no cluster is taken (those watched are kept while this replica's Lease holds)").count()
    };
    let said = || refused(&w) >= 2;
    eventually_or("two inventory reads that could not read the Leases", Duration::from_secs(30), said, || {
        w.logs_text()
    });
    let lines = w.log_lines();
    let said = lines.iter().find(|l| l["msg"] == "the fleet's Leases cannot be read: no cluster is taken (those watched are kept while this replica's Lease holds)").unwrap();
    assert!(said["error"].as_str().unwrap_or("").contains("cannot list the fleet's replica Leases"), "{said}");
    let text = w.metrics();
    assert!(!text.contains("helm_drift_release_drifted{cluster="), "a cluster is watched:\n{text}");
    assert!(text.contains("helm_drift_errors_total{reason=\"leases\"}"), "{text}");
    assert!(!lines.iter().any(|l| l["msg"] == "cluster joined the fleet"), "{}", w.logs_text());
    let leases = mgmt.kubectl(&["get", "leases", "-o", "name"]).success().stdout();
    assert_eq!(leases.trim(), "", "no Lease written: {leases}");
    w.stop();
}

//! The Grafana dashboard (charts/helm-drift/dashboards/helm-drift.json) against real data: a
//! real Prometheus (built from its Go module by scripts/tools.sh, on loopback) scrapes a running
//! watcher that sees a drifted release, heals another and notifies a loopback receiver; every
//! panel's query, with the dashboard's variables filled in as Grafana would, returns series.
//! The chart ships the same file as a ConfigMap for Grafana's sidecar.

use crate::support::{Env, Helm, eventually, repo_root};
use crate::watching::{Receiver, Watching};
use serde_json::Value;
use std::io::{Read, Write};
use std::time::Duration;

pub fn dashboard() -> Value {
    let path = repo_root().join("charts/helm-drift/dashboards/helm-drift.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every query of every panel: (panel title, PromQL).
pub fn queries(dashboard: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in dashboard["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            out.push((p["title"].as_str().unwrap().to_string(), t["expr"].as_str().unwrap().to_string()));
        }
    }
    out
}

/// A Prometheus on a free loopback port, scraping `target` every second with the label
/// `cluster` set (as the chart's ServiceMonitor or a federation would); killed when dropped.
pub struct Prometheus {
    child: std::process::Child,
    address: String,
    _data: tempfile::TempDir,
}

impl Prometheus {
    /// Scrapes `target`, its series labelled `cluster` when given (a watcher of a fleet labels
    /// its own).
    pub fn start(env: &Env, target: &str, cluster: Option<&str>) -> Prometheus {
        let data = tempfile::tempdir().unwrap();
        let config = data.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: helm-drift\n    static_configs:\n      - targets: [\"{target}\"]\n        labels: {{{}}}\n",
                cluster.map(|c| format!("cluster: \"{c}\"")).unwrap_or_default()
            ),
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let address = format!("127.0.0.1:{port}");
        let child = env
            .command(&env.cp.tools().path("prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.path().join("tsdb").display()))
            .arg(format!("--web.listen-address={address}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(data.path().join("prometheus.log")).unwrap())
            .spawn()
            .expect("start prometheus (scripts/tools.sh builds it)");
        let p = Prometheus { child, address, _data: data };
        eventually("Prometheus to be ready", Duration::from_secs(60), || p.get("/-/ready").0 == 200);
        p
    }

    /// `GET path` over HTTP/1.0 (no chunked bodies): status and body.
    fn get(&self, path: &str) -> (u16, String) {
        let Ok(mut s) = std::net::TcpStream::connect(&self.address) else { return (0, String::new()) };
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\nHost: {}\r\n\r\n", self.address).unwrap();
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        (status, text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default())
    }

    /// A range query's result matrix, from `start` to `end` (seconds since the epoch) every
    /// `step` seconds.
    pub fn query_range(&self, promql: &str, start: f64, end: f64, step: f64) -> Vec<Value> {
        let path = format!("/api/v1/query_range?query={}&start={start:.3}&end={end:.3}&step={step}", encode(promql));
        let (status, body) = self.get(&path);
        let doc: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{status} {e}: {body}"));
        assert_eq!(doc["status"], "success", "{promql}: {body}");
        doc["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// An instant query's result vector (an error fails the test: the query does not parse).
    pub fn query(&self, promql: &str) -> Vec<Value> {
        let (status, body) = self.get(&format!("/api/v1/query?query={}", encode(promql)));
        let doc: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{status} {e}: {body}"));
        assert_eq!(doc["status"], "success", "{promql}: {body}");
        doc["data"]["result"].as_array().cloned().unwrap_or_default()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Percent-encoding for a query parameter.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A panel's query as Grafana sends it: the `cluster` variable set, `$__rate_interval` a
/// minute.
pub fn as_grafana_sends(expr: &str, cluster: &str) -> String {
    expr.replace("$cluster", cluster).replace("$__rate_interval", "1m")
}

/// The panels of the dashboard's fleet row.
pub const FLEET_PANELS: [&str; 2] = ["Clusters not answering", "Clusters × drifted releases"];

#[test]
fn every_panel_has_series_for_a_drifted_release() {
    let env = Env::new("dashboard");
    env.install(Helm::V4, "healed", "basic", &["--labels", "helm-drift.io/repair=true"]);
    env.install(Helm::V3, "left", "basic", &[]);
    let hook = Receiver::start();
    let w = Watching::start(
        &env,
        &["--all", "--repair", "--repair-cooldown", "1s", "--notify", &hook.url, "--trust-namespace", env.ns.as_str()],
    )
    .ready();
    let prometheus = Prometheus::start(&env, &w.address, Some("kind-dashboard"));
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    // Counters read from their first scrape on: the drift comes after it.
    eventually("Prometheus to scrape the watcher", Duration::from_secs(60), || {
        !prometheus.query("helm_drift_ready{cluster=\"kind-dashboard\"} == 1").is_empty()
    });
    // Drift: one release heals (a repair, Events, notifications), one stays drifted.
    env.kubectl(&["delete", "configmap", "left-config"]).success();
    env.merge_patch("configmap", "healed-config", r#"{"data":{"greeting":"edited"}}"#);
    w.wait_for("helm_drift_repairs_total{result=\"applied\"}", 1.0);
    let left = format!("helm_drift_release_drifted{{namespace=\"{}\",release=\"left\"}}", env.ns);
    w.wait_for(&left, 1.0);

    // Prometheus has scraped what the watcher saw: the drifted release and the repair.
    let drifted = "helm_drift_release_drifted{cluster=~\"kind-dashboard\", release=\"left\"} == 1";
    eventually("Prometheus to see the drifted release", Duration::from_secs(60), || {
        !prometheus.query(drifted).is_empty()
    });
    let applied = "increase(helm_drift_repairs_total{cluster=\"kind-dashboard\", result=\"applied\"}[1m]) > 0";
    eventually("Prometheus to see the repair", Duration::from_secs(60), || !prometheus.query(applied).is_empty());

    let dashboard = dashboard();
    let all = queries(&dashboard);
    assert!(all.len() >= 18, "{all:?}");
    for (title, expr) in &all {
        let q = as_grafana_sends(expr, "kind-dashboard");
        let result = prometheus.query(&q);
        // The fleet's panels have series only from a watcher of a fleet (`watch --clusters`,
        // `fleet_watch`): here their queries must parse and filter by cluster.
        let fleet = FLEET_PANELS.contains(&title.as_str()) && !expr.contains("helm_drift_release_drifted");
        assert!(fleet || !result.is_empty(), "panel {title:?}: no series for {q}");
        // The same query for another cluster has nothing: the variable filters.
        assert!(prometheus.query(&as_grafana_sends(expr, "elsewhere")).is_empty(), "panel {title:?} ignores $cluster");
    }
    // The table's rows: the drifted release with its missing object.
    let table = |expr_has: &str| {
        let (_, expr) = all.iter().find(|(t, e)| t == "Releases" && e.contains(expr_has)).unwrap();
        prometheus.query(&as_grafana_sends(expr, "kind-dashboard"))
    };
    let rows = table("helm_drift_release_drifted");
    assert!(rows.iter().any(|r| r["metric"]["release"] == "left" && r["value"][1] == "1"), "{rows:?}");
    let objects = table("helm_drift_objects");
    assert!(
        objects
            .iter()
            .any(|r| r["metric"]["release"] == "left" && r["metric"]["verdict"] == "missing" && r["value"][1] == "1"),
        "{objects:?}"
    );
    // The `cluster` variable's own query.
    let (_, values) = prometheus.get("/api/v1/label/cluster/values?match%5B%5D=helm_drift_ready");
    assert!(values.contains("\"kind-dashboard\""), "{values}");
    assert!(!hook.bodies().is_empty(), "the receiver got notifications");

    // Two more edits healed (a fourth repair in a row is given up as a fight, by design), so that the
    // picture's time series have a story to tell.
    for round in 2..=3 {
        env.merge_patch("configmap", "healed-config", &format!(r#"{{"data":{{"greeting":"edited {round}"}}}}"#));
        w.wait_for("helm_drift_repairs_total{result=\"applied\"}", f64::from(round));
    }
    let healed = "sum(helm_drift_repairs_total{cluster=\"kind-dashboard\", result=\"applied\"}) == 3";
    eventually("Prometheus to see the three repairs", Duration::from_secs(60), || !prometheus.query(healed).is_empty());

    // The picture the book shows (docs/src/images/dashboard.png, kept by `pictures::keep`): every panel
    // drawn where the dashboard puts it, with what its queries answer.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    let shots = repo_root().join("target/pictures");
    std::fs::create_dir_all(&shots).unwrap();
    let page = shots.join("dashboard.html");
    std::fs::write(&page, crate::dashboard_picture::draw(&dashboard, &prometheus, "kind-dashboard", (since, now)))
        .unwrap();
    let png = shots.join("dashboard.png");
    let dom = crate::pictures::browse_at(&page, &png, "1400,2150");
    for (title, _) in &all {
        assert!(dom.contains(&format!("<h3>{}</h3>", title.replace('&', "&amp;"))), "panel {title:?} is drawn");
    }
    assert!(
        dom.contains(&format!("<td>{}</td><td>left</td><td>drifted</td><td>1</td><td>1 missing</td>", env.ns)),
        "{dom}"
    );
    let shot = std::fs::read(&png).unwrap();
    assert!(shot.starts_with(b"\x89PNG") && shot.len() > 10_000, "a screenshot of the dashboard: {}", png.display());
    eprintln!("the dashboard drawn: {}", png.display());
    crate::pictures::keep(&png, &dom, "dashboard");
}

/// The dashboard's JSON is what Grafana loads: the fields its schema requires, unique panel ids
/// and target refIds, panels on the 24-column grid without overlap, every query on the
/// `datasource` variable and filtered by the `cluster` variable.
#[test]
fn the_dashboard_is_well_formed() {
    let d = dashboard();
    assert_eq!(d["uid"], "helm-drift");
    assert!(d["schemaVersion"].as_u64().is_some_and(|v| v >= 36), "{}", d["schemaVersion"]);
    assert!(d["title"].is_string() && d["time"]["from"].is_string());
    let vars: Vec<&str> =
        d["templating"]["list"].as_array().unwrap().iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(vars, ["datasource", "cluster"]);
    let mut ids = std::collections::HashSet::new();
    let mut cells = std::collections::HashSet::new();
    for p in d["panels"].as_array().unwrap() {
        let title = p["title"].as_str().unwrap();
        assert!(ids.insert(p["id"].as_u64().unwrap()), "duplicate id in {title}");
        let g = &p["gridPos"];
        let (x, y, w, h) =
            (g["x"].as_u64().unwrap(), g["y"].as_u64().unwrap(), g["w"].as_u64().unwrap(), g["h"].as_u64().unwrap());
        assert!(x + w <= 24 && w > 0 && h > 0, "{title} off the grid");
        for cx in x..x + w {
            for cy in y..y + h {
                assert!(cells.insert((cx, cy)), "{title} overlaps another panel at {cx},{cy}");
            }
        }
        if p["type"] == "row" {
            continue;
        }
        assert!(p["description"].as_str().is_some_and(|s| !s.is_empty()), "{title} says what it shows");
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{title}");
        let mut refs = std::collections::HashSet::new();
        for t in p["targets"].as_array().unwrap() {
            assert!(refs.insert(t["refId"].as_str().unwrap()), "{title}: duplicate refId");
            let expr = t["expr"].as_str().unwrap();
            assert!(expr.contains("cluster=~\"$cluster\""), "{title}: {expr}");
        }
    }
}

/// The chart ships the file itself as a ConfigMap for Grafana's sidecar, only when asked.
#[test]
fn the_chart_ships_the_dashboard_for_grafanas_sidecar() {
    let env = Env::new("dashboard-chart");
    let chart = repo_root().join("charts/helm-drift");
    let template = |extra: &[&str]| {
        let mut args = vec!["template", "drift", chart.to_str().unwrap(), "--kube-version", "1.36.0"];
        args.extend_from_slice(extra);
        env.helm(Helm::V4, &args).success().stdout()
    };
    assert!(!template(&[]).contains("grafana_dashboard"), "off by default");
    let out = template(&["--set", "grafanaDashboard.enabled=true,grafanaDashboard.annotations.grafana_folder=Helm"]);
    let cm = serde_yaml::Deserializer::from_str(&out)
        .map(|d| <serde_yaml::Value as serde::Deserialize>::deserialize(d).unwrap())
        .find(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == "drift-helm-drift-dashboard")
        .unwrap_or_else(|| panic!("no dashboard ConfigMap:\n{out}"));
    assert_eq!(cm["metadata"]["labels"]["grafana_dashboard"], "1");
    assert_eq!(cm["metadata"]["annotations"]["grafana_folder"], "Helm");
    let shipped: Value = serde_json::from_str(cm["data"]["helm-drift.json"].as_str().unwrap()).unwrap();
    assert_eq!(shipped, dashboard());
}

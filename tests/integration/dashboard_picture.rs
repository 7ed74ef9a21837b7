//! A picture of the Grafana dashboard over real data, for the book: each panel where its
//! `gridPos` puts it on the 24-column grid, with its title and what Prometheus answers to its
//! queries as Grafana sends them (stat values, time series as lines, table rows). Grafana itself
//! is not among the tools this suite can build, so the page is drawn here from the dashboard's
//! JSON and the answers; headless Chromium takes the screenshot.

use crate::dashboard::{Prometheus, as_grafana_sends};
use serde_json::Value;
use std::fmt::Write;

/// HTML-escaped text.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A series' name as the target's `legendFormat` writes it (`{{verdict}}`), or its labels.
fn legend(target: &Value, metric: &Value) -> String {
    let format = target["legendFormat"].as_str().unwrap_or_default();
    let mut name = format.to_string();
    for (k, v) in metric.as_object().into_iter().flatten() {
        name = name.replace(&format!("{{{{{k}}}}}"), v.as_str().unwrap_or_default());
    }
    if name.is_empty() {
        let labels: Vec<String> = metric.as_object().into_iter().flatten().map(|(k, v)| format!("{k}={v}")).collect();
        name = labels.join(", ");
    }
    name
}

/// A number as a panel shows it.
fn shown(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e12 { format!("{v:.0}") } else { format!("{v:.3}") }
}

/// The value of an instant query's sample.
fn value(sample: &Value) -> f64 {
    sample["value"][1].as_str().and_then(|v| v.parse().ok()).unwrap_or(f64::NAN)
}

/// A panel's body: stat values, a time series' lines, or a table.
fn body(panel: &Value, prometheus: &Prometheus, cluster: &str, window: (f64, f64)) -> String {
    let targets = panel["targets"].as_array().cloned().unwrap_or_default();
    let mut html = String::new();
    match panel["type"].as_str().unwrap_or_default() {
        "stat" => {
            html.push_str("<div class=stats>");
            for t in &targets {
                let samples = prometheus.query(&as_grafana_sends(t["expr"].as_str().unwrap(), cluster));
                if samples.is_empty() {
                    let _ =
                        write!(html, "<div class=stat><b>0</b><span>{}</span></div>", esc(&legend(t, &Value::Null)));
                }
                for s in &samples {
                    let _ = write!(
                        html,
                        "<div class=stat><b>{}</b><span>{}</span></div>",
                        shown(value(s)),
                        esc(&legend(t, &s["metric"]))
                    );
                }
            }
            html.push_str("</div>");
        }
        "timeseries" => {
            const COLOURS: [&str; 6] = ["#73bf69", "#f2cc0c", "#8ab8ff", "#ff7383", "#ffb357", "#b877d9"];
            let (start, end) = window;
            let mut lines = Vec::new();
            for t in &targets {
                let expr = as_grafana_sends(t["expr"].as_str().unwrap(), cluster);
                for s in prometheus.query_range(&expr, start, end, 1.0) {
                    let points: Vec<(f64, f64)> = s["values"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|p| Some((p[0].as_f64()?, p[1].as_str()?.parse::<f64>().ok()?)))
                        .filter(|(_, v)| v.is_finite())
                        .collect();
                    lines.push((legend(t, &s["metric"]), points));
                }
            }
            let top = lines.iter().flat_map(|(_, p)| p.iter().map(|(_, v)| *v)).fold(0.0_f64, f64::max).max(1.0);
            let _ = write!(html, "<svg viewBox='0 0 1000 300' preserveAspectRatio='none'>");
            for i in 0..=4 {
                let y = 300.0 * f64::from(i) / 4.0;
                let _ = write!(html, "<line x1=0 x2=1000 y1={y} y2={y} class=grid />");
            }
            for (i, (_, points)) in lines.iter().enumerate() {
                let path: Vec<String> = points
                    .iter()
                    .map(|(t, v)| format!("{:.1},{:.1}", (t - start) / (end - start) * 1000.0, 295.0 - v / top * 285.0))
                    .collect();
                let colour = COLOURS[i % COLOURS.len()];
                let _ = write!(html, "<polyline points='{}' stroke='{colour}' />", path.join(" "));
                // Each sample a dot (a line of no length, round ends: round at any aspect ratio).
                for p in &path {
                    let (x, y) = p.split_once(',').unwrap();
                    let _ = write!(html, "<line x1={x} x2={x} y1={y} y2={y} class=dot stroke='{colour}' />");
                }
            }
            let _ = write!(html, "</svg><div class=legend><i>max {}</i>", shown(top));
            for (i, (name, _)) in lines.iter().enumerate() {
                let _ = write!(html, "<span style='color:{}'>&#9632; {}</span>", COLOURS[i % COLOURS.len()], esc(name));
            }
            html.push_str("</div>");
        }
        "table" => table(panel, &targets, prometheus, cluster, window.1, &mut html),
        _ => {}
    }
    html
}

/// A table panel as Grafana's `merge` and `organize` transformations make it: one row per label
/// set, a column per target (named as `organize` renames it), its value mappings and the
/// `dateTimeFromNow` unit applied; a target by `verdict` lists its non-zero verdicts in one cell.
fn table(panel: &Value, targets: &[Value], prometheus: &Prometheus, cluster: &str, now: f64, html: &mut String) {
    let renames = panel["transformations"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["id"] == "organize")
        .map(|t| t["options"]["renameByName"].clone())
        .unwrap_or_default();
    let names: Vec<String> = targets
        .iter()
        .map(|t| {
            let by_ref = format!("Value #{}", t["refId"].as_str().unwrap_or_default());
            renames[&by_ref].as_str().or(t["legendFormat"].as_str()).unwrap_or(&by_ref).to_string()
        })
        .collect();
    let property = |column: &str, id: &str| {
        panel["fieldConfig"]["overrides"].as_array().into_iter().flatten().find_map(|o| {
            let mine = o["matcher"]["id"] == "byName" && o["matcher"]["options"] == column;
            let p = o["properties"].as_array()?.iter().find(|p| p["id"] == id)?;
            mine.then(|| p["value"].clone())
        })
    };
    let mut rows: std::collections::BTreeMap<Vec<String>, Vec<String>> = Default::default();
    let mut keys: Vec<String> = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        for s in prometheus.query(&as_grafana_sends(t["expr"].as_str().unwrap(), cluster)) {
            let labels = s["metric"].as_object().cloned().unwrap_or_default();
            let id: Vec<String> = labels
                .iter()
                .filter(|(k, _)| *k != "verdict")
                .map(|(k, v)| {
                    if !keys.contains(k) {
                        keys.push(k.clone());
                    }
                    v.as_str().unwrap_or_default().to_string()
                })
                .collect();
            let v = value(&s);
            let mut cell = shown(v);
            if let Some(verdict) = labels.get("verdict") {
                if v == 0.0 {
                    continue;
                }
                cell = format!("{cell} {}", verdict.as_str().unwrap_or_default());
            }
            if property(&names[i], "unit").is_some_and(|u| u == "dateTimeFromNow") {
                cell = format!("{:.0} s ago", (now - v / 1000.0).max(0.0));
            }
            if let Some(text) =
                property(&names[i], "mappings").and_then(|m| m[0]["options"][&cell]["text"].as_str().map(String::from))
            {
                cell = text;
            }
            let row = rows.entry(id).or_insert_with(|| vec![String::new(); targets.len()]);
            row[i] = if row[i].is_empty() { cell } else { format!("{}, {cell}", row[i]) };
        }
    }
    html.push_str("<table><tr>");
    for k in keys.iter().chain(&names) {
        let _ = write!(html, "<th>{}</th>", esc(k));
    }
    html.push_str("</tr>");
    for (id, cells) in &rows {
        html.push_str("<tr>");
        for c in id.iter().chain(cells) {
            let _ = write!(html, "<td>{}</td>", esc(c));
        }
        html.push_str("</tr>");
    }
    html.push_str("</table>");
}

/// The dashboard as a page: its panels on the grid, each with what Prometheus answers for
/// `cluster` over `window` (seconds since the epoch).
pub fn draw(dashboard: &Value, prometheus: &Prometheus, cluster: &str, window: (f64, f64)) -> String {
    let mut html = format!(
        "<!doctype html><meta charset=utf-8><title>{}</title><style>{STYLE}</style><header>{} <small>cluster = {} · datasource = Prometheus</small></header><main>",
        esc(dashboard["title"].as_str().unwrap_or_default()),
        esc(dashboard["title"].as_str().unwrap_or_default()),
        esc(cluster)
    );
    for panel in dashboard["panels"].as_array().unwrap() {
        let g = &panel["gridPos"];
        let at = |k: &str| g[k].as_i64().unwrap_or(0);
        let place =
            format!("grid-column:{} / span {};grid-row:{} / span {}", at("x") + 1, at("w"), at("y") + 1, at("h"));
        let title = esc(panel["title"].as_str().unwrap_or_default());
        if panel["type"] == "row" {
            let _ = write!(html, "<h2 style='{place}'>{title}</h2>");
        } else {
            let _ = write!(
                html,
                "<section style='{place}'><h3>{title}</h3>{}</section>",
                body(panel, prometheus, cluster, window)
            );
        }
    }
    html.push_str("</main>");
    html
}

const STYLE: &str = "body{margin:0;background:#111217;color:#ccccdc;font:13px Inter,Helvetica,Arial,sans-serif}
header{padding:10px 16px;font-size:17px;color:#fff;border-bottom:1px solid #2a2d35}header small{color:#8e8e9e;margin-left:12px;font-size:12px}
main{display:grid;grid-template-columns:repeat(24,1fr);grid-auto-rows:30px;gap:6px;padding:8px}
h2{margin:0;font-size:14px;color:#fff;align-self:end}
section{background:#181b1f;border:1px solid #2a2d35;border-radius:2px;padding:6px 8px;overflow:hidden;display:flex;flex-direction:column}
h3{margin:0 0 4px;font-size:12px;font-weight:500;color:#ccccdc}
.stats{display:flex;flex:1;gap:12px;align-items:center;justify-content:space-around}
.stat{text-align:center}.stat b{display:block;font-size:30px;color:#73bf69}.stat span{color:#8e8e9e;font-size:11px}
svg{flex:1;width:100%;min-height:0}polyline{fill:none;stroke-width:3;vector-effect:non-scaling-stroke}.grid{stroke:#2a2d35;vector-effect:non-scaling-stroke}.dot{stroke-width:7;stroke-linecap:round;vector-effect:non-scaling-stroke}
.legend{font-size:11px;display:flex;gap:10px;flex-wrap:wrap}.legend i{color:#8e8e9e}
table{border-collapse:collapse;width:100%;font-size:12px}th{text-align:left;color:#6e9fff;border-bottom:1px solid #2a2d35;padding:3px}td{padding:3px;border-bottom:1px solid #22252b}";

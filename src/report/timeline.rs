//! Drifts' lives on the watcher's page and at `/drifts.json`: when each appeared, who made it,
//! when it was reported, what happened to it and how (and by whom) it ended. Never a value.

use super::junit::esc;
use crate::model::DriftLife;
use jiff::Timestamp;
use serde_json::{Value, json};
use std::fmt::Write;

/// The page's section: open drifts with their age, then the ended ones with how long they
/// lived.
pub(crate) fn section(lives: &[DriftLife], now: Timestamp) -> String {
    if lives.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<section class=\"timeline\" id=\"timeline\">\n<h2>Drift timeline</h2>\n<table class=\"lives\">\n<thead><tr><th>Object</th><th>Release</th><th>Appeared</th><th>Made by</th><th>Reported</th><th>Since then</th><th>Ended</th></tr></thead>\n<tbody>\n",
    );
    for l in lives {
        let steps: Vec<String> =
            l.steps.iter().map(|(at, what)| format!("<time>{at:.0}</time> {}", esc(what))).collect();
        let ended = match &l.ended {
            Some(e) => format!(
                "{} after {}{} at <time>{:.0}</time>",
                esc(&e.said),
                lasted(l.appeared, e.at),
                e.by.as_ref().map_or(String::new(), |b| format!(", by <span class=\"who\">{}</span>", esc(b))),
                e.at
            ),
            None => format!("<strong>open for {}</strong>", lasted(l.appeared, now)),
        };
        let class = if l.ended.is_some() { "ended" } else { "open" };
        let _ = writeln!(
            out,
            "<tr class=\"life {class}\"><td class=\"id\">{}</td><td>{}/{} (revision {})</td><td><time>{:.0}</time></td><td class=\"who\">{}</td><td><time>{:.0}</time></td><td>{}</td><td>{ended}</td></tr>",
            esc(&l.object),
            esc(&l.namespace),
            esc(&l.release),
            l.revision,
            l.appeared,
            esc(&made_by(l)),
            l.detected,
            steps.join("<br>"),
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
    out
}

/// `/drifts.json`: every life the watcher keeps.
pub(crate) fn json(lives: &[DriftLife], now: Timestamp) -> Value {
    let life = |l: &DriftLife| {
        let end = l.ended.as_ref();
        json!({
            "cluster": (!l.cluster.is_empty()).then_some(&l.cluster),
            "namespace": l.namespace,
            "release": l.release,
            "object": l.object,
            "revision": l.revision,
            "appeared": format!("{:.0}", l.appeared),
            "madeBy": l.made_by,
            "detected": format!("{:.0}", l.detected),
            "steps": l.steps.iter().map(|(at, what)| json!({"at": format!("{at:.0}"), "what": what})).collect::<Vec<_>>(),
            "open": end.is_none(),
            "seconds": seconds(l.appeared, end.map_or(now, |e| e.at)),
            "ended": end.map(|e| json!({"at": format!("{:.0}", e.at), "by": e.by, "how": e.how, "said": e.said})),
        })
    };
    json!({"apiVersion": "helm-drift.io/v1", "kind": "DriftTimeline", "now": format!("{now:.0}"), "drifts": lives.iter().map(life).collect::<Vec<_>>()})
}

fn made_by(l: &DriftLife) -> String {
    if l.made_by.is_empty() { "unknown".into() } else { l.made_by.join(", ") }
}

fn seconds(from: Timestamp, to: Timestamp) -> i64 {
    (to.as_second() - from.as_second()).max(0)
}

/// `3 min`, `2 h`, `4 days`.
fn lasted(from: Timestamp, to: Timestamp) -> String {
    match seconds(from, to) {
        s @ 0..120 => format!("{s} s"),
        s @ 120..7200 => format!("{} min", s / 60),
        s @ 7200..172_800 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::DriftEnd;

    #[test]
    fn a_life_names_who_made_and_ended_it_and_escapes_what_the_cluster_wrote() {
        let at = |t: &str| t.parse::<Timestamp>().unwrap();
        let life = DriftLife {
            cluster: String::new(),
            namespace: "apps".into(),
            release: "web".into(),
            object: "ConfigMap/apps/<c>".into(),
            revision: 2,
            appeared: at("2026-12-02T14:00:00Z"),
            made_by: vec!["kubectl-edit by alice@example.com".into()],
            detected: at("2026-12-02T14:00:01Z"),
            steps: vec![],
            ended: Some(DriftEnd {
                at: at("2026-12-02T14:05:00Z"),
                how: "hand",
                said: "undone by a write outside Helm".into(),
                by: Some("bob".into()),
            }),
        };
        let html = section(std::slice::from_ref(&life), at("2026-12-02T15:00:00Z"));
        assert!(
            html.contains("ConfigMap/apps/&lt;c&gt;") && html.contains("by <span class=\"who\">bob</span>"),
            "{html}"
        );
        assert!(html.contains("after 5 min"), "{html}");
        let j = json(&[life], at("2026-12-02T15:00:00Z"));
        assert_eq!(j["drifts"][0]["seconds"], 300);
        assert_eq!(j["drifts"][0]["ended"]["how"], "hand");
        assert_eq!(j["drifts"][0]["madeBy"][0], "kubectl-edit by alice@example.com");
    }
}

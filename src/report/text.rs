//! The human-readable report: a verdict line per release, then each drifted object with the
//! fields that differ (secret values hidden unless asked).

use super::Style;
use crate::check::{DriftReport, Outcome, RunReport};
use crate::compare::{Engine, ObjectDrift, Verdict};
use owo_colors::OwoColorize;
use serde_json::Value;
use std::fmt::Write;

/// Longest rendering of one value before it is cut.
const VALUE_WIDTH: usize = 100;

pub fn render(out: &mut String, r: &DriftReport, style: &Style) {
    let paint = |s: &str, f: fn(&str) -> String| if style.color { f(s) } else { s.to_string() };
    let (drifted, errors, total) = (r.drifted(), r.errors(), r.objects.len());
    let verdict = if errors > 0 {
        paint(&format!("error ({errors} of {} could not be checked)", objects(total)), |s| s.red().bold().to_string())
    } else if drifted > 0 {
        paint(&format!("{drifted} of {} drifted", objects(total)), |s| s.yellow().bold().to_string())
    } else {
        paint(&format!("in sync ({})", objects(total)), |s| s.green().to_string())
    };
    let _ = writeln!(
        out,
        "{}: {verdict} [namespace {}, revision {} {}{}]",
        paint(&r.release, |s| s.bold().to_string()),
        r.namespace,
        r.revision,
        r.status,
        if r.chart.is_empty() { String::new() } else { format!(", chart {}", r.chart) }
    );
    if let Some((rev, status)) = &r.newest {
        let _ = writeln!(out, "  note: newest revision {rev} is {status}; compared with revision {}", r.revision);
    }
    match r.engine() {
        Engine::ReadOnly { reason } => {
            let _ = writeln!(out, "  engine: read-only client-side comparison ({reason})");
        }
        Engine::Exact if style.verbose => {
            let _ = writeln!(out, "  engine: exact (server-side apply dry-run for objects that differ client-side)");
        }
        Engine::Exact => {}
    }
    if style.verbose {
        for n in &r.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }
    for o in &r.objects {
        object(out, o, style);
    }
}

/// Renders every checked release, then a summary line when there are several.
pub fn render_run(out: &mut String, run: &RunReport, style: &Style) {
    let mut counts = (0, 0, 0);
    for o in &run.outcomes {
        match o {
            Outcome::Checked(r) => {
                if style.summary {
                    summary_line(out, r, style);
                } else {
                    render(out, r, style);
                }
                match (r.errors(), r.drifted()) {
                    (0, 0) => counts.0 += 1,
                    (0, _) => counts.1 += 1,
                    _ => counts.2 += 1,
                }
            }
            Outcome::Failed(_) if run.outcomes.len() == 1 => counts.2 += 1,
            Outcome::Failed(e) => {
                counts.2 += 1;
                let line = format!("{}: error [namespace {}] (see stderr)", e.release, e.namespace);
                let _ = writeln!(out, "{}", if style.color { line.red().to_string() } else { line });
            }
        }
    }
    if run.outcomes.len() > 1 {
        let _ = writeln!(
            out,
            "{} releases: {} in sync, {} drifted, {} error{}",
            run.outcomes.len(),
            counts.0,
            counts.1,
            counts.2,
            if counts.2 == 1 { "" } else { "s" }
        );
    }
}

/// The one verdict line of a release (`--summary`).
fn summary_line(out: &mut String, r: &DriftReport, style: &Style) {
    let mut full = String::new();
    render(&mut full, r, &Style { verbose: false, ..style.clone() });
    if let Some(first) = full.lines().next() {
        out.push_str(first);
        out.push('\n');
    }
}

/// One object's verdict line and evidence (also used for JUnit failure bodies).
pub fn object(out: &mut String, o: &ObjectDrift, style: &Style) {
    let paint = |s: &str, f: fn(&str) -> String| if style.color { f(s) } else { s.to_string() };
    let label = match &o.verdict {
        Verdict::InSync if style.verbose => paint("in sync", |s| s.green().to_string()),
        Verdict::Excluded { .. } if style.verbose => paint("excluded", |s| s.dimmed().to_string()),
        Verdict::InSync | Verdict::Excluded { .. } => return,
        Verdict::Missing => paint("missing", |s| s.red().to_string()),
        Verdict::Modified if o.fields.is_empty() => paint("changed outside Helm", |s| s.yellow().to_string()),
        Verdict::Modified => paint("modified", |s| s.yellow().to_string()),
        Verdict::Unknown { .. } => paint("unknown", |s| s.magenta().to_string()),
        Verdict::Error { .. } => paint("error", |s| s.red().bold().to_string()),
    };
    let _ = write!(out, "  {label:<8} {}", identity(o));
    if let Some(src) = &o.source {
        let _ = write!(out, "  (from {src})");
    }
    out.push('\n');
    let detail = "      ";
    match &o.verdict {
        Verdict::Unknown { reason } | Verdict::Excluded { reason } => {
            let _ = writeln!(out, "{detail}{reason}");
        }
        Verdict::Error { message } => {
            let _ = writeln!(out, "{detail}{message}");
        }
        _ => {}
    }
    let secret = o.kind == "Secret" && o.api_version == "v1";
    let show = |path: &str, v: &Value| shown(secret && !style.show_secrets, path, v);
    for f in &o.fields {
        let line = match (&f.recorded, &f.live) {
            (Some(r), Some(l)) => format!("~ {}: {} -> {}", f.path, show(&f.path, r), show(&f.path, l)),
            (Some(r), None) => format!("- {}: {} (removed)", f.path, show(&f.path, r)),
            (None, Some(l)) => format!("+ {}: {} (not in the release)", f.path, show(&f.path, l)),
            (None, None) => continue,
        };
        let _ = writeln!(out, "{detail}{}", paint(&line, |s| s.yellow().to_string()));
    }
    for a in &o.added {
        let line = format!("+ {}: {} (added by {})", a.path, show(&a.path, &a.value), a.manager);
        let _ = writeln!(out, "{detail}{}", paint(&line, |s| s.cyan().to_string()));
    }
    if style.verbose {
        for i in &o.ignored {
            let _ = writeln!(
                out,
                "{detail}{}",
                paint(&format!("= {} ignored ({})", i.path, i.reason), |s| s.dimmed().to_string())
            );
        }
    }
    if o.verdict == Verdict::Modified
        && let Some(diff) = super::diff::unified(o, style.context, style.show_secrets)
    {
        for line in diff.lines() {
            let painted = if !style.color {
                line.to_string()
            } else if line.starts_with("+++") || line.starts_with("---") {
                line.bold().to_string()
            } else if line.starts_with('+') {
                line.green().to_string()
            } else if line.starts_with('-') {
                line.red().to_string()
            } else if line.starts_with("@@") {
                line.cyan().to_string()
            } else {
                line.to_string()
            };
            let _ = writeln!(out, "{detail}{painted}");
        }
    }
}

/// A value as shown to people: compact JSON, cut when long, secret data hidden.
fn shown(mask: bool, path: &str, v: &Value) -> String {
    if mask
        && (path == "/data" || path.starts_with("/data/") || path == "/stringData" || path.starts_with("/stringData/"))
    {
        return "(secret value hidden)".to_string();
    }
    let text = v.to_string();
    if text.chars().count() > VALUE_WIDTH {
        format!("{}...", text.chars().take(VALUE_WIDTH).collect::<String>())
    } else {
        text
    }
}

fn objects(n: usize) -> String {
    if n == 1 { "1 object".into() } else { format!("{n} objects") }
}

/// `Kind namespace/name` or `Kind name` for cluster-scoped objects.
pub fn identity(o: &ObjectDrift) -> String {
    match &o.namespace {
        Some(ns) => format!("{} {ns}/{}", o.kind, o.name),
        None => format!("{} {}", o.kind, o.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{FieldDiff, Foreign};
    use serde_json::json;

    fn obj(kind: &str, ns: Option<&str>, name: &str, verdict: Verdict) -> ObjectDrift {
        let source = format!("demo/templates/{name}.yaml");
        ObjectDrift { engine: Some(Engine::Exact), ..ObjectDrift::new("v1", kind, ns, name, Some(&source), verdict) }
    }

    fn report(objects: Vec<ObjectDrift>) -> DriftReport {
        DriftReport {
            release: "demo".into(),
            namespace: "apps".into(),
            revision: 2,
            status: "deployed".into(),
            chart: "demo-0.1.0".into(),
            record: "Secret apps/sh.helm.release.v1.demo.v2".into(),
            newest: None,
            objects,
            notes: Vec::new(),
        }
    }

    fn plain(r: &DriftReport) -> String {
        let mut out = String::new();
        render(&mut out, r, &Style::default());
        out
    }

    #[test]
    fn lists_missing_objects_with_their_template() {
        let r = report(vec![
            obj("ConfigMap", Some("apps"), "cfg", Verdict::InSync),
            obj("Deployment", Some("apps"), "web", Verdict::Missing),
            obj("ClusterRole", None, "reader", Verdict::Missing),
        ]);
        assert_eq!(
            plain(&r),
            "demo: 2 of 3 objects drifted [namespace apps, revision 2 deployed, chart demo-0.1.0]\n  missing  Deployment apps/web  (from demo/templates/web.yaml)\n  missing  ClusterRole reader  (from demo/templates/reader.yaml)\n"
        );
    }

    #[test]
    fn modified_fields_and_secret_values_hidden() {
        let mut web = obj("Deployment", Some("apps"), "web", Verdict::Modified);
        web.fields.push(FieldDiff::new("/spec/replicas", Some(&json!(2)), Some(&json!(5))));
        web.added.push(Foreign {
            path: "/metadata/labels/x".into(),
            value: json!("y"),
            manager: "kubectl-label".into(),
        });
        let mut secret = obj("Secret", Some("apps"), "creds", Verdict::Modified);
        secret.fields.push(FieldDiff::new("/data/password", Some(&json!("czNjcmV0")), Some(&json!("b3RoZXI="))));
        let out = plain(&report(vec![web, secret]));
        assert!(out.contains("  modified Deployment apps/web  (from demo/templates/web.yaml)\n      ~ /spec/replicas: 2 -> 5\n      + /metadata/labels/x: \"y\" (added by kubectl-label)\n"), "{out}");
        assert!(out.contains("~ /data/password: (secret value hidden) -> (secret value hidden)"), "{out}");
        assert!(!out.contains("czNjcmV0"));
    }

    #[test]
    fn show_secrets_prints_values() {
        let mut secret = obj("Secret", Some("apps"), "creds", Verdict::Modified);
        secret.fields.push(FieldDiff::new("/data/password", Some(&json!("czNjcmV0")), None));
        let mut out = String::new();
        render(&mut out, &report(vec![secret]), &Style { show_secrets: true, ..Style::default() });
        assert!(out.contains("- /data/password: \"czNjcmV0\" (removed)"), "{out}");
    }

    #[test]
    fn in_sync_is_one_line_and_colour_is_optional() {
        let r = report(vec![obj("ConfigMap", Some("apps"), "cfg", Verdict::InSync)]);
        assert_eq!(plain(&r), "demo: in sync (1 object) [namespace apps, revision 2 deployed, chart demo-0.1.0]\n");
        let mut coloured = String::new();
        render(&mut coloured, &r, &Style { color: true, ..Style::default() });
        assert!(coloured.contains('\x1b'));
    }
}

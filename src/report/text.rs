//! The human-readable report: a verdict line per release, then a line per drifted object.

use crate::check::DriftReport;
use crate::compare::{ObjectDrift, Verdict};
use owo_colors::OwoColorize;
use std::fmt::Write;

pub fn render(out: &mut String, r: &DriftReport, color: bool) {
    let paint = |s: &str, f: fn(&str) -> String| if color { f(s) } else { s.to_string() };
    let drifted = r.drifted();
    let errors = r.errors();
    let total = r.objects.len();
    let verdict = if errors > 0 {
        paint(&format!("error ({errors} of {total} objects could not be checked)"), |s| s.red().bold().to_string())
    } else if drifted > 0 {
        paint(&format!("{drifted} of {total} objects drifted"), |s| s.yellow().bold().to_string())
    } else {
        paint(&format!("in sync ({total} objects)"), |s| s.green().to_string())
    };
    let _ = writeln!(
        out,
        "{}: {verdict} [namespace {}, revision {} {}, chart {}]",
        paint(&r.release, |s| s.bold().to_string()),
        r.namespace,
        r.revision,
        r.status,
        r.chart
    );
    if let Some((rev, status)) = &r.newest {
        let _ = writeln!(out, "  note: newest revision {rev} is {status}; compared with revision {}", r.revision);
    }
    for o in &r.objects {
        let label = match &o.verdict {
            Verdict::InSync => continue,
            Verdict::Missing => paint("missing", |s| s.red().to_string()),
            Verdict::Unknown { .. } => paint("unknown", |s| s.magenta().to_string()),
            Verdict::Error { .. } => paint("error", |s| s.red().bold().to_string()),
        };
        let _ = write!(out, "  {label:<8} {}", identity(o));
        if let Some(src) = &o.source {
            let _ = write!(out, "  (from {src})");
        }
        out.push('\n');
        match &o.verdict {
            Verdict::Unknown { reason } => {
                let _ = writeln!(out, "           {reason}");
            }
            Verdict::Error { message } => {
                let _ = writeln!(out, "           {message}");
            }
            _ => {}
        }
    }
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

    fn obj(kind: &str, ns: Option<&str>, name: &str, verdict: Verdict) -> ObjectDrift {
        ObjectDrift {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: ns.map(Into::into),
            name: name.into(),
            source: Some(format!("demo/templates/{name}.yaml")),
            verdict,
        }
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
        }
    }

    #[test]
    fn lists_missing_objects_with_their_template() {
        let r = report(vec![
            obj("ConfigMap", Some("apps"), "cfg", Verdict::InSync),
            obj("Deployment", Some("apps"), "web", Verdict::Missing),
            obj("ClusterRole", None, "reader", Verdict::Missing),
        ]);
        let mut out = String::new();
        render(&mut out, &r, false);
        assert_eq!(
            out,
            "demo: 2 of 3 objects drifted [namespace apps, revision 2 deployed, chart demo-0.1.0]\n  missing  Deployment apps/web  (from demo/templates/web.yaml)\n  missing  ClusterRole reader  (from demo/templates/reader.yaml)\n"
        );
    }

    #[test]
    fn in_sync_is_one_line_and_colour_is_optional() {
        let r = report(vec![obj("ConfigMap", Some("apps"), "cfg", Verdict::InSync)]);
        let mut plain = String::new();
        render(&mut plain, &r, false);
        assert_eq!(plain, "demo: in sync (1 objects) [namespace apps, revision 2 deployed, chart demo-0.1.0]\n");
        assert!(!plain.contains('\x1b'));
        let mut coloured = String::new();
        render(&mut coloured, &r, true);
        assert!(coloured.contains('\x1b'));
    }
}

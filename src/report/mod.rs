//! Report: the one place that writes to stdout and stderr: text, JSON and JUnit renderings of a
//! run, errors, and progress.

mod diff;
pub mod json;
mod junit;
mod render;
mod repair;
mod text;

pub use text::identity;

use crate::check::{Outcome, RunReport};
use std::io::{IsTerminal, Write};

/// Output formats of `check`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Text,
    Json,
    Junit,
}

/// How reports look; colour is resolved once by the caller.
#[derive(Clone, Debug)]
pub struct Style {
    pub format: Format,
    pub color: bool,
    /// Also in-sync objects, ignored differences, the engine and notes.
    pub verbose: bool,
    /// Print secret values instead of hiding them.
    pub show_secrets: bool,
    /// Lines of context around each change in diffs.
    pub context: usize,
    /// Only the verdict line of each release.
    pub summary: bool,
    /// Nothing on stdout; errors still go to stderr.
    pub quiet: bool,
}

impl Default for Style {
    fn default() -> Style {
        Style {
            format: Format::Text,
            color: false,
            verbose: false,
            show_secrets: false,
            context: 3,
            summary: false,
            quiet: false,
        }
    }
}

/// Where and how output is written.
pub struct Printer {
    pub style: Style,
}

impl Printer {
    /// Writes a run's report (errors of single releases go to stderr).
    pub fn run(&self, run: &RunReport) {
        for o in &run.outcomes {
            if let Outcome::Failed(e) = o {
                eprintln!("Error: {}", e.message);
            }
        }
        if self.style.quiet {
            return;
        }
        let out = match self.style.format {
            Format::Text => {
                let mut out = String::new();
                text::render_run(&mut out, run, &self.style);
                out
            }
            Format::Json => json::render(run, self.style.show_secrets),
            Format::Junit => junit::render(run, &self.style),
        };
        write_stdout(&out);
    }

    /// Writes the report of `render`.
    pub fn render(&self, report: &crate::render::RenderReport) {
        if self.style.quiet {
            return;
        }
        let out = match self.style.format {
            Format::Json => render::json(report),
            _ => render::text(report, &self.style),
        };
        write_stdout(&out);
    }

    /// Writes the report of `repair`.
    pub fn repair(&self, report: &crate::repair::RepairReport) {
        if !self.style.quiet {
            write_stdout(&repair::render(report, &self.style));
        }
    }

    /// Writes the report of `repair --upgrade`.
    pub fn upgrade(&self, report: &crate::upgrade::UpgradeReport) {
        if self.style.quiet {
            return;
        }
        let mut out = format!(
            "repair through helm upgrade of {} (namespace {}, from revision {}){}:\n",
            report.release,
            report.namespace,
            report.from_revision,
            if report.dry_run { ", dry run" } else { "" }
        );
        for line in report.helm_output.lines() {
            out.push_str(&format!("  | {line}\n"));
        }
        if let Some(after) = &report.after {
            out.push_str("after repair:\n");
            text::render(&mut out, after, &self.style);
        }
        write_stdout(&out);
    }

    /// A progress callback: `checked N/M releases` on stderr, only when stderr is a terminal.
    pub fn progress(&self) -> impl Fn(usize, usize) + Sync + use<> {
        let live = std::io::stderr().is_terminal() && !self.style.quiet;
        move |done, total| {
            if live && total > 1 {
                let end = if done == total { "\r\x1b[K" } else { "" };
                eprint!("\r\x1b[Kchecked {done}/{total} releases{end}");
            }
        }
    }

    /// A diagnostic line on stderr (`--debug`).
    pub fn debug(&self, line: &str) {
        eprintln!("debug: {line}");
    }

    /// Writes plain text to stdout (help, version).
    pub fn stdout(&self, text: &str) {
        write_stdout(text);
    }

    /// Writes an error (with its causes) to stderr.
    pub fn error(&self, err: &anyhow::Error) {
        let mut msg = format!("Error: {err}");
        for cause in err.chain().skip(1) {
            // Many errors print their source themselves: say each thing once.
            let cause = cause.to_string();
            if !msg.contains(&cause) {
                msg.push_str(&format!(": {cause}"));
            }
        }
        eprintln!("{msg}");
    }

    /// Writes a preformatted message (usage errors) to stderr.
    pub fn stderr(&self, text: &str) {
        eprint!("{text}");
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn write_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()).is_err() {
        // Broken pipe or closed stdout: nothing more to say.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{DriftReport, ReleaseError};
    use crate::compare::{Engine, FieldDiff, Foreign, Ignored, ObjectDrift, Verdict};
    use serde_json::json;

    fn obj(kind: &str, name: &str, verdict: Verdict) -> ObjectDrift {
        let api_version = if kind == "Deployment" { "apps/v1" } else { "v1" };
        let source = format!("web/templates/{name}.yaml");
        ObjectDrift {
            engine: Some(Engine::Exact),
            ..ObjectDrift::new(api_version, kind, Some("apps"), name, Some(&source), verdict)
        }
    }

    /// A run with a drifted release, a clean one and one that could not be read.
    fn fixture() -> RunReport {
        let mut web = obj("Deployment", "web", Verdict::Modified);
        web.fields.push(FieldDiff::new("/spec/replicas", Some(&json!(2)), Some(&json!(5))));
        web.added.push(Foreign {
            path: "/spec/template/spec/containers/0/env/1".into(),
            value: json!({"name": "EXTRA", "value": "1"}),
            manager: "kubectl-set".into(),
        });
        web.ignored
            .push(Ignored { path: "/metadata/labels/team".into(), reason: "--ignore /metadata/labels/team".into() });
        web.live = Some(json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "apps"},
            "spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "web", "image": "web:1",
                "env": [{"name": "A", "value": "a"}, {"name": "EXTRA", "value": "1"}]}]}}}
        }));
        let mut secret = obj("Secret", "creds", Verdict::Modified);
        secret.fields.push(FieldDiff::new("/data/password", Some(&json!("b2xk")), Some(&json!("bmV3"))));
        secret.live = Some(
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"}, "data": {"password": "bmV3"}}),
        );
        let web_release = DriftReport {
            release: "web".into(),
            namespace: "apps".into(),
            revision: 3,
            status: "deployed".into(),
            chart: "web-1.2.0".into(),
            record: "Secret apps/sh.helm.release.v1.web.v3".into(),
            newest: Some((4, "failed".into())),
            objects: vec![
                obj("ConfigMap", "config", Verdict::InSync),
                obj("Deployment", "worker", Verdict::Missing),
                web,
                secret,
                obj(
                    "Widget",
                    "w",
                    Verdict::Unknown { reason: "the cluster does not serve example.io/v1 Widget".into() },
                ),
                obj(
                    "ConfigMap",
                    "tuned",
                    Verdict::Excluded { reason: "annotation helm-drift.io/disabled: \"true\"".into() },
                ),
            ],
            notes: vec!["1 hook(s) not checked: hooks and tests are not expected to exist".into()],
        };
        let db = DriftReport {
            release: "db".into(),
            namespace: "data".into(),
            revision: 1,
            status: "deployed".into(),
            chart: "db-0.1.0".into(),
            record: "Secret data/sh.helm.release.v1.db.v1".into(),
            newest: None,
            objects: vec![obj("ConfigMap", "db", Verdict::InSync)],
            notes: Vec::new(),
        };
        let broken = ReleaseError {
            namespace: "ops".into(),
            release: "broken".into(),
            message: "cannot read release \"broken\": Secret ops/sh.helm.release.v1.broken.v1: bad gzip data: unexpected end of file".into(),
        };
        RunReport { outcomes: vec![Outcome::Checked(web_release), Outcome::Checked(db), Outcome::Failed(broken)] }
    }

    fn text(style: Style) -> String {
        let mut out = String::new();
        text::render_run(&mut out, &fixture(), &style);
        out
    }

    #[test]
    fn text_report() {
        insta::assert_snapshot!("text", text(Style::default()));
    }

    #[test]
    fn text_report_verbose_and_summary() {
        insta::assert_snapshot!("text_verbose", text(Style { verbose: true, context: 1, ..Style::default() }));
        insta::assert_snapshot!("text_summary", text(Style { summary: true, ..Style::default() }));
    }

    #[test]
    fn json_report() {
        let doc = json::render(&fixture(), false);
        assert!(!doc.contains("bmV3") && !doc.contains("b2xk"), "secret values are masked");
        insta::assert_snapshot!("json", doc);
        let shown = json::render(&fixture(), true);
        assert!(shown.contains("bmV3"));
    }

    #[test]
    fn junit_report() {
        let xml = junit::render(&fixture(), &Style::default());
        assert!(!xml.contains('\x1b'));
        insta::assert_snapshot!("junit", xml);
    }

    #[test]
    fn exit_code_error_outranks_drift() {
        let mut run = fixture();
        assert_eq!(run.exit_code(), 1);
        run.outcomes.pop();
        assert_eq!(run.exit_code(), 2);
        run.outcomes.remove(0);
        assert_eq!(run.exit_code(), 0);
    }
}

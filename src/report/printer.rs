//! The printer: the only writer of a command's output, to the writers it is given (stdout and
//! stderr for the binary, buffers in tests), and the progress line.

use super::controls;
use super::markdown;
use super::present::plural;
use super::style::{Format, Style, Summary};
use super::text::repair;
use crate::model::{
    AcceptReport, FleetRepair, FleetReport, Outcome, Phase, PlanReport, Progress, RenderReport, RepairReport,
    RunReport, Tick, UpgradeReport,
};
use std::io::{IsTerminal, Write};

/// Writes reports to `out` (stdout) and messages to `err` (stderr).
pub(crate) struct Printer<O: Write, E: Write> {
    out: O,
    err: E,
    pub(crate) style: Style,
}

/// The printer of the binary.
pub(crate) type Terminal = Printer<std::io::Stdout, std::io::Stderr>;

impl Terminal {
    pub(crate) fn terminal(style: Style) -> Terminal {
        Printer::new(std::io::stdout(), std::io::stderr(), style)
    }
}

impl<O: Write, E: Write> Printer<O, E> {
    pub(crate) fn new(out: O, err: E, style: Style) -> Printer<O, E> {
        Printer { out, err, style }
    }

    /// The writers back (tests read what was written).
    #[cfg(test)]
    pub(crate) fn into_parts(self) -> (O, E) {
        (self.out, self.err)
    }

    /// The report of `check` (errors of single releases go to stderr).
    pub(crate) fn check(&mut self, run: &RunReport) {
        for o in &run.outcomes {
            if let Outcome::Failed(e) = o {
                let word = if e.refused { "Refused (not counted in the exit code)" } else { "Error" };
                self.err_line(&format!("{word}: {}", e.message));
            }
        }
        if self.style.quiet {
            return;
        }
        let out = (self.style.format.renderers().run)(run, &self.style);
        self.text(&out);
    }

    /// The report of `check` over several clusters: each cluster's releases under its name
    /// (errors of single releases and clusters go to stderr, named with their cluster).
    pub(crate) fn fleet(&mut self, fleet: &FleetReport) {
        for c in &fleet.clusters {
            for o in &c.run.outcomes {
                if let Outcome::Failed(e) = o {
                    self.err_line(&format!("Error: [cluster {}] {}", c.cluster, e.message));
                }
            }
        }
        if self.style.quiet {
            return;
        }
        let out = (self.style.format.renderers().fleet)(fleet, &self.style);
        self.text(&out);
    }

    /// Appends `report` as Markdown (at most 1 MiB) to `path` (`--summary-file`, GitHub's
    /// `$GITHUB_STEP_SUMMARY`); secret values hidden unless shown, as on stdout.
    pub(crate) fn summary_file(&mut self, path: &std::path::Path, report: Summary<'_>) -> anyhow::Result<()> {
        use anyhow::Context;
        let style = Style { color: false, ..self.style.clone() };
        let text = match report {
            Summary::Run(run) => markdown::run_within(run, &style, markdown::SUMMARY_LIMIT),
            Summary::Fleet(fleet) => markdown::fleet_within(fleet, &style, markdown::SUMMARY_LIMIT),
            Summary::Plan(plan) => super::plan_formats::markdown(plan, &style),
            Summary::FleetPlan(fleet) => super::fleet_plan::markdown(fleet, &style),
        };
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open the summary file {}", path.display()))?;
        file.write_all(text.as_bytes()).with_context(|| format!("cannot write the summary file {}", path.display()))
    }

    /// The report of `render`.
    pub(crate) fn render(&mut self, report: &RenderReport) {
        if self.style.quiet {
            return;
        }
        let Some(render) = self.style.format.renderers().render else { return };
        let out = render(report, &self.style);
        self.text(&out);
    }

    /// The report of `repair`.
    pub(crate) fn repair(&mut self, report: &RepairReport) {
        if !self.style.quiet {
            let repair = self.style.format.renderers().repair.unwrap_or(repair::repair);
            let out = repair(report, &self.style);
            self.text(&out);
        }
    }

    /// The report of `repair` over several clusters: each cluster's report under its name (a
    /// cluster where the repair could not run: its error on stderr, named with the cluster).
    pub(crate) fn repair_fleet(&mut self, fleet: &FleetRepair) {
        for (cluster, report) in &fleet.clusters {
            if let Err(e) = report {
                self.err_line(&format!("Error: [cluster {cluster}] {e}"));
            }
        }
        if self.style.quiet {
            return;
        }
        if let Some(document) = self.style.format.renderers().repair_fleet {
            let out = document(fleet, &self.style);
            self.text(&out);
            return;
        }
        let mut out = String::new();
        for (cluster, report) in &fleet.clusters {
            out.push_str(&repair::in_cluster(cluster, report.as_ref().ok(), &self.style));
        }
        self.text(&out);
    }

    /// `guard install` and `guard status`: a line per guard (its policy's name, mode, namespace,
    /// releases and how many kinds it covers).
    pub(crate) fn guard(&mut self, guards: &[crate::guard::GuardInfo], head: &str) {
        if self.style.quiet {
            return;
        }
        let mut out = String::new();
        if guards.is_empty() {
            out.push_str("no guard written (helm drift guard install writes one)\n");
        }
        for g in guards {
            out.push_str(&format!(
                "{head}: {} [mode {}, namespace {}, releases {}, {}]\n",
                g.name,
                g.mode,
                g.namespace,
                g.releases,
                g.kinds.map_or("every kind".to_string(), |n| format!("{n} kind{}", plural(n))),
            ));
        }
        self.text(&out);
    }

    /// The report of `repair --upgrade`.
    pub(crate) fn upgrade(&mut self, report: &UpgradeReport) {
        if !self.style.quiet {
            let out = repair::upgrade(report, &self.style);
            self.text(&out);
        }
    }

    /// The report of `plan --helmchartproxy`: every cluster's plan.
    pub(crate) fn fleet_plan(&mut self, report: &crate::model::FleetPlan) {
        if self.style.quiet {
            return;
        }
        let (_, fleet_plan) = self.plan_renderers();
        let out = fleet_plan(report, &self.style);
        self.text(&out);
    }

    /// The format's plan renderers (text for a format `plan` does not take: `-o` refuses it).
    fn plan_renderers(&self) -> super::formats::PlanRenderers {
        self.style.format.renderers().plan.unwrap_or((super::text::plan::plan, super::fleet_plan::text))
    }

    /// The report of `plan`.
    pub(crate) fn plan(&mut self, report: &PlanReport) {
        if self.style.quiet {
            return;
        }
        let (plan, _) = self.plan_renderers();
        let out = plan(report, &self.style);
        self.text(&out);
    }

    /// The report of `accept`: a line for the release, one per drift accepted (`-o json`: the
    /// document).
    pub(crate) fn accept(&mut self, r: &AcceptReport) {
        if self.style.quiet {
            return;
        }
        let out = match self.style.format {
            Format::Json => super::json::accept(r),
            _ => super::text::accept::accept(r),
        };
        self.text(&out);
    }

    /// An error on stderr, one line, each cause once.
    pub(crate) fn error(&mut self, err: &anyhow::Error) {
        self.err_line(&format!("Error: {}", crate::errors::chain(err)));
    }

    /// A warning on stderr.
    pub(crate) fn warning(&mut self, line: &str) {
        self.err_line(&format!("warning: {line}"));
    }

    /// A note on stderr: what the run reads besides the cluster (not with `-q`).
    pub(crate) fn note(&mut self, line: &str) {
        if !self.style.quiet {
            self.err_line(&format!("note: {line}"));
        }
    }

    /// A diagnostic line on stderr (`--debug`).
    pub(crate) fn debug(&mut self, line: &str) {
        self.err_line(&format!("debug: {line}"));
    }

    /// Plain text on stdout (help, version, completion); a closed pipe (`| head`) is not an
    /// error.
    pub(crate) fn text(&mut self, text: &str) {
        let text = controls::escaped(text, self.style.color);
        let _ = self.out.write_all(text.as_bytes()).and_then(|_| self.out.flush());
    }

    /// Preformatted text on stderr (usage errors).
    pub(crate) fn usage(&mut self, text: &str) {
        let _ = self.err.write_all(controls::escaped(text, self.style.color).as_bytes());
    }

    fn err_line(&mut self, line: &str) {
        let _ = writeln!(self.err, "{}", controls::escaped(line, false));
    }
}

/// A progress line on stderr for long work (`check` over several releases, `repair` steps), drawn
/// by indicatif when stderr is a terminal and the report is text (nothing otherwise: no line in
/// logs, and `-o json/junit/markdown/html` stay clean); cleared when the work is done.
pub(crate) fn progress(style: &Style) -> Progress {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
    if !std::io::stderr().is_terminal() || style.quiet || style.format != Format::Text {
        return Progress::none();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        .with_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("a valid template"))
        .with_finish(ProgressFinish::AndClear);
    let objects = std::sync::atomic::AtomicUsize::new(0);
    Progress::new(move |tick| {
        let (message, done, total) = match tick {
            Tick::Release { done, total, objects: n } => {
                let seen = objects.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
                (format!("checked {done}/{total} releases, {seen} objects"), done, total)
            }
            Tick::Step { phase, done, total } => {
                let doing = match phase {
                    Phase::Validating => "validated (server dry-run)",
                    Phase::Applying => "applied",
                };
                (format!("repair: {doing} {done}/{total} steps"), done, total)
            }
        };
        if total <= 1 || done >= total {
            bar.finish_and_clear();
            return;
        }
        if bar.is_finished() {
            bar.reset();
        }
        bar.set_message(message);
    })
}

//! `plan`: what the next `helm upgrade` would do to the cluster as it is now.

use super::runtime::runtime;
use super::settings::{BaselineSource, Shown, complete, say_warnings};
use crate::cli::{Global, PlanArgs};
use crate::engine::Session;
use crate::helm::HelmBinary;
use crate::model::ExitStatus;
use crate::plan::PlanRequest;
use crate::report::Terminal;
use crate::settings::Settings;
use anyhow::{Result, bail};

/// `plan`, resolved.
pub(crate) struct PlanSettings {
    settings: Settings,
    request: PlanRequest,
    shown: Shown,
    /// `--summary-file`: also append the plan as Markdown there.
    summary_file: Option<std::path::PathBuf>,
}

impl PlanSettings {
    pub(crate) fn resolve(g: &Global, a: PlanArgs) -> Result<PlanSettings> {
        if g.kube_context.len() > 1 {
            bail!("plan previews an upgrade on one cluster: give one --kube-context");
        }
        let flags = a.helm_flags();
        let values = a.value_flags();
        let apply = a.apply_flags();
        let settings = complete(g, &a.compare, BaselineSource::None)?;
        let request = PlanRequest {
            release: a.release,
            chart: a.chart,
            flags,
            helm: HelmBinary::from_env(),
            take_ownership: a.take_ownership,
            apply,
            install: a.install,
            values,
        };
        Ok(PlanSettings {
            settings,
            request,
            shown: Shown::resolve(&a.compare, &a.output),
            summary_file: a.summary_file,
        })
    }
}

/// Runs `plan` and prints its report: 0 the upgrade changes nothing, 2 it changes something, 3
/// it would fail.
pub(crate) fn execute(s: PlanSettings, printer: &mut Terminal) -> Result<ExitStatus> {
    say_warnings(&s.settings, printer);
    s.shown.apply(&mut printer.style);
    let report = runtime()?.block_on(async {
        let session = Session::open(&s.settings).await?;
        crate::plan::plan(&session, &s.settings, &s.request).await
    })?;
    printer.plan(&report);
    if let Some(path) = &s.summary_file {
        printer.summary_file(path, crate::report::Summary::Plan(&report))?;
    }
    Ok(report.exit_status())
}

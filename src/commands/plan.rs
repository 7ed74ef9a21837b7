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
    /// `--helmrelease`, `--helmrelease-file`: the Flux HelmRelease whose upgrade is planned.
    helm_release: Option<crate::plan::HelmReleaseSource>,
    /// `--helmchartproxy`, `--helmchartproxy-file`: the Cluster API HelmChartProxy whose
    /// fleet is planned.
    chart_proxy: Option<crate::plan::ChartProxySource>,
    /// `--summary-file`: also append the plan as Markdown there.
    summary_file: Option<std::path::PathBuf>,
}

impl PlanSettings {
    pub(crate) fn resolve(g: &Global, a: PlanArgs) -> Result<PlanSettings> {
        if g.kube_context.len() > 1 {
            bail!("plan previews an upgrade on one cluster: give one --kube-context");
        }
        let helm_release = helm_release(&a)?;
        let chart_proxy = chart_proxy(&a)?;
        let flags = a.helm_flags();
        let values = a.value_flags();
        let apply = a.apply_flags();
        let settings = complete(g, &a.compare, BaselineSource::None)?;
        let (release, chart) = match (&helm_release, a.release, a.chart) {
            // A HelmChartProxy names its chart: one given stands for it (a checkout's).
            (None, chart, None) if chart_proxy.is_some() => (String::new(), chart.unwrap_or_default()),
            (None, _, Some(_)) if chart_proxy.is_some() => {
                bail!("a HelmChartProxy names its releases: give at most the chart CAAPH will install")
            }
            (None, Some(release), Some(chart)) => (release, chart),
            (None, _, _) => bail!("name the release and the chart to upgrade to: helm drift plan RELEASE CHART"),
            (Some(_), Some(chart), None) => (String::new(), chart),
            // The HelmRelease's own chart, as its source serves it.
            (Some(_), None, None) => (String::new(), String::new()),
            (Some(_), _, _) => bail!(
                "a HelmRelease names its release: give at most the chart helm-controller will install (a path of your checkout, repo/name or oci://...)"
            ),
        };
        let request = PlanRequest {
            release,
            chart,
            flags,
            helm: HelmBinary::from_env(),
            take_ownership: a.take_ownership,
            apply,
            install: a.install,
            values,
            stored: None,
            target: None,
            values_read_in: None,
            from_file: None,
            notes: Vec::new(),
            post_render: None,
        };
        Ok(PlanSettings {
            settings,
            request,
            helm_release,
            chart_proxy,
            shown: Shown::resolve(&a.compare, &a.output),
            summary_file: a.summary_file,
        })
    }
}

/// The HelmRelease to plan (`--helmrelease`, `--helmrelease-file`), refusing the flags whose
/// say is the HelmRelease's.
fn helm_release(a: &PlanArgs) -> Result<Option<crate::plan::HelmReleaseSource>> {
    use crate::plan::HelmReleaseSource as Source;
    let source = match (&a.helmrelease_file, &a.helmrelease) {
        (Some(path), name) => Source::File { path: path.clone(), name: name.clone() },
        (None, Some(name)) => Source::Cluster(name.clone()),
        (None, None) => return Ok(None),
    };
    let values = a.value_flags();
    let theirs = values.sets
        || !values.files.is_empty()
        || values.reuse_values
        || values.reset_values
        || values.reset_then_reuse_values
        || a.server_side.is_some()
        || a.force_conflicts
        || a.take_ownership
        || a.install;
    if theirs {
        bail!(
            "the HelmRelease decides its values, apply and ownership as helm-controller will: drop -f, --set..., --reuse-values, --reset-values, --server-side, --force-conflicts, --take-ownership and --install"
        );
    }
    Ok(Some(source))
}

/// The HelmChartProxy to plan (`--helmchartproxy`, `--helmchartproxy-file`), refusing the flags
/// whose say is the proxy's.
fn chart_proxy(a: &PlanArgs) -> Result<Option<crate::plan::ChartProxySource>> {
    use crate::plan::ChartProxySource as Source;
    let source = match (&a.helmchartproxy_file, &a.helmchartproxy) {
        (Some(path), name) => Source::File { path: path.clone(), name: name.clone() },
        (None, Some(name)) => Source::Cluster(name.clone()),
        (None, None) => return Ok(None),
    };
    if !a.helm_flags().is_empty() || a.server_side.is_some() || a.force_conflicts {
        bail!(
            "the HelmChartProxy decides its values, version, options and apply as CAAPH will: drop -f, --set..., --version, --reuse-values, --reset-values, --take-ownership, --install, --server-side and --force-conflicts"
        );
    }
    Ok(Some(source))
}

/// Runs `plan` and prints its report: 0 the upgrade changes nothing, 2 it changes something, 3
/// it would fail.
pub(crate) fn execute(s: PlanSettings, printer: &mut Terminal) -> Result<ExitStatus> {
    say_warnings(&s.settings, printer);
    s.shown.apply(&mut printer.style);
    if let Some(source) = &s.chart_proxy {
        let fleet = runtime()?.block_on(async {
            let session = Session::open(&s.settings).await?;
            crate::plan::chart_proxy_fleet(&session, &s.settings, &s.request, source).await
        })?;
        printer.fleet_plan(&fleet);
        if let Some(path) = &s.summary_file {
            printer.summary_file(path, crate::report::Summary::FleetPlan(&fleet))?;
        }
        return Ok(fleet.exit_status());
    }
    let report = runtime()?.block_on(async {
        let session = Session::open(&s.settings).await?;
        let (request, _values) = match &s.helm_release {
            Some(source) => {
                let (request, dir) =
                    crate::plan::helm_release_request(session.client(), session.namespace(), &s.request, source)
                        .await?;
                (request, Some(dir))
            }
            None => (s.request.clone(), None),
        };
        crate::plan::plan(&session, &s.settings, &request).await
    })?;
    printer.plan(&report);
    if let Some(path) = &s.summary_file {
        printer.summary_file(path, crate::report::Summary::Plan(&report))?;
    }
    Ok(report.exit_status())
}

//! `check`: compare the selected releases with the cluster; with `--explain`, say which value of
//! each release produced every modified field; with `--rerender`, also compare the chart as it
//! renders now with the cluster; over several clusters at once, a fleet.

use super::runtime::runtime;
use super::settings::{BaselineSource, Shown, complete, per_context, say_warnings};
use crate::cli::{CheckArgs, Global};
use crate::desired;
use crate::engine::{Selection, Session, evaluate_selected, scan};
use crate::helm::{ChartFiles, DryRun, HelmBinary};
use crate::inventory::{InventoryKind, Scope};
use crate::model::{ClusterReport, DriftReport, ExitStatus, FleetReport, Outcome, Progress, Rerender, RunReport};
use crate::release::Selected;
use crate::report::{Format, Summary, Terminal};
use crate::settings::Settings;
use anyhow::{Context, Result, bail};
use std::path::PathBuf;

/// `check`, resolved: what to check, where, and how to report it.
pub(crate) struct CheckSettings {
    settings: Settings,
    selection: Selection,
    /// `--explain` / `--rerender`.
    rendering: Option<Rendering>,
    /// Several clusters: one settings per kubeconfig context.
    fleet: Option<Vec<(String, Settings)>>,
    /// Several clusters: those of an inventory the cluster of `settings` holds (`--clusters`).
    inventory: Option<(InventoryKind, Scope)>,
    summary_file: Option<PathBuf>,
    shown: Shown,
    /// `--allow-empty`: a selection that matches no release passes.
    allow_empty: bool,
    /// `--audit-log`: who made each drift.
    audit_log: Vec<PathBuf>,
}

impl CheckSettings {
    pub(crate) fn resolve(g: &Global, a: CheckArgs) -> Result<CheckSettings> {
        let CheckArgs {
            select,
            revision,
            allow_empty,
            explain,
            rerender,
            chart,
            all_contexts,
            inventory,
            summary_file,
            audit_log,
            baseline,
            compare,
            output,
        } = a;
        let selection = select.selection("check", revision)?;
        let shown = Shown::resolve(&compare, &output);
        let inventory = inventory.inventory().map_err(anyhow::Error::msg)?;
        // Helm hands its plugin HELM_KUBECONTEXT even when empty: only a named context counts.
        let contexts = g.kube_context.iter().filter(|c| !c.is_empty()).count();
        if all_contexts && contexts > 0 {
            bail!("--all-contexts checks every context of the kubeconfig: give no --kube-context");
        }
        if inventory.is_some() && contexts > 1 {
            bail!(
                "--clusters reads the inventory from one cluster: give at most one --kube-context (the management cluster's)"
            );
        }
        let several = all_contexts || g.kube_context.len() > 1 || inventory.is_some();
        if several && (explain || rerender) {
            bail!("--explain and --rerender check one cluster at a time: give one --kube-context, without --clusters");
        }
        if several && !audit_log.is_empty() {
            bail!("--audit-log is one API server's audit: give one --kube-context, without --clusters");
        }
        if !several && chart.is_some() && !explain && !rerender {
            bail!("--chart is for --explain and --rerender");
        }
        let one = Global { kube_context: Vec::new(), ..g.clone() };
        let fleet_of_contexts = several && inventory.is_none();
        let settings = complete(if fleet_of_contexts { &one } else { g }, &compare, BaselineSource::Flag(baseline))?;
        let fleet = match several {
            false => None,
            true if inventory.is_some() => None,
            true if all_contexts => {
                let contexts = crate::api::context_names(&settings.connection)?;
                if contexts.is_empty() {
                    bail!("--all-contexts: the kubeconfig has no context");
                }
                Some(per_context(&settings, contexts))
            }
            true => Some(per_context(&settings, g.kube_context.clone())),
        };
        let rendering =
            (explain || rerender).then(|| Rendering { helm: HelmBinary::from_env(), chart, explain, rerender });
        Ok(CheckSettings {
            settings,
            selection,
            rendering,
            fleet,
            inventory,
            summary_file,
            shown,
            allow_empty,
            audit_log,
        })
    }
}

/// Runs `check` and prints its report; the exit status the report calls for.
pub(crate) fn execute(s: CheckSettings, printer: &mut Terminal) -> Result<ExitStatus> {
    s.shown.apply(&mut printer.style);
    say_warnings(&s.settings, printer);
    super::settings::say_notes(&s.settings, printer);
    let members = match &s.inventory {
        Some((source, scope)) => {
            Some(runtime()?.block_on(super::members::members(&s.settings, *source, scope, printer))?)
        }
        None => s.fleet.clone().map(|f| f.into_iter().map(|(name, settings)| (name, Ok(settings))).collect()),
    };
    if let Some(clusters) = &members {
        let fleet = runtime()?.block_on(fleet(clusters, &s.selection, s.settings.namespace.as_deref()));
        if fleet.releases() == 0 && fleet.clusters.iter().all(|c| c.run.outcomes.is_empty()) && !s.allow_empty {
            bail!(
                "{}",
                empty(&s.selection, s.settings.namespace.as_deref(), &format!("any of {} clusters", clusters.len()))
            );
        }
        printer.fleet(&fleet);
        if let Some(path) = &s.summary_file {
            printer.summary_file(path, Summary::Fleet(&fleet))?;
        }
        return Ok(fleet.exit_status());
    }
    let settings = &s.settings;
    let progress = crate::report::progress(&printer.style);
    let started = std::time::Instant::now();
    let asked = Asked { selection: &s.selection, rendering: s.rendering.as_ref(), audit_log: &s.audit_log };
    let checked = runtime()?.block_on(run(settings, asked, &progress));
    let checked = checked.and_then(|report| {
        if report.outcomes.is_empty() && !s.allow_empty {
            bail!("{}", empty(&s.selection, settings.namespace.as_deref(), "the cluster"));
        }
        Ok(report)
    });
    let report = match checked {
        Ok(report) => report,
        // A machine output (and the summary file) is a document on every path: what could not
        // be checked, and why.
        Err(e) if s.shown.format != Format::Text || s.summary_file.is_some() => {
            let selection = &s.selection;
            let namespace = if selection.all_namespaces { "" } else { settings.namespace.as_deref().unwrap_or("") };
            let report = RunReport::unchecked(&selection.releases, namespace, &crate::errors::chain(&e));
            if let Some(path) = &s.summary_file {
                printer.summary_file(path, Summary::Run(&report))?;
            }
            if s.shown.format == Format::Text {
                return Err(e);
            }
            printer.check(&report);
            return Ok(report.exit_status());
        }
        Err(e) => return Err(e),
    };
    if settings.debug {
        printer.debug(&debug_summary(settings, &report, started.elapsed()));
    }
    for w in unmatched_gitops(settings, &report) {
        printer.warning(&w);
    }
    printer.check(&report);
    if let Some(path) = &s.summary_file {
        printer.summary_file(path, Summary::Run(&report))?;
    }
    Ok(report.exit_status())
}

/// What runs the chart again: `--explain` and `--rerender`.
#[derive(Clone, Debug)]
pub(crate) struct Rendering {
    pub(crate) helm: HelmBinary,
    /// The chart's source, for charts with subcharts (which Helm does not store).
    pub(crate) chart: Option<PathBuf>,
    pub(crate) explain: bool,
    pub(crate) rerender: bool,
}

/// What one cluster's check is asked for besides the comparison.
#[derive(Clone, Copy)]
struct Asked<'a> {
    selection: &'a Selection,
    rendering: Option<&'a Rendering>,
    audit_log: &'a [PathBuf],
}

/// Checks every release `selection` names; `progress` is told as releases finish.
async fn run(settings: &Settings, asked: Asked<'_>, progress: &Progress) -> Result<RunReport> {
    let Asked { selection, rendering, audit_log } = asked;
    let session = Session::open(settings).await?;
    let mut run = scan(&session, settings, selection, progress).await?;
    if !audit_log.is_empty() {
        super::audit_log::attribute(&session, &mut run, audit_log)?;
    }
    // A cluster baseline is said unused unless it is the one read (a file found in the working
    // directory does not hide it).
    if !matches!(settings.baseline, Some(crate::baseline::Store::Cluster { home: None })) {
        unused_baselines(&session, selection, &mut run).await;
    }
    guards(&session, &mut run).await;
    let Some(rendering) = rendering else { return Ok(run) };
    let cluster = session.capabilities().await?;
    for outcome in &mut run.outcomes {
        let Outcome::Checked(report) = outcome else { continue };
        let modified = report.objects.iter().any(|o| o.fields.iter().any(|f| f.recorded.is_some() && f.live.is_some()));
        let explain = rendering.explain && modified;
        if !rendering.rerender && !explain {
            continue;
        }
        let what = |doing: &str| format!("cannot {doing} release {:?}", report.release);
        let index = session.storage().history(&report.namespace, &report.release).await?;
        let selected = session.storage().select(&index, Some(report.revision)).await?;
        let files = ChartFiles::write(&selected.release, &selected.record, rendering.chart.as_deref())?;
        if explain {
            report.explanations = crate::explain::explain(&rendering.helm, &selected.release, &files, &cluster, report)
                .await
                .with_context(|| what("explain the drift of"))?;
        }
        if rendering.rerender {
            let rerender =
                rerender(&session, settings, rendering, selected, &files).await.with_context(|| what("render"))?;
            report.rerender = Some(Box::new(rerender));
        }
    }
    Ok(run)
}

/// Clusters checked at once in a fleet check.
const FLEET_AT_ONCE: usize = 4;

/// Checks `selection` in each cluster (`(name, settings)`, in that order), a few at once. A
/// cluster that cannot be checked (unreachable, forbidden, its storage unreadable, its
/// settings not made) is an error for that cluster only, reported in `namespace` (the one
/// asked for) when its settings could not be made.
pub(crate) async fn fleet(
    clusters: &[(String, Result<Settings, String>)],
    selection: &Selection,
    namespace: Option<&str>,
) -> FleetReport {
    use futures::StreamExt;
    let reports = futures::stream::iter(clusters.iter().map(|(cluster, settings)| async move {
        let checked = match settings {
            Ok(settings) => run(settings, Asked { selection, rendering: None, audit_log: &[] }, &Progress::none())
                .await
                .map_err(|e| crate::errors::chain(&e)),
            Err(why) => Err(why.clone()),
        };
        let run = match checked {
            Ok(run) => run,
            Err(e) => {
                let asked = settings.as_ref().ok().and_then(|s| s.namespace.as_deref()).or(namespace);
                let namespace = if selection.all_namespaces { "" } else { asked.unwrap_or("") };
                RunReport::unchecked(&selection.releases, namespace, &e)
            }
        };
        ClusterReport { cluster: cluster.clone(), run }
    }))
    .buffered(FLEET_AT_ONCE)
    .collect()
    .await;
    FleetReport { clusters: reports }
}

/// The mode of the admission guard covering each release. Guards that cannot be read (an
/// identity without `list` on ValidatingAdmissionPolicies, an older API server) say nothing.
async fn guards(session: &Session, run: &mut RunReport) {
    let Ok(written) = crate::live::admission::guards(session.client(), crate::guard::LABEL).await else {
        return;
    };
    let written = crate::guard::GuardInfo::all(&written);
    for outcome in &mut run.outcomes {
        let Outcome::Checked(r) = outcome else { continue };
        r.guard = crate::guard::covering(&written, &r.namespace, &r.release);
    }
}

/// Releases with a baseline ConfigMap that this run does not use (no `--baseline cluster`):
/// a finding each, so that accepted drift is not silently reported again.
async fn unused_baselines(session: &Session, selection: &Selection, run: &mut RunReport) {
    let scope = (!selection.all_namespaces).then_some(session.namespace());
    let found = crate::baseline::configmaps(session.client(), scope).await;
    for outcome in &mut run.outcomes {
        let Outcome::Checked(r) = outcome else { continue };
        if found.iter().any(|(ns, release)| *ns == r.namespace && *release == r.release) {
            r.findings.push(format!(
                "a cluster baseline exists (ConfigMap {}/{}) but is not used: --baseline cluster applies it",
                r.namespace,
                crate::baseline::configmap_name(&r.release)
            ));
        }
    }
}

/// The chart as it renders now (a server-side dry-run upgrade with the stored values), against
/// the stored manifest and against the cluster.
async fn rerender(
    session: &Session,
    settings: &Settings,
    rendering: &Rendering,
    selected: Selected,
    files: &ChartFiles,
) -> Result<Rerender> {
    // The record's chart reads the cluster with the reader's rights only when they trust its writers.
    let against = DryRun::for_record(&settings.trust.namespaces, selected.release.stored_in());
    let manifest = rendering.helm.render_now(&selected.release, files, against).await?;
    let (documents, changed) = desired::diff_documents(&selected.release.manifest, &manifest);
    // What a template renders through a `lookup` that answered nothing is no prediction.
    let chart = selected.release.chart.as_ref().filter(|_| !against.reads_the_cluster());
    let (uses, name) = chart.map_or_else(Default::default, |c| (c.lookup_use(), c.metadata.name.clone()));
    let guessed = |source: &str| uses.renders(&name, source);
    let (unpredictable, changed): (Vec<_>, Vec<_>) = changed.into_iter().partition(|d| guessed(&d.source));
    let mut unpredictable: Vec<String> = unpredictable.into_iter().map(|d| d.source).collect();
    let mut now = selected;
    now.release.manifest = manifest;
    now.record = format!("{} rendered now", now.record);
    now.newest = None;
    let mut against_live: DriftReport = evaluate_selected(session, settings, now, None).await?.report;
    let ns = against_live.stored_in().to_string();
    for o in against_live.objects.iter_mut().filter(|o| o.is_drift()) {
        let Some(source) = o.source.clone().filter(|s| guessed(s)) else { continue };
        o.verdict = crate::model::Verdict::Excluded {
            reason: format!(
                "not predictable: rendered by a template that calls lookup, which answered nothing (namespace {ns} \
                 is not trusted; --trust-namespace {ns} lets it read the cluster)"
            ),
        };
        if !unpredictable.contains(&source) {
            unpredictable.push(source);
        }
    }
    Ok(Rerender { documents, changed, against_live, lookup_answered: against.reads_the_cluster(), unpredictable })
}

/// When no Flux HelmRelease or Argo CD Application of the config file describes a release this
/// run checked, each says so: its rules apply to nothing (an Application named unlike its
/// release, without `spec.source.helm.releaseName`, is the common cause).
fn unmatched_gitops(settings: &Settings, run: &RunReport) -> Vec<String> {
    let checked: Vec<&str> = run.checked().map(|r| r.release.as_str()).collect();
    let docs = &settings.said.gitops;
    if checked.is_empty() || docs.iter().any(|(_, release)| checked.contains(&release.as_str())) {
        return Vec::new();
    }
    docs.iter()
        .map(|(what, release)| {
            format!("{what} describes release {release:?}, which this run did not check: its rules apply to nothing (name the release in spec.source.helm.releaseName or spec.releaseName)")
        })
        .collect()
}

/// What `--debug` / `HELM_DEBUG` adds on stderr: where the run looked and what it found
/// (never credentials).
fn debug_summary(settings: &Settings, run: &RunReport, took: std::time::Duration) -> String {
    let c = &settings.connection;
    format!(
        "kubeconfig {:?}, context {}, API server {}, auth {}, namespace {}, driver {}; {} release(s), {} object(s) in {:.3}s",
        c.kubeconfig,
        c.context.as_deref().unwrap_or("(current)"),
        c.api_server.as_deref().unwrap_or("(from kubeconfig)"),
        if c.token.is_some() { "bearer token (hidden)" } else { "kubeconfig user" },
        settings.namespace.as_deref().unwrap_or("(context default)"),
        settings.driver.name(),
        run.outcomes.len(),
        run.objects(),
        took.as_secs_f64()
    )
}

/// Why an empty selection is an error: what was selected, and where (`namespace`: `-n`, else the
/// context's), so that a typo in a CI gate reads as one.
fn empty(selection: &Selection, namespace: Option<&str>, place: &str) -> String {
    let scope = match (selection.all_namespaces, namespace) {
        (true, _) => "in any namespace".to_string(),
        (false, Some(ns)) => format!("in namespace {ns}"),
        (false, None) => "in the context's namespace".to_string(),
    };
    let selector = selection.selector.as_deref().map_or(String::new(), |s| format!(" with labels {s}"));
    format!(
        "no release matched: no Helm release {scope}{selector} on {place}. Nothing was checked, so this is not a pass \
         (a typo in a namespace or selector?); --allow-empty lets an empty selection pass"
    )
}

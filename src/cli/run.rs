//! One function per command: complete settings from its flags, the command's request, its
//! report. [`super::run`] only dispatches here.

use super::args::{
    AcceptArgs, CheckArgs, CompareArgs, Global, GuardAction, GuardArgs, LogFormat, NotifyFormat, OutputFormat,
    RenderArgs, RepairArgs, WatchArgs,
};
use super::resolve::{self, Baseline};
use super::{debug_summary, identity, output_style, runtime, unmatched_gitops};
use crate::commands::{accept, check, guard, render, repair, upgrade};
use crate::helm::HelmBinary;
use crate::model::{ExitStatus, RunReport};
use crate::report::{Summary, Terminal};
use crate::settings::Settings;
use crate::watch;
use anyhow::{Result, bail};

/// Settings for a command that compares: the connection, the comparison flags and config file
/// (its warnings said once, here) and the baseline.
fn comparing(g: &Global, compare: &CompareArgs, baseline: Baseline, printer: &mut Terminal) -> Result<Settings> {
    let settings = resolve::complete(g, compare, baseline)?;
    for w in &settings.compare.warnings {
        printer.warning(w);
    }
    Ok(settings)
}

pub fn check(g: &Global, a: CheckArgs, printer: &mut Terminal) -> Result<ExitStatus> {
    let CheckArgs { select, revision, explain, rerender, chart, all_contexts, summary_file, baseline, compare, output } =
        a;
    let selection = select.selection("check", revision)?;
    if all_contexts || g.kube_context.len() > 1 {
        if explain || rerender {
            bail!("--explain and --rerender check one cluster at a time: give one --kube-context");
        }
        let one = Global { kube_context: Vec::new(), ..g.clone() };
        let settings = comparing(&one, &compare, Baseline::Flag(baseline), printer)?;
        output_style(&mut printer.style, &compare, &output);
        let mut contexts = g.kube_context.clone();
        if all_contexts {
            contexts = crate::api::context_names(&settings.connection)?;
            if contexts.is_empty() {
                bail!("--all-contexts: the kubeconfig has no context");
            }
        }
        let clusters = per_context(&settings, contexts);
        let fleet = runtime()?.block_on(check::fleet(&clusters, &selection));
        printer.fleet(&fleet);
        if let Some(path) = &summary_file {
            printer.summary_file(path, Summary::Fleet(&fleet))?;
        }
        return Ok(fleet.exit_status());
    }
    let settings = comparing(g, &compare, Baseline::Flag(baseline), printer)?;
    output_style(&mut printer.style, &compare, &output);
    let progress = crate::report::progress(&printer.style);
    let started = std::time::Instant::now();
    if chart.is_some() && !explain && !rerender {
        bail!("--chart is for --explain and --rerender");
    }
    let rendering =
        (explain || rerender).then(|| check::Rendering { helm: HelmBinary::from_env(), chart, explain, rerender });
    let report = match runtime()?.block_on(check::run(&settings, &selection, rendering.as_ref(), &progress)) {
        Ok(report) => report,
        // A machine output (and the summary file) is a document on every path: what could not
        // be checked, and why.
        Err(e) if output.output != OutputFormat::Text || summary_file.is_some() => {
            let namespace = if selection.all_namespaces { "" } else { settings.namespace.as_deref().unwrap_or("") };
            let report = RunReport::unchecked(&selection.releases, namespace, &crate::errors::chain(&e));
            if let Some(path) = &summary_file {
                printer.summary_file(path, Summary::Run(&report))?;
            }
            if output.output == OutputFormat::Text {
                return Err(e);
            }
            printer.check(&report);
            return Ok(report.exit_status());
        }
        Err(e) => return Err(e),
    };
    if settings.debug {
        printer.debug(&debug_summary(&settings, &report, started.elapsed()));
    }
    for w in unmatched_gitops(&settings, &report) {
        printer.warning(&w);
    }
    printer.check(&report);
    if let Some(path) = &summary_file {
        printer.summary_file(path, Summary::Run(&report))?;
    }
    Ok(report.exit_status())
}

pub fn repair(g: &Global, a: RepairArgs, printer: &mut Terminal) -> Result<ExitStatus> {
    let RepairArgs { release, only, remove_foreign, dry_run, upgrade, chart, compare, output } = a;
    if output.output != OutputFormat::Text {
        bail!(
            "repair writes a text report only (-o {} is for check and render)",
            clap::ValueEnum::to_possible_value(&output.output).map(|v| v.get_name().to_string()).unwrap_or_default()
        );
    }
    if g.kube_context.len() > 1 && upgrade {
        bail!("--upgrade runs helm against one cluster: give one --kube-context");
    }
    let one = Global { kube_context: Vec::new(), ..g.clone() };
    let settings = comparing(if g.kube_context.len() > 1 { &one } else { g }, &compare, Baseline::None, printer)?;
    output_style(&mut printer.style, &compare, &output);
    if upgrade {
        let request = upgrade::UpgradeRequest { release, chart, helm: HelmBinary::from_env(), dry_run };
        let report = runtime()?.block_on(upgrade::run(&settings, &request))?;
        printer.upgrade(&report);
        return Ok(report.exit_status());
    }
    let progress = crate::report::progress(&printer.style);
    let request = repair::RepairRequest { release, only, remove_foreign, dry_run, authority: None, progress };
    if g.kube_context.len() > 1 {
        let clusters = per_context(&settings, g.kube_context.clone());
        let fleet = runtime()?.block_on(repair::fleet(&clusters, &request));
        drop(request);
        printer.repair_fleet(&fleet);
        return Ok(fleet.exit_status());
    }
    let report = runtime()?.block_on(repair::run(&settings, &request))?;
    drop(request); // the progress line, if any, is cleared before the report
    printer.repair(&report);
    Ok(report.exit_status())
}

/// One settings per kubeconfig context (each named once, in the order given) for a fleet run.
fn per_context(settings: &Settings, mut contexts: Vec<String>) -> Vec<(String, Settings)> {
    let mut seen = std::collections::HashSet::new();
    contexts.retain(|c| !c.is_empty() && seen.insert(c.clone()));
    contexts
        .into_iter()
        .map(|context| {
            let mut settings = settings.clone();
            settings.connection.context = Some(context.clone());
            (context, settings)
        })
        .collect()
}

pub fn render(g: &Global, a: RenderArgs, printer: &mut Terminal) -> Result<ExitStatus> {
    let RenderArgs { release, revision, chart, show_secrets, output } = a;
    if matches!(output.output, OutputFormat::Markdown | OutputFormat::Html) {
        bail!("render writes text or json (-o markdown and -o html are check's reports)");
    }
    let settings = resolve::settings(g)?;
    output_style(&mut printer.style, &CompareArgs { show_secrets, ..CompareArgs::default() }, &output);
    let request = render::RenderRequest { release, revision, chart, helm: HelmBinary::from_env() };
    let report = runtime()?.block_on(render::run(&settings, &request))?;
    printer.render(&report);
    Ok(report.exit_status())
}

pub fn accept(g: &Global, a: AcceptArgs, printer: &mut Terminal) -> Result<ExitStatus> {
    let AcceptArgs { release, only, path, prune, baseline, compare } = a;
    let settings = comparing(g, &compare, Baseline::None, printer)?;
    let store = resolve::baseline_store(baseline.as_deref(), true).expect("accept always has a store");
    let request = accept::AcceptRequest { release, only, paths: path, prune, store };
    let report = runtime()?.block_on(accept::run(&settings, &request))?;
    printer.accept(&report);
    Ok(ExitStatus::InSync)
}

pub fn watch(g: &Global, a: WatchArgs, printer: &mut Terminal) -> Result<ExitStatus> {
    let selection = a.select.selection("watch", None)?;
    if a.compare.verbose || a.compare.show_secrets {
        bail!(
            "-v and --show-secrets shape check's report; watch reports through metrics, Events, notifications and logs, never with secret values"
        );
    }
    let mut settings = comparing(g, &a.compare, Baseline::Flag(a.baseline), printer)?;
    let trust = crate::settings::Trust::new(a.trust_namespace);
    settings.compare.confined = Some(trust.clone());
    let options = watch::WatchOptions {
        selection,
        resync: a.resync,
        debounce: a.debounce,
        max_releases_per_namespace: a.max_releases_per_namespace.max(1),
        metrics_address: a.metrics_address,
        notify: a.notify,
        notify_format: match a.notify_format {
            NotifyFormat::Slack => watch::Payload::Slack,
            NotifyFormat::Json => watch::Payload::Json,
        },
        cluster: a.cluster.filter(|c| !c.is_empty()),
        ui: a.ui,
        log: watch::Log { json: a.log_format == LogFormat::Json },
        repair: a.repair.then(|| watch::RepairOptions {
            selector: a.repair_selector,
            remove_foreign: a.remove_foreign,
            service_account: a.repair_service_account,
            trust,
            policy: watch::HealPolicy {
                cooldown: a.repair_cooldown,
                fight_limit: a.fight_limit.max(1),
                window: a.fight_window,
            },
        }),
        signature_key_secret: a.signature_key_secret,
        leader: a.leader_elect.then(|| watch::LeaderOptions {
            name: a.lease_name,
            namespace: a.lease_namespace,
            identity: identity(),
            duration: a.lease_duration.as_secs().max(2),
        }),
    };
    runtime()?.block_on(watch::run(&settings, options))?;
    Ok(ExitStatus::InSync)
}

pub fn guard(g: &Global, a: GuardArgs, printer: &mut Terminal) -> Result<ExitStatus> {
    let settings = resolve::settings(g)?;
    match a.action {
        GuardAction::Install => {
            let selection = a.select.selection("guard", None)?;
            let mode = crate::guard::Mode::parse(&a.mode).expect("clap checks the mode");
            let config = crate::policy::config::from_flag(a.config.as_deref())?;
            let (mut managers, notes) = crate::guard::config_managers(&config.rules, &config.expected);
            for note in notes {
                printer.warning(&note);
            }
            managers.extend(a.allow_manager);
            let request = guard::GuardRequest {
                selection,
                mode,
                users: a.allow_user,
                groups: a.allow_group,
                managers,
                every_kind: a.every_kind,
                service_accounts: a.judge_service_accounts,
            };
            match runtime()?.block_on(guard::install(&settings, &request, a.dry_run))? {
                guard::Installed::Written(info) => printer.guard(&[info], "guard written"),
                guard::Installed::Planned(spec) => printer.text(&crate::guard::documents(&spec)),
            }
        }
        GuardAction::Status => {
            let infos = runtime()?.block_on(guard::status(&settings))?;
            printer.guard(&infos, "guards");
        }
        GuardAction::Remove => match runtime()?.block_on(guard::remove(&settings, a.select.all_namespaces))? {
            Some(name) => printer.text(&format!("removed {name} (its policy and binding)\n")),
            None => printer.text("no guard to remove here\n"),
        },
    }
    Ok(ExitStatus::InSync)
}

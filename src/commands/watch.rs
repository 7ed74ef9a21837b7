//! `watch`: the long-running watcher, resolved from its flags and run until stopped.

use super::runtime::runtime;
use super::settings::{BaselineSource, complete, say_warnings};
use crate::cli::{Global, LogFormat, NotifyFormat, WatchArgs};
use crate::model::ExitStatus;
use crate::report::Terminal;
use crate::settings::Settings;
use crate::watch::{
    AuditOptions, FleetOptions, HealPolicy, LeaderOptions, Log, Payload, RepairOptions, RepairWindow, Stance,
    WatchOptions,
};
use anyhow::{Result, bail};

/// `watch`, resolved.
pub(crate) struct WatchSettings {
    settings: Settings,
    options: WatchOptions,
}

impl WatchSettings {
    pub(crate) fn resolve(g: &Global, a: WatchArgs) -> Result<WatchSettings> {
        let selection = a.select.selection("watch", None)?;
        if a.compare.verbose || a.compare.show_secrets {
            bail!(
                "-v and --show-secrets shape check's report; watch reports through metrics, Events, notifications and logs, never with secret values"
            );
        }
        let fleet = a.inventory.inventory().map_err(anyhow::Error::msg)?.map(|(source, scope)| FleetOptions {
            source,
            scope,
            every: a.clusters_interval,
            max: a.clusters_max.max(1),
            home: a.lease_namespace.clone(),
        });
        if fleet.is_some() && a.ui {
            bail!(
                "--ui shows one cluster; with --clusters the fleet is in /metrics (the cluster label) and the chart's dashboard"
            );
        }
        if fleet.is_some() && g.kube_context.iter().filter(|c| !c.is_empty()).count() > 1 {
            bail!(
                "--clusters reads the inventory from one cluster: give at most one --kube-context (the management cluster's)"
            );
        }
        let windows = windows(&a.repair_window, &a.repair_deny_window)?;
        let audit = audit(a.audit)?;
        let home = a.pause_namespace.clone().or_else(|| a.lease_namespace.clone());
        let mut settings = complete(g, &a.compare, BaselineSource::Flag(a.baseline))?;
        settings.trust.confined = true;
        let trust = settings.trust.namespaces.clone();
        let options = WatchOptions {
            selection,
            resync: a.resync,
            debounce: a.debounce,
            max_releases_per_namespace: a.max_releases_per_namespace.max(1),
            max_releases: a.max_releases.max(1),
            metrics_address: a.metrics_address,
            notify: a.notify,
            notify_format: match a.notify_format {
                NotifyFormat::Slack => Payload::Slack,
                NotifyFormat::Json => Payload::Json,
            },
            cluster: a.cluster.filter(|c| !c.is_empty()),
            ui: a.ui,
            log: Log { json: a.log_format == LogFormat::Json, cluster: None },
            home: home.clone(),
            repair: a.repair.then(|| RepairOptions {
                windows,
                pauses: home,
                selector: a.repair_selector,
                remove_foreign: a.remove_foreign,
                service_account: a.repair_service_account,
                trust,
                policy: HealPolicy {
                    cooldown: a.repair_cooldown,
                    fight_limit: a.fight_limit.max(1),
                    fight_window: a.fight_window,
                },
            }),
            signature_key_secret: a.signature_key_secret,
            audit,
            fleet,
            leader: a.leader_elect.then(|| LeaderOptions {
                name: a.lease_name,
                namespace: a.lease_namespace,
                identity: identity(),
                duration: a.lease_duration.as_secs().max(2),
            }),
        };
        Ok(WatchSettings { settings, options })
    }
}

/// Watches until SIGINT or SIGTERM.
pub(crate) fn execute(s: WatchSettings, printer: &mut Terminal) -> Result<ExitStatus> {
    say_warnings(&s.settings, printer);
    runtime()?.block_on(crate::watch::run(&s.settings, s.options))?;
    Ok(ExitStatus::InSync)
}

/// The repair windows, each parsed (a bad one names itself).
fn windows(allow: &[String], deny: &[String]) -> Result<Vec<RepairWindow>> {
    let allow = allow.iter().map(|w| RepairWindow::parse(w, Stance::Allow));
    let deny = deny.iter().map(|w| RepairWindow::parse(w, Stance::Deny));
    Ok(allow.chain(deny).collect::<Result<Vec<_>, _>>()?)
}

/// The audit webhook endpoint, when asked for: it must authenticate its senders.
fn audit(a: crate::cli::AuditArgs) -> Result<Option<AuditOptions>> {
    let (Some(address), Some(cert), Some(key)) = (a.audit_address, a.audit_tls_cert, a.audit_tls_key) else {
        return Ok(None);
    };
    if a.audit_client_ca.is_none() && a.audit_tokens.is_none() {
        bail!("--audit-address serves only authenticated API servers: give --audit-client-ca, --audit-tokens, or both");
    }
    Ok(Some(AuditOptions {
        address,
        cert,
        key,
        client_ca: a.audit_client_ca,
        tokens: a.audit_tokens,
        limits: crate::audit::WindowLimits { max_age: a.audit_window, ..Default::default() },
        publish_names: a.audit_publish_names,
    }))
}

/// This replica's name in a Lease: the pod's (host) name and the process id.
fn identity() -> String {
    format!("{}-{}", crate::watch::pod_name(), std::process::id())
}

//! `repair`: puts drifted objects back to the recorded revision without a new Helm revision.
//! Plans from the same verdicts as `check`; the repair stage validates, applies and checks again.

mod upgrade;

use super::runtime::runtime;
use super::settings::{BaselineSource, Shown, complete, per_context, say_warnings};
use crate::cli::{Global, RepairArgs};
use crate::engine::Session;
use crate::helm::HelmBinary;
use crate::inventory::{InventoryKind, Scope};
use crate::model::{ExitStatus, FleetRepair, NotRun, RepairReport};
use crate::repair::RepairRequest;
use crate::report::Terminal;
use crate::settings::Settings;
use anyhow::{Result, bail};

/// `repair`, resolved: which release, how (in place or through `helm upgrade`), where.
pub(crate) struct RepairSettings {
    settings: Settings,
    request: RepairRequest,
    /// `--upgrade`: through a real `helm upgrade` of the stored chart and values.
    upgrade: Option<upgrade::UpgradeRequest>,
    /// Several clusters: one settings per kubeconfig context.
    fleet: Option<Vec<(String, Settings)>>,
    /// One cluster of an inventory (`--clusters SOURCE --cluster NAME`).
    member: Option<(InventoryKind, Scope, String)>,
    shown: Shown,
}

impl RepairSettings {
    pub(crate) fn resolve(g: &Global, a: RepairArgs) -> Result<RepairSettings> {
        let RepairArgs {
            release,
            only,
            remove_foreign,
            dry_run,
            upgrade,
            chart,
            replace,
            repair_service_account,
            baseline,
            include_accepted,
            inventory,
            cluster,
            compare,
            output,
        } = a;
        let member = match (inventory.inventory().map_err(anyhow::Error::msg)?, cluster) {
            (Some((source, scope)), Some(name)) => Some((source, scope, name)),
            (Some(_), None) => bail!(
                "--clusters repairs one cluster of the inventory: name it with --cluster NAME (helm drift check --clusters names them)"
            ),
            (None, _) => None,
        };
        if upgrade && output.output != crate::report::Format::Text {
            bail!("--upgrade prints helm's own report: -o json is for a repair in place");
        }
        let several = g.kube_context.len() > 1;
        if several && member.is_some() {
            bail!(
                "--clusters reads the inventory from one cluster: give at most one --kube-context (the management cluster's)"
            );
        }
        if several && upgrade {
            bail!("--upgrade runs helm against one cluster: give one --kube-context");
        }
        let one = Global { kube_context: Vec::new(), ..g.clone() };
        // Accepted drift is kept unless asked (--include-accepted); helm upgrade applies it all.
        let accepted = if include_accepted || upgrade { BaselineSource::None } else { BaselineSource::Flag(baseline) };
        let settings = complete(if several { &one } else { g }, &compare, accepted)?;
        let fleet = several.then(|| per_context(&settings, g.kube_context.clone()));
        let upgrade = upgrade.then(|| upgrade::UpgradeRequest {
            release: release.clone(),
            chart,
            helm: HelmBinary::from_env(),
            dry_run,
        });
        let request = RepairRequest {
            release,
            only,
            remove_foreign,
            dry_run,
            authority: None,
            trust: settings.trust.namespaces.clone(),
            service_account: repair_service_account,
            progress: Default::default(),
            replace,
        };
        Ok(RepairSettings { settings, request, upgrade, fleet, member, shown: Shown::resolve(&compare, &output) })
    }
}

/// Runs `repair` (or `repair --upgrade`) and prints its report.
pub(crate) fn execute(s: RepairSettings, printer: &mut Terminal) -> Result<ExitStatus> {
    say_warnings(&s.settings, printer);
    s.shown.apply(&mut printer.style);
    if let Some(request) = &s.upgrade {
        let report = runtime()?.block_on(upgrade::run(&s.settings, request))?;
        printer.upgrade(&report);
        return Ok(report.exit_status());
    }
    let request = RepairRequest { progress: crate::report::progress(&printer.style), ..s.request };
    if let Some((source, scope, name)) = &s.member {
        let rt = runtime()?;
        let clusters = rt.block_on(super::members::members(&s.settings, *source, scope, printer))?;
        let names: Vec<&str> = clusters.iter().map(|(n, _)| n.as_str()).collect();
        let Some((_, member)) = clusters.iter().find(|(n, _)| n == name) else {
            bail!("--cluster {name}: no such cluster in the inventory (it holds {})", names.join(", "));
        };
        let settings = member.clone().map_err(|why| anyhow::anyhow!("cluster {name}: {why}"))?;
        let fleet = rt.block_on(fleet(&[(name.clone(), settings)], &request));
        drop(request);
        printer.repair_fleet(&fleet);
        return Ok(fleet.exit_status());
    }
    if let Some(clusters) = &s.fleet {
        let fleet = runtime()?.block_on(fleet(clusters, &request));
        drop(request);
        printer.repair_fleet(&fleet);
        return Ok(fleet.exit_status());
    }
    let report = runtime()?.block_on(run(&s.settings, &request))?;
    drop(request); // the progress line, if any, is cleared before the report
    printer.repair(&report);
    Ok(report.exit_status())
}

/// Plans, validates and (unless a dry run) applies the repair of one release.
async fn run(settings: &Settings, request: &RepairRequest) -> Result<RepairReport> {
    let mut session = Session::open(settings).await?;
    let index = session.history(&request.release).await?;
    crate::repair::execute(&mut session, settings, &index, request).await
}

/// Repairs the one named release in each cluster (`(name, settings)`), one cluster after the
/// other (a repair writes; its report is read cluster by cluster). A cluster where it cannot run
/// is an error for that cluster only; the others are still repaired.
async fn fleet(clusters: &[(String, Settings)], request: &RepairRequest) -> FleetRepair {
    let mut out = FleetRepair::default();
    for (cluster, settings) in clusters {
        let report = run(settings, request).await.map_err(|e| NotRun(crate::errors::chain(&e)));
        out.clusters.push((cluster.clone(), report));
    }
    out
}

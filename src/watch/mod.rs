//! `watch`: continuous drift detection. A full check at start, then event-driven: Helm's storage
//! and the kinds of the watched releases are watched, and only the releases a change touches are
//! evaluated again (debounced), with a full resync every `--resync`. Verdicts go to metrics, to
//! Events and notifications once per drift signature, and, for releases that opt in, to
//! `repair`. With `--leader-elect` only the replica holding the Lease acts.
//!
//! The parts, as kube-runtime has them, each owning its state: [`sources`] (the watches of
//! records and kinds, owned and stopped), [`store`] (what the watcher knows: releases, the
//! object index, what was reported and its signatures, what it refuses), [`scheduler`]
//! (debounce, resync, repairs postponed by the rate limit), [`reconciler`] (the loop and the
//! checks that wire the parts, the guard cache), [`heal`] (the decision and the act),
//! [`outputs`] (Events, notifications, metrics, log, the page), [`lease`] (leader election),
//! [`keys`] (every key in one place), [`options`]; [`fleet`] runs one watcher per cluster of an
//! inventory; [`audit`] serves the API server's audit webhook (who made each drift). This file
//! holds the start.

mod audit;
mod fleet;
mod heal;
mod keys;
mod lease;
mod options;
mod outputs;
mod reconciler;
mod scheduler;
mod shutdown;
mod sources;
mod store;

pub(crate) use audit::AuditOptions;
pub(crate) use heal::window::Window;
pub(crate) use heal::{HealPolicy, RepairOptions};
pub(crate) use lease::LeaderOptions;
pub(crate) use options::{FleetOptions, WatchOptions};
pub(crate) use outputs::log::Log;
pub(crate) use outputs::notify::Payload;
pub(crate) use shutdown::note_parent;

use crate::engine::Session;
use crate::settings::Settings;
use anyhow::Result;
use outputs::metrics::Metrics;
use outputs::server::{self, Health};
use reconciler::{Given, Watcher};
use std::sync::Arc;

/// Runs until SIGINT or SIGTERM.
pub(crate) async fn run(settings: &Settings, options: WatchOptions) -> Result<()> {
    let log = options.log.clone();
    let shutdown = shutdown::requested();
    futures::pin_mut!(shutdown);
    let metrics = Arc::new(if options.fleet.is_some() { Metrics::fleet() } else { Metrics::new() });
    let board = options.ui.then(Default::default);
    let health = Health::new(metrics.clone(), board);
    let health = Arc::new(if options.audit.is_some() { health.with_drifts() } else { health });
    let bound = server::serve(&options.metrics_address, health.clone()).await?;
    let serving =
        if options.ui { "serving /, /metrics, /healthz and /readyz" } else { "serving /metrics, /healthz and /readyz" };
    log.info(serving, &[("address", &bound)]);
    let hub = match &options.audit {
        Some(a) => Some(audit_hub(a, &options, &metrics).await?),
        None => None,
    };
    if let Some(fleet) = &options.fleet {
        return fleet::run(settings, &options, fleet, (&metrics, health, hub.as_ref()), shutdown).await;
    }
    let session = tokio::select! {
        s = Session::open(settings) => s?,
        _ = &mut shutdown => return Ok(()),
    };
    let Some(lease) = &options.leader else {
        metrics.leader(1);
        let given = one_cluster(settings, &options, (metrics, health), None, hub.as_ref());
        let mut watcher = Watcher::new(session, given).await?;
        return watcher.run(shutdown).await;
    };
    let mut elected = lease::elect(session.client(), lease, session.namespace()).await?;
    let mut session = Some(session);
    loop {
        health.serving(); // a standby is ready: it serves health
        log.info("standing by for the lease", &[("lease", &lease.name), ("identity", &lease.identity)]);
        tokio::select! {
            _ = &mut shutdown => {
                elected.resign().await;
                return Ok(());
            }
            got = elected.acquired() => got?,
        }
        log.info("leading: acting on drift", &[("lease", &lease.name), ("identity", &lease.identity)]);
        metrics.leader(1);
        health.preparing();
        let s = match session.take() {
            Some(s) => s,
            None => Session::open(settings).await?,
        };
        let lease_check = lease::LeaseCheck::new(s.client(), lease, s.namespace());
        let given = one_cluster(settings, &options, (metrics.clone(), health.clone()), Some(lease_check), hub.as_ref());
        let mut watcher = Watcher::new(s, given).await?;
        tokio::select! {
            r = watcher.run(&mut shutdown) => {
                elected.resign().await;
                return r;
            }
            _ = elected.lost() => {
                log.warn("lost the lease: standing by", &[("lease", &lease.name)]);
                watcher.stop();
                metrics.leader(0);
                metrics.forget_all();
                if let Some(Ok(mut b)) = health.board.as_ref().map(|b| b.lock()) {
                    b.clear();
                }
            }
        }
    }
}

/// What the watcher of one cluster is given.
fn one_cluster<'a>(
    settings: &'a Settings,
    options: &'a WatchOptions,
    (metrics, health): (Arc<Metrics>, Arc<Health>),
    lease: Option<lease::LeaseCheck>,
    hub: Option<&Arc<audit::Hub>>,
) -> Given<'a> {
    let audit = hub.map(|h| (h.clone(), h.feed_name(None)));
    Given { settings, options, metrics, health, lease, key: None, proxies: None, pauses: None, audit }
}

/// The audit hub of this run, its webhook endpoint served.
async fn audit_hub(a: &AuditOptions, options: &WatchOptions, metrics: &Arc<Metrics>) -> Result<Arc<audit::Hub>> {
    if a.client_ca.is_some() && options.fleet.is_none() && options.cluster.is_none() {
        anyhow::bail!(
            "--audit-client-ca authenticates an API server by its certificate's Common Name, the cluster it speaks \
             for: name this watcher's cluster with --cluster NAME (without it, every certificate the CA signed, each \
             kubelet's with kubeadm's CA, would speak for it)"
        );
    }
    let hub = Arc::new(match options.fleet {
        Some(_) => audit::Hub::fleet(a.limits),
        None => audit::Hub::single(a.limits, options.cluster.as_deref()),
    });
    let bound = audit::server::serve(a, hub.clone(), metrics.clone(), options.log.clone()).await?;
    options.log.info("serving the audit webhook", &[("address", &bound)]);
    Ok(hub)
}

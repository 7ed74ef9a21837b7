//! `watch`: continuous drift detection. A full check at start, then event-driven: Helm's storage
//! and the kinds of the watched releases are watched, and only the releases a change touches are
//! evaluated again (debounced), with a full resync every `--resync`. Verdicts go to metrics, to
//! Events and notifications once per drift signature, and, for releases that opt in, to
//! `repair`. With `--leader-elect` only the replica holding the Lease acts.
//!
//! The rooms, lowest floor first; a room uses only the rooms below it
//! (`layering::each_room_of_the_watcher_uses_only_the_rooms_below_it`):
//!
//! 1. [`clock`]: the one clock (the runtime's, paused in tests).
//! 2. The core's leaves: [`keys`] (every key in one place), [`lease`] (leader election),
//!    [`shutdown`].
//! 3. [`store`]: what the watcher knows (releases, the object index, what was reported and its
//!    signatures, what it refuses).
//! 4. [`caaph`]: a fleet member's releases installed by CAAPH, by their HelmReleaseProxy.
//! 5. [`outputs`]: everything the watcher says (Events, notifications, metrics, log, the page).
//! 6. [`sources`] (the watches of records and kinds, owned and stopped) and [`scheduler`]
//!    (debounce, resync, backoff, repairs postponed by the rate limit).
//! 7. [`receiver`]: the audit receiver (the API server's audit webhook: who made each drift).
//! 8. [`healing`]: self-healing (which releases opt in, the decision, the act, pauses, windows).
//! 9. [`options`]: what `watch` was asked, each product's options together.
//! 10. [`reconciler`]: the core watcher of one cluster, its loop and its checks, calling each
//!     room through its small interface (`Healing`, `Outputs`, `receiver::Link`, `Proxies`).
//! 11. [`fleet`]: one watcher per cluster of an inventory, sharded by Leases.
//!
//! This file holds the start.

mod clock;
mod keys;
mod lease;
mod shutdown;

mod store;

mod caaph;

mod outputs;

mod scheduler;
mod sources;

mod receiver;

mod healing;

mod options;

mod reconciler;

mod fleet;

pub(crate) use healing::window::{RepairWindow, Stance};
pub(crate) use healing::{HealPolicy, RepairOptions};
pub(crate) use lease::LeaderOptions;
pub(crate) use options::{FleetOptions, WatchOptions};
pub(crate) use outputs::log::Log;
pub(crate) use outputs::notify::Payload;
pub(crate) use outputs::pod_name;
pub(crate) use receiver::AuditOptions;
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
    hub: Option<&Arc<receiver::Hub>>,
) -> Given<'a> {
    let audit = hub.map(|h| receiver::Subscription::of(h, None));
    Given { settings, options, metrics, health, lease, fleet: None, audit }
}

/// The audit hub of this run, its webhook endpoint served.
async fn audit_hub(a: &AuditOptions, options: &WatchOptions, metrics: &Arc<Metrics>) -> Result<Arc<receiver::Hub>> {
    if a.client_ca.is_some() && options.fleet.is_none() && options.cluster.is_none() {
        anyhow::bail!(
            "--audit-client-ca authenticates an API server by its certificate's Common Name, the cluster it speaks \
             for: name this watcher's cluster with --cluster NAME (without it, every certificate the CA signed, each \
             kubelet's with kubeadm's CA, would speak for it)"
        );
    }
    let hub = Arc::new(match options.fleet {
        Some(_) => receiver::Hub::fleet(a.limits),
        None => receiver::Hub::single(a.limits, options.cluster.as_deref()),
    });
    let bound = receiver::server::serve(a, hub.clone(), metrics.clone(), options.log.clone()).await?;
    options.log.info("serving the audit webhook", &[("address", &bound)]);
    Ok(hub)
}

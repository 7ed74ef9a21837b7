//! One member of a fleet: a watcher of its cluster, reached through the kubeconfig its
//! inventory entry holds, started again whenever the cluster stops answering and comes back.
//! While it does not answer, `helm_drift_cluster_up` is 0 and its releases are unknown.

use crate::api::Connection;
use crate::api::inventory::Proxy;
use crate::engine::Session;
use crate::settings::Settings;
use crate::watch::lease::{LeaderOptions, LeaseCheck};
use crate::watch::options::WatchOptions;
use crate::watch::outputs::metrics::Metrics;
use crate::watch::outputs::proxies::Proxies;
use crate::watch::outputs::server::Health;
use crate::watch::reconciler::{Given, Watcher};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How often a member's API server is asked at most whether it answers (else every
/// `--clusters-interval`), and how many silences in a row make it down.
const PROBE_EVERY: Duration = Duration::from_secs(5);
const PROBE_MISSES: u32 = 2;
/// The longest wait between two attempts to reach a member that does not answer.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// What a member's task is given: its cluster's settings, the run's options under its name, the
/// fleet's metrics under its label, and the fleet's signature key.
pub(super) struct Member {
    pub(super) name: String,
    pub(super) settings: Settings,
    pub(super) options: WatchOptions,
    pub(super) metrics: Metrics,
    pub(super) health: Arc<Health>,
    pub(super) key: Vec<u8>,
    /// How often its API server is asked whether it answers.
    pub(super) probe: Duration,
    /// Its releases installed by CAAPH, and how to reach the management cluster they are in.
    pub(super) proxies: Vec<Proxy>,
    pub(super) management: Connection,
    /// With several replicas: the Lease of this cluster, checked right before each write.
    pub(super) lease: Option<LeaderOptions>,
}

pub(super) const PROBE_MAX: Duration = PROBE_EVERY;

/// Watches the member until `stop` turns true.
pub(super) async fn run(member: Member, mut stop: watch::Receiver<bool>) {
    let Member { name, settings, options, metrics, health, key, probe: every, proxies, management, lease } = member;
    let log = options.log.clone();
    let mut backoff = Duration::from_secs(1);
    let mut said_down = false;
    loop {
        let opened = tokio::select! {
            s = Session::open(&settings) => s,
            _ = stopped(&mut stop) => return,
        };
        let session = match opened {
            Ok(s) => s,
            Err(e) => {
                metrics.cluster_up(false);
                if !said_down {
                    log.warn("cluster unreachable: its releases are unknown", &[("error", &crate::errors::chain(&e))]);
                    said_down = true;
                }
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = stopped(&mut stop) => return,
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        said_down = false;
        metrics.cluster_up(true);
        log.info("cluster reached: watching", &[("server", &session.cluster.server)]);
        let probe = session.cluster.client.clone();
        // The management cluster, for the proxies' Events, this cluster's Lease and pauses.
        let needed = !proxies.is_empty() || lease.is_some() || options.repair.is_some();
        let home = match needed.then(|| crate::api::connect(&management)) {
            None => None,
            Some(connecting) => match connecting.await {
                Ok(m) => Some(m.client),
                Err(e) => {
                    log.warn("cannot reach the management cluster: retrying", &[("error", &e)]);
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => continue,
                        _ = stopped(&mut stop) => return,
                    }
                }
            },
        };
        let lease_check = home.as_ref().zip(lease.as_ref()).map(|(c, l)| LeaseCheck::new(c, l, ""));
        let pauses = home.clone().filter(|_| options.repair.is_some());
        let proxies = home.filter(|_| !proxies.is_empty()).map(|c| Arc::new(Proxies::new(c, &name, proxies.clone())));
        metrics.leader(1);
        let given = Given {
            settings: &settings,
            options: &options,
            metrics: Arc::new(metrics.clone()),
            health: health.clone(),
            lease: lease_check,
            key: Some(key.clone()),
            proxies,
            pauses,
        };
        let mut watcher = match Watcher::new(session, given).await {
            Ok(w) => {
                backoff = Duration::from_secs(1);
                w
            }
            Err(e) => {
                log.warn("cannot start watching the cluster", &[("error", &crate::errors::chain(&e))]);
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = stopped(&mut stop) => return,
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        tokio::select! {
            r = watcher.run(stopped(&mut stop)) => {
                if let Err(e) = r {
                    log.error("watching the cluster failed", &[("error", &crate::errors::chain(&e))]);
                }
                if *stop.borrow() {
                    return;
                }
            }
            _ = silent(&probe, every) => {
                watcher.stop();
                metrics.cluster_up(false);
                log.warn("cluster stopped answering: its releases are unknown until it does", &[]);
                said_down = true;
            }
        }
    }
}

/// Resolves when `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Resolves once the API server has not answered [`PROBE_MISSES`] probes in a row.
async fn silent(client: &kube::Client, every: Duration) {
    let mut misses = 0;
    loop {
        tokio::time::sleep(every).await;
        let asked = tokio::time::timeout(every, client.apiserver_version()).await;
        if matches!(asked, Ok(Ok(_))) {
            misses = 0;
        } else {
            misses += 1;
            if misses >= PROBE_MISSES {
                return;
            }
        }
    }
}

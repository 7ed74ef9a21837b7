//! One member of a fleet: a watcher of its cluster, reached through the kubeconfig its
//! inventory entry holds, started again whenever the cluster stops answering and comes back.
//! While it does not answer, `helm_drift_cluster_up` is 0 and its releases are unknown.

use crate::api::Connection;
use crate::engine::Session;
use crate::inventory::Proxy;
use crate::settings::Settings;
use crate::watch::caaph::Proxies;
use crate::watch::lease::{LeaderOptions, LeaseCheck};
use crate::watch::options::WatchOptions;
use crate::watch::outputs::metrics::Metrics;
use crate::watch::outputs::server::Health;
use crate::watch::receiver::Subscription;
use crate::watch::reconciler::{FromFleet, Given, Watcher};
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
pub(super) struct Task {
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
    /// The fleet's audit hub: this member's feed is under its name.
    pub(super) audit: Option<Arc<crate::watch::receiver::Hub>>,
}

pub(super) const PROBE_MAX: Duration = PROBE_EVERY;

/// Watches the member until `stop` turns true.
pub(super) async fn run(member: Task, mut stop: watch::Receiver<bool>) {
    let (log, metrics) = (member.options.log.clone(), member.metrics.clone());
    let mut backoff = Duration::from_secs(1);
    let mut said_down = false;
    loop {
        let opened = tokio::select! {
            s = Session::open(&member.settings) => s,
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
                if back_off(&mut backoff, &mut stop).await {
                    continue;
                }
                return;
            }
        };
        said_down = false;
        metrics.cluster_up(true);
        log.info("cluster reached: watching", &[("server", &session.cluster().server)]);
        let probe = session.client().clone();
        let home = match member.needs_home() {
            false => None,
            true => match crate::api::connect(&member.management).await {
                Ok(m) => Some(m.client),
                Err(e) => {
                    log.warn("cannot reach the management cluster: retrying", &[("error", &e)]);
                    if back_off(&mut backoff, &mut stop).await {
                        continue;
                    }
                    return;
                }
            },
        };
        metrics.leader(1);
        let mut watcher = match Watcher::new(session, member.given(home)).await {
            Ok(w) => {
                backoff = Duration::from_secs(1);
                w
            }
            Err(e) => {
                log.warn("cannot start watching the cluster", &[("error", &crate::errors::chain(&e))]);
                if back_off(&mut backoff, &mut stop).await {
                    continue;
                }
                return;
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
            _ = silent(&probe, member.probe) => said_down = gone_silent(&mut watcher, &metrics, &log),
        }
    }
}

impl Task {
    /// Whether the watcher needs the management cluster: for the proxies' Events, this
    /// cluster's Lease and pauses.
    fn needs_home(&self) -> bool {
        !self.proxies.is_empty() || self.lease.is_some() || self.options.repair.is_some()
    }

    /// What the member's watcher is given, with the management cluster's client (`home`).
    fn given(&self, home: Option<kube::Client>) -> Given<'_> {
        let proxies = &self.proxies;
        Given {
            settings: &self.settings,
            options: &self.options,
            metrics: Arc::new(self.metrics.clone()),
            health: self.health.clone(),
            lease: home.as_ref().zip(self.lease.as_ref()).map(|(c, l)| LeaseCheck::new(c, l, "")),
            audit: self.audit.as_ref().map(|h| Subscription::of(h, Some(&self.name))),
            fleet: Some(FromFleet {
                key: self.key.clone(),
                pauses: home.clone().filter(|_| self.options.repair.is_some()),
                proxies: home
                    .filter(|_| !proxies.is_empty())
                    .map(|c| Arc::new(Proxies::new(c, &self.name, proxies.clone()))),
            }),
        }
    }
}

/// The member stopped answering: its watcher stops and its releases are unknown until it
/// answers again (said once: `true`).
fn gone_silent(watcher: &mut Watcher, metrics: &Metrics, log: &crate::watch::outputs::log::Log) -> bool {
    watcher.stop();
    metrics.cluster_up(false);
    log.warn("cluster stopped answering: its releases are unknown until it does", &[]);
    true
}

/// Waits `backoff`, doubled for the next wait (up to [`MAX_BACKOFF`]); `false` when `stop`
/// turned true meanwhile.
async fn back_off(backoff: &mut Duration, stop: &mut watch::Receiver<bool>) -> bool {
    let wait = *backoff;
    *backoff = (*backoff * 2).min(MAX_BACKOFF);
    tokio::select! {
        _ = tokio::time::sleep(wait) => true,
        _ = stopped(stop) => false,
    }
}

/// Resolves when `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Resolves once the API server has not answered [`PROBE_MISSES`] probes in a row.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
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

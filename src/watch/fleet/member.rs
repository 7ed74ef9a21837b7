//! One member of a fleet: a watcher of its cluster, reached through the kubeconfig its
//! inventory entry holds, started again whenever the cluster stops answering and comes back.
//! While it does not answer, `helm_drift_cluster_up` is 0 and its releases are unknown.

use crate::engine::Session;
use crate::inventory::Proxy;
use crate::settings::Settings;
use crate::watch::caaph::Proxies;
use crate::watch::lease::LeaseCheck;
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
/// How many members start at once (connect, first full check): a start holds what its first
/// check reads, so a thousand members starting together would hold a thousand such reads.
const STARTING_AT_ONCE: usize = 16;
/// The longest a start holds its place: a member slower than this (a slow or flooded API
/// server) goes on starting without it, and the next member starts.
const START_BUDGET: Duration = Duration::from_secs(20);
/// How many members judge at once once started (an edit every member sees, a resync of all).
const JUDGING_AT_ONCE: usize = 16;

/// The fleet's places, shared by every member: for starting ([`STARTING_AT_ONCE`]) and for
/// judging after the first check ([`JUDGING_AT_ONCE`]).
#[derive(Clone)]
pub(super) struct Places {
    starting: Arc<tokio::sync::Semaphore>,
    judging: Arc<tokio::sync::Semaphore>,
}

impl Places {
    pub(super) fn new() -> Places {
        Places {
            starting: Arc::new(tokio::sync::Semaphore::new(STARTING_AT_ONCE)),
            judging: Arc::new(tokio::sync::Semaphore::new(JUDGING_AT_ONCE)),
        }
    }
}

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
    /// Its releases installed by CAAPH, and the management cluster they are in (the fleet's
    /// one client, shared by every member).
    pub(super) proxies: Vec<Proxy>,
    pub(super) management: kube::Client,
    /// With several replicas: whether this cluster is still this replica's, asked right
    /// before each write.
    pub(super) lease: Option<LeaseCheck>,
    /// The fleet's audit hub: this member's feed is under its name.
    pub(super) audit: Option<Arc<crate::watch::receiver::Hub>>,
    /// The fleet's places for starting and judging.
    pub(super) places: Places,
}

/// The most probes the whole fleet sends a second: past 200 members, each member is asked less
/// often (every 25 s at 1,000), so that a large fleet at rest costs its API servers and the
/// watcher little; a member that stops answering is then said down within two of its probes.
const FLEET_PROBES_PER_SECOND: u32 = 40;

/// How often a member of a fleet of `members` is probed: every [`PROBE_EVERY`] (at most the
/// inventory's interval), less often in a large fleet ([`FLEET_PROBES_PER_SECOND`]).
pub(super) fn probe_every(inventory_every: Duration, members: usize) -> Duration {
    let spread = Duration::from_secs(1) * u32::try_from(members).unwrap_or(u32::MAX) / FLEET_PROBES_PER_SECOND;
    inventory_every.min(PROBE_EVERY).max(spread)
}

/// Watches the member until `stop` turns true.
pub(super) async fn run(member: Task, mut stop: watch::Receiver<bool>) {
    let (log, metrics) = (member.options.log.clone(), member.metrics.clone());
    let mut backoff = Duration::from_secs(1);
    let mut said_down = false;
    loop {
        let place = tokio::select! {
            p = member.places.starting.clone().acquire_owned() => p.ok(),
            _ = stopped(&mut stop) => return,
        };
        // The place is given back once the first full check is done, the start fails (`started`
        // dropped), or the start's budget is spent.
        let (started, checked) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let _held = place;
            let _ = tokio::time::timeout(START_BUDGET, checked).await;
        });
        // Boxed, as the watcher's start below: a start's state is large and brief, and a
        // thousand members at rest would each keep room for it in their task.
        let opened = tokio::select! {
            s = Box::pin(Session::open(&member.settings)) => s,
            _ = stopped(&mut stop) => return,
        };
        let session = match opened {
            Ok(s) => s,
            Err(e) => {
                // Its place is given back before it waits.
                drop(started);
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
        let home = member.needs_home().then(|| member.management.clone());
        metrics.leader(1);
        let mut watcher = match Box::pin(Watcher::new(session, member.given(home, started))).await {
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
    /// Whether the watcher needs the management cluster: for the proxies' Events and pauses.
    fn needs_home(&self) -> bool {
        !self.proxies.is_empty() || self.options.repair.is_some()
    }

    /// What the member's watcher is given, with the management cluster's client (`home`).
    fn given(&self, home: Option<kube::Client>, started: tokio::sync::oneshot::Sender<()>) -> Given<'_> {
        let proxies = &self.proxies;
        Given {
            settings: &self.settings,
            options: &self.options,
            metrics: Arc::new(self.metrics.clone()),
            health: self.health.clone(),
            lease: self.lease.clone(),
            audit: self.audit.as_ref().map(|h| Subscription::of(h, Some(&self.name))),
            fleet: Some(FromFleet {
                key: self.key.clone(),
                pauses: home.clone().filter(|_| self.options.repair.is_some()),
                proxies: home
                    .filter(|_| !proxies.is_empty())
                    .map(|c| Arc::new(Proxies::new(c, &self.name, proxies.clone()))),
                started: Some(started),
                judging: Some(self.places.judging.clone()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_fleet_is_probed_less_often_a_small_one_as_before() {
        let s = Duration::from_secs;
        assert_eq!(probe_every(s(30), 10), s(5));
        assert_eq!(probe_every(s(2), 10), s(2), "never slower than the inventory's interval asks");
        assert_eq!(probe_every(s(30), 200), s(5));
        assert_eq!(probe_every(s(30), 1000), s(25));
        assert_eq!(probe_every(s(30), usize::MAX), Duration::from_secs(1) * u32::MAX / 40);
    }
}

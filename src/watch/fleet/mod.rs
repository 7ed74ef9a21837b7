//! `watch --clusters`: one watcher for a fleet. The inventory (Cluster API's Clusters, Argo
//! CD's cluster Secrets) is read from the management cluster every `--clusters-interval`; a
//! cluster that appears gets a [`member`] watcher, one that goes loses it and its series, and
//! one whose kubeconfig changes (a rotated Secret) is watched again with the new one. Every
//! member writes the same metrics families under its `cluster` label.

mod member;
mod shard;

use crate::api::Cluster;
use crate::inventory::{self, Inventory, Member};
use crate::settings::Settings;
use crate::watch::lease::LeaseCheck;
use crate::watch::options::{FleetOptions, WatchOptions};
use crate::watch::outputs::metrics::Metrics;
use crate::watch::outputs::server::Health;
use crate::watch::store::signing_key;
use anyhow::{Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{oneshot, watch};

/// How long a change of the inventory settles before it is taken (a Cluster and its Secret
/// written together, a rotation's delete and create).
const SETTLE: Duration = Duration::from_millis(500);

/// How long a member's watcher may take to stop before it is cut off.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// A member being watched: what it was started with, and how to stop it.
struct Running {
    /// The kubeconfig (or why there is none) it was started with.
    fingerprint: String,
    stop: watch::Sender<bool>,
    /// Resolves when the member's thread is done.
    done: oneshot::Receiver<()>,
    metrics: Metrics,
}

impl Running {
    /// Stops the member's watcher (cut off after [`STOP_GRACE`]) and drops its series.
    async fn end(self) {
        let _ = self.stop.send(true);
        let _ = self.done.await;
        self.metrics.forget_cluster();
    }
}

/// Runs a member as a task of the watcher's runtime (a member is a future like any other:
/// one slow, unreachable or flooded cluster waits on its own I/O and timers, never on the
/// others'), until `stop` turns true and its watcher has stopped or [`STOP_GRACE`] has passed.
/// A member whose task panics is said and counted, and the others go on.
fn spawn(member: member::Task, stop: watch::Receiver<bool>) -> oneshot::Receiver<()> {
    let (done, finished) = oneshot::channel();
    let (log, metrics) = (member.options.log.clone(), member.metrics.clone());
    let mut told = stop.clone();
    let task = tokio::spawn(async move {
        tokio::select! {
            _ = member::run(member, stop) => {}
            _ = async { let _ = told.wait_for(|s| *s).await; tokio::time::sleep(STOP_GRACE).await } => {}
        }
    });
    tokio::spawn(async move {
        if let Err(e) = task.await {
            metrics.error("member");
            log.error("the cluster's watcher stopped unexpectedly: not watched until it changes", &[("error", &e)]);
        }
        let _ = done.send(());
    });
    finished
}

/// A member with nothing running: done from the start.
fn already_done() -> oneshot::Receiver<()> {
    let (done, finished) = oneshot::channel();
    let _ = done.send(());
    finished
}

/// Watches every cluster of the inventory until `shutdown`.
pub(crate) async fn run(
    settings: &Settings,
    options: &WatchOptions,
    fleet: &FleetOptions,
    (metrics, health, audit): (&Metrics, Arc<Health>, Option<&Arc<crate::watch::receiver::Hub>>),
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    futures::pin_mut!(shutdown);
    let log = &options.log;
    let (management, streams) = tokio::select! {
        c = connect(settings) => c?,
        _ = &mut shutdown => return Ok(()),
    };
    // The watcher's own objects in the management cluster (its signature key) live in
    // --lease-namespace, else the namespace of its context (a pod's own): -n names the
    // releases' namespace on every member.
    let namespace = fleet.home.clone().unwrap_or_else(|| management.default_namespace.clone());
    let key = signature_key(&management, options, &namespace, metrics).await;
    let (source, server) = (fleet.source.entries(), &management.server);
    log.info("watching the fleet's inventory", &[("source", &source), ("server", server)]);
    let mut members: BTreeMap<String, Running> = BTreeMap::new();
    let (every, shard) = shard::sharding(options, fleet, &management.client, &namespace);
    let places = member::Places::new();
    let mut feed = inventory::InventoryFeed::start(&streams, fleet.source, &fleet.scope, trouble(log, metrics));
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        // A round every `every` (the replicas' Leases, the announcement); the inventory's
        // changes as they come, a burst of them taken together.
        let round = tokio::select! {
            _ = &mut shutdown => break,
            _ = tick.tick() => true,
            _ = feed.changed() => false,
        };
        if round {
            announce(&management, (settings, options, metrics), &namespace, every).await;
        } else if tokio::time::timeout(SETTLE, &mut shutdown).await.is_ok() {
            break;
        }
        match feed.read().await {
            Err(e) if !e.failing() => {} // still listing: its first list is a change
            Err(e) => {
                metrics.error("inventory");
                log.warn("cannot read the inventory: the clusters known keep being watched", &[("error", &e)]);
            }
            Ok(mut found) => {
                bound(&mut found, fleet.max, metrics, log);
                let running = members.keys().cloned().collect();
                narrow(shard.as_ref(), &mut found, &running, metrics, log).await;
                let lease = |name: &str| {
                    let standing = shard.as_ref()?.standing.clone();
                    Some(LeaseCheck::Share { standing, cluster: name.to_string() })
                };
                let start = MemberStart {
                    places: &places,
                    management: &management.client,
                    members: found.members.len(),
                    settings,
                    options,
                    metrics,
                    health: &health,
                    key: &key,
                    every,
                    lease: &lease,
                    home: &namespace,
                    audit,
                };
                reconcile(&mut members, found, &start).await;
                health.serving();
            }
        }
    }
    log.info("stopping", &[("clusters", &members.len())]);
    futures::future::join_all(members.into_values().map(Running::end)).await;
    if let Some(s) = &shard {
        s.leave().await;
    }
    Ok(())
}

/// The management cluster, and a client of its own for the inventory's watches (no read
/// timeout shorter than a watch lasts).
async fn connect(settings: &Settings) -> Result<(Cluster, kube::Client)> {
    let management = crate::api::connect(&settings.connection).await.context("cannot reach the management cluster")?;
    let mut long = settings.connection.clone();
    long.timeout = Some(crate::watch::reconciler::WATCH_READ_TIMEOUT);
    let streams = crate::api::connect(&long).await.context("cannot reach the management cluster")?;
    Ok((management, streams.client))
}

/// What an inventory watch that fails does: said once until it works again, and counted.
fn trouble(log: &crate::watch::outputs::log::Log, metrics: &Metrics) -> inventory::Trouble {
    let (log, metrics) = (log.clone(), metrics.clone());
    Arc::new(move |watch, error| {
        metrics.error("inventory");
        log.warn("an inventory watch failed: retrying with backoff", &[("watch", &watch), ("error", &error)]);
    })
}

/// The key that signs drift: the management cluster's Secret in the watcher's home, else one
/// for this process only (said, and counted).
async fn signature_key(management: &Cluster, options: &WatchOptions, namespace: &str, metrics: &Metrics) -> Vec<u8> {
    let (key, source) = match &options.home {
        Some(home) => signing_key::load(&management.client, home, &options.signature_key_secret).await,
        None => (
            signing_key::for_process(),
            signing_key::KeyOrigin::Process(signing_key::KeyError::Unnamed { namespace: namespace.into() }),
        ),
    };
    if let signing_key::KeyOrigin::Process(why) = source {
        options.log.warn(
            "no signature key in the management cluster: drift signatures hold for this process only",
            &[("error", &why)],
        );
        metrics.error("signature-key");
    }
    key
}

/// With several replicas: the clusters of `found` placed on this replica (the others are left
/// out, and stopped if it watched them). A Lease list that fails takes none (said, and counted).
async fn narrow(
    shard: Option<&shard::Shard>,
    found: &mut Inventory,
    running: &BTreeSet<String>,
    metrics: &Metrics,
    log: &crate::watch::outputs::log::Log,
) {
    let Some(s) = shard else { return };
    if let Err(why) = s.narrow(found, running).await {
        log.warn(
            "the fleet's Leases cannot be read: no cluster is taken (those watched are kept while this replica's Lease holds)",
            &[("error", &why)],
        );
        metrics.error("leases");
    }
}

/// A healing fleet says where it reads pauses: in the management cluster, for the releases of
/// its selection on every member (`helm drift pause --cluster` finds it there).
async fn announce(management: &Cluster, at: (&Settings, &WatchOptions, &Metrics), home: &str, every: Duration) {
    let (settings, options, metrics) = at;
    let Some(repair) = &options.repair else { return };
    let home = repair.pauses.clone().unwrap_or_else(|| home.to_string());
    let namespace = match &settings.namespace {
        _ if options.selection.all_namespaces => "*".to_string(),
        Some(ns) => ns.clone(),
        None => management.default_namespace.clone(),
    };
    let lease = options.leader.as_ref().map_or("helm-drift", |l| l.name.as_str());
    let watcher = format!("{lease}|fleet|{namespace}");
    let reach = crate::watch::healing::Reach { watcher: &watcher, namespaces: vec![namespace], fleet: true, every };
    crate::watch::healing::announce(&management.client, &home, reach, metrics, &options.log).await;
}

/// At most `max` entries, the first by name: the rest counted and named once per read.
fn bound(found: &mut Inventory, max: usize, metrics: &Metrics, log: &crate::watch::outputs::log::Log) {
    if found.members.len() <= max {
        return;
    }
    found.members.sort_by(|a, b| a.name.cmp(&b.name));
    let left: Vec<String> = found.members.split_off(max).into_iter().map(|m| m.name).collect();
    metrics.rejected("inventory", left.len() as u64);
    let first: Vec<&str> = left.iter().take(5).map(String::as_str).collect();
    log.warn(
        "more entries in the inventory than --clusters-max: the rest are not watched",
        &[("left_out", &left.len()), ("max", &max), ("first", &first.join(" "))],
    );
}

/// What every member is started from.
struct MemberStart<'a> {
    /// The fleet's places for members starting, and for judging once started.
    places: &'a member::Places,
    /// The management cluster's client (one for the whole fleet).
    management: &'a kube::Client,
    /// How many members the inventory holds (a large fleet's are probed less often).
    members: usize,
    settings: &'a Settings,
    options: &'a WatchOptions,
    metrics: &'a Metrics,
    health: &'a Arc<Health>,
    key: &'a [u8],
    every: Duration,
    /// What a cluster's watcher asks before each write, with several replicas.
    lease: &'a dyn Fn(&str) -> Option<LeaseCheck>,
    /// Where the watcher's own objects live in the management cluster.
    home: &'a str,
    /// The audit webhook's hub: each member's feed under its name.
    audit: Option<&'a Arc<crate::watch::receiver::Hub>>,
}

/// Starts the members that appeared or changed, stops those gone or changed.
async fn reconcile(members: &mut BTreeMap<String, Running>, found: Inventory, start: &MemberStart<'_>) {
    let log = &start.options.log;
    let mut seen = BTreeMap::new();
    for (name, why) in found.skipped {
        seen.insert(name.clone(), ());
        if let Some(r) = members.remove(&name) {
            log.info("cluster left the fleet: no longer watched", &[("cluster", &name), ("reason", &why)]);
            r.end().await;
        }
    }
    for m in found.members {
        // What the member's watcher is started from: a change (a rotated kubeconfig, a proxy
        // at a new revision or annotated) starts it again.
        let fingerprint = match &m.kubeconfig {
            Ok(k) => format!("{} {:?}", serde_json::to_string(k).unwrap_or_default(), m.proxies),
            Err(why) => format!("refused: {why}"),
        };
        seen.insert(m.name.clone(), ());
        if members.get(&m.name).is_some_and(|r| r.fingerprint == fingerprint) {
            continue;
        }
        let changed = match members.remove(&m.name) {
            Some(old) => {
                old.end().await;
                true
            }
            None => false,
        };
        let said = if changed { "cluster's kubeconfig changed: watching it again" } else { "cluster joined the fleet" };
        for p in m.proxies.iter().filter(|p| p.interval_unread.is_some()) {
            start.metrics.rejected("inventory", 1);
            log.warn(
                "a HelmReleaseProxy's repair interval cannot be read: the default applies",
                &[
                    ("proxy", &format!("{}/{}", p.namespace, p.name)),
                    ("value", &p.interval_unread.as_deref().unwrap_or("")),
                ],
            );
        }
        if !m.proxies_past_cap.is_empty() {
            start.metrics.rejected("inventory", m.proxies_past_cap.len() as u64);
            let named: Vec<&str> = m.proxies_past_cap.iter().take(10).map(String::as_str).collect();
            log.warn(
                "more HelmReleaseProxies name this cluster than are watched: these are not",
                &[
                    ("cluster", &m.name),
                    ("at_most", &crate::inventory::MAX_PROXIES_PER_MEMBER),
                    ("not_watched", &m.proxies_past_cap.len()),
                    ("first", &named.join(" ")),
                ],
            );
        }
        let name = m.name.clone();
        if let Some(hub) = start.audit {
            hub.expect(&name);
        }
        members.insert(name, started(m, fingerprint, said, start));
    }
    let gone: Vec<String> = members.keys().filter(|n| !seen.contains_key(*n)).cloned().collect();
    for name in gone {
        if let Some(r) = members.remove(&name) {
            log.info("cluster left the fleet: no longer watched", &[("cluster", &name)]);
            r.end().await;
        }
        if let Some(hub) = start.audit {
            hub.forget(&name);
        }
    }
}

/// A member's watcher started (or, for an entry refused, said and counted).
fn started(m: Member, fingerprint: String, said: &str, start: &MemberStart<'_>) -> Running {
    let log = &start.options.log;
    let metrics = start.metrics.member(&m.name);
    let (stop, stopped) = watch::channel(false);
    let done = match m.kubeconfig {
        Ok(kubeconfig) => {
            log.info(said, &[("cluster", &m.name)]);
            let member = member::Task {
                name: m.name.clone(),
                settings: start.settings.for_member(&m.name, kubeconfig),
                options: WatchOptions {
                    cluster: Some(m.name.clone()),
                    log: log.about(&m.name),
                    // Pauses live with the fleet's own objects in the management cluster.
                    repair: start.options.repair.clone().map(|r| crate::watch::healing::RepairOptions {
                        pauses: r.pauses.clone().or_else(|| Some(start.home.to_string())),
                        ..r
                    }),
                    ..start.options.clone()
                },
                metrics: metrics.clone(),
                health: start.health.clone(),
                key: signing_key::for_member(start.key, &m.name),
                probe: member::probe_every(start.every, start.members),
                proxies: m.proxies,
                audit: start.audit.cloned(),
                places: start.places.clone(),
                management: start.management.clone(),
                lease: (start.lease)(&m.name),
            };
            spawn(member, stopped)
        }
        Err(why) => {
            metrics.cluster_up(false);
            metrics.rejected("inventory", 1);
            log.warn("cluster not watched: its inventory entry is refused", &[("cluster", &m.name), ("reason", &why)]);
            already_done()
        }
    };
    Running { fingerprint, stop, done, metrics }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inventory_past_its_bound_is_watched_up_to_it_by_name() {
        let member = |name: &str| Member {
            name: name.into(),
            kubeconfig: Err(inventory::Unreachable::new("x", inventory::Why::NoSecret)),
            proxies: Vec::new(),
            proxies_past_cap: Vec::new(),
        };
        let mut found = Inventory { members: vec![member("f/c"), member("f/a"), member("f/b")], skipped: Vec::new() };
        let metrics = Metrics::fleet();
        bound(&mut found, 2, &metrics, &crate::watch::outputs::log::Log::default());
        let names: Vec<&str> = found.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["f/a", "f/b"]);
        assert!(
            metrics.encode().contains(r#"helm_drift_rejected_inputs_total{input="inventory"} 1"#),
            "{}",
            metrics.encode()
        );
        bound(&mut found, 5, &metrics, &crate::watch::outputs::log::Log::default());
        assert_eq!(found.members.len(), 2, "under the bound: untouched");
    }
}

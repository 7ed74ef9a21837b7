//! `--leader-elect`: only the replica that holds a coordination.k8s.io Lease acts (through
//! kube-lease-manager); the others stand by, serving health.

use crate::watch::clock::Instant;
use anyhow::{Context, Result};
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube_lease_manager::LeaseManagerBuilder;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// Which Lease, and who this replica is.
#[derive(Clone, Debug)]
pub(crate) struct LeaderOptions {
    pub(crate) name: String,
    /// The Lease's namespace (default: the watcher's namespace).
    pub(crate) namespace: Option<String>,
    /// This replica's name in the Lease (default: the host name, a pod's name).
    pub(crate) identity: String,
    /// Seconds a leader holds the Lease without renewing it.
    pub(crate) duration: u64,
}

/// This replica's standing, kept renewed by a task of its own.
pub(crate) struct Elected {
    state: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<kube_lease_manager::Result<kube_lease_manager::LeaseManager>>,
}

/// Joins the election (creating the Lease when there is none).
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn elect(client: &kube::Client, options: &LeaderOptions, namespace: &str) -> Result<Elected> {
    let namespace = options.namespace.as_deref().unwrap_or(namespace);
    let manager = LeaseManagerBuilder::new(client.clone(), &options.name)
        .with_namespace(namespace)
        .with_identity(&options.identity)
        .with_duration(options.duration)
        .with_grace((options.duration / 3).max(1))
        .with_field_manager("helm-drift-leader")
        .build()
        .await
        .with_context(|| format!("cannot use Lease {namespace}/{} for --leader-elect", options.name))?;
    let (state, task) = manager.watch().await;
    Ok(Elected { state, task })
}

impl Elected {
    /// Resolves once this replica holds the Lease.
    pub(crate) async fn acquired(&mut self) -> Result<()> {
        loop {
            if *self.state.borrow_and_update() {
                return Ok(());
            }
            self.state.changed().await.context("the Lease manager stopped")?;
        }
    }

    /// Leaves the election, releasing the Lease when held (so a standby takes over at once).
    pub(crate) async fn resign(self) {
        drop(self.state);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), self.task).await;
    }

    /// Resolves when this replica no longer holds the Lease.
    pub(crate) async fn lost(&mut self) {
        loop {
            if !*self.state.borrow_and_update() {
                return;
            }
            if self.state.changed().await.is_err() {
                return;
            }
        }
    }
}

/// What this replica may act on now: the clusters placed on it, while its own Lease is fresh
/// enough that no other replica can have taken them. Shared with each member's watcher, which
/// asks it right before every write.
#[derive(Debug)]
pub(crate) struct Standing {
    state: Mutex<(Option<Instant>, BTreeSet<String>)>,
    /// How long after a renewal this replica still acts: the Lease's duration less a round (the
    /// others take its clusters only once the whole duration has passed).
    trusted_for: Duration,
}

impl Standing {
    pub(crate) fn new(duration: Duration, every: Duration) -> Standing {
        Standing { state: Mutex::new((None, BTreeSet::new())), trusted_for: duration.saturating_sub(every) }
    }

    /// How long after a renewal this replica still acts.
    pub(crate) fn trusted_for(&self) -> Duration {
        self.trusted_for
    }

    /// Whether this replica may act on `cluster` now.
    pub(crate) fn holds(&self, cluster: &str) -> bool {
        let Ok(state) = self.state.lock() else { return false };
        let fresh = state.0.is_some_and(|at| at.elapsed() < self.trusted_for);
        fresh && state.1.contains(cluster)
    }

    pub(crate) fn set(&self, renewed: Option<Instant>, placed: BTreeSet<String>) {
        if let Ok(mut state) = self.state.lock() {
            *state = (renewed.or(state.0), placed);
        }
    }
}

/// Checks, right before a write, that this replica may act: the Lease manager only learns of a
/// lost Lease when it can reach the API server, so a leader cut off from it would go on acting
/// while a standby has taken over.
#[derive(Clone)]
pub(crate) enum LeaseCheck {
    /// One cluster's leader: the Lease read itself (unreadable means not leading).
    Leader { api: Box<Api<Lease>>, name: String, identity: String },
    /// A fleet member: its cluster placed on this replica, whose own Lease is fresh.
    Share { standing: Arc<Standing>, cluster: String },
}

impl LeaseCheck {
    pub(crate) fn new(client: &kube::Client, options: &LeaderOptions, namespace: &str) -> LeaseCheck {
        let namespace = options.namespace.as_deref().unwrap_or(namespace);
        LeaseCheck::Leader {
            api: Box::new(Api::namespaced(client.clone(), namespace)),
            name: options.name.clone(),
            identity: options.identity.clone(),
        }
    }

    /// Whether this replica may act now.
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    pub(crate) async fn holds(&self) -> bool {
        match self {
            LeaseCheck::Leader { api, name, identity } => match api.get_opt(name).await {
                Ok(Some(lease)) => held_by(&lease, identity, k8s_openapi::jiff::Timestamp::now()),
                _ => false,
            },
            LeaseCheck::Share { standing, cluster } => standing.holds(cluster),
        }
    }
}

/// Whether `lease` is held by `identity` at `now`: the holder, renewed less than its duration ago.
fn held_by(lease: &Lease, identity: &str, now: k8s_openapi::jiff::Timestamp) -> bool {
    let Some(spec) = &lease.spec else { return false };
    let (Some(renewed), Some(seconds)) = (&spec.renew_time, spec.lease_duration_seconds) else { return false };
    let expires = renewed.0 + std::time::Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
    spec.holder_identity.as_deref() == Some(identity) && expires > now
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

    fn lease(holder: &str, renewed: k8s_openapi::jiff::Timestamp) -> Lease {
        Lease {
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                renew_time: Some(MicroTime(renewed)),
                lease_duration_seconds: Some(15),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_standing_holds_only_its_clusters_and_only_while_fresh() {
        let standing = Standing::new(Duration::from_secs(15), Duration::from_secs(5));
        assert!(!standing.holds("a"), "before the first round");
        standing.set(Some(Instant::now()), BTreeSet::from(["a".to_string()]));
        assert!(standing.holds("a") && !standing.holds("b"));
        let stale = Instant::now().checked_sub(Duration::from_secs(11)).unwrap();
        standing.set(Some(stale), BTreeSet::from(["a".to_string()]));
        assert!(!standing.holds("a"), "not renewed for longer than the duration less a round");
        standing.set(None, BTreeSet::new());
        assert!(!standing.holds("a"));
    }

    #[test]
    fn held_only_by_its_holder_until_the_renewal_expires() {
        let now = k8s_openapi::jiff::Timestamp::now();
        let ago = |s: u64| now - std::time::Duration::from_secs(s);
        assert!(held_by(&lease("me", ago(5)), "me", now));
        assert!(!held_by(&lease("other", ago(5)), "me", now));
        assert!(!held_by(&lease("me", ago(16)), "me", now), "not renewed in time");
        assert!(!held_by(&Lease::default(), "me", now));
    }
}

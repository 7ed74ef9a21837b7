//! Several replicas sharing a fleet (`watch --clusters --leader-elect`), on one
//! coordination.k8s.io Lease per replica in the management cluster: each replica renews its own
//! Lease once a round, reads the others' to know the live replica set, and places every cluster
//! by rendezvous hashing over that set (the replica whose hash of its identity and the
//! cluster's name is highest watches it). Writes at rest are one renewal per replica per round,
//! whatever the fleet's size; a cluster moves only when the replica set changes, and then only
//! to or from the replica that joined or left.
//!
//! Hand-overs: a replica takes nothing until a round has passed since its Lease was written (the
//! others have seen it and let go of its share by then; replicas starting together have seen
//! each other);
//! a replica that dies loses its clusters once its Lease expires; a replica that cannot renew
//! its Lease watches nothing, and each member's writes stop (its [`Standing`]) before that Lease
//! can expire for the others.

use crate::inventory::Inventory;
use crate::watch::clock::Instant;
use crate::watch::lease::Standing;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams, PostParams};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const FLEET: &str = "helm-drift.io/fleet";
const ROLE: &str = "helm-drift.io/role";
const REPLICA: &str = "replica";

/// Why the fleet's Leases cannot be read or renewed (then no cluster is taken).
#[derive(Debug, thiserror::Error)]
pub(crate) enum LeaseError {
    #[error("cannot list the fleet's {role} Leases: {source}")]
    List { role: &'static str, source: kube::Error },
    #[error("cannot renew this replica's Lease {lease}")]
    Renew { lease: String },
}

/// This replica's part in the fleet.
pub(crate) struct Shard {
    api: Api<Lease>,
    /// The Leases' common name (`--lease-name`).
    prefix: String,
    pub(crate) identity: String,
    duration: Duration,
    /// How often it renews (the fleet's round).
    every: Duration,
    /// When its Lease was first written (it takes another's share only a round later).
    joined: Mutex<Option<Instant>>,
    /// Its last renewal and the live replicas it read then.
    last: Mutex<Option<(Instant, BTreeSet<String>)>>,
    pub(crate) standing: Arc<Standing>,
}

impl Shard {
    pub(crate) fn new(
        client: &kube::Client,
        namespace: &str,
        (prefix, identity): (&str, &str),
        duration: Duration,
        every: Duration,
    ) -> Shard {
        Shard {
            api: Api::namespaced(client.clone(), namespace),
            prefix: prefix.to_string(),
            identity: identity.to_string(),
            duration,
            every,
            joined: Mutex::new(None),
            last: Mutex::new(None),
            standing: Arc::new(Standing::new(duration, every)),
        }
    }

    fn own_lease(&self) -> String {
        format!("{}-replica-{}", self.prefix, short(&self.identity))
    }

    /// The fleet's replica Leases, by name, or why they cannot be listed.
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    async fn leases(&self) -> Result<BTreeMap<String, Lease>, LeaseError> {
        let selector = format!("{FLEET}={},{ROLE}={REPLICA}", label(&self.prefix));
        let list = self
            .api
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|source| LeaseError::List { role: REPLICA, source })?;
        Ok(list.items.into_iter().filter_map(|l| Some((l.metadata.name.clone()?, l))).collect())
    }

    /// Renews this replica's Lease and reads the live replica set (this one included), with
    /// whether it may take others' clusters yet; why not, when the Leases cannot be read or its
    /// own renewed (a failed read is never "no other replica": that would claim every cluster).
    async fn replicas(&self) -> Result<(BTreeSet<String>, bool), LeaseError> {
        let own = self.own_lease();
        let leases = self.leases().await?;
        if !self.renew(&own, leases.get(&own).cloned()).await {
            return Err(LeaseError::Renew { lease: own });
        }
        let now = Timestamp::now();
        let mut live: BTreeSet<String> = leases
            .iter()
            .filter(|(name, l)| **name != own && live(l, now))
            .filter_map(|(_, l)| l.spec.as_ref()?.holder_identity.clone())
            .collect();
        live.insert(self.identity.clone());
        let joined = *self.joined.lock().expect("joined lock").get_or_insert_with(Instant::now);
        // The others must have seen this replica first (also when it looks alone: replicas
        // starting together each see no other on their first round).
        Ok((live, joined.elapsed() >= self.every))
    }

    /// Narrows the inventory to the clusters placed on this replica now. `running`: those it
    /// watches, kept while it may not take others' yet. When the Leases cannot be read or its
    /// own renewed, it takes nothing new and keeps what it watches only while its Lease, as last
    /// renewed, is fresh (a passing error costs no restart); then nothing, rather than what
    /// another replica may watch. Why, when it could not.
    pub(crate) async fn narrow(&self, found: &mut Inventory, running: &BTreeSet<String>) -> Result<(), LeaseError> {
        let asked = Instant::now();
        let (replicas, settled, failed) = match self.replicas().await {
            Ok((replicas, settled)) => {
                *self.last.lock().expect("last lock") = Some((asked, replicas.clone()));
                (replicas, settled, None)
            }
            Err(why) => {
                let last = self.last.lock().expect("last lock").clone();
                match last.filter(|(at, _)| at.elapsed() < self.standing.trusted_for()) {
                    Some((_, replicas)) => (replicas, false, Some(why)),
                    None => {
                        found.members.clear();
                        self.standing.set(None, BTreeSet::new());
                        return Err(why);
                    }
                }
            }
        };
        found.members.retain(|m| {
            let mine = owner(&m.name, &replicas) == Some(self.identity.as_str());
            mine && (settled || running.contains(&m.name))
        });
        let renewed = failed.is_none().then_some(asked);
        self.standing.set(renewed, found.members.iter().map(|m| m.name.clone()).collect());
        failed.map_or(Ok(()), Err)
    }

    /// Gives this replica's Lease back: the others take its clusters at their next round.
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    pub(crate) async fn leave(&self) {
        self.standing.set(None, BTreeSet::new());
        let name = self.own_lease();
        let Ok(Some(mut lease)) = self.api.get_opt(&name).await else { return };
        let spec = lease.spec.get_or_insert_with(Default::default);
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.renew_time = None;
        let _ = self.api.replace(&name, &PostParams::default(), &lease).await;
    }

    /// Creates or renews Lease `name` (as last read: `known`); a conflict means it changed
    /// meanwhile, and the renewal is tried again next round.
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    async fn renew(&self, name: &str, known: Option<Lease>) -> bool {
        let now = Timestamp::now();
        let seconds = i32::try_from(self.duration.as_secs().max(1)).unwrap_or(i32::MAX);
        let mine = LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(seconds),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            ..Default::default()
        };
        match known {
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(name.to_string()),
                        labels: Some(BTreeMap::from([
                            (FLEET.to_string(), label(&self.prefix)),
                            (ROLE.to_string(), REPLICA.to_string()),
                        ])),
                        ..Default::default()
                    },
                    spec: Some(mine),
                };
                self.api.create(&PostParams::default(), &lease).await.is_ok()
            }
            Some(mut lease) => {
                let spec = lease.spec.get_or_insert_with(Default::default);
                if spec.holder_identity.as_deref() == Some(self.identity.as_str()) {
                    spec.renew_time = Some(MicroTime(now));
                    spec.lease_duration_seconds = Some(seconds);
                } else {
                    // Given back, or written by a process before this one under the same name.
                    *spec = mine;
                    *self.joined.lock().expect("joined lock") = Some(Instant::now());
                }
                self.api.replace(name, &PostParams::default(), &lease).await.is_ok()
            }
        }
    }
}

/// The fleet's round, and with several replicas this one's part: each renews its own Lease at
/// least three times per Lease duration, and watches the clusters placed on it.
pub(super) fn sharding(
    options: &crate::watch::options::WatchOptions,
    fleet: &crate::watch::options::FleetOptions,
    client: &kube::Client,
    home: &str,
) -> (Duration, Option<Shard>) {
    let every = options.leader.as_ref().map_or(fleet.every, |l| fleet.every.min(Duration::from_secs(l.duration) / 3));
    let shard = options.leader.as_ref().map(|l| {
        let at = l.namespace.clone().unwrap_or_else(|| home.to_string());
        Shard::new(client, &at, (&l.name, &l.identity), Duration::from_secs(l.duration), every)
    });
    (every, shard)
}

/// The replica that watches `cluster`: the one whose hash of its identity and the cluster's
/// name is highest (rendezvous hashing). A cluster moves only when its owner leaves or a
/// replica that outranks it joins.
pub(crate) fn owner<'a>(cluster: &str, replicas: &'a BTreeSet<String>) -> Option<&'a str> {
    replicas.iter().max_by_key(|r| (weight(r, cluster), r.as_str())).map(String::as_str)
}

fn weight(replica: &str, cluster: &str) -> [u8; 8] {
    let digest = Sha256::digest(format!("{replica}\n{cluster}").as_bytes());
    let mut w = [0; 8];
    w.copy_from_slice(&digest[..8]);
    w
}

/// Whether a Lease is held: a holder, renewed less than its duration ago.
fn live(lease: &Lease, now: Timestamp) -> bool {
    let Some(spec) = &lease.spec else { return false };
    let (Some(_), Some(renewed), Some(seconds)) =
        (&spec.holder_identity, &spec.renew_time, spec.lease_duration_seconds)
    else {
        return false;
    };
    renewed.0 + Duration::from_secs(u64::try_from(seconds).unwrap_or(0)) > now
}

/// A short, stable, name-safe digest of `text`.
fn short(text: &str) -> String {
    crate::digest::sha256_hex(text, 8)
}

/// A label value for `text` (at most 63 name characters).
fn label(text: &str) -> String {
    let kept: String =
        text.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).take(63).collect();
    kept.trim_matches(|c: char| !c.is_ascii_alphanumeric()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_cluster_has_one_owner_and_moves_only_with_the_replica_that_left_or_joined() {
        let clusters: Vec<String> = (0..1000).map(|i| format!("fleet/c{i}")).collect();
        let place = |replicas: &BTreeSet<String>| -> Vec<String> {
            clusters.iter().map(|c| owner(c, replicas).unwrap().to_string()).collect()
        };
        let three = set(&["r1-7", "r2-9", "r3-11"]);
        let before = place(&three);
        // Balanced enough: each of three holds about a third.
        for r in &three {
            let n = before.iter().filter(|o| *o == r).count();
            assert!((250..420).contains(&n), "{r} holds {n} of 1000");
        }
        // r2 dies: only its clusters move, spread over the others.
        let two = set(&["r1-7", "r3-11"]);
        let after = place(&two);
        for (b, a) in before.iter().zip(&after) {
            if b != "r2-9" {
                assert_eq!(a, b, "a cluster of a live replica moved");
            }
        }
        // r4 joins: a cluster moves only to it.
        let four = set(&["r1-7", "r2-9", "r3-11", "r4-2"]);
        for (b, a) in before.iter().zip(place(&four)) {
            assert!(a == *b || a == "r4-2", "{b} -> {a}");
        }
        assert_eq!(owner("x", &BTreeSet::new()), None);
        assert_eq!(owner("x", &set(&["only"])), Some("only"));
    }

    #[test]
    fn a_lease_is_live_while_renewed_within_its_duration() {
        let now = Timestamp::now();
        let lease = |holder: Option<&str>, ago: u64| Lease {
            spec: Some(LeaseSpec {
                holder_identity: holder.map(str::to_string),
                renew_time: Some(MicroTime(now - Duration::from_secs(ago))),
                lease_duration_seconds: Some(15),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(live(&lease(Some("r1"), 5), now));
        assert!(!live(&lease(Some("r1"), 16), now), "not renewed in time");
        assert!(!live(&lease(None, 1), now), "given back");
        assert_eq!(short("fleet/eu").len(), 16);
        assert_ne!(short("fleet/eu"), short("fleet/us"));
        assert_eq!(label("helm drift!"), "helmdrift");
    }
}

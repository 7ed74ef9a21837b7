//! Several replicas sharing a fleet (`watch --clusters --leader-elect`), on coordination.k8s.io
//! Leases in the management cluster: each replica keeps a Lease of its own renewed (how many
//! replicas are alive), and one Lease per workload cluster says which replica watches it. A
//! replica holds at most its fair share (the clusters divided by the live replicas, rounded
//! up), gives back what is over it, and takes clusters whose Lease nobody renewed within its
//! duration: a replica that dies loses its clusters to the others within that time.

use crate::inventory::Inventory;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ListParams, PostParams};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const FLEET: &str = "helm-drift.io/fleet";
const ROLE: &str = "helm-drift.io/role";
const CLUSTER: &str = "helm-drift.io/cluster";

/// Why the fleet's Leases cannot be read or renewed (then no cluster is taken).
#[derive(Debug, thiserror::Error)]
pub(crate) enum LeaseError {
    #[error("cannot list the fleet's {role} Leases: {source}")]
    List { role: &'static str, source: kube::Error },
    #[error("cannot renew this replica's Lease {lease}")]
    Renew { lease: String },
}

/// This replica's part in the fleet's Leases.
pub(crate) struct Shard {
    api: Api<Lease>,
    /// The Leases' common name (`--lease-name`).
    prefix: String,
    pub(crate) identity: String,
    duration: Duration,
}

impl Shard {
    pub(crate) fn new(
        client: &kube::Client,
        namespace: &str,
        prefix: &str,
        identity: &str,
        duration: Duration,
    ) -> Shard {
        Shard {
            api: Api::namespaced(client.clone(), namespace),
            prefix: prefix.to_string(),
            identity: identity.to_string(),
            duration,
        }
    }

    /// The name of cluster `cluster`'s Lease (a name any cluster name fits in).
    pub(crate) fn lease_of(&self, cluster: &str) -> String {
        format!("{}-cluster-{}", self.prefix, short(cluster))
    }

    fn own_lease(&self) -> String {
        format!("{}-replica-{}", self.prefix, short(&self.identity))
    }

    /// The fleet's Leases of `role`, by name, or why they cannot be listed.
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    async fn leases(&self, role: &'static str) -> Result<BTreeMap<String, Lease>, LeaseError> {
        let selector = format!("{FLEET}={},{ROLE}={role}", label(&self.prefix));
        let list = self
            .api
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|source| LeaseError::List { role, source })?;
        Ok(list.items.into_iter().filter_map(|l| Some((l.metadata.name.clone()?, l))).collect())
    }

    /// Renews this replica's own Lease and counts the replicas alive (this one included); why
    /// not, when the Leases cannot be read or its own renewed (a failed read is never "no other
    /// replica": that would claim every cluster).
    async fn replicas(&self) -> Result<usize, LeaseError> {
        let own = self.own_lease();
        let replicas = self.leases("replica").await?;
        if !self.hold_named(&own, replicas.get(&own).cloned(), "replica", &self.identity).await {
            return Err(LeaseError::Renew { lease: own });
        }
        let now = Timestamp::now();
        Ok(replicas.iter().filter(|(name, l)| **name != own && live(l, now)).count() + 1)
    }

    /// Narrows the inventory to the clusters this replica holds now (renewing their Leases and
    /// taking free ones up to its fair share); returns those it gives back, to release once
    /// their watchers have stopped. `running`: the clusters it watches. When the Leases cannot
    /// be read, it watches nothing rather than what another replica may, and says why.
    pub(crate) async fn narrow(
        &self,
        found: &mut Inventory,
        running: &BTreeSet<String>,
    ) -> Result<Vec<String>, LeaseError> {
        let counted = self.replicas().await;
        let read = match counted {
            Ok(replicas) => self.leases("cluster").await.map(|l| (replicas, l)),
            Err(why) => Err(why),
        };
        let (replicas, leases) = match read {
            Ok(read) => read,
            Err(why) => {
                found.members.clear();
                return Err(why);
            }
        };
        let fair = fair_share(found.members.len(), replicas);
        let names: BTreeSet<String> = found.members.iter().map(|m| m.name.clone()).collect();
        let mut held = Vec::new();
        for name in running.iter().filter(|n| names.contains(*n)) {
            let lease = self.lease_of(name);
            if self.hold_named(&lease, leases.get(&lease).cloned(), "cluster", name).await {
                held.push(name.clone());
            }
        }
        let over = if held.len() > fair { held.split_off(fair) } else { Vec::new() };
        // Each replica prefers clusters in an order of its own: replicas starting together
        // spread over the fleet instead of racing for the same Leases.
        let mut free: Vec<&String> = names.iter().filter(|n| !held.contains(n) && !over.contains(n)).collect();
        free.sort_by_key(|n| short(&format!("{}\n{n}", self.identity)));
        let now = Timestamp::now();
        for name in free {
            if held.len() >= fair {
                break;
            }
            let lease = self.lease_of(name);
            let known = leases.get(&lease).cloned();
            if known.as_ref().is_some_and(|l| live(l, now)) {
                continue;
            }
            if self.hold_named(&lease, known, "cluster", name).await {
                held.push(name.clone());
            }
        }
        found.members.retain(|m| held.contains(&m.name));
        Ok(over)
    }

    /// Gives cluster `cluster`'s Lease back (another replica may take it at once).
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    pub(crate) async fn release(&self, cluster: &str) {
        let name = self.lease_of(cluster);
        let Ok(Some(mut lease)) = self.api.get_opt(&name).await else { return };
        let spec = lease.spec.get_or_insert_with(Default::default);
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.renew_time = None;
        let _ = self.api.replace(&name, &PostParams::default(), &lease).await;
    }

    /// Takes or renews Lease `name`, as last read (`known`): optimistically, a conflict means
    /// another replica won.
    #[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
    async fn hold_named(&self, name: &str, known: Option<Lease>, role: &str, about: &str) -> bool {
        let now = Timestamp::now();
        let seconds = i32::try_from(self.duration.as_secs().max(1)).unwrap_or(i32::MAX);
        let mine = LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(seconds),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(0),
            ..Default::default()
        };
        match known {
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(name.to_string()),
                        labels: Some(BTreeMap::from([
                            (FLEET.to_string(), label(&self.prefix)),
                            (ROLE.to_string(), role.to_string()),
                        ])),
                        annotations: Some(BTreeMap::from([(CLUSTER.to_string(), about.to_string())])),
                        ..Default::default()
                    },
                    spec: Some(mine),
                };
                self.api.create(&PostParams::default(), &lease).await.is_ok()
            }
            Some(mut lease) => {
                let taken = live(&lease, now);
                let spec = lease.spec.get_or_insert_with(Default::default);
                let held = spec.holder_identity.as_deref() == Some(self.identity.as_str());
                if held {
                    spec.renew_time = Some(MicroTime(now));
                    spec.lease_duration_seconds = Some(seconds);
                } else if taken {
                    return false;
                } else {
                    let transitions = spec.lease_transitions.unwrap_or(0) + 1;
                    *spec = LeaseSpec { lease_transitions: Some(transitions), ..mine };
                }
                self.api.replace(name, &PostParams::default(), &lease).await.is_ok()
            }
        }
    }
}

/// The most clusters one replica holds: its fair share, rounded up.
pub(crate) fn fair_share(clusters: usize, replicas: usize) -> usize {
    clusters.div_ceil(replicas.max(1))
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
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
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

    #[test]
    fn each_replica_holds_at_most_its_fair_share_rounded_up() {
        assert_eq!(fair_share(4, 2), 2);
        assert_eq!(fair_share(5, 2), 3);
        assert_eq!(fair_share(4, 1), 4);
        assert_eq!(fair_share(1, 3), 1);
        assert_eq!(fair_share(0, 2), 0);
        assert_eq!(fair_share(3, 0), 3, "no replica counted: this one");
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
        let shard_name = format!("helm-drift-cluster-{}", short("fleet/eu"));
        assert_ne!(short("fleet/eu"), short("fleet/us"));
        assert_eq!(shard_name.len(), "helm-drift-cluster-".len() + 16);
        assert_eq!(label("helm drift!"), "helmdrift");
    }
}

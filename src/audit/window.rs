//! The audit events kept: successful writes to the objects of the watched releases, indexed by
//! object, bounded in time (the oldest forgotten after `max_age`) and in bytes. Over its bytes,
//! the window forgets the oldest write of the namespace that holds the most, so that whoever
//! floods writes to objects of their own namespace forgets only their own history, never
//! another team's.

use super::{AuditedWrite, Target};
use jiff::{SignedDuration, Timestamp};
use std::collections::{HashMap, VecDeque};

/// How much history a window keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WindowLimits {
    pub(crate) max_age: std::time::Duration,
    pub(crate) max_bytes: usize,
}

impl Default for WindowLimits {
    /// A day of history in 16 MiB (about 50,000 writes to watched objects).
    fn default() -> WindowLimits {
        WindowLimits { max_age: std::time::Duration::from_secs(24 * 3600), max_bytes: 16 << 20 }
    }
}

/// One namespace's kept writes (`""`: cluster-scoped objects), in the order kept.
#[derive(Debug, Default)]
struct Pool {
    order: VecDeque<(Target, usize, Timestamp)>,
    bytes: usize,
}

/// The kept writes, by object, oldest first.
#[derive(Debug)]
pub(crate) struct Window {
    limits: WindowLimits,
    by_target: HashMap<Target, VecDeque<AuditedWrite>>,
    /// Every namespace's writes (the namespaces are those of watched objects: bounded).
    pools: HashMap<String, Pool>,
    bytes: usize,
    /// Writes forgotten to stay within the bound in bytes.
    dropped: u64,
}

impl Window {
    pub(crate) fn new(limits: WindowLimits) -> Window {
        Window { limits, by_target: HashMap::new(), pools: HashMap::new(), bytes: 0, dropped: 0 }
    }

    /// Keeps a write; forgets what is older than the window or over its size.
    pub(crate) fn keep(&mut self, write: AuditedWrite, now: Timestamp) {
        let size = write.size();
        if size > self.limits.max_bytes {
            self.dropped += 1;
            return;
        }
        let pool = self.pools.entry(write.target.namespace.clone().unwrap_or_default()).or_default();
        pool.order.push_back((write.target.clone(), size, write.completed));
        pool.bytes += size;
        self.bytes += size;
        self.by_target.entry(write.target.clone()).or_default().push_back(write);
        self.forget_old(now);
    }

    /// Forgets the writes older than the window, and while over its size the oldest of the
    /// namespace holding the most.
    pub(crate) fn forget_old(&mut self, now: Timestamp) {
        let age = SignedDuration::try_from(self.limits.max_age).unwrap_or(SignedDuration::MAX);
        let oldest = now.checked_sub(age).unwrap_or(Timestamp::MIN);
        let stale: Vec<String> = (self.pools.iter())
            .filter(|(_, p)| p.order.front().is_some_and(|(_, _, at)| *at < oldest))
            .map(|(ns, _)| ns.clone())
            .collect();
        for ns in stale {
            while self.pools.get(&ns).and_then(|p| p.order.front()).is_some_and(|(_, _, at)| *at < oldest) {
                self.forget_first(&ns);
            }
        }
        while self.bytes > self.limits.max_bytes {
            let Some(largest) = self.pools.iter().max_by_key(|(_, p)| p.bytes).map(|(ns, _)| ns.clone()) else { break };
            self.forget_first(&largest);
            self.dropped += 1;
        }
    }

    /// Forgets a namespace's oldest kept write.
    fn forget_first(&mut self, namespace: &str) {
        let Some(pool) = self.pools.get_mut(namespace) else { return };
        let Some((target, size, _)) = pool.order.pop_front() else { return };
        pool.bytes -= size;
        self.bytes -= size;
        if pool.order.is_empty() {
            self.pools.remove(namespace);
        }
        if let Some(q) = self.by_target.get_mut(&target) {
            q.pop_front();
            if q.is_empty() {
                self.by_target.remove(&target);
            }
        }
    }

    /// The kept writes to one object, oldest first.
    pub(crate) fn writes(&self, target: &Target) -> impl Iterator<Item = &AuditedWrite> {
        self.by_target.get(target).into_iter().flatten()
    }

    /// How many writes are kept, and about how many bytes they hold.
    pub(crate) fn size(&self) -> (usize, usize) {
        (self.pools.values().map(|p| p.order.len()).sum(), self.bytes)
    }

    /// Writes forgotten before their time to stay within the bound in bytes.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

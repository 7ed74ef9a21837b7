//! The audit events kept: successful writes to the objects of the watched releases, indexed by
//! object, bounded in time (the oldest forgotten after `max_age`) and in bytes (the oldest
//! forgotten first), so that a flood costs a bounded memory and only forgets old history.

use super::{Target, Write};
use jiff::{SignedDuration, Timestamp};
use std::collections::{HashMap, VecDeque};

/// How much history a window keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) max_age: std::time::Duration,
    pub(crate) max_bytes: usize,
}

impl Default for Limits {
    /// A day of history in 16 MiB (about 50,000 writes to watched objects).
    fn default() -> Limits {
        Limits { max_age: std::time::Duration::from_secs(24 * 3600), max_bytes: 16 << 20 }
    }
}

/// The kept writes, by object, oldest first.
#[derive(Debug)]
pub(crate) struct Window {
    limits: Limits,
    by_target: HashMap<Target, VecDeque<Write>>,
    /// Every kept write's object and size, in the order kept (for forgetting the oldest).
    order: VecDeque<(Target, usize, Timestamp)>,
    bytes: usize,
    /// Writes forgotten to stay within the bound in bytes.
    dropped: u64,
}

impl Window {
    pub(crate) fn new(limits: Limits) -> Window {
        Window { limits, by_target: HashMap::new(), order: VecDeque::new(), bytes: 0, dropped: 0 }
    }

    /// Keeps a write; forgets what is older than the window or over its size.
    pub(crate) fn keep(&mut self, write: Write, now: Timestamp) {
        let size = write.size();
        if size > self.limits.max_bytes {
            self.dropped += 1;
            return;
        }
        self.order.push_back((write.target.clone(), size, write.completed));
        self.bytes += size;
        self.by_target.entry(write.target.clone()).or_default().push_back(write);
        self.forget_old(now);
    }

    /// Forgets the writes older than the window, and the oldest while over its size.
    pub(crate) fn forget_old(&mut self, now: Timestamp) {
        let age = SignedDuration::try_from(self.limits.max_age).unwrap_or(SignedDuration::MAX);
        let oldest = now.checked_sub(age).unwrap_or(Timestamp::MIN);
        while let Some((target, size, at)) = self.order.front().cloned() {
            let over = self.bytes > self.limits.max_bytes;
            if !over && at >= oldest {
                break;
            }
            self.dropped += u64::from(over && at >= oldest);
            self.order.pop_front();
            self.bytes -= size;
            if let Some(q) = self.by_target.get_mut(&target) {
                q.pop_front();
                if q.is_empty() {
                    self.by_target.remove(&target);
                }
            }
        }
    }

    /// The kept writes to one object, oldest first.
    pub(crate) fn writes(&self, target: &Target) -> impl Iterator<Item = &Write> {
        self.by_target.get(target).into_iter().flatten()
    }

    /// How many writes are kept, and about how many bytes they hold.
    pub(crate) fn size(&self) -> (usize, usize) {
        (self.order.len(), self.bytes)
    }

    /// Writes forgotten before their time to stay within the bound in bytes.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

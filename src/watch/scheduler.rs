//! When the watcher compares what: touched releases debounced into batches (the debounce counts
//! from when the first change was seen), the periodic resync, and releases postponed until a
//! time (a repair held back by the rate limit), and releases that could not be checked, tried
//! again after a backoff (10 s, doubled up to the resync) rather than only at the next resync.
//! One component that owns that state and spawns
//! no task, so nothing outlives the watcher that stops it; tested on paused time.

use crate::watch::clock::Instant;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::time::{Interval, MissedTickBehavior};

/// What is due.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Due {
    /// The debounce is over: take the batch ([`Scheduler::take`]) after joining what is queued.
    Batch,
    /// Time for a full check.
    Resync,
}

/// The schedule of one watcher.
pub(super) struct Scheduler<K: Ord + Clone> {
    debounce: Duration,
    resync: Interval,
    dirty: BTreeSet<K>,
    deadline: Option<Instant>,
    later: BTreeMap<Instant, BTreeSet<K>>,
    /// The releases whose last check failed: the wait before their next try, and when it is.
    failing: BTreeMap<K, (Duration, Instant)>,
    every: Duration,
}

/// The first wait before a release whose check failed is tried again.
const FIRST_RETRY: Duration = Duration::from_secs(10);

impl<K: Ord + Clone> Scheduler<K> {
    /// A schedule whose first resync is one `resync` from now.
    pub(super) fn new(debounce: Duration, resync: Duration) -> Scheduler<K> {
        let mut interval = tokio::time::interval_at(Instant::now() + resync, resync);
        interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let (dirty, later, failing) = (BTreeSet::new(), BTreeMap::new(), BTreeMap::new());
        Scheduler { debounce, resync: interval, dirty, deadline: None, later, failing, every: resync }
    }

    /// The next resync one interval from now (after the first full check).
    pub(super) fn resync_from_now(&mut self) {
        self.resync.reset();
    }

    /// Releases touched by a change seen at `seen`: due one debounce after the first change of
    /// the batch was seen.
    pub(super) fn touched(&mut self, keys: impl IntoIterator<Item = K>, seen: Instant) {
        self.dirty.extend(keys);
        if !self.dirty.is_empty() && self.deadline.is_none() {
            self.deadline = Some(seen + self.debounce);
        }
    }

    /// Releases joining the batch about to be taken (changes queued while it waited).
    pub(super) fn join(&mut self, keys: impl IntoIterator<Item = K>) {
        self.dirty.extend(keys);
    }

    /// A release to compare again at `at` (not before).
    pub(super) fn later(&mut self, key: K, at: Instant) {
        self.later.entry(at).or_default().insert(key);
    }

    /// A release whose check failed: tried again after its backoff (10 s, then twice the last
    /// wait, never more than the resync); one try waits at a time, however often it fails.
    pub(super) fn failed(&mut self, key: K) {
        let now = Instant::now();
        let wait = match self.failing.get(&key) {
            Some((_, at)) if *at > now => return,
            Some((wait, _)) => (*wait * 2).min(self.every),
            None => FIRST_RETRY.min(self.every),
        };
        self.failing.insert(key.clone(), (wait, now + wait));
        self.later(key, now + wait);
    }

    /// A release checked (or gone): its backoff starts over.
    pub(super) fn recovered(&mut self, key: &K) {
        self.failing.remove(key);
    }

    /// How many releases wait for the next batch.
    pub(super) fn pending(&self) -> usize {
        self.dirty.len()
    }

    /// The batch: every release touched since the last one.
    pub(super) fn take_batch(&mut self) -> BTreeSet<K> {
        self.deadline = None;
        std::mem::take(&mut self.dirty)
    }

    /// Waits for what is due next. Postponed releases whose time has come join the batch, which
    /// is then due at once (their wait is over, no debounce is added).
    pub(super) async fn next(&mut self) -> Due {
        loop {
            let postponed = self.later.keys().next().copied();
            let wake = match (self.deadline, postponed) {
                (Some(d), Some(p)) => Some(d.min(p)),
                (d, p) => d.or(p),
            };
            let sleep = async {
                match wake {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = self.resync.tick() => return Due::Resync,
                _ = sleep => {}
            }
            let now = Instant::now();
            let due: Vec<Instant> = self.later.range(..=now).map(|(at, _)| *at).collect();
            for at in due {
                let keys = self.later.remove(&at).unwrap_or_default();
                self.dirty.extend(keys);
                self.deadline = Some(self.deadline.map_or(now, |d| d.min(now)));
            }
            if self.deadline.is_some_and(|d| d <= now) {
                return Due::Batch;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    /// What is due within `within`, and when (from the start of the test).
    async fn due_within(s: &mut Scheduler<&'static str>, within: Duration) -> Option<(Due, Duration)> {
        let start = Instant::now();
        tokio::time::timeout(within, s.next()).await.ok().map(|d| (d, start.elapsed()))
    }

    #[tokio::test(start_paused = true)]
    async fn touches_are_debounced_from_the_first_change_seen() {
        let mut s = Scheduler::new(SECOND, Duration::from_secs(3600));
        let start = Instant::now();
        s.touched(["a"], start);
        tokio::time::advance(Duration::from_millis(600)).await;
        s.touched(["b", "a"], Instant::now());
        let (due, _) = due_within(&mut s, SECOND).await.expect("due");
        assert_eq!(due, Due::Batch);
        assert_eq!(start.elapsed(), SECOND, "one debounce after the first change, not the last");
        s.join(["c"]);
        assert_eq!(s.take_batch().into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(s.pending(), 0);
        assert!(due_within(&mut s, Duration::from_secs(60)).await.is_none(), "nothing touched, nothing due");
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_seen_before_a_long_batch_is_not_made_to_wait_again() {
        let mut s = Scheduler::new(SECOND, Duration::from_secs(3600));
        let seen = Instant::now();
        tokio::time::advance(Duration::from_secs(5)).await;
        s.touched(["a"], seen);
        let (due, waited) = due_within(&mut s, SECOND).await.expect("due");
        assert_eq!((due, waited), (Due::Batch, Duration::ZERO));
    }

    #[tokio::test(start_paused = true)]
    async fn resyncs_come_on_their_interval() {
        let mut s: Scheduler<&'static str> = Scheduler::new(SECOND, Duration::from_secs(30));
        let (due, waited) = due_within(&mut s, Duration::from_secs(31)).await.expect("due");
        assert_eq!((due, waited), (Due::Resync, Duration::from_secs(30)));
        let (due, waited) = due_within(&mut s, Duration::from_secs(31)).await.expect("due");
        assert_eq!((due, waited), (Due::Resync, Duration::from_secs(30)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_postponed_release_is_due_at_its_time_and_no_earlier() {
        let mut s = Scheduler::new(SECOND, Duration::from_secs(3600));
        let start = Instant::now();
        s.later("a", start + Duration::from_secs(10));
        s.later("b", start + Duration::from_secs(20));
        let (due, _) = due_within(&mut s, Duration::from_secs(11)).await.expect("due");
        assert_eq!((due, start.elapsed()), (Due::Batch, Duration::from_secs(10)));
        assert_eq!(s.take_batch().into_iter().collect::<Vec<_>>(), ["a"]);
        let (due, _) = due_within(&mut s, Duration::from_secs(11)).await.expect("due");
        assert_eq!((due, start.elapsed()), (Due::Batch, Duration::from_secs(20)));
        assert_eq!(s.take_batch().into_iter().collect::<Vec<_>>(), ["b"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failing_release_is_tried_again_after_a_growing_wait() {
        let mut s = Scheduler::new(SECOND, Duration::from_secs(60));
        let mut waits = Vec::new();
        for _ in 0..3 {
            let start = Instant::now();
            s.failed("a");
            s.failed("a");
            let (due, _) = due_within(&mut s, Duration::from_secs(59)).await.expect("due");
            assert_eq!(due, Due::Batch);
            assert_eq!(s.take_batch().into_iter().collect::<Vec<_>>(), ["a"], "one try, however often it failed");
            waits.push(start.elapsed().as_secs());
            s.resync_from_now();
        }
        assert_eq!(waits, [10, 20, 40], "doubled");
        s.failed("a");
        assert_eq!(s.failing["a"].0, Duration::from_secs(60), "never past the resync");
        s.take_batch();
        s.recovered(&"a");
        let start = Instant::now();
        s.failed("a");
        s.resync_from_now();
        due_within(&mut s, Duration::from_secs(59)).await.expect("due");
        assert_eq!(start.elapsed(), Duration::from_secs(10), "checked once: the backoff starts over");
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_scheduler_drops_what_it_postponed() {
        let mut s = Scheduler::new(SECOND, Duration::from_secs(3600));
        s.later("a", Instant::now() + Duration::from_secs(10));
        drop(s);
        // Nothing was spawned: there is no task left to wake (the runtime would have one).
        let metrics = tokio::runtime::Handle::current().metrics();
        assert_eq!(metrics.num_alive_tasks(), 0);
    }
}

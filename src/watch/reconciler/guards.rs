//! The admission guards the watcher reports beside each release (`helm drift guard`, the
//! chart's), read again at each full check and between them at most every [`GUARDS_EVERY`] (a
//! storm of edits must not add a LIST per batch). Not readable (no `list` right on
//! ValidatingAdmissionPolicies, an API server without them): said once, then unknown.

use crate::guard::GuardInfo;
use crate::watch::clock::Instant;
use crate::watch::outputs::log::Log;
use std::time::Duration;

/// How often the admission guards are read again between full checks.
const GUARDS_EVERY: Duration = Duration::from_secs(10);

#[derive(Default)]
pub(super) struct GuardCache {
    /// The guards written; `None` while they cannot be read.
    known: Option<Vec<GuardInfo>>,
    /// Whether the last read failed (said once in the log).
    unreadable: bool,
    /// When they were last read.
    read: Option<Instant>,
}

impl GuardCache {
    /// Read again before the next comparisons (each full check).
    pub(super) fn expire(&mut self) {
        self.read = None;
    }

    fn stale(&self, now: Instant) -> bool {
        self.read.is_none_or(|at| now.duration_since(at) >= GUARDS_EVERY)
    }

    /// Reads the guards again (one LIST) when they are stale.
    pub(super) async fn refresh(&mut self, client: &kube::Client, log: Log) {
        let now = Instant::now();
        if !self.stale(now) {
            return;
        }
        let read = crate::live::admission::guards(client, crate::guard::LABEL).await;
        if let Some(e) = self.record_read(read.map(|g| GuardInfo::all(&g)), now) {
            log.info("the admission guards cannot be read: no guard is reported", &[("error", &e)]);
        }
    }

    /// Takes in a read; the error to say, the first time in a row it fails.
    fn record_read<E>(&mut self, read: Result<Vec<GuardInfo>, E>, now: Instant) -> Option<E> {
        self.read = Some(now);
        match read {
            Ok(g) => {
                self.known = Some(g);
                self.unreadable = false;
                None
            }
            Err(e) => {
                let news = !self.unreadable;
                self.unreadable = true;
                self.known = None;
                news.then_some(e)
            }
        }
    }

    /// The mode of the strongest guard covering a release, if any.
    pub(super) fn covering(&self, namespace: &str, release: &str) -> Option<String> {
        self.known.as_deref().and_then(|g| crate::guard::covering(g, namespace, release))
    }

    /// What the metric says of a release's guard: its mode, `none`, or nothing while the guards
    /// cannot be read (rather than a `none` that would not be true).
    pub(super) fn metric<'g>(&self, guard: Option<&'g str>) -> Option<&'g str> {
        self.known.as_ref().map(|_| guard.unwrap_or("none"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(mode: &str, releases: &str) -> GuardInfo {
        GuardInfo {
            name: "g".into(),
            mode: mode.into(),
            namespace: "apps".into(),
            releases: releases.into(),
            kinds: None,
        }
    }

    #[test]
    fn read_at_each_full_check_and_between_them_at_most_every_ten_seconds() {
        let (mut cache, t0) = (GuardCache::default(), Instant::now());
        assert!(cache.stale(t0), "never read");
        cache.record_read::<&str>(Ok(Vec::new()), t0);
        assert!(!cache.stale(t0 + Duration::from_secs(9)));
        assert!(cache.stale(t0 + GUARDS_EVERY));
        cache.expire();
        assert!(cache.stale(t0 + Duration::from_secs(1)), "a full check reads them again");
    }

    #[test]
    fn unreadable_guards_are_said_once_and_reported_as_unknown_not_none() {
        let (mut cache, t0) = (GuardCache::default(), Instant::now());
        cache.record_read::<&str>(Ok(vec![guard("warn", "web"), guard("deny", "*")]), t0);
        assert_eq!(cache.covering("apps", "web").as_deref(), Some("deny"), "the strongest");
        assert_eq!(cache.metric(None), Some("none"));
        assert_eq!(cache.record_read(Err("forbidden"), t0), Some("forbidden"));
        assert_eq!(cache.record_read(Err("forbidden"), t0), None, "said once");
        assert_eq!((cache.covering("apps", "web"), cache.metric(None)), (None, None));
        cache.record_read::<&str>(Ok(Vec::new()), t0);
        assert_eq!(cache.record_read(Err("gone"), t0), Some("gone"), "news again after a good read");
    }
}

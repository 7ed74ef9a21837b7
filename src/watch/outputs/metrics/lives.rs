//! The series of drifts' lives (how long they live, the oldest still open) and of the audit
//! window that names their makers.

use super::Metrics;
use super::families::ENDINGS;
use super::labels::{Word, release_labels};

impl Metrics {
    /// A drift of the release ended after living `seconds`, ended by `how`.
    pub(crate) fn drift_ended(&self, how: &str, seconds: f64) {
        self.families.drift_lived.get_or_create(&self.key(Word(how.into()))).observe(seconds.max(0.0));
    }

    /// When the release's oldest open drift appeared; none open: no series.
    pub(crate) fn oldest_drift(&self, namespace: &str, release: &str, at: Option<jiff::Timestamp>) {
        let key = self.key(release_labels(namespace, release));
        match at {
            Some(t) => {
                self.families.oldest_drift.get_or_create(&key).set(t.as_millisecond() as f64 / 1000.0);
            }
            None => {
                self.families.oldest_drift.remove(&key);
            }
        }
    }

    /// The audit events kept, their bytes, and those forgotten early to stay within the bound.
    pub(crate) fn audit_window(&self, (events, bytes, dropped): (usize, usize, u64)) {
        let f = &self.families.audit_kept;
        f.get_or_create(&Word("events".into())).set(events as i64);
        f.get_or_create(&Word("bytes".into())).set(bytes as i64);
        f.get_or_create(&Word("forgotten-events".into())).set(dropped as i64);
    }

    /// A fleet member gone: its lifetimes with it.
    pub(super) fn forget_lives(&self) {
        for how in ENDINGS {
            self.families.drift_lived.remove(&self.key(Word(how.into())));
        }
    }

    /// Every ending starts at 0 (a dashboard's rate sees the first).
    pub(super) fn seed_lives(&self) {
        for how in ENDINGS {
            let _ = self.families.drift_lived.get_or_create(&self.key(Word(how.into())));
        }
    }
}

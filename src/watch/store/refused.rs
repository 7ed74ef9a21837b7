//! What the watcher refuses to look at, and says so once: release records that are not what
//! they claim (bad records) and releases past a namespace's bound or the watcher's total. Each is counted in
//! `helm_drift_rejected_inputs_total{input="record"}` when it is first refused, logged once,
//! never judged, never an Event; it is refused again only after it was let go.

use crate::release::ReleaseIndex;
use crate::watch::keys::ReleaseKey;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The refusals in force.
#[derive(Debug, Default)]
pub(crate) struct RefusedReleases {
    /// Releases whose record was refused, with the record's revision.
    records: HashMap<ReleaseKey, u32>,
    /// Releases past their namespace's bound (or their share of the total).
    crowded: HashSet<ReleaseKey>,
}

/// Releases left out by [`RefusedReleases::bound`], by namespace: how many, and the first few names.
pub(crate) type Crowded = BTreeMap<String, (usize, Vec<String>)>;

impl RefusedReleases {
    /// Whether a bad record of `key` at `revision` is news (not refused before).
    pub(crate) fn record(&mut self, key: &ReleaseKey, revision: u32) -> bool {
        self.records.insert(key.clone(), revision) != Some(revision)
    }

    /// A release judged (or gone): its record is no longer refused.
    pub(crate) fn clear(&mut self, key: &ReleaseKey) {
        self.records.remove(key);
    }

    /// Whether `key` is left out for its namespace's bound.
    pub(crate) fn is_crowded(&self, key: &ReleaseKey) -> bool {
        self.crowded.contains(key)
    }

    /// Keeps at most `max` releases of each namespace (the first by name, as listed), and at
    /// most `total` in all, shared evenly (no namespace keeps more than any other that was cut),
    /// and returns the namespaces where releases were newly left out.
    pub(crate) fn bound(&mut self, found: &mut Vec<ReleaseIndex>, max: usize, total: usize) -> Crowded {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for i in found.iter() {
            *counts.entry(i.namespace.as_str()).or_default() += 1;
        }
        let level = even_share(counts.values().map(|&c| c.min(max)), max, total);
        let mut per: HashMap<String, usize> = HashMap::new();
        let mut left_out = HashSet::new();
        found.retain(|i| {
            let n = per.entry(i.namespace.clone()).or_default();
            *n += 1;
            let keep = *n <= level;
            if !keep {
                left_out.insert(ReleaseKey::new(&i.namespace, &i.name));
            }
            keep
        });
        let mut news = Crowded::new();
        for key in left_out.iter().filter(|k| !self.crowded.contains(*k)) {
            let (count, names) = news.entry(key.namespace.clone()).or_default();
            *count += 1;
            names.push(key.name.clone());
        }
        for (_, names) in news.values_mut() {
            names.sort();
            names.truncate(5);
        }
        self.crowded = left_out;
        news
    }
}

/// The most releases each namespace keeps (at most `max`) so that all of them (`counts`) keep
/// at most `total`: the highest level that fits.
fn even_share(counts: impl Iterator<Item = usize> + Clone, max: usize, total: usize) -> usize {
    let kept = |level: usize| counts.clone().map(|c| c.min(level)).sum::<usize>();
    let (mut low, mut high) = (0, max);
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if kept(mid) <= total { low = mid } else { high = mid - 1 }
    }
    low
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(ns: &str, name: &str) -> ReleaseIndex {
        ReleaseIndex { namespace: ns.into(), name: name.into(), records: Vec::new() }
    }

    #[test]
    fn a_namespace_keeps_its_first_releases_and_the_rest_are_said_once() {
        let mut r = RefusedReleases::default();
        let all = || vec![index("a", "1"), index("a", "2"), index("a", "3"), index("b", "1")];
        let mut found = all();
        let news = r.bound(&mut found, 2, 100);
        assert_eq!(found.len(), 3);
        assert_eq!(news.get("a"), Some(&(1, vec!["3".to_string()])));
        assert!(r.is_crowded(&ReleaseKey::new("a", "3")));
        let mut again = all();
        assert!(r.bound(&mut again, 2, 100).is_empty(), "said once");
        let mut fewer = vec![index("a", "1"), index("a", "3")];
        r.bound(&mut fewer, 2, 100);
        assert!(!r.is_crowded(&ReleaseKey::new("a", "3")), "let go when it fits");
    }

    /// Many namespaces of many releases cannot make the watcher hold more than its total: each
    /// namespace keeps an even share, a small one all of its releases.
    #[test]
    fn all_namespaces_together_keep_at_most_the_total_shared_evenly() {
        let mut r = RefusedReleases::default();
        let mut found: Vec<ReleaseIndex> = (0..50)
            .flat_map(|ns| (0..40).map(move |n| index(&format!("t{ns:02}"), &format!("r{n:02}"))))
            .chain([index("small", "a")])
            .collect();
        let news = r.bound(&mut found, 30, 500);
        assert!(found.len() <= 500 && found.len() > 450, "{}", found.len());
        assert!(found.iter().any(|i| i.namespace == "small"), "a small namespace keeps its release");
        let t00 = found.iter().filter(|i| i.namespace == "t00").count();
        assert!(
            found
                .iter()
                .all(|i| i.namespace == "small" || found.iter().filter(|j| j.namespace == i.namespace).count() == t00)
        );
        assert_eq!(news.len(), 50, "every crowded namespace said");
        assert_eq!(even_share([3, 10].into_iter(), 5, 7), 4);
        assert_eq!(even_share([3, 10].into_iter(), 5, 100), 5);
        assert_eq!(even_share([3, 10].into_iter(), 5, 0), 0);
    }

    #[test]
    fn a_bad_record_is_news_once_per_revision() {
        let mut r = RefusedReleases::default();
        let key = ReleaseKey::new("t", "web");
        assert!(r.record(&key, 7));
        assert!(!r.record(&key, 7));
        assert!(r.record(&key, 8));
        r.clear(&key);
        assert!(r.record(&key, 8));
    }
}

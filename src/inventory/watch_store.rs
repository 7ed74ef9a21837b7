//! One watch of the inventory as kept: its objects by namespace and name, replaced whole by each
//! (re-)list, and whether it has listed once.

use kube::runtime::watcher::Event;
use std::collections::BTreeMap;

/// A namespace and a name.
pub(super) type Named = (String, String);

/// Why the inventory cannot be told yet: a watch has not listed its objects once.
#[derive(Debug, thiserror::Error)]
#[error("the inventory's {watch} have not been listed yet{}", last.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
pub(crate) struct NotListed {
    watch: &'static str,
    last: Option<String>,
}

impl NotListed {
    /// Whether the watch has failed (else it is only still listing).
    pub(crate) fn failing(&self) -> bool {
        self.last.is_some()
    }
}

/// One watch's objects as kept, replaced whole by each (re-)list.
pub(super) struct WatchStore<T> {
    pub(super) live: BTreeMap<Named, T>,
    listing: Option<BTreeMap<Named, T>>,
    /// Listed at least once.
    listed: bool,
    /// The last error of the watch, while it has not listed.
    pub(super) last: Option<String>,
}

impl<T> Default for WatchStore<T> {
    fn default() -> Self {
        WatchStore { live: BTreeMap::new(), listing: None, listed: false, last: None }
    }
}

impl<T: PartialEq> WatchStore<T> {
    /// Takes one event of the watch (each object as kept, with its key); whether what is kept
    /// changed.
    pub(super) fn take(&mut self, event: Event<Option<(Named, T)>>) -> bool {
        match event {
            Event::Init => {
                self.listing = Some(BTreeMap::new());
                false
            }
            Event::InitApply(Some((k, v))) => {
                self.listing.get_or_insert_with(BTreeMap::new).insert(k, v);
                false
            }
            Event::InitDone => {
                let listed = self.listing.take().unwrap_or_default();
                let changed = !self.listed || listed != self.live;
                (self.live, self.listed, self.last) = (listed, true, None);
                changed
            }
            Event::Apply(Some((k, v))) => {
                let changed = self.live.get(&k) != Some(&v);
                self.live.insert(k, v);
                changed
            }
            Event::Delete(Some((k, _))) => self.live.remove(&k).is_some(),
            Event::InitApply(None) | Event::Apply(None) | Event::Delete(None) => false,
        }
    }

    /// The kind is not served (no CAAPH, say): none of it, listed.
    pub(super) fn absent(&mut self) -> bool {
        let changed = !self.listed || !self.live.is_empty();
        (self.live, self.listing, self.listed, self.last) = (BTreeMap::new(), None, true, None);
        changed
    }

    pub(super) fn listed(&self, watch: &'static str) -> Result<(), NotListed> {
        match self.listed {
            true => Ok(()),
            false => Err(NotListed { watch, last: self.last.clone() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: &str) -> Named {
        ("ns".into(), n.into())
    }

    #[test]
    fn a_store_tells_only_what_changed_and_a_relist_replaces_it_whole() {
        let mut s: WatchStore<u32> = WatchStore::default();
        assert!(s.listed("x").is_err(), "not listed yet");
        assert!(!s.take(Event::Init));
        assert!(!s.take(Event::InitApply(Some((key("a"), 1)))));
        assert!(s.take(Event::InitDone), "the first list is news");
        assert!(s.listed("x").is_ok());
        assert!(!s.take(Event::Apply(Some((key("a"), 1)))), "the same again");
        assert!(s.take(Event::Apply(Some((key("a"), 2)))));
        assert!(s.take(Event::Apply(Some((key("b"), 1)))));
        assert!(!s.take(Event::Apply(None)), "left out");
        // A re-list that finds the same is no change; one missing b removes it.
        for (events, changed) in [(vec![("a", 2), ("b", 1)], false), (vec![("a", 2)], true)] {
            s.take(Event::Init);
            for (n, v) in events {
                s.take(Event::InitApply(Some((key(n), v))));
            }
            assert_eq!(s.take(Event::InitDone), changed);
        }
        assert!(s.take(Event::Delete(Some((key("a"), 0)))));
        assert!(!s.take(Event::Delete(Some((key("a"), 0)))));
        assert!(s.live.is_empty());
        let mut absent: WatchStore<u32> = WatchStore::default();
        assert!(absent.absent() && absent.listed("x").is_ok() && !absent.absent());
    }
}

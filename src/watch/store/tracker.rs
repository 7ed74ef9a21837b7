//! What the watcher has reported: the drift signature of each object, and the transitions a new
//! verdict makes (a new drift signature is detected, a reported one is resolved). Seeded at start
//! from the Events earlier watchers recorded, so a restart repeats nothing.

use super::signature::Signer;
use crate::model::{DriftReport, ObjectDrift, ObjectId};
use crate::watch::keys::{ReleaseKey, ReleaseObject};
use std::collections::HashMap;

/// A change worth an Event and a notification.
#[derive(Clone, Debug)]
pub(crate) enum Transition {
    /// The object drifted with a signature not reported before.
    Detected { object: Box<ObjectDrift>, signature: String },
    /// The object no longer drifts; `signature` is the drift that was reported.
    Resolved { object: ObjectId, signature: String },
}

pub(crate) struct Tracker {
    /// Reported signature of each object of each release (an object two records claim is
    /// tracked for each: one's verdict never resolves the other's drift).
    reported: HashMap<ReleaseObject, String>,
    /// Signatures earlier watchers reported (from their Events), not yet matched to a verdict.
    seeds: HashMap<ReleaseObject, String>,
    signer: Signer,
}

impl Tracker {
    /// Starts from what earlier watchers reported and never resolved.
    pub(crate) fn seeded(seeds: HashMap<ReleaseObject, String>, signer: Signer) -> Tracker {
        Tracker { reported: HashMap::new(), seeds, signer }
    }

    /// The signer of this watcher's signatures.
    pub(crate) fn signer(&self) -> &Signer {
        &self.signer
    }

    /// The transitions a release's new verdicts make, remembered as reported.
    pub(crate) fn update(&mut self, report: &DriftReport) -> Vec<Transition> {
        let release: ReleaseKey = ReleaseKey::of(report);
        let mut out = Vec::new();
        for object in &report.objects {
            if object.is_error() {
                continue; // an error says nothing about drift: keep what was reported
            }
            let key = (release.clone(), object.id.clone());
            let before = match self.reported.get(&key) {
                Some(sig) => Some(sig.clone()),
                None => self.seeds.remove(&key),
            };
            match (self.signer.of(&release, object), before) {
                (Some(now), before) if before.as_deref() != Some(now.as_str()) => {
                    self.reported.insert(key, now.clone());
                    out.push(Transition::Detected { object: Box::new(object.clone()), signature: now });
                }
                (Some(now), _) => {
                    self.reported.insert(key, now);
                }
                (None, Some(was)) => {
                    self.reported.remove(&key);
                    out.push(Transition::Resolved { object: object.id.clone(), signature: was });
                }
                (None, None) => {}
            }
        }
        // Objects the new revision no longer has: their drift is over.
        let gone: Vec<ReleaseObject> = self
            .reported
            .keys()
            .filter(|(r, id)| *r == release && !report.objects.iter().any(|o| &o.id == id))
            .cloned()
            .collect();
        for key in gone {
            if let Some(signature) = self.reported.remove(&key) {
                out.push(Transition::Resolved { object: key.1, signature });
            }
        }
        out
    }

    /// After the first full check: the seeds of releases not watched can never match, and are
    /// dropped (Events read at start hold nothing past it but what may still match).
    pub(crate) fn settle(&mut self, watched: impl Fn(&ReleaseKey) -> bool) {
        self.seeds.retain(|(release, _), _| watched(release));
        self.seeds.shrink_to_fit();
    }

    /// Forgets a release (uninstalled): no transitions, its objects are gone with it.
    pub(crate) fn forget(&mut self, release: &ReleaseKey) {
        self.reported.retain(|(r, _), _| r != release);
    }

    /// The signature reported for an object of a release.
    #[cfg(test)]
    pub(crate) fn reported(&self, release: &ReleaseKey, id: &ObjectId) -> Option<&str> {
        self.reported.get(&(release.clone(), id.clone())).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, Verdict};
    use serde_json::json;

    fn signer() -> Signer {
        Signer::new(&[7; 32])
    }

    fn id() -> ObjectId {
        ObjectId::new("apps/v1", "Deployment", Some("ns"), "web")
    }

    fn report(replicas: Option<i64>) -> DriftReport {
        let mut o = ObjectDrift::new(id(), None, Verdict::InSync);
        if let Some(r) = replicas {
            o.verdict = Verdict::Modified;
            o.fields.push(FieldDiff::new(crate::testing::path("/spec/replicas"), Some(&json!(1)), Some(&json!(r))));
        }
        crate::testing::report("ns", "web", vec![o])
    }

    fn kinds(t: &[Transition]) -> Vec<&'static str> {
        t.iter().map(|t| if matches!(t, Transition::Detected { .. }) { "detected" } else { "resolved" }).collect()
    }

    #[test]
    fn once_per_signature_then_resolved() {
        let mut t = Tracker::seeded(HashMap::new(), signer());
        assert_eq!(kinds(&t.update(&report(Some(3)))), ["detected"]);
        assert!(t.update(&report(Some(3))).is_empty(), "a resync repeats nothing");
        assert_eq!(kinds(&t.update(&report(Some(4)))), ["detected"], "another value is another drift");
        assert_eq!(kinds(&t.update(&report(None))), ["resolved"]);
        assert!(t.update(&report(None)).is_empty());
    }

    #[test]
    fn seeds_of_releases_not_watched_are_dropped_after_the_first_check() {
        let web = ReleaseKey::new("ns", "web");
        let other = ReleaseKey::new("ns", "gone");
        let sig = "ab".repeat(32);
        let seeds = HashMap::from([((web.clone(), id()), sig.clone()), ((other.clone(), id()), sig)]);
        let mut t = Tracker::seeded(seeds, signer());
        t.settle(|r| *r == web);
        assert_eq!(t.seeds.len(), 1);
        assert!(t.seeds.contains_key(&(web, id())));
    }

    #[test]
    fn a_restart_seeded_from_events_repeats_nothing_and_still_resolves() {
        let mut first = Tracker::seeded(HashMap::new(), signer());
        first.update(&report(Some(3)));
        let web = ReleaseKey::new("ns", "web");
        let sig = first.reported(&web, &id()).unwrap().to_string();
        let mut again = Tracker::seeded(HashMap::from([((web.clone(), id()), sig.clone())]), signer());
        assert!(again.update(&report(Some(3))).is_empty());
        let mut resolved = Tracker::seeded(HashMap::from([((web, id()), sig)]), signer());
        assert_eq!(kinds(&resolved.update(&report(None))), ["resolved"]);
    }

    #[test]
    fn an_object_two_releases_claim_does_not_flap() {
        let mut t = Tracker::seeded(HashMap::new(), signer());
        let mut thief = report(Some(3));
        thief.release = "thief".into();
        assert_eq!(kinds(&t.update(&thief)), ["detected"]);
        for _ in 0..3 {
            assert!(t.update(&report(None)).is_empty(), "web's verdict does not resolve thief's drift");
            assert!(t.update(&thief).is_empty(), "nor does thief's drift come back as news");
        }
    }

    #[test]
    fn an_object_dropped_by_a_new_revision_is_resolved() {
        let mut t = Tracker::seeded(HashMap::new(), signer());
        t.update(&report(Some(3)));
        let mut next = report(None);
        next.objects.clear();
        assert_eq!(kinds(&t.update(&next)), ["resolved"]);
    }
}

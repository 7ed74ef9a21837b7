//! Self-healing policy (`watch --repair`): which drifted objects of an opted-in release to repair
//! now, a rate limit per release, and fight detection: an object that drifts again soon after
//! each of K repairs is abandoned (something insists) until it is in sync again.

use crate::model::{DriftReport, ObjectDrift, ObjectId};
use crate::release::ReleaseIndex;
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;
// The runtime's clock, the scheduler's: a cooldown hands its moment over as is (and tests
// pause it).
use crate::watch::clock::Instant;

/// How self-healing behaves.
#[derive(Clone, Debug)]
pub(crate) struct HealPolicy {
    /// At least this long between two repairs of one release.
    pub(crate) cooldown: Duration,
    /// Repairs of one object within `fight_window` after which a new drift abandons it (not a
    /// repair window: those are [`super::window`]'s).
    pub(crate) fight_limit: usize,
    pub(crate) fight_window: Duration,
}

/// What to do about a release now.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Decision {
    /// Objects to repair (each by its full identity: never its namesake in another namespace).
    pub(super) repair: Vec<ObjectId>,
    /// Rate limited: look again at this time.
    pub(super) later: Option<Instant>,
    /// Objects abandoned now, with the field manager that keeps changing them.
    pub(super) abandoned: Vec<(ObjectId, String)>,
}

/// What healing remembers of one release's repairs: the last (for the rate limit), its own
/// least time between two (a HelmChartProxy's say), and each object's recent repairs and
/// whether it was abandoned (the fights). Part of the release's one entry ([`super::Healed`]).
#[derive(Debug, Default)]
pub(super) struct Memory {
    last: Option<Instant>,
    cooldown: Option<Duration>,
    repairs: HashMap<ObjectId, VecDeque<Instant>>,
    abandoned: HashSet<ObjectId>,
}

impl Memory {
    /// Nothing to remember.
    pub(super) fn is_empty(&self) -> bool {
        self.last.is_none() && self.cooldown.is_none() && self.repairs.is_empty() && self.abandoned.is_empty()
    }

    /// The release's own least time between two repairs (`None`: the policy's).
    pub(super) fn cooldown(&mut self, cooldown: Option<Duration>) {
        self.cooldown = cooldown;
    }

    /// Takes in the release's latest verdicts, in sync or not: an object seen in sync after it
    /// was abandoned is repaired again when it drifts later, and its earlier repairs no longer
    /// count (an object in sync right after its repair keeps them: that is how a fight looks).
    pub(super) fn observe(&mut self, report: &DriftReport) {
        for o in report.objects.iter().filter(|o| !o.is_drift() && !o.is_error()) {
            if self.abandoned.remove(&o.id) {
                self.repairs.remove(&o.id);
            }
        }
    }

    /// Remembers the objects a decision abandoned: not repaired until seen in sync.
    pub(super) fn abandon(&mut self, abandoned: &[(ObjectId, String)]) {
        self.abandoned.extend(abandoned.iter().map(|(id, _)| id.clone()));
    }

    /// Remembers a repair attempt (for the rate limit) and the objects it changed (for fight
    /// detection: a refused or failed repair changed nothing, so nothing fought it).
    pub(super) fn repaired(&mut self, policy: &HealPolicy, applied: &[ObjectId], now: Instant) {
        self.last = Some(now);
        let window = policy.fight_window;
        for id in applied {
            let recent = self.repairs.entry(id.clone()).or_default();
            recent.retain(|t| now.duration_since(*t) < window);
            recent.push_back(now);
        }
    }
}

/// What decides for each drifted release, from the policy and the release's [`Memory`].
pub(super) struct Decider {
    pub(super) policy: HealPolicy,
}

impl Decider {
    pub(super) fn new(policy: HealPolicy) -> Decider {
        Decider { policy }
    }

    /// Which drifted objects the rate limit and the fight rules leave to repair now, and which
    /// they abandon now (to be said, then remembered by [`Memory::abandon`]).
    pub(super) fn decide(&self, memory: &Memory, report: &DriftReport, now: Instant) -> Decision {
        let mut d = Decision::default();
        // Hook objects carry no ownership metadata (Helm adds none to hooks): nothing in the
        // cluster says they are the release's, so only a person heals them (`repair --hooks`).
        for o in report.objects.iter().filter(|o| o.is_drift() && o.hook.is_none()) {
            if memory.abandoned.contains(&o.id) {
                continue;
            }
            let recent = memory.repairs.get(&o.id).map_or(0, |r| self.within_window(r, now).count());
            if recent >= self.policy.fight_limit {
                d.abandoned.push((o.id.clone(), other_manager(o)));
                continue;
            }
            // That object alone, never its namesake in another namespace of the release.
            d.repair.push(o.id.clone());
        }
        if !d.repair.is_empty()
            && let Some(at) =
                memory.last.map(|t| t + memory.cooldown.unwrap_or(self.policy.cooldown)).filter(|at| *at > now)
        {
            d.repair.clear();
            d.later = Some(at);
        }
        d
    }

    fn within_window<'a>(&self, repairs: &'a VecDeque<Instant>, now: Instant) -> impl Iterator<Item = &'a Instant> {
        let window = self.policy.fight_window;
        repairs.iter().filter(move |t| now.duration_since(**t) < window)
    }
}

/// How a release's history moved on since it was judged at revision `judged`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Superseded {
    /// Helm is in the middle of an operation: the newest record is pending.
    InProgress { revision: u32, status: String },
    /// Another revision is deployed now (`None`: none is).
    Deployed { judged: u32, now: Option<u32> },
}

impl std::fmt::Display for Superseded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Superseded::InProgress { revision, status } => {
                write!(f, "revision {revision} is {status}: Helm is changing the release")
            }
            Superseded::Deployed { judged, now: Some(now) } => {
                write!(f, "revision {judged} was judged, revision {now} is deployed now")
            }
            Superseded::Deployed { judged, now: None } => {
                write!(f, "revision {judged} was judged, no revision is deployed now")
            }
        }
    }
}

/// Why a release judged at revision `judged` must not be repaired now, from its history read
/// again right before: Helm is in the middle of an operation (the newest record is pending), or
/// the deployed revision is no longer the one judged. Repairing then would undo an upgrade.
pub(super) fn superseded(fresh: &ReleaseIndex, judged: u32) -> Option<Superseded> {
    if let Some(newest) = fresh.newest()
        && fresh.in_progress()
    {
        return Some(Superseded::InProgress { revision: newest.revision, status: newest.status.to_string() });
    }
    match fresh.deployed() {
        Some(r) if r.revision == judged => None,
        now => Some(Superseded::Deployed { judged, now: now.map(|r| r.revision) }),
    }
}

/// The field manager that made the drift, as managedFields tell it.
fn other_manager(o: &ObjectDrift) -> String {
    o.changed_by()
        .map(|a| a.manager.clone())
        .next()
        .or_else(|| o.added.first().map(|a| a.manager.clone()))
        .or_else(|| o.disowned.first().map(|d| d.manager.clone()))
        .unwrap_or_else(|| "(unknown: not recorded in managedFields)".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Attribution, FieldDiff, Verdict};
    use crate::watch::keys::ReleaseKey;
    use serde_json::json;

    /// A release's decider and memory, as healing holds them.
    struct Heal {
        d: Decider,
        m: Memory,
    }

    impl Heal {
        fn new(policy: HealPolicy) -> Heal {
            Heal { d: Decider::new(policy), m: Memory::default() }
        }
        fn decide(&self, r: &DriftReport, now: Instant) -> Decision {
            self.d.decide(&self.m, r, now)
        }
        fn repaired(&mut self, _r: &DriftReport, applied: &[ObjectId], now: Instant) {
            self.m.repaired(&self.d.policy, applied, now)
        }
        fn abandon(&mut self, abandoned: &[(ObjectId, String)]) {
            self.m.abandon(abandoned)
        }
        fn observe(&mut self, r: &DriftReport) {
            self.m.observe(r)
        }
        fn is_abandoned(&self, id: &ObjectId) -> bool {
            self.m.abandoned.contains(id)
        }
    }

    fn report(drifted: bool) -> DriftReport {
        let id = ObjectId::new("v1", "ConfigMap", Some("ns"), "c");
        let mut o = ObjectDrift::new(id, None, if drifted { Verdict::Modified } else { Verdict::InSync });
        if drifted {
            let mut f = FieldDiff::new(crate::testing::path("/data/a"), Some(&json!("1")), Some(&json!("2")));
            f.changed_by = Some(Attribution {
                manager: "fighter".into(),
                operation: "Update".into(),
                subresource: None,
                time: None,
                person: false,
                audit: None,
            });
            o.fields.push(f);
        }
        crate::testing::report("ns", "web", vec![o])
    }

    #[test]
    fn rate_limited_then_abandoned_after_k_repairs_and_back_after_sync() {
        let policy =
            HealPolicy { cooldown: Duration::from_secs(10), fight_limit: 2, fight_window: Duration::from_secs(600) };
        let mut h = Heal::new(policy);
        let t0 = Instant::now();
        let r = report(true);
        let d = h.decide(&r, t0);
        assert_eq!(d.repair.iter().map(ObjectId::selector).collect::<Vec<_>>(), ["ns/ConfigMap/c"]);
        let id = r.objects[0].id.clone();
        h.repaired(&r, std::slice::from_ref(&id), t0);
        let d = h.decide(&r, t0 + Duration::from_secs(1));
        assert!(d.repair.is_empty());
        assert_eq!(d.later, Some(t0 + Duration::from_secs(10)));
        let t1 = t0 + Duration::from_secs(11);
        let d = h.decide(&r, t1);
        assert_eq!(d.repair.iter().map(ObjectId::selector).collect::<Vec<_>>(), ["ns/ConfigMap/c"]);
        h.repaired(&r, std::slice::from_ref(&id), t1);
        let d = h.decide(&r, t1 + Duration::from_secs(20));
        assert!(d.repair.is_empty());
        assert_eq!(d.abandoned, [(r.objects[0].id.clone(), "fighter".to_string())]);
        h.abandon(&d.abandoned);
        assert!(h.decide(&r, t1 + Duration::from_secs(40)).abandoned.is_empty(), "abandoned once");
        // Seen in sync (the whole release is: no decision is asked for): eligible again.
        h.observe(&report(false));
        assert!(!h.is_abandoned(&id));
        assert_eq!(
            h.decide(&r, t1 + Duration::from_secs(60)).repair.iter().map(ObjectId::selector).collect::<Vec<_>>(),
            ["ns/ConfigMap/c"]
        );
    }

    /// The path from a cooldown to the scheduler on paused time: the moment the rate limit
    /// gives is the one the scheduler wakes at, not a second earlier.
    #[tokio::test(start_paused = true)]
    async fn a_cooldown_hands_the_repair_to_the_scheduler() {
        let policy =
            HealPolicy { cooldown: Duration::from_secs(600), fight_limit: 3, fight_window: Duration::from_secs(60) };
        let mut h = Heal::new(policy);
        let r = report(true);
        let id = r.objects[0].id.clone();
        h.repaired(&r, std::slice::from_ref(&id), Instant::now());
        tokio::time::advance(Duration::from_secs(60)).await;
        let d = h.decide(&r, Instant::now());
        let at = d.later.expect("rate limited");
        let mut scheduler = crate::watch::scheduler::Scheduler::new(Duration::from_secs(1), Duration::from_secs(3600));
        scheduler.later(ReleaseKey::of(&r), at);
        let started = Instant::now();
        let due = scheduler.next().await;
        assert_eq!(due, crate::watch::scheduler::Due::Batch);
        assert_eq!(started.elapsed(), Duration::from_secs(540), "woken when the cooldown ends");
        assert!(scheduler.take_batch().contains(&ReleaseKey::of(&r)));
        assert_eq!(
            h.decide(&r, Instant::now()).repair.iter().map(ObjectId::selector).collect::<Vec<_>>(),
            ["ns/ConfigMap/c"],
            "repaired then"
        );
    }

    #[test]
    fn hook_objects_are_reported_never_healed_by_the_watcher() {
        let h =
            Heal::new(HealPolicy { cooldown: Duration::ZERO, fight_limit: 3, fight_window: Duration::from_secs(60) });
        let mut r = report(true);
        let origin = crate::testing::hook(&["post-install"], 1, 1);
        r.objects[0].hook = Some(Box::new(origin));
        assert!(r.drifted() > 0, "reported as drift");
        assert!(h.decide(&r, Instant::now()).repair.is_empty(), "not healed");
    }

    #[test]
    fn refused_or_failed_repairs_are_not_fights() {
        let policy = HealPolicy { cooldown: Duration::ZERO, fight_limit: 1, fight_window: Duration::from_secs(600) };
        let mut h = Heal::new(policy);
        let (r, t0) = (report(true), Instant::now());
        for i in 0..3 {
            let d = h.decide(&r, t0 + Duration::from_secs(i));
            assert_eq!(d.repair.iter().map(ObjectId::selector).collect::<Vec<_>>(), ["ns/ConfigMap/c"], "attempt {i}");
            h.repaired(&r, &[], t0 + Duration::from_secs(i));
        }
        assert!(h.decide(&r, t0 + Duration::from_secs(5)).abandoned.is_empty());
    }

    #[test]
    fn a_release_changed_since_it_was_judged_is_not_repaired() {
        use crate::release::Record;
        let index = |statuses: &[&str]| ReleaseIndex {
            namespace: "ns".into(),
            name: "web".into(),
            records: statuses
                .iter()
                .enumerate()
                .map(|(i, s)| Record {
                    object: format!("v{i}"),
                    revision: i as u32 + 1,
                    status: s.to_string(),
                    written: None,
                })
                .collect(),
        };
        assert_eq!(superseded(&index(&["superseded", "deployed"]), 2), None);
        let pending = superseded(&index(&["deployed", "pending-upgrade"]), 1).unwrap();
        assert_eq!(pending.to_string(), "revision 2 is pending-upgrade: Helm is changing the release");
        let moved = superseded(&index(&["superseded", "superseded", "deployed"]), 2).unwrap();
        assert_eq!(moved.to_string(), "revision 2 was judged, revision 3 is deployed now");
        assert!(superseded(&index(&["uninstalled"]), 1).is_some());
        // A failed upgrade after the judged revision leaves it deployed: repairable.
        assert_eq!(superseded(&index(&["deployed", "failed"]), 1), None);
    }
}

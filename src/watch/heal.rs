//! Self-healing policy (`watch --repair`): which drifted objects of an opted-in release to repair
//! now, a rate limit per release, and fight detection: an object that drifts again soon after
//! each of K repairs is abandoned (something insists) until it is in sync again.

use super::tracker::ReleaseKey;
use crate::model::{DriftReport, ObjectDrift, ObjectId};
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

/// How self-healing behaves.
#[derive(Clone, Debug)]
pub struct Policy {
    /// At least this long between two repairs of one release.
    pub cooldown: Duration,
    /// Repairs of one object within `window` after which a new drift abandons it.
    pub fight_limit: usize,
    pub window: Duration,
}

/// What to do about a release now.
#[derive(Debug, Default, PartialEq)]
pub struct Decision {
    /// Objects to repair (`Kind/name`, for `repair --only`).
    pub repair: Vec<String>,
    /// Rate limited: look again at this time.
    pub later: Option<Instant>,
    /// Objects abandoned now, with the field manager that keeps changing them.
    pub abandoned: Vec<(ObjectId, String)>,
}

pub struct Healer {
    policy: Policy,
    last: HashMap<ReleaseKey, Instant>,
    repairs: HashMap<ObjectId, VecDeque<Instant>>,
    abandoned: HashSet<ObjectId>,
}

impl Healer {
    pub fn new(policy: Policy) -> Healer {
        Healer { policy, last: HashMap::new(), repairs: HashMap::new(), abandoned: HashSet::new() }
    }

    /// Decides for a release's latest verdicts.
    pub fn decide(&mut self, report: &DriftReport, now: Instant) -> Decision {
        let key = (report.namespace.clone(), report.release.clone());
        let mut d = Decision::default();
        for o in &report.objects {
            if !o.is_drift() {
                // Back in sync after it was abandoned: a later drift is repaired again.
                if !o.is_error() && self.abandoned.remove(&o.id) {
                    self.repairs.remove(&o.id);
                }
                continue;
            }
            if self.abandoned.contains(&o.id) {
                continue;
            }
            let recent = self.repairs.entry(o.id.clone()).or_default();
            recent.retain(|t| now.duration_since(*t) < self.policy.window);
            if recent.len() >= self.policy.fight_limit {
                self.abandoned.insert(o.id.clone());
                d.abandoned.push((o.id.clone(), other_manager(o)));
                continue;
            }
            d.repair.push(format!("{}/{}", o.id.kind, o.id.name));
        }
        if !d.repair.is_empty()
            && let Some(at) = self.last.get(&key).map(|t| *t + self.policy.cooldown).filter(|at| *at > now)
        {
            d.repair.clear();
            d.later = Some(at);
        }
        d
    }

    /// Remembers a repair of these objects.
    pub fn repaired(&mut self, report: &DriftReport, objects: &[String], now: Instant) {
        self.last.insert((report.namespace.clone(), report.release.clone()), now);
        for o in report.objects.iter().filter(|o| o.selected_by(objects)) {
            self.repairs.entry(o.id.clone()).or_default().push_back(now);
        }
    }

    #[cfg(test)]
    fn is_abandoned(&self, id: &ObjectId) -> bool {
        self.abandoned.contains(id)
    }
}

/// The field manager that made the drift, as managedFields tell it.
fn other_manager(o: &ObjectDrift) -> String {
    o.writers()
        .map(|a| a.manager.clone())
        .next()
        .or_else(|| o.added.first().map(|a| a.manager.clone()))
        .or_else(|| o.disowned.first().map(|d| d.manager.clone()))
        .unwrap_or_else(|| "(unknown: not recorded in managedFields)".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Attribution, FieldDiff, FieldPath, Verdict};
    use serde_json::json;

    fn report(drifted: bool) -> DriftReport {
        let id = ObjectId::new("v1", "ConfigMap", Some("ns"), "c");
        let mut o = ObjectDrift::new(id, None, if drifted { Verdict::Modified } else { Verdict::InSync });
        if drifted {
            let mut f = FieldDiff::new(FieldPath::from_pointer("/data/a"), Some(&json!("1")), Some(&json!("2")));
            f.changed_by = Some(Attribution {
                manager: "fighter".into(),
                operation: "Update".into(),
                subresource: None,
                time: None,
                person: false,
            });
            o.fields.push(f);
        }
        DriftReport::sample("ns", "web", vec![o])
    }

    #[test]
    fn rate_limited_then_abandoned_after_k_repairs_and_back_after_sync() {
        let policy = Policy { cooldown: Duration::from_secs(10), fight_limit: 2, window: Duration::from_secs(600) };
        let mut h = Healer::new(policy);
        let t0 = Instant::now();
        let r = report(true);
        let d = h.decide(&r, t0);
        assert_eq!(d.repair, ["ConfigMap/c"]);
        h.repaired(&r, &d.repair, t0);
        let d = h.decide(&r, t0 + Duration::from_secs(1));
        assert!(d.repair.is_empty());
        assert_eq!(d.later, Some(t0 + Duration::from_secs(10)));
        let t1 = t0 + Duration::from_secs(11);
        let d = h.decide(&r, t1);
        assert_eq!(d.repair, ["ConfigMap/c"]);
        h.repaired(&r, &d.repair, t1);
        let d = h.decide(&r, t1 + Duration::from_secs(20));
        assert!(d.repair.is_empty());
        assert_eq!(d.abandoned, [(r.objects[0].id.clone(), "fighter".to_string())]);
        assert!(h.decide(&r, t1 + Duration::from_secs(40)).abandoned.is_empty(), "abandoned once");
        h.decide(&report(false), t1 + Duration::from_secs(50));
        assert!(!h.is_abandoned(&r.objects[0].id));
    }
}

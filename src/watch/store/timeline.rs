//! How long each drift lives: when it appeared (its earliest write, as the object's managed
//! fields or the audit tell it), who made it, when it was reported, what happened to it (a
//! repair refused, a pause) and how it ended (the watcher's repair, a person's `helm drift
//! repair`, a new revision, undone by hand, accepted) and by whom. Bounded: at most
//! [`MAX_OPEN`] open drifts ([`MAX_OPEN_PER_NAMESPACE`] of one namespace's releases) and the
//! last [`MAX_ENDED`] ended ones are kept.

use crate::model::{Audited, ObjectDrift, ObjectId};
use crate::watch::keys::ReleaseKey;
use jiff::Timestamp;
use std::collections::{HashMap, VecDeque};

/// The most open drifts kept (a flood of drift past it is still reported, only not timed).
pub(crate) const MAX_OPEN: usize = 10_000;
/// The most open drifts of one namespace's releases (on one cluster): one record listing
/// thousands of missing objects leaves room for every other team's drifts.
pub(crate) const MAX_OPEN_PER_NAMESPACE: usize = 1_000;
/// The most ended drifts kept for the page.
pub(crate) const MAX_ENDED: usize = 500;
/// The most steps kept in one drift's life.
const MAX_STEPS: usize = 16;
/// Whether a maker (`kubectl-edit by alice`) names the person the audit found: a quoted manager
/// name (anyone may send `"x by alice"`) names nobody by itself.
fn audit_named(maker: &str) -> bool {
    let rest = match maker.strip_prefix('"') {
        Some(quoted) => {
            let mut escaped = false;
            let end = quoted.char_indices().find(|&(_, c)| {
                let close = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                close
            });
            end.map_or("", |(i, _)| &quoted[i + 1..])
        }
        None => maker,
    };
    rest.contains(" by ")
}

/// How long after its end a drift's ender may still be learnt from the audit (its event comes
/// in a batch, after the watcher saw the object back in sync).
pub(crate) const SETTLE_SECONDS: i64 = 120;

/// One drift's life, keyed by cluster, release and object.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Life {
    pub(crate) cluster: String,
    pub(crate) release: ReleaseKey,
    pub(crate) object: ObjectId,
    /// The revision it drifted from.
    pub(crate) revision: u32,
    pub(crate) appeared: Timestamp,
    /// Who made it: `kubectl-edit by alice@example.com`, or the manager alone.
    pub(crate) made_by: Vec<String>,
    pub(crate) detected: Timestamp,
    pub(crate) steps: Vec<(Timestamp, String)>,
    pub(crate) ended: Option<End>,
    /// Whether its lifetime is in the metrics (once what ended it is settled).
    pub(crate) counted: bool,
}

/// How a drift ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct End {
    pub(crate) at: Timestamp,
    pub(crate) how: How,
    /// Who, when known (the audit's user; the watcher itself for its repairs).
    pub(crate) by: Option<String>,
}

/// What ended a drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    /// The watcher's own repair.
    Healed,
    /// `helm drift repair` (its client, in the audit).
    Repaired,
    /// A new revision of the release (`helm upgrade`, `helm rollback`).
    Revision(u32),
    /// Another write put the recorded values back.
    Undone,
    /// The baseline accepted it.
    Accepted,
    /// The object left the release.
    Left,
}

impl How {
    /// The word in JSON and in the metric's label.
    pub(crate) fn word(self) -> &'static str {
        match self {
            How::Healed => "watcher",
            How::Repaired => "repair",
            How::Revision(_) => "revision",
            How::Undone => "hand",
            How::Accepted => "accepted",
            How::Left => "left",
        }
    }

    /// As said on the page.
    pub(crate) fn said(self) -> String {
        match self {
            How::Healed => "repaired by the watcher".into(),
            // The user agent is the client's word; the user is the API server's.
            How::Repaired => "repaired with helm drift repair (as its client said)".into(),
            How::Revision(r) => format!("ended by revision {r} (helm upgrade or rollback)"),
            How::Undone => "undone by a write outside Helm".into(),
            How::Accepted => "accepted into the baseline".into(),
            How::Left => "the object left the release".into(),
        }
    }
}

type LifeKey = (String, ReleaseKey, ObjectId);

/// Every drift's life the watcher knows.
#[derive(Default)]
pub(crate) struct Timeline {
    open: HashMap<LifeKey, Life>,
    ended: VecDeque<Life>,
    /// When drifts an earlier watcher reported were reported (from its Events), until seen.
    reported: HashMap<LifeKey, Timestamp>,
}

impl Timeline {
    /// When drifts an earlier watcher reported and never resolved were reported (its Events):
    /// a drift seen again starts its life there, not at this start.
    pub(crate) fn reported_before(&mut self, cluster: &str, reported: HashMap<(ReleaseKey, ObjectId), Timestamp>) {
        let room = MAX_OPEN.saturating_sub(self.reported.len());
        let seeds = reported.into_iter().take(room).map(|((r, id), at)| ((cluster.to_string(), r, id), at));
        self.reported.extend(seeds);
    }

    /// A drift seen: opened when new (`since`: when an earlier watcher reported it), its makers
    /// learnt when they were not known yet. Whether the audit named its maker just now.
    pub(crate) fn seen(
        &mut self,
        cluster: &str,
        release: &ReleaseKey,
        revision: u32,
        o: &ObjectDrift,
        now: Timestamp,
    ) -> bool {
        let key = (cluster.to_string(), release.clone(), o.id.clone());
        let made_by = o.makers();
        let named = |m: &[String]| m.iter().any(|m| audit_named(m));
        if let Some(life) = self.open.get_mut(&key) {
            let learnt = named(&made_by) && life.made_by != made_by;
            if !made_by.is_empty() && (life.made_by.is_empty() || named(&made_by)) {
                life.made_by = made_by;
            }
            life.appeared = life.appeared.min(appeared(o).unwrap_or(life.appeared));
            return learnt;
        }
        if self.open.len() >= MAX_OPEN || self.open_in(cluster, &release.namespace) >= MAX_OPEN_PER_NAMESPACE {
            return false;
        }
        let detected = self.reported.remove(&key).map_or(now, |t| t.min(now));
        let appeared = appeared(o).map_or(detected, |t| t.min(detected));
        let learnt = named(&made_by);
        let life = Life {
            cluster: cluster.to_string(),
            release: release.clone(),
            object: o.id.clone(),
            revision,
            appeared,
            made_by,
            detected,
            steps: Vec::new(),
            ended: None,
            counted: false,
        };
        self.open.insert(key, life);
        learnt
    }

    /// How many drifts of a namespace's releases (on a cluster) are open.
    fn open_in(&self, cluster: &str, namespace: &str) -> usize {
        self.open.keys().filter(|(c, r, _)| c == cluster && r.namespace == namespace).count()
    }

    /// Something happened to an open drift (a repair refused, a pause).
    pub(crate) fn step(&mut self, cluster: &str, release: &ReleaseKey, id: &ObjectId, what: String, now: Timestamp) {
        let key = (cluster.to_string(), release.clone(), id.clone());
        let open = self.open.get_mut(&key).filter(|l| l.steps.len() < MAX_STEPS);
        if let Some(life) = open.filter(|l| l.steps.last().is_none_or(|(_, w)| *w != what)) {
            life.steps.push((now, what));
        }
    }

    /// A drift ended: kept among the ended (its lifetime not counted yet).
    pub(crate) fn end(&mut self, cluster: &str, release: &ReleaseKey, id: &ObjectId, end: End) -> bool {
        let key = (cluster.to_string(), release.clone(), id.clone());
        let Some(mut life) = self.open.remove(&key) else { return false };
        life.ended = Some(end);
        if self.ended.len() >= MAX_ENDED {
            self.ended.pop_front();
        }
        self.ended.push_back(life);
        true
    }

    /// The revision an open drift drifted from.
    pub(crate) fn revision(&self, cluster: &str, release: &ReleaseKey, id: &ObjectId) -> Option<(u32, Timestamp)> {
        let key = (cluster.to_string(), release.clone(), id.clone());
        self.open.get(&key).map(|l| (l.revision, l.detected))
    }

    /// Ended drifts of a release whose lifetime is not counted yet.
    pub(crate) fn uncounted(&mut self, cluster: &str, release: &ReleaseKey) -> Vec<&mut Life> {
        let mine = |l: &Life| l.cluster == cluster && l.release == *release;
        self.ended.iter_mut().filter(|l| mine(l) && !l.counted).collect()
    }

    /// When the oldest open drift of a release appeared.
    pub(crate) fn oldest(&self, cluster: &str, release: &ReleaseKey) -> Option<Timestamp> {
        let mine = self.open.values().filter(|l| l.cluster == cluster && l.release == *release);
        mine.map(|l| l.appeared).min()
    }

    /// A release gone: its open drifts forgotten.
    pub(crate) fn forget(&mut self, cluster: &str, release: &ReleaseKey) {
        self.open.retain(|(c, r, _), _| !(c == cluster && r == release));
        self.reported.retain(|(c, r, _), _| !(c == cluster && r == release));
    }

    /// Open drifts (oldest first) and ended ones (newest first).
    pub(crate) fn lives(&self) -> (Vec<&Life>, Vec<&Life>) {
        let mut open: Vec<&Life> = self.open.values().collect();
        open.sort_by_key(|l| (l.appeared, l.object.to_string()));
        (open, self.ended.iter().rev().collect())
    }

    /// Every life as the page shows it: open drifts first (oldest first), then ended ones
    /// (newest first).
    pub(crate) fn shown(&self) -> Vec<crate::model::DriftLife> {
        let (open, ended) = self.lives();
        open.into_iter().chain(ended).map(Life::shown).collect()
    }
}

impl Life {
    fn shown(&self) -> crate::model::DriftLife {
        crate::model::DriftLife {
            cluster: self.cluster.clone(),
            namespace: self.release.namespace.clone(),
            release: self.release.name.clone(),
            object: self.object.to_string(),
            revision: self.revision,
            appeared: self.appeared,
            made_by: self.made_by.clone(),
            detected: self.detected,
            steps: self.steps.clone(),
            ended: self.ended.as_ref().map(|e| crate::model::DriftEnd {
                at: e.at,
                how: e.how.word(),
                said: e.how.said(),
                by: e.by.clone(),
            }),
        }
    }
}

/// The earliest write the drift's evidence dates.
fn appeared(o: &ObjectDrift) -> Option<Timestamp> {
    let at = |t: &str| t.parse::<Timestamp>().ok();
    let writes = o.changed_by().filter_map(|w| w.time.as_deref().and_then(at));
    let deleted = o.deleted_by.iter().filter_map(|d| match d {
        Audited::Found(a) => at(&a.time),
        Audited::NoRecord(_) => None,
    });
    writes.chain(deleted).min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Attribution, FieldDiff, Verdict};

    fn drifted(time: &str) -> ObjectDrift {
        let mut o = ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some("ns"), "c"), None, Verdict::Modified);
        let mut f = FieldDiff::new(crate::testing::path("/data/a"), Some(&"1".into()), Some(&"2".into()));
        f.changed_by = Some(Attribution {
            manager: "kubectl-edit".into(),
            operation: "Update".into(),
            subresource: None,
            time: Some(time.into()),
            person: true,
            audit: None,
        });
        o.fields.push(f);
        o
    }

    #[test]
    fn a_life_starts_at_its_write_learns_its_maker_and_ends_once() {
        let (mut t, r) = (Timeline::default(), ReleaseKey::new("ns", "app"));
        let now: Timestamp = "2026-12-02T15:00:00Z".parse().unwrap();
        let mut o = drifted("2026-12-02T14:50:00Z");
        t.seen("", &r, 3, &o, now);
        assert_eq!(t.oldest("", &r), Some("2026-12-02T14:50:00Z".parse().unwrap()));
        let actor = crate::model::Actor {
            user: "alice".into(),
            groups: vec![],
            impersonated_by: Some("admin".into()),
            user_agent: "kubectl/v1.36".into(),
            source_ips: vec![],
            audit_id: "x".into(),
            verb: "patch".into(),
            time: "2026-12-02T14:50:00Z".into(),
        };
        o.fields[0].changed_by.as_mut().unwrap().audit = Some(Audited::Found(Box::new(actor)));
        t.seen("", &r, 3, &o, now);
        let (open, _) = t.lives();
        assert_eq!(open[0].made_by, vec!["kubectl-edit by alice via admin"]);
        let end = End { at: now, how: How::Undone, by: None };
        assert!(t.end("", &r, &o.id, end.clone()));
        assert!(!t.end("", &r, &o.id, end), "ended once");
        assert_eq!(t.oldest("", &r), None);
        assert_eq!(t.uncounted("", &r).len(), 1, "its ender may still be learnt");
    }

    #[test]
    fn a_drift_reported_before_a_restart_starts_when_it_was_reported() {
        let (mut t, r) = (Timeline::default(), ReleaseKey::new("ns", "app"));
        let mut o = drifted("2026-12-02T14:50:00Z");
        o.fields[0].changed_by = None; // no write time: the Event's is the earliest known
        let reported: Timestamp = "2026-12-02T14:55:00Z".parse().unwrap();
        t.reported_before("", HashMap::from([((r.clone(), o.id.clone()), reported)]));
        t.seen("", &r, 1, &o, "2026-12-02T15:00:00Z".parse().unwrap());
        let (open, _) = t.lives();
        assert_eq!((open[0].detected, open[0].appeared), (reported, reported));
    }

    #[test]
    fn a_quoted_manager_names_nobody() {
        assert!(audit_named("kubectl-edit by alice@example.com"));
        assert!(!audit_named(&crate::model::manager_shown("kubectl-edit by alice@example.com")));
        assert!(audit_named(&format!("{} by bob", crate::model::manager_shown("my \"tool\" by x"))));
        assert!(!audit_named(&crate::model::manager_shown("my \"tool\" by x")));
    }

    #[test]
    fn one_namespace_cannot_take_every_open_drift() {
        let mut t = Timeline::default();
        let now: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        let flood = ReleaseKey::new("flood", "big");
        for i in 0..MAX_OPEN_PER_NAMESPACE + 50 {
            let mut o = drifted("2026-12-01T11:00:00Z");
            o.id.name = format!("missing-{i}");
            t.seen("", &flood, 1, &o, now);
        }
        assert_eq!(t.open_in("", "flood"), MAX_OPEN_PER_NAMESPACE);
        let other = ReleaseKey::new("shop", "web");
        t.seen("", &other, 1, &drifted("2026-12-01T11:00:00Z"), now);
        assert_eq!(t.open_in("", "shop"), 1, "another team's drift still gets its life");
    }

    #[test]
    fn ended_lives_are_bounded() {
        let (mut t, r) = (Timeline::default(), ReleaseKey::new("ns", "app"));
        let now: Timestamp = "2026-12-02T15:00:00Z".parse().unwrap();
        for i in 0..(MAX_ENDED + 10) {
            let mut o = drifted("2026-12-02T14:50:00Z");
            o.id.name = format!("c{i}");
            t.seen("", &r, 1, &o, now);
            t.end("", &r, &o.id, End { at: now, how: How::Healed, by: None });
        }
        assert_eq!(t.lives().1.len(), MAX_ENDED);
        assert_eq!(t.lives().1[0].object.name, format!("c{}", MAX_ENDED + 9), "newest first");
    }
}

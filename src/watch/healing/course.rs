//! The one healing decision for a drifted release: from what was read first (opt-in, what the
//! rate limit and fight rules leave, pauses, repair windows, the release's authority, its history
//! read again), the course to take, every outcome named. Pure, tested as a table. A fact that
//! costs a read (pauses, the history) is asked for by the decision itself when it gets there
//! ([`Course::ReadPauses`], [`Course::ReadHistory`]): `act` reads what is asked, in the order
//! asked, and carries the course out.

use super::decide::{Decision, Superseded};
use super::window::Gate;
use crate::model::{ObjectId, Refusal};
use crate::pause::Pause;
use crate::release::ReleaseIndex;
use crate::watch::clock::Instant;
use jiff::Timestamp;

/// Everything healing knows of one drifted release when it decides.
pub(super) struct Facts<'a> {
    /// The release opts in now (`--repair`'s selector, or its proxy's say).
    pub(super) opted_in: bool,
    /// The objects the rate limit and fight rules leave to repair (or when to look again).
    pub(super) decision: &'a Decision,
    /// The objects a pause holds, with the pause (`None`: not read yet).
    pub(super) held: Option<&'a [(ObjectId, Pause)]>,
    /// What the repair windows that apply to the release say now.
    pub(super) gate: &'a Gate,
    /// Why the release's authority allows no write at all, if it allows none.
    pub(super) refusal: Option<&'a Refusal>,
    /// The release's history read again right before writing.
    pub(super) fresh: &'a Fresh,
}

/// The release's history read again: only once the course would otherwise be a repair.
#[derive(Debug)]
pub(super) enum Fresh {
    NotRead,
    /// Read: the revision judged is still the deployed one (the history, to repair from).
    Unchanged(ReleaseIndex),
    Changed(Superseded),
    Unreadable(String),
}

/// What healing does about one drifted release now.
#[derive(Debug, PartialEq)]
pub(super) enum Course {
    /// The release does not opt in: its drift is reported, never healed.
    NotOptedIn,
    /// Nothing left to repair (every drifted object a hook's, or abandoned).
    Nothing,
    /// The decision needs the pauses that hold the release's objects: read them, then decide.
    ReadPauses,
    /// The rate limit holds: look again then.
    Later(Instant),
    /// Pauses hold every object left to repair: look again when the first ends.
    Paused(Timestamp),
    /// Outside its repair windows: why, and when one opens (none: never).
    Waiting { why: String, until: Option<Timestamp> },
    /// The release's authority allows no write: each of these objects is refused.
    Refused(Refusal, Vec<ObjectId>),
    /// A repair, once the history read again shows the release unchanged: read it, then decide.
    ReadHistory,
    /// The release changed since it was checked (Helm is busy, or another revision is deployed).
    Changed(Superseded),
    /// Its history cannot be read again: nothing is written.
    Unreadable(String),
    /// Repair these objects from this history (read again right before).
    Repair(Vec<ObjectId>, ReleaseIndex),
}

impl Course {
    /// What `helm_drift_repairs_total{result}` counts for this course, when it counts one at
    /// once (a repair counts its outcome once done; waiting counts once per window).
    pub(super) fn counted(&self) -> Option<&'static str> {
        match self {
            Course::Later(_) => Some("rate-limited"),
            Course::Refused(..) => Some("refused"),
            Course::Changed(_) => Some("superseded"),
            Course::Unreadable(_) => Some("failed"),
            Course::NotOptedIn
            | Course::Nothing
            | Course::ReadPauses
            | Course::Paused(_)
            | Course::Waiting { .. }
            | Course::ReadHistory
            | Course::Repair(..) => None,
        }
    }
}

/// The course for the facts: opt-in, then the rate limit, pauses, windows, authority and the
/// history read again, in that order (a fact not read yet, when it is needed, is asked for).
pub(super) fn course(f: &Facts) -> Course {
    if !f.opted_in {
        return Course::NotOptedIn;
    }
    if let Some(at) = f.decision.later {
        return Course::Later(at);
    }
    if f.decision.repair.is_empty() {
        return Course::Nothing;
    }
    let Some(held) = f.held else { return Course::ReadPauses };
    let left: Vec<ObjectId> =
        f.decision.repair.iter().filter(|o| !held.iter().any(|(h, _)| h == *o)).cloned().collect();
    if left.is_empty() {
        return held.iter().map(|(_, p)| p.until).min().map_or(Course::Nothing, Course::Paused);
    }
    if let Gate::Wait { why, until } = f.gate {
        return Course::Waiting { why: why.clone(), until: *until };
    }
    if let Some(why) = f.refusal {
        return Course::Refused(why.clone(), left);
    }
    match f.fresh {
        Fresh::NotRead => Course::ReadHistory,
        Fresh::Changed(s) => Course::Changed(s.clone()),
        Fresh::Unreadable(e) => Course::Unreadable(e.clone()),
        Fresh::Unchanged(index) => Course::Repair(left, index.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str) -> ObjectId {
        ObjectId::new("v1", "ConfigMap", Some("ns"), name)
    }

    fn pause(object: &str, until: &str) -> (ObjectId, Pause) {
        let p = Pause {
            namespace: "ns".into(),
            release: "web".into(),
            object: Some(format!("ConfigMap/{object}")),
            cluster: None,
            reason: "incident".into(),
            by: "alice".into(),
            until: until.parse().unwrap(),
        };
        (id(object), p)
    }

    fn index() -> ReleaseIndex {
        ReleaseIndex { namespace: "ns".into(), name: "web".into(), records: Vec::new() }
    }

    /// Every outcome, from the facts that lead to it; earlier rules win over later ones.
    #[test]
    fn each_outcome_from_its_facts() {
        let at = Instant::now();
        let (a, b) = (id("a"), id("b"));
        let two = Decision { repair: vec![a.clone(), b.clone()], ..Decision::default() };
        let limited = Decision { later: Some(at), ..Decision::default() };
        let untrusted = Refusal::Untrusted { namespace: "tenant".into(), acting: crate::model::Acting::Watcher };
        let wait = Gate::Wait { why: "outside 02:00-04:00".into(), until: None };
        let moved = Superseded::Deployed { judged: 1, now: Some(2) };
        let (held_a, held_both) = (
            vec![pause("a", "2026-12-06T10:00:00Z")],
            vec![pause("a", "2026-12-06T10:00:00Z"), pause("b", "2026-12-06T09:00:00Z")],
        );
        let unchanged = Fresh::Unchanged(index());
        let (nothing, changed) = (Decision::default(), Fresh::Changed(moved.clone()));
        let unreadable = Fresh::Unreadable("forbidden".into());
        let none: Option<&[(ObjectId, Pause)]> = Some(&[]);
        let (held_a, held_both) = (Some(&held_a[..]), Some(&held_both[..]));
        let f =
            |opted_in, decision, held, gate, refusal, fresh| Facts { opted_in, decision, held, gate, refusal, fresh };
        #[rustfmt::skip]
        let table: Vec<(&str, Facts, Course)> = vec![
            ("not opted in", f(false, &two, None, &Gate::Open, None, &Fresh::NotRead), Course::NotOptedIn),
            ("nothing drifted: no pause read", f(true, &nothing, None, &Gate::Open, None, &Fresh::NotRead), Course::Nothing),
            ("rate limited, even if refused or outside windows: no pause read", f(true, &limited, None, &wait, Some(&untrusted), &Fresh::NotRead), Course::Later(at)),
            ("pauses not read yet, even outside a window", f(true, &two, None, &wait, Some(&untrusted), &Fresh::NotRead), Course::ReadPauses),
            ("every object paused: the first end", f(true, &two, held_both, &wait, Some(&untrusted), &unchanged), Course::Paused("2026-12-06T09:00:00Z".parse().unwrap())),
            ("outside a window, even if refused", f(true, &two, none, &wait, Some(&untrusted), &unchanged), Course::Waiting { why: "outside 02:00-04:00".into(), until: None }),
            ("refused: the objects not paused", f(true, &two, held_a, &Gate::Open, Some(&untrusted), &unchanged), Course::Refused(untrusted.clone(), vec![b.clone()])),
            ("history not read yet", f(true, &two, none, &Gate::Open, None, &Fresh::NotRead), Course::ReadHistory),
            ("changed since checked", f(true, &two, none, &Gate::Open, None, &changed), Course::Changed(moved.clone())),
            ("history unreadable", f(true, &two, none, &Gate::Open, None, &unreadable), Course::Unreadable("forbidden".into())),
            ("repair: the objects not paused", f(true, &two, held_a, &Gate::Open, None, &unchanged), Course::Repair(vec![b.clone()], index())),
            ("repair: all", f(true, &two, none, &Gate::Open, None, &unchanged), Course::Repair(vec![a.clone(), b.clone()], index())),
        ];
        for (case, facts, want) in table {
            assert_eq!(course(&facts), want, "{case}");
        }
    }
}

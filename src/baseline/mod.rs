//! Accepted drift (a baseline): drift a team agreed to, recorded by `helm drift accept` and
//! applied by `check`, so that only new or changed drift fails the gate. Entries are keyed by
//! release, object, path and a hash of the path and value (never the value itself); they live in
//! a file (CI) or in a ConfigMap next to the release. A Secret's value is hashed salted and slow
//! (PBKDF2-HMAC-SHA-256, a random salt per entry): whoever reads the file cannot confirm a
//! guessed password cheaply, and no key has to be shared between the people who accept and the
//! CI that checks. The judging (accept, apply) is pure and here; reading and writing the file
//! or ConfigMap is in [`store`], the document and its entries in [`document`].

use crate::model::{Accepted, DriftReport, Strictness, Verdict};
use pieces::{Evidence, drifts};

mod document;
mod pieces;
mod store;

pub(crate) use document::{Baseline, DEFAULT_FILE, Entry, Place, Store};
use document::{SLOW_PER_CHECK, Work};
#[cfg(test)]
use document::{parse, render};
pub(crate) use store::{configmap_name, configmaps, exists, read_configmap, read_file, write_configmap, write_file};

/// Marks the report's drift that the baseline accepted (moved to `accepted`, not counted) and
/// records the release's entries whose drift is gone as stale.
/// `strictness`: whether fields owned elsewhere with the recorded values count as drift.
pub(crate) fn apply(report: &mut DriftReport, baseline: &Baseline, strictness: Strictness) {
    apply_at(report, baseline, jiff::Timestamp::now(), strictness);
}

/// [`apply`] at `now`: entries whose acceptance has expired accept nothing.
fn apply_at(report: &mut DriftReport, baseline: &Baseline, now: jiff::Timestamp, strictness: Strictness) {
    let mine: Vec<&Entry> = baseline
        .entries
        .iter()
        .filter(|e| e.release == report.release && e.namespace == report.namespace && !e.expired(now))
        .collect();
    let mut work = Work::new();
    ended(report, baseline, now, &mut work);
    if mine.is_empty() {
        return;
    }
    let mut matched = vec![false; mine.len()];
    for i in 0..report.objects.len() {
        let found = drifts(report, &report.objects[i]);
        let total = found.len();
        let mut accepted: Vec<(Evidence, Accepted)> = Vec::new();
        for (piece, path, entry) in found {
            if let Some(j) = mine.iter().position(|e| e.same_drift(&entry, &mut work)) {
                matched[j] = true;
                let until = mine[j].expires_at.clone();
                accepted.push((piece, Accepted { path, change: entry.change, until }));
            }
        }
        let o = &mut report.objects[i];
        pieces::take_out(o, &accepted.iter().map(|(p, _)| *p).collect::<Vec<_>>());
        let n = accepted.len();
        o.accepted.splice(0..0, accepted.into_iter().map(|(_, a)| a));
        // All of it accepted, or all but fields owned elsewhere with the recorded values (not
        // drift without --strict, as they are without a baseline): in sync, as it then reads.
        let only_owned_elsewhere =
            !strictness.is_strict() && o.verdict == Verdict::Modified && o.fields.is_empty() && o.added.is_empty();
        if n > 0 && (n == total || only_owned_elsewhere) {
            o.verdict = Verdict::InSync;
        }
    }
    if work.spent_out {
        report.findings.push(format!(
            "the baseline holds more salted entries for this release's drift than one check verifies ({SLOW_PER_CHECK}): the rest accept nothing, their drift stays drift"
        ));
    }
    report.accepted_until = mine
        .iter()
        .zip(&matched)
        .filter(|(_, m)| **m)
        .filter_map(|(e, _)| e.expires_at.as_deref()?.parse::<jiff::Timestamp>().ok())
        .min();
    // An unmatched entry whose path drifts again, with another value, is not gone: it changed.
    let drifting: Vec<(String, String)> =
        report.objects.iter().flat_map(|o| drifts(report, o)).map(|(_, _, e)| (e.object, e.path)).collect();
    report.stale = mine
        .iter()
        .zip(matched)
        .filter(|(_, m)| !m)
        .map(|(e, _)| {
            let again = drifting.iter().any(|(object, path)| *object == e.object && *path == e.path);
            (e.object.clone(), e.path.clone(), again)
        })
        .collect();
    // Many entries of one object and path (a flood, or one drift accepted many times) are one line.
    let mut seen = std::collections::HashSet::new();
    report.stale.retain(|s| seen.insert(s.clone()));
}

/// What `accept` takes from a report.
pub(crate) struct Acceptance<'a> {
    /// `KIND/NAME` filters; every drifted object when empty.
    pub(crate) only: &'a [String],
    /// Only drift at or under these pointers; all when empty.
    pub(crate) paths: &'a [String],
    /// Drop the release's entries whose drift is gone.
    pub(crate) prune: bool,
    /// Fields taken over count as drift (`--strict`); otherwise they are not drift and are not
    /// accepted.
    pub(crate) strict: bool,
    pub(crate) now: jiff::Timestamp,
    /// When the new acceptances end (`--expires`); an unexpired entry of the same drift keeps
    /// its own end without it.
    pub(crate) expires_at: Option<String>,
}

/// Says each acceptance of this release that has ended while its drift is still there: the
/// gate turns red for a reason the report gives.
fn ended(report: &mut DriftReport, baseline: &Baseline, now: jiff::Timestamp, work: &mut Work) {
    let gone: Vec<&Entry> = baseline
        .entries
        .iter()
        .filter(|e| e.release == report.release && e.namespace == report.namespace && e.expired(now))
        .collect();
    if gone.is_empty() {
        return;
    }
    let found: Vec<Entry> = report.objects.iter().flat_map(|o| drifts(report, o)).map(|(_, _, e)| e).collect();
    for e in gone.iter().filter(|e| found.iter().any(|f| e.same_drift(f, work))) {
        let at = if e.path.is_empty() { "(whole object)" } else { &e.path };
        report.findings.push(format!(
            "the acceptance of {} {at} ended at {}: it is drift again (helm drift accept {} --expires DURATION accepts it again)",
            e.object,
            e.expires_at.as_deref().unwrap_or("?"),
            report.release
        ));
    }
}

/// Adds the report's current drift (of the objects `only` selects, under the `paths` given) to
/// the baseline; with `prune`, drops the release's entries whose drift is gone. Returns the
/// entries accepted (as written) and how many were dropped.
pub(crate) fn accept(baseline: &mut Baseline, report: &DriftReport, how: &Acceptance) -> (Vec<Entry>, usize) {
    let mut work = Work::new();
    let mut current = Vec::new();
    for o in report.objects.iter().filter(|o| o.selected_by(how.only)) {
        for (piece, _, mut entry) in drifts(report, o) {
            let wanted = how.paths.is_empty() || how.paths.iter().any(|p| crate::model::path::under(&entry.path, p));
            if !wanted || (matches!(piece, Evidence::Disowned(_)) && !how.strict) {
                continue;
            }
            let kept = baseline.entries.iter().find(|e| e.same_drift(&entry, &mut work) && !e.expired(how.now));
            match (kept, &how.expires_at) {
                (Some(e), None) => {
                    (entry.accepted_at, entry.expires_at) = (e.accepted_at.clone(), e.expires_at.clone())
                }
                _ => (entry.accepted_at, entry.expires_at) = (Some(how.now.to_string()), how.expires_at.clone()),
            }
            current.push(entry.into_stored());
        }
    }
    let every: Vec<Entry> = report.objects.iter().flat_map(|o| drifts(report, o)).map(|(_, _, e)| e).collect();
    let before = baseline.entries.len();
    if how.prune {
        baseline.entries.retain(|e| {
            // An entry the check's slow hashes ran out before is kept: whether it is stale is unknown.
            e.release != report.release
                || e.namespace != report.namespace
                || every.iter().any(|c| e.same_drift(c, &mut work))
                || work.spent_out
        });
    }
    let dropped = before - baseline.entries.len();
    for entry in &current {
        // The same change of the same object and path with another value replaces the older
        // entry (a list item replaced is two changes at one path: removed and added).
        baseline.entries.retain(|e| {
            !(e.release == entry.release
                && e.namespace == entry.namespace
                && e.object == entry.object
                && e.path == entry.path
                && e.change == entry.change)
        });
        baseline.entries.push(entry.clone());
    }
    (current, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, Foreign, ObjectDrift, ObjectId};
    use serde_json::json;

    /// `accept` now, without --strict: how many entries were accepted and dropped.
    fn acc(
        b: &mut Baseline,
        r: &DriftReport,
        only: &[String],
        paths: &[String],
        prune: bool,
        expires: Option<&str>,
    ) -> (usize, usize) {
        let how = Acceptance {
            only,
            paths,
            prune,
            strict: false,
            now: "2026-12-01T00:00:00Z".parse().unwrap(),
            expires_at: expires.map(str::to_string),
        };
        let (accepted, dropped) = accept(b, r, &how);
        (accepted.len(), dropped)
    }

    fn report(replicas: i64) -> DriftReport {
        let mut web =
            ObjectDrift::new(ObjectId::new("apps/v1", "Deployment", Some("apps"), "web"), None, Verdict::Modified);
        web.fields.push(FieldDiff::new(
            crate::testing::path("/spec/replicas"),
            Some(&json!(2)),
            Some(&json!(replicas)),
        ));
        web.added.push(Foreign {
            path: crate::testing::path("/metadata/labels/team"),
            value: json!("ops"),
            manager: "kubectl-label".into(),
            changed_by: None,
        });
        let mut secret =
            ObjectDrift::new(ObjectId::new("v1", "Secret", Some("apps"), "creds"), None, Verdict::Modified);
        secret.fields.push(FieldDiff::new(
            crate::testing::path("/data/password"),
            Some(&json!("b2xk")),
            Some(&json!("bmV3")),
        ));
        let gone = ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some("apps"), "cfg"), None, Verdict::Missing);
        let mut report = crate::testing::report("apps", "web", vec![web, secret, gone]);
        (report.chart, report.record) = (String::new(), String::new());
        report
    }

    /// A label accepted on an object whose replicas another manager owns with the recorded
    /// value: owned elsewhere, which is no drift without --strict (it counted as drift).
    #[test]
    fn what_is_left_owned_elsewhere_is_no_drift_without_strict() {
        for strict in [false, true] {
            let mut r = report(2);
            let web = &mut r.objects[0];
            web.fields.clear();
            web.disowned.push(crate::model::Ownership {
                path: crate::testing::path("/spec/replicas"),
                manager: "kubectl-scale".into(),
                shared: false,
            });
            let mut b = Baseline::default();
            let only = ["Deployment/web".to_string()];
            acc(&mut b, &r, &only, &["/metadata/labels/team".into()], false, None);
            apply_at(&mut r, &b, "2026-12-01T00:00:00Z".parse().unwrap(), Strictness::of_flag(strict));
            let web = &r.objects[0];
            assert_eq!(web.accepted.len(), 1, "the label accepted");
            assert_eq!(web.drift_kind(), crate::model::DriftKind::TakenOver);
            assert_eq!(web.is_drift(), strict, "strict: {strict}");
        }
    }

    #[test]
    fn an_acceptance_that_expires_ends_by_itself() {
        let mut b = Baseline::default();
        acc(&mut b, &report(5), &[], &[], false, Some("2026-12-01T12:00:00Z"));
        let b = parse(&render(&b), "file").unwrap();
        assert!(b.entries.iter().all(|e| e.expires_at.as_deref() == Some("2026-12-01T12:00:00Z")));
        let mut before = report(5);
        apply_at(&mut before, &b, "2026-12-01T11:59:59Z".parse().unwrap(), Strictness::Lenient);
        assert_eq!(before.drifted(), 0, "accepted until it expires");
        assert_eq!(before.accepted_until, Some("2026-12-01T12:00:00Z".parse().unwrap()), "when to look again");
        let mut after = report(5);
        apply_at(&mut after, &b, "2026-12-01T12:00:00Z".parse().unwrap(), Strictness::Lenient);
        assert_eq!(after.drifted(), report(5).drifted(), "drift again once it expired");
        assert!(
            after
                .findings
                .iter()
                .any(|f| f.contains("/spec/replicas ended at 2026-12-01T12:00:00Z: it is drift again")),
            "{:?}",
            after.findings
        );
        assert_eq!(after.accepted_until, None);
        let mut unreadable = b.clone();
        unreadable.entries.iter_mut().for_each(|e| e.expires_at = Some("someday".into()));
        let mut r = report(5);
        apply_at(&mut r, &unreadable, "2026-01-01T00:00:00Z".parse().unwrap(), Strictness::Lenient);
        assert_eq!(r.drifted(), report(5).drifted(), "an end that cannot be read has ended");
    }

    #[test]
    fn accepted_drift_is_not_drift_a_new_value_is() {
        let mut b = Baseline::default();
        assert_eq!(acc(&mut b, &report(5), &[], &[], false, None), (4, 0));
        let text = render(&b);
        assert!(!text.contains("bmV3") && !text.contains("b2xk"), "no secret value is written\n{text}");
        let b = parse(&text, "file").unwrap();
        let mut r = report(5);
        apply(&mut r, &b, Strictness::Lenient);
        assert_eq!(r.drifted(), 0);
        assert_eq!(r.objects[0].accepted.len(), 2);
        assert_eq!(r.objects[0].drift_kind(), crate::model::DriftKind::Accepted);
        let mut changed = report(7);
        apply(&mut changed, &b, Strictness::Lenient);
        assert_eq!(changed.drifted(), 1, "a new value is new drift");
        assert_eq!(changed.objects[0].fields.len(), 1);
        assert_eq!(
            changed.stale,
            vec![("apps/v1 Deployment apps/web".to_string(), "/spec/replicas".to_string(), true)],
            "the entry's path drifts again, with another value"
        );
    }

    /// A flood of entries for one drift that is gone (or one accepted many times) is one stale line.
    #[test]
    fn many_entries_of_one_drift_are_one_stale_line() {
        let mut b = Baseline::default();
        acc(&mut b, &report(5), &[], &[], false, None);
        let once = b.entries.clone();
        for _ in 0..500 {
            b.entries.extend(once.iter().cloned());
        }
        let mut fixed = report(5);
        for o in &mut fixed.objects {
            (o.fields, o.added, o.verdict) = (Vec::new(), Vec::new(), Verdict::InSync);
        }
        apply(&mut fixed, &b, Strictness::Lenient);
        assert_eq!(fixed.stale.len(), once.len(), "{:?}", fixed.stale);
    }

    #[test]
    fn only_and_paths_limit_and_prune_drops_stale() {
        let mut b = Baseline::default();
        let only = ["deployment/web".to_string()];
        assert_eq!(acc(&mut b, &report(5), &only, &["/spec".into()], false, None), (1, 0));
        assert_eq!(b.entries[0].path, "/spec/replicas");
        let mut fixed = report(5);
        fixed.objects[0].fields.clear();
        assert_eq!(
            acc(&mut b, &fixed, &only, &["/metadata".into()], true, None),
            (1, 1),
            "the replicas entry is stale"
        );
        assert_eq!(b.entries.len(), 1);
        assert!(parse("entries: [{release: a}]", "f").unwrap_err().to_string().starts_with("cannot read baseline f:"));
    }

    #[test]
    fn a_secret_value_is_hashed_salted_and_slow() {
        let mut b = Baseline::default();
        acc(&mut b, &report(5), &["secret/creds".to_string()], &[], false, None);
        let stored = &b.entries[0].sha256;
        assert!(stored.starts_with("pbkdf2-sha256$100000$"), "{stored}");
        // The plain hash of the guess is not in the file, and the salt differs per entry.
        let guess = pieces::digest("/data/password", &json!("bmV3"));
        assert!(!render(&b).contains(&guess));
        let mut again = Baseline::default();
        acc(&mut again, &report(5), &["secret/creds".to_string()], &[], false, None);
        assert_ne!(&again.entries[0].sha256, stored);
        // Still accepted; another value is not.
        let mut r = report(5);
        apply(&mut r, &b, Strictness::Lenient);
        assert!(r.objects[1].fields.is_empty());
        let mut other = report(5);
        other.objects[1].fields[0].live = Some(json!("b3RoZXI="));
        apply(&mut other, &b, Strictness::Lenient);
        assert_eq!(other.objects[1].fields.len(), 1);
    }

    /// A keyed list added whole (`kubectl set env` on a container without env) is accepted item
    /// by item: another item added later is new drift, the accepted one stays accepted.
    #[test]
    fn a_keyed_list_is_accepted_item_by_item() {
        let with_env = |env: serde_json::Value| {
            let mut r = report(2);
            r.objects.truncate(1);
            r.objects[0].fields.clear();
            r.objects[0].added = vec![Foreign {
                path: crate::testing::path("/spec/template/spec/containers/0/env"),
                value: env,
                manager: "kubectl-set".into(),
                changed_by: None,
            }];
            r
        };
        let mut b = Baseline::default();
        let foo = json!({"name": "FOO", "value": "1"});
        assert_eq!(acc(&mut b, &with_env(json!([foo])), &[], &["/spec".into()], false, None), (1, 0));
        assert_eq!(b.entries[0].path, "/spec/template/spec/containers/0/env/0");
        let mut later = with_env(json!([foo, {"name": "BAR", "value": "2"}]));
        apply(&mut later, &b, Strictness::Lenient);
        let web = &later.objects[0];
        assert_eq!(web.accepted.len(), 1, "FOO stays accepted");
        assert_eq!(web.added[0].value, json!([{"name": "BAR", "value": "2"}]), "BAR is new drift");
        assert!(web.is_drift());
    }

    /// Re-accepting (as `--prune` does) keeps an acceptance's end; `--expires` sets a new one;
    /// fields taken over are not drift and are not accepted without --strict.
    #[test]
    fn reaccepting_keeps_the_end_and_taken_over_fields_are_not_accepted() {
        let mut b = Baseline::default();
        acc(&mut b, &report(5), &[], &[], false, Some("2026-12-09T00:00:00Z"));
        acc(&mut b, &report(5), &[], &[], true, None);
        assert!(b.entries.iter().all(|e| e.expires_at.as_deref() == Some("2026-12-09T00:00:00Z")), "{b:?}");
        acc(&mut b, &report(5), &[], &[], false, Some("2026-12-20T00:00:00Z"));
        assert!(b.entries.iter().all(|e| e.expires_at.as_deref() == Some("2026-12-20T00:00:00Z")));
        let mut r = report(5);
        r.objects[0].disowned.push(crate::model::Ownership {
            path: crate::testing::path("/spec/paused"),
            manager: "kubectl-edit".into(),
            shared: false,
        });
        let mut b = Baseline::default();
        acc(&mut b, &r, &[], &[], false, None);
        assert!(b.entries.iter().all(|e| e.change != "owned-elsewhere"), "{b:?}");
    }

    /// A list item replaced (a Service port whose number changed) is removed and added at one
    /// path: both are accepted, and then neither is drift.
    #[test]
    fn an_item_replaced_is_two_entries() {
        let mut r = report(2);
        r.objects.truncate(1);
        let web = &mut r.objects[0];
        web.added.clear();
        let at = crate::testing::path("/spec/ports/0");
        web.fields = vec![
            FieldDiff::new(at.clone(), Some(&json!({"port": 80})), None),
            FieldDiff::new(at, None, Some(&json!({"port": 8081}))),
        ];
        let mut b = Baseline::default();
        assert_eq!(acc(&mut b, &r, &[], &[], false, None), (2, 0));
        assert_eq!(b.entries.len(), 2, "{b:?}");
        apply(&mut r, &b, Strictness::Lenient);
        assert_eq!(r.drifted(), 0, "{:?}", r.objects[0]);
    }
}

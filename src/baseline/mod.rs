//! Accepted drift (a baseline): drift a team agreed to, recorded by `helm drift accept` and
//! applied by `check`, so that only new or changed drift fails the gate. Entries are keyed by
//! release, object, path and a hash of the path and value (never the value itself); they live in
//! a file (CI) or in a ConfigMap next to the release. A Secret's value is hashed salted and slow
//! (PBKDF2-HMAC-SHA-256, a random salt per entry): whoever reads the file cannot confirm a
//! guessed password cheaply, and no key has to be shared between the people who accept and the
//! CI that checks. The judging (accept, apply) is pure and here; reading and writing the file
//! or ConfigMap is in [`store`], the document and its entries in [`document`].

use crate::model::{Accepted, DriftReport, FieldPath, ObjectDrift, Verdict};
use serde_json::Value;
use sha2::{Digest, Sha256};

mod document;
mod store;

pub(crate) use document::{Baseline, DEFAULT_FILE, Entry, Store};
#[cfg(test)]
use document::{parse, render};
pub(crate) use store::{configmap_name, configmaps, read_configmap, read_file, write_configmap, write_file};

/// Which piece of evidence of an object a drift is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    Field(usize),
    Added(usize),
    Disowned(usize),
    Whole,
}

/// Every drift of an object, as baseline entries name it.
fn drifts(r: &DriftReport, o: &ObjectDrift) -> Vec<(Piece, FieldPath, Entry)> {
    let object = format!("{} {}", o.id.api_version, o.id);
    let entry = |path: &FieldPath, change: &str, value: &Value| {
        let pointer = path.pointer();
        Entry {
            release: r.release.clone(),
            namespace: r.namespace.clone(),
            object: object.clone(),
            path: pointer.clone(),
            change: change.to_string(),
            sha256: digest(&pointer, value),
            accepted_at: None,
            expires_at: None,
            secret: o.id.is_secret_path(&pointer).then(|| format!("{pointer}\n{value}")),
        }
    };
    let mut out = Vec::new();
    match &o.verdict {
        Verdict::Missing | Verdict::Unknown { .. } => {
            let change = if o.verdict == Verdict::Missing { "missing" } else { "unknown" };
            out.push((Piece::Whole, FieldPath::root(), entry(&FieldPath::root(), change, &Value::Null)));
        }
        Verdict::Modified => {
            for (i, f) in o.fields.iter().enumerate() {
                let (change, value) = match (&f.recorded, &f.live) {
                    (Some(_), Some(l)) => ("modified", l),
                    (Some(_), None) => ("removed", &Value::Null),
                    (None, Some(l)) => ("added", l),
                    (None, None) => continue,
                };
                out.push((Piece::Field(i), f.path.clone(), entry(&f.path, change, value)));
            }
            for (i, a) in o.added.iter().enumerate() {
                out.push((Piece::Added(i), a.path.clone(), entry(&a.path, "added", &a.value)));
            }
            for (i, d) in o.disowned.iter().enumerate() {
                let manager = Value::String(d.manager.clone());
                out.push((Piece::Disowned(i), d.path.clone(), entry(&d.path, "owned-elsewhere", &manager)));
            }
        }
        _ => {}
    }
    out
}

/// SHA-256 (hex) of a pointer and a value.
fn digest(pointer: &str, value: &Value) -> String {
    let hash = Sha256::digest(format!("{pointer}\n{value}").as_bytes());
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// Marks the report's drift that the baseline accepted (moved to `accepted`, not counted) and
/// records the release's entries whose drift is gone as stale.
/// `strict`: fields owned elsewhere with the recorded values count as drift (`--strict`).
pub(crate) fn apply(report: &mut DriftReport, baseline: &Baseline, strict: bool) {
    apply_at(report, baseline, jiff::Timestamp::now(), strict);
}

/// [`apply`] at `now`: entries whose acceptance has expired accept nothing.
fn apply_at(report: &mut DriftReport, baseline: &Baseline, now: jiff::Timestamp, strict: bool) {
    let mine: Vec<&Entry> = baseline
        .entries
        .iter()
        .filter(|e| e.release == report.release && e.namespace == report.namespace && !e.expired(now))
        .collect();
    if mine.is_empty() {
        return;
    }
    let mut matched = vec![false; mine.len()];
    for i in 0..report.objects.len() {
        let found = drifts(report, &report.objects[i]);
        let o = &mut report.objects[i];
        let mut accepted: Vec<(Piece, FieldPath, String)> = Vec::new();
        for (piece, path, entry) in found {
            if let Some(j) = mine.iter().position(|e| e.same_drift(&entry)) {
                matched[j] = true;
                accepted.push((piece, path, entry.change));
            }
        }
        let total = drifts_count(o);
        for (piece, path, change) in accepted.iter().rev() {
            match piece {
                Piece::Field(i) => drop(o.fields.remove(*i)),
                Piece::Added(i) => drop(o.added.remove(*i)),
                Piece::Disowned(i) => drop(o.disowned.remove(*i)),
                Piece::Whole => {}
            }
            o.accepted.insert(0, Accepted { path: path.clone(), change: change.clone() });
        }
        // All of it accepted, or all but fields owned elsewhere with the recorded values (not
        // drift without --strict, as they are without a baseline): in sync, as it then reads.
        let only_owned_elsewhere =
            !strict && o.verdict == Verdict::Modified && o.fields.is_empty() && o.added.is_empty();
        if !accepted.is_empty() && (accepted.len() == total || only_owned_elsewhere) {
            o.verdict = Verdict::InSync;
        }
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
}

fn drifts_count(o: &ObjectDrift) -> usize {
    match &o.verdict {
        Verdict::Missing | Verdict::Unknown { .. } => 1,
        Verdict::Modified => o.fields.len() + o.added.len() + o.disowned.len(),
        _ => 0,
    }
}

/// Adds the report's current drift (of the objects `only` selects, under the `paths` given) to
/// the baseline; with `prune`, drops the release's entries whose drift is gone. Returns how many
/// entries were added and how many dropped.
pub(crate) fn accept(
    baseline: &mut Baseline,
    report: &DriftReport,
    only: &[String],
    paths: &[String],
    prune: bool,
    now: &str,
    expires_at: Option<&str>,
) -> (usize, usize) {
    let mut current = Vec::new();
    for o in report.objects.iter().filter(|o| o.selected_by(only)) {
        for (_, _, mut entry) in drifts(report, o) {
            let wanted = paths.is_empty() || paths.iter().any(|p| crate::model::path::under(&entry.path, p));
            if wanted {
                entry.accepted_at = Some(now.to_string());
                entry.expires_at = expires_at.map(str::to_string);
                current.push(entry.into_stored());
            }
        }
    }
    let every: Vec<Entry> = report.objects.iter().flat_map(|o| drifts(report, o)).map(|(_, _, e)| e).collect();
    let before = baseline.entries.len();
    if prune {
        baseline.entries.retain(|e| {
            e.release != report.release || e.namespace != report.namespace || every.iter().any(|c| e.same_drift(c))
        });
    }
    let dropped = before - baseline.entries.len();
    let mut added = 0;
    for entry in current {
        // The same object and path with another value replaces the older entry.
        baseline.entries.retain(|e| {
            !(e.release == entry.release
                && e.namespace == entry.namespace
                && e.object == entry.object
                && e.path == entry.path)
        });
        baseline.entries.push(entry);
        added += 1;
    }
    (added, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, Foreign, ObjectId};
    use serde_json::json;

    fn report(replicas: i64) -> DriftReport {
        let mut web =
            ObjectDrift::new(ObjectId::new("apps/v1", "Deployment", Some("apps"), "web"), None, Verdict::Modified);
        web.fields.push(FieldDiff::new(
            FieldPath::from_pointer("/spec/replicas"),
            Some(&json!(2)),
            Some(&json!(replicas)),
        ));
        web.added.push(Foreign {
            path: FieldPath::from_pointer("/metadata/labels/team"),
            value: json!("ops"),
            manager: "kubectl-label".into(),
            changed_by: None,
        });
        let mut secret =
            ObjectDrift::new(ObjectId::new("v1", "Secret", Some("apps"), "creds"), None, Verdict::Modified);
        secret.fields.push(FieldDiff::new(
            FieldPath::from_pointer("/data/password"),
            Some(&json!("b2xk")),
            Some(&json!("bmV3")),
        ));
        let gone = ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some("apps"), "cfg"), None, Verdict::Missing);
        DriftReport {
            release: "web".into(),
            namespace: "apps".into(),
            revision: 1,
            status: "deployed".into(),
            chart: String::new(),
            record: String::new(),
            newest: None,
            objects: vec![web, secret, gone],
            notes: Vec::new(),
            stale: Vec::new(),
            findings: Vec::new(),
            explanations: Vec::new(),
            rerender: None,
            guard: None,
            accepted_until: None,
        }
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
                path: FieldPath::from_pointer("/spec/replicas"),
                manager: "kubectl-scale".into(),
                shared: false,
            });
            let mut b = Baseline::default();
            let only = ["Deployment/web".to_string()];
            accept(&mut b, &r, &only, &["/metadata/labels/team".into()], false, "t", None);
            apply_at(&mut r, &b, "2026-12-01T00:00:00Z".parse().unwrap(), strict);
            let web = &r.objects[0];
            assert_eq!(web.accepted.len(), 1, "the label accepted");
            assert_eq!(web.drift_kind(), crate::model::DriftKind::TakenOver);
            assert_eq!(web.is_drift(), strict, "strict: {strict}");
        }
    }

    #[test]
    fn an_acceptance_that_expires_ends_by_itself() {
        let mut b = Baseline::default();
        accept(&mut b, &report(5), &[], &[], false, "t", Some("2026-12-01T12:00:00Z"));
        let b = parse(&render(&b), "file").unwrap();
        assert!(b.entries.iter().all(|e| e.expires_at.as_deref() == Some("2026-12-01T12:00:00Z")));
        let mut before = report(5);
        apply_at(&mut before, &b, "2026-12-01T11:59:59Z".parse().unwrap(), false);
        assert_eq!(before.drifted(), 0, "accepted until it expires");
        assert_eq!(before.accepted_until, Some("2026-12-01T12:00:00Z".parse().unwrap()), "when to look again");
        let mut after = report(5);
        apply_at(&mut after, &b, "2026-12-01T12:00:00Z".parse().unwrap(), false);
        assert_eq!(after.drifted(), report(5).drifted(), "drift again once it expired");
        assert_eq!(after.accepted_until, None);
        let mut unreadable = b.clone();
        unreadable.entries.iter_mut().for_each(|e| e.expires_at = Some("someday".into()));
        let mut r = report(5);
        apply_at(&mut r, &unreadable, "2026-01-01T00:00:00Z".parse().unwrap(), false);
        assert_eq!(r.drifted(), report(5).drifted(), "an end that cannot be read has ended");
    }

    #[test]
    fn accepted_drift_is_not_drift_a_new_value_is() {
        let mut b = Baseline::default();
        assert_eq!(accept(&mut b, &report(5), &[], &[], false, "t", None), (4, 0));
        let text = render(&b);
        assert!(!text.contains("bmV3") && !text.contains("b2xk"), "no secret value is written\n{text}");
        let b = parse(&text, "file").unwrap();
        let mut r = report(5);
        apply(&mut r, &b, false);
        assert_eq!(r.drifted(), 0);
        assert_eq!(r.objects[0].accepted.len(), 2);
        assert_eq!(r.objects[0].drift_kind(), crate::model::DriftKind::Accepted);
        let mut changed = report(7);
        apply(&mut changed, &b, false);
        assert_eq!(changed.drifted(), 1, "a new value is new drift");
        assert_eq!(changed.objects[0].fields.len(), 1);
        assert_eq!(
            changed.stale,
            vec![("apps/v1 Deployment apps/web".to_string(), "/spec/replicas".to_string(), true)],
            "the entry's path drifts again, with another value"
        );
    }

    #[test]
    fn only_and_paths_limit_and_prune_drops_stale() {
        let mut b = Baseline::default();
        let only = ["deployment/web".to_string()];
        assert_eq!(accept(&mut b, &report(5), &only, &["/spec".into()], false, "t", None), (1, 0));
        assert_eq!(b.entries[0].path, "/spec/replicas");
        let mut fixed = report(5);
        fixed.objects[0].fields.clear();
        assert_eq!(
            accept(&mut b, &fixed, &only, &["/metadata".into()], true, "t", None),
            (1, 1),
            "the replicas entry is stale"
        );
        assert_eq!(b.entries.len(), 1);
        assert!(parse("entries: [{release: a}]", "f").unwrap_err().to_string().starts_with("cannot read baseline f:"));
    }

    #[test]
    fn a_secret_value_is_hashed_salted_and_slow() {
        let mut b = Baseline::default();
        accept(&mut b, &report(5), &["secret/creds".to_string()], &[], false, "t", None);
        let stored = &b.entries[0].sha256;
        assert!(stored.starts_with("pbkdf2-sha256$100000$"), "{stored}");
        // The plain hash of the guess is not in the file, and the salt differs per entry.
        let guess = digest("/data/password", &json!("bmV3"));
        assert!(!render(&b).contains(&guess));
        let mut again = Baseline::default();
        accept(&mut again, &report(5), &["secret/creds".to_string()], &[], false, "t", None);
        assert_ne!(&again.entries[0].sha256, stored);
        // Still accepted; another value is not.
        let mut r = report(5);
        apply(&mut r, &b, false);
        assert!(r.objects[1].fields.is_empty());
        let mut other = report(5);
        other.objects[1].fields[0].live = Some(json!("b3RoZXI="));
        apply(&mut other, &b, false);
        assert_eq!(other.objects[1].fields.len(), 1);
    }
}

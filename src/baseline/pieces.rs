//! An object's drift as baseline entries name it, piece by piece (a field, an added field, an
//! item of a keyed list added whole, a field taken over, the whole object), and taking the
//! accepted pieces out of the object.

use super::document::Entry;
use crate::compare::merge_keys;
use crate::model::{DriftReport, FieldPath, ObjectDrift, Verdict};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Which piece of evidence of an object a drift is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Evidence {
    Field(usize),
    /// Item `.1` of a keyed list the field `.0` added whole (recorded absent).
    FieldItem(usize, usize),
    Added(usize),
    /// Item `.1` of a keyed list added whole by another manager.
    AddedItem(usize, usize),
    Disowned(usize),
    Whole,
}

/// The items of a keyed list (`env`, `ports`, `containers`) added whole: each is its own entry,
/// so that another item added later leaves the accepted ones accepted.
fn items(path: &FieldPath, value: &Value) -> Option<Vec<(FieldPath, Value)>> {
    let list = value.as_array().filter(|l| !l.is_empty())?;
    let field = path.pointer().rsplit('/').next().map(str::to_string)?;
    let keys = merge_keys::keys(&field, list)?;
    Some(
        keys.into_iter()
            .zip(list)
            .enumerate()
            .map(|(j, (k, v))| (path.item(None, Some(j), Some(k)), v.clone()))
            .collect(),
    )
}

/// Every drift of an object, as baseline entries name it.
pub(super) fn drifts(r: &DriftReport, o: &ObjectDrift) -> Vec<(Evidence, FieldPath, Entry)> {
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
    let mut added =
        |whole: Evidence, item: &dyn Fn(usize) -> Evidence, path: &FieldPath, value: &Value| match items(path, value) {
            Some(list) => {
                for (j, (at, v)) in list.into_iter().enumerate() {
                    out.push((item(j), at.clone(), entry(&at, "added", &v)));
                }
            }
            None => out.push((whole, path.clone(), entry(path, "added", value))),
        };
    match &o.verdict {
        Verdict::Missing | Verdict::Unknown { .. } => {
            let change = if o.verdict == Verdict::Missing { "missing" } else { "unknown" };
            return vec![(Evidence::Whole, FieldPath::root(), entry(&FieldPath::root(), change, &Value::Null))];
        }
        Verdict::Modified => {
            for (i, f) in o.fields.iter().enumerate() {
                if let (None, Some(l)) = (&f.recorded, &f.live) {
                    added(Evidence::Field(i), &|j| Evidence::FieldItem(i, j), &f.path, l);
                }
            }
            for (i, a) in o.added.iter().enumerate() {
                added(Evidence::Added(i), &|j| Evidence::AddedItem(i, j), &a.path, &a.value);
            }
        }
        _ => return out,
    }
    for (i, f) in o.fields.iter().enumerate() {
        let (change, value) = match (&f.recorded, &f.live) {
            (Some(_), Some(l)) => ("modified", l),
            (Some(_), None) => ("removed", &Value::Null),
            _ => continue,
        };
        out.push((Evidence::Field(i), f.path.clone(), entry(&f.path, change, value)));
    }
    for (i, d) in o.disowned.iter().enumerate() {
        let manager = Value::String(d.manager.clone());
        out.push((Evidence::Disowned(i), d.path.clone(), entry(&d.path, "owned-elsewhere", &manager)));
    }
    out.sort_by_key(|(p, _, _)| order(*p));
    out
}

/// Pieces in the object's order (fields, added, taken over; items in order), so that taking
/// them out from the last keeps every index valid.
fn order(p: Evidence) -> (u8, usize, usize) {
    match p {
        Evidence::Field(i) => (0, i, 0),
        Evidence::FieldItem(i, j) => (0, i, j),
        Evidence::Added(i) => (1, i, 0),
        Evidence::AddedItem(i, j) => (1, i, j),
        Evidence::Disowned(i) => (2, i, 0),
        Evidence::Whole => (3, 0, 0),
    }
}

/// SHA-256 (hex) of a pointer and a value.
pub(super) fn digest(pointer: &str, value: &Value) -> String {
    let hash = Sha256::digest(format!("{pointer}\n{value}").as_bytes());
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// Takes the accepted pieces out of the object, the last first (a list emptied of its accepted
/// items goes with its last one).
pub(super) fn take_out(o: &mut ObjectDrift, accepted: &[Evidence]) {
    let mut pieces = accepted.to_vec();
    pieces.sort_by_key(|p| std::cmp::Reverse(order(*p)));
    for piece in pieces {
        match piece {
            Evidence::Field(i) => drop(o.fields.remove(i)),
            Evidence::Added(i) => drop(o.added.remove(i)),
            Evidence::Disowned(i) => drop(o.disowned.remove(i)),
            Evidence::FieldItem(i, j) => {
                if remove_item(o.fields[i].live.as_mut(), j) {
                    o.fields.remove(i);
                }
            }
            Evidence::AddedItem(i, j) => {
                if remove_item(Some(&mut o.added[i].value), j) {
                    o.added.remove(i);
                }
            }
            Evidence::Whole => {}
        }
    }
}

/// Removes item `j` of a list; whether the list is then empty.
fn remove_item(list: Option<&mut Value>, j: usize) -> bool {
    match list.and_then(Value::as_array_mut) {
        Some(items) if j < items.len() => {
            items.remove(j);
            items.is_empty()
        }
        _ => false,
    }
}

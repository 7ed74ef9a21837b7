//! One modified field and what the search knows of it: its candidates (the values of the
//! release that could produce it), what a render showed, what the later passes found.

use super::shape::Piece;
use super::values::{self, Key};
use crate::compare::subset::scalar_equal;
use crate::model::{FieldPath, ObjectDrift};
use base64::Engine as _;
use serde_json::Value;
use std::collections::BTreeSet;

/// One modified field and what the search knows of it.
pub(super) struct Field<'a> {
    pub(super) object: &'a ObjectDrift,
    pub(super) path: FieldPath,
    pub(super) at: String,
    pub(super) recorded: Value,
    pub(super) live: Value,
    /// Candidates not yet tried in a render that showed the field.
    pub(super) untried: BTreeSet<usize>,
    /// Why some candidates could not be tried.
    pub(super) trouble: Vec<String>,
    /// How often its candidates were rendered together again (a shape seen without all of them).
    pub(super) regroups: u8,
    pub(super) found: Option<Appearance>,
    /// A list that only grew, explained by an empty value the chart fills it from: the value's
    /// key, the form of its items, and the value that writes the items added.
    pub(super) grown: Option<(Key, String, Value)>,
    /// A list or map that fields added outside Helm made grow (explained only when an empty
    /// value of the chart fills it).
    pub(super) added: bool,
    /// The values that give the live value when it lacks the shape's last part (verified by a
    /// render).
    pub(super) fitted: Option<Vec<(usize, Value)>>,
}

/// What a render showed of a field.
pub(super) enum Appearance {
    Pieces(Vec<Piece>),
    /// It changes with this value but is not a copy of it.
    Transformed(usize),
}

impl<'a> Field<'a> {
    pub(super) fn new(
        object: &'a ObjectDrift,
        path: &FieldPath,
        recorded: &Value,
        live: &Value,
        leaves: &[(Key, Value)],
    ) -> Option<Self> {
        let at = path.recorded_pointer()?;
        let (recorded, live) = if object.id.is_secret() && at.starts_with("/data/") {
            (decoded(recorded), decoded(live))
        } else {
            (recorded.clone(), live.clone())
        };
        let untried =
            leaves.iter().enumerate().filter(|(_, (_, v))| candidate(v, &recorded, path)).map(|(n, _)| n).collect();
        Some(Field {
            object,
            path: path.clone(),
            at,
            recorded,
            live,
            untried,
            trouble: Vec::new(),
            regroups: 0,
            found: None,
            grown: None,
            added: false,
            fitted: None,
        })
    }

    pub(super) fn open(&self) -> bool {
        self.found.is_none() && !self.untried.is_empty()
    }
}

/// Whether a value of the release could be what a template writes into a field holding
/// `recorded`: equal to it, or (for text) part of it.
pub(super) fn candidate(value: &Value, recorded: &Value, path: &FieldPath) -> bool {
    match (value, recorded) {
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Bool(_), _) | (_, Value::Bool(_)) => false,
        (Value::String(s), Value::String(r)) => !s.is_empty() && r.contains(s.as_str()),
        (Value::Number(_), Value::String(r)) => r.contains(&values::printed(value)),
        (v, r) => scalar_equal(v, r, path),
    }
}

/// A Secret's `data` value decoded (templates write it with `b64enc`), as is when it is not
/// base64 text.
pub(super) fn decoded(v: &Value) -> Value {
    v.as_str()
        .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .map_or_else(|| v.clone(), Value::String)
}

//! Fixtures the unit tests of every module share: the data stages hand on, made as a test needs
//! it (a production file keeps only the `#[cfg(test)]` accessors that read its private state).

use crate::model::{DriftReport, FieldPath, HookOrigin, ObjectDrift, Segment};

/// A deployed revision 1 of `namespace/release` with these verdicts and nothing else (for
/// tests of what consumes reports).
pub(crate) fn report(namespace: &str, release: &str, objects: Vec<ObjectDrift>) -> DriftReport {
    DriftReport {
        release: release.into(),
        namespace: namespace.into(),
        revision: 1,
        status: "deployed".into(),
        chart: "chart-1.0.0".into(),
        record: format!("Secret {namespace}/sh.helm.release.v1.{release}.v1"),
        stored_apart: None,
        newest: None,
        objects,
        notes: Vec::new(),
        stale: Vec::new(),
        findings: Vec::new(),
        explanations: Vec::new(),
        rerender: None,
        guard: None,
        accepted_until: None,
        writer: Default::default(),
    }
}

/// A hook of `events` that ran at `ran_at`, seen at revision `revision`.
pub(crate) fn hook(events: &[&str], ran_at: u32, revision: u32) -> HookOrigin {
    HookOrigin { events: events.iter().map(|e| e.to_string()).collect(), delete_policies: vec![], ran_at, revision }
}

/// A path from a plain pointer (`/spec/replicas`, `/rules/0`); numeric tokens are list
/// positions, the same on both sides.
pub(crate) fn path(pointer: &str) -> FieldPath {
    FieldPath(
        crate::model::path::tokens(pointer)
            .into_iter()
            .map(|t| match t.parse::<usize>() {
                Ok(i) => Segment::Item { recorded: Some(i), live: Some(i), key: None },
                Err(_) => Segment::Field(t),
            })
            .collect(),
    )
}

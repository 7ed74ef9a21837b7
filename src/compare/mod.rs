//! Compare: the differences between a desired object and its live state. Pure functions; the
//! server-side dry-run itself is fetched by [`crate::live`], verdicts are put together by the
//! engine.
//!
//! - [`subset`]: client-side, "is every field the chart set still there" (the read-only engine);
//! - [`exact`]: two server-produced objects (a server-side apply dry-run against live);
//! - [`managed`]: fields other field managers added, from `metadata.managedFields`;
//! - [`merge`]: the object Helm 3's client-side upgrade leaves (live, the chart laid over it);
//! - [`ownership`]: fields the chart sets that Helm no longer owns (server-side applied releases);
//! - [`attribution`]: who last wrote a field;
//! - [`provenance`]: whether a value under Helm's name was the deployed revision's apply;
//! - [`writer`]: whose name Helm's writes to a release are under (`helm`, a controller's).

pub(crate) mod admitted;
pub(crate) mod attribution;
pub(crate) mod defaults;
pub(crate) mod exact;
pub(crate) mod managed;
pub(crate) mod merge;
pub(crate) mod merge_keys;
pub(crate) mod ownership;
pub(crate) mod provenance;
pub(crate) mod quantity;
pub(crate) mod subset;
pub(crate) mod unowned;
pub(crate) mod writer;

use crate::model::path::under;
use crate::model::{FieldDiff, Foreign, Ignored};

/// An ignore prefix (JSON pointer) and why it applies.
pub(crate) type IgnorePrefix = (String, String);

/// Whether an ignore prefix covers this difference (by its pointer).
pub(crate) fn is_ignored(pointer: &str, ignore: &[IgnorePrefix]) -> bool {
    ignore.iter().any(|(prefix, _)| under(pointer, prefix))
}

/// Takes the differences ignore prefixes cover out, returning the verdict's evidence.
pub(crate) fn without_ignored(
    fields: Vec<FieldDiff>,
    added: Vec<Foreign>,
    ignore: &[IgnorePrefix],
) -> (Vec<FieldDiff>, Vec<Foreign>, Vec<Ignored>) {
    let mut ignored = Vec::new();
    let reason_for = |p: &str| ignore.iter().find(|(prefix, _)| under(p, prefix)).map(|(_, r)| r.clone());
    let mut keep_fields = Vec::new();
    for f in fields {
        match reason_for(&f.path.pointer()) {
            Some(reason) => ignored.push(Ignored { path: f.path, reason }),
            None => keep_fields.push(f),
        }
    }
    let mut keep_added = Vec::new();
    for a in added {
        match reason_for(&a.path.pointer()) {
            Some(reason) => ignored.push(Ignored { path: a.path, reason }),
            None => keep_added.push(a),
        }
    }
    (keep_fields, keep_added, ignored)
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    #[test]
    fn ignore_prefixes_set_differences_aside() {
        let p = crate::testing::path;
        let fields = vec![
            FieldDiff::new(p("/spec/replicas"), Some(&json!(2)), Some(&json!(5))),
            FieldDiff::new(p("/spec/template/spec/containers/0/image"), Some(&json!("a")), Some(&json!("b"))),
        ];
        let added = vec![Foreign {
            path: p("/metadata/labels/x"),
            value: json!("y"),
            manager: "kubectl-label".into(),
            changed_by: None,
        }];
        let rules =
            vec![("/spec/replicas".to_string(), "HPA web".to_string()), ("/metadata/labels".into(), "rule".into())];
        let (f, a, i) = without_ignored(fields, added, &rules);
        assert_eq!(f.len(), 1);
        assert!(a.is_empty());
        assert_eq!(
            i,
            vec![
                Ignored { path: p("/spec/replicas"), reason: "HPA web".into() },
                Ignored { path: p("/metadata/labels/x"), reason: "rule".into() }
            ]
        );
        assert!(is_ignored("/spec/replicas", &rules) && !is_ignored("/spec/paused", &rules));
    }
}

//! Compare: per-object verdicts from the desired object and its live state. Pure functions; the
//! server-side dry-run itself is fetched by [`crate::live`].

pub mod diff;
pub mod managed;
pub mod path;
pub mod quantity;
pub mod subset;

pub use managed::Foreign;
use serde_json::Value;

/// One field that differs: its JSON pointer, the recorded value and the live value (`None` when
/// absent on that side).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDiff {
    pub path: String,
    pub recorded: Option<Value>,
    pub live: Option<Value>,
}

impl FieldDiff {
    pub fn new(path: &str, recorded: Option<&Value>, live: Option<&Value>) -> FieldDiff {
        FieldDiff { path: path.to_string(), recorded: recorded.cloned(), live: live.cloned() }
    }
}

/// A difference that an ignore rule set aside.
#[derive(Clone, Debug, PartialEq)]
pub struct Ignored {
    pub path: String,
    pub reason: String,
}

/// Which comparison produced a verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Server-side apply dry-run (only for objects the client-side pass found different).
    Exact,
    /// Client-side comparison, with the reason it was used.
    ReadOnly { reason: String },
}

/// The verdict for one desired object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    InSync,
    /// Deleted from the cluster.
    Missing,
    /// Fields differ from the record, or were added outside Helm (see [`ObjectDrift`]).
    Modified,
    /// The cluster no longer serves the kind; counts as drift.
    Unknown {
        reason: String,
    },
    /// Opted out of drift detection (annotation or rule).
    Excluded {
        reason: String,
    },
    /// The object could not be checked.
    Error {
        message: String,
    },
}

/// One object's verdict with its identity and evidence.
#[derive(Clone, Debug)]
pub struct ObjectDrift {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub source: Option<String>,
    pub verdict: Verdict,
    /// Fields whose live value differs from the record.
    pub fields: Vec<FieldDiff>,
    /// Fields another field manager added (changed outside Helm).
    pub added: Vec<Foreign>,
    pub ignored: Vec<Ignored>,
    pub engine: Option<Engine>,
    /// The live object (server-owned fields removed), kept for drifted objects only, to render
    /// a diff.
    pub live: Option<Value>,
}

impl ObjectDrift {
    /// A verdict with no evidence yet.
    pub fn new(
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        source: Option<&str>,
        verdict: Verdict,
    ) -> ObjectDrift {
        ObjectDrift {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
            source: source.map(str::to_string),
            verdict,
            fields: Vec::new(),
            added: Vec::new(),
            ignored: Vec::new(),
            engine: None,
            live: None,
        }
    }

    pub fn is_drift(&self) -> bool {
        matches!(self.verdict, Verdict::Missing | Verdict::Modified | Verdict::Unknown { .. })
    }

    pub fn is_error(&self) -> bool {
        matches!(self.verdict, Verdict::Error { .. })
    }
}

/// Applies ignore prefixes to differences, returning the verdict's evidence.
pub fn set_aside(
    fields: Vec<FieldDiff>,
    added: Vec<Foreign>,
    ignore: &[(String, String)],
) -> (Vec<FieldDiff>, Vec<Foreign>, Vec<Ignored>) {
    let mut ignored = Vec::new();
    let reason_for = |p: &str| ignore.iter().find(|(prefix, _)| path::under(p, prefix)).map(|(_, r)| r.clone());
    let mut keep_fields = Vec::new();
    for f in fields {
        match reason_for(&f.path) {
            Some(reason) => ignored.push(Ignored { path: f.path, reason }),
            None => keep_fields.push(f),
        }
    }
    let mut keep_added = Vec::new();
    for a in added {
        match reason_for(&a.path) {
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
        let fields = vec![
            FieldDiff::new("/spec/replicas", Some(&json!(2)), Some(&json!(5))),
            FieldDiff::new("/spec/template/spec/containers/0/image", Some(&json!("a")), Some(&json!("b"))),
        ];
        let added =
            vec![Foreign { path: "/metadata/labels/x".into(), value: json!("y"), manager: "kubectl-label".into() }];
        let rules =
            vec![("/spec/replicas".to_string(), "HPA web".to_string()), ("/metadata/labels".into(), "rule".into())];
        let (f, a, i) = set_aside(fields, added, &rules);
        assert_eq!(f.len(), 1);
        assert!(a.is_empty());
        assert_eq!(
            i,
            vec![
                Ignored { path: "/spec/replicas".into(), reason: "HPA web".into() },
                Ignored { path: "/metadata/labels/x".into(), reason: "rule".into() }
            ]
        );
    }
}

//! One object's verdict: its identity, what differs, and which comparison said so.
//!
//! The verdict chain, written once: the engine decides each object's [`Verdict`] (what the
//! comparison found: in sync, missing, modified, unknown, excluded, an error;
//! `engine::judge::judge`); [`ObjectDrift::drift_kind`] names it as people and programs do
//! ([`DriftKind`]: changed, fields added, taken over, expected...); a release's
//! `ReleaseVerdict` (in sync, drift, error; `DriftReport::verdict`) is the worst of its objects';
//! and `ExitStatus` (0, 2, 1; `model/exit.rs`) is the worst of the run's releases. `plan`'s
//! own is `PlanVerdict` (the upgrade changes nothing, changes N objects, is unknown, would fail:
//! exit 0, 2, 1, 3).

use super::attribution::{Attribution, Audited, Provenance};
use super::id::ObjectId;
use super::path::FieldPath;
use serde_json::Value;

/// One field that differs: where, the recorded value and the live value (`None` when absent on
/// that side), and who changed it when that is known.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FieldDiff {
    pub(crate) path: FieldPath,
    pub(crate) recorded: Option<Value>,
    pub(crate) live: Option<Value>,
    pub(crate) changed_by: Option<Attribution>,
    /// For a value written under Helm's name (the read-only engine): which write the cluster
    /// says it was.
    pub(crate) provenance: Option<Provenance>,
}

impl FieldDiff {
    pub(crate) fn new(path: FieldPath, recorded: Option<&Value>, live: Option<&Value>) -> FieldDiff {
        FieldDiff { path, recorded: recorded.cloned(), live: live.cloned(), changed_by: None, provenance: None }
    }
}

/// A field another field manager added to a Helm-owned object.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Foreign {
    pub(crate) path: FieldPath,
    pub(crate) value: Value,
    pub(crate) manager: String,
    pub(crate) changed_by: Option<Attribution>,
}

/// A field the chart sets that another field manager owns while Helm owns none of it (on a
/// server-side applied release: the next `helm upgrade` conflicts on it).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ownership {
    pub(crate) path: FieldPath,
    pub(crate) manager: String,
    /// Helm owns it too (a server-side apply that changes it still conflicts).
    pub(crate) shared: bool,
}

/// A field another manager owns whose live value is what the server holds for the recorded
/// object (a default, a value it chose): ownership, not content.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ServerValue {
    pub(crate) path: FieldPath,
    pub(crate) manager: String,
}

/// A change outside Helm that is routine (an expected-change rule, or Helm's own request mutated
/// at admission): shown, not counted as drift.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Expected {
    pub(crate) path: FieldPath,
    /// The live value.
    pub(crate) value: Value,
    pub(crate) reason: String,
    pub(crate) changed_by: Option<Attribution>,
}

/// A drift recorded in the release's baseline (`helm drift accept`): shown, not counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Accepted {
    /// The field (the whole object for a missing one).
    pub(crate) path: FieldPath,
    /// `modified`, `removed`, `added`, `owned-elsewhere`, `missing` or `unknown`.
    pub(crate) change: String,
    /// When the acceptance ends by itself (`accept --expires`).
    pub(crate) until: Option<String>,
}

/// A difference that an ignore rule set aside.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ignored {
    pub(crate) path: FieldPath,
    pub(crate) reason: String,
}

/// The comparison method that produced a verdict: the exact engine (a server-side apply
/// dry-run) or the read-only one (client-side). Not the `engine` module, which runs
/// evaluations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    /// Server-side apply dry-run (only for objects the client-side pass found different).
    Exact,
    /// Client-side comparison, with the reason it was used.
    ReadOnly { reason: String },
}

/// The verdict for one desired object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
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

/// The verdict as people and programs name it: the one table of verdict words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DriftKind {
    InSync,
    Missing,
    /// A field the chart sets has another value, or was removed.
    Changed,
    /// Only fields added outside Helm; every recorded field is intact.
    FieldsAdded,
    /// Values as recorded, but another field manager took over fields the chart sets: a
    /// `helm upgrade` (server-side apply) that changes them conflicts. Drift with `--strict`.
    TakenOver,
    Unknown,
    Excluded,
    /// Only expected changes (a `rollout restart`, an injected CA bundle...): not drift.
    Expected,
    /// Only drift that the release's baseline accepted.
    Accepted,
    Error,
}

impl DriftKind {
    /// `(kind, word in JSON and JUnit, label in text)`.
    const WORDS: [(DriftKind, &'static str, &'static str); 10] = [
        (DriftKind::InSync, "in-sync", "in sync"),
        (DriftKind::Missing, "missing", "missing"),
        (DriftKind::Changed, "changed", "changed"),
        (DriftKind::FieldsAdded, "fields-added", "fields added"),
        (DriftKind::TakenOver, "taken-over", "taken over"),
        (DriftKind::Unknown, "unknown", "unknown"),
        (DriftKind::Excluded, "excluded", "excluded"),
        (DriftKind::Expected, "expected", "expected"),
        (DriftKind::Accepted, "accepted", "accepted"),
        (DriftKind::Error, "error", "error"),
    ];

    /// Every verdict with its machine word.
    pub(crate) fn all() -> impl Iterator<Item = (&'static str, DriftKind)> {
        Self::WORDS.iter().map(|(k, w, _)| (*w, *k))
    }

    fn entry(self) -> (DriftKind, &'static str, &'static str) {
        *Self::WORDS.iter().find(|(k, _, _)| *k == self).expect("every kind has words")
    }

    /// The machine word (JSON `verdict`, JUnit failure message).
    pub(crate) fn word(self) -> &'static str {
        self.entry().1
    }

    /// The word shown in the text report.
    pub(crate) fn label(self) -> &'static str {
        self.entry().2
    }

    /// The widest label, to which the text report pads them into a column.
    pub(crate) fn label_width() -> usize {
        Self::WORDS.iter().map(|(_, _, l)| l.len()).max().unwrap_or(0)
    }

    /// Whether this verdict is drift (counts towards exit code 2); fields owned elsewhere are
    /// drift only with `--strict` (see [`ObjectDrift::is_drift`]).
    pub(crate) fn is_drift(self) -> bool {
        matches!(self, DriftKind::Missing | DriftKind::Changed | DriftKind::FieldsAdded | DriftKind::Unknown)
    }
}

/// One object's verdict with its identity and evidence.
#[derive(Clone, Debug)]
pub(crate) struct ObjectDrift {
    pub(crate) id: ObjectId,
    /// The template it came from (`# Source:`).
    pub(crate) source: Option<String>,
    pub(crate) verdict: Verdict,
    /// Fields whose live value differs from the record.
    pub(crate) fields: Vec<FieldDiff>,
    /// Fields another field manager added (changed outside Helm).
    pub(crate) added: Vec<Foreign>,
    /// Fields the chart sets that another manager owns instead of Helm (server-side applied
    /// releases only).
    pub(crate) disowned: Vec<Ownership>,
    /// Fields another manager owns whose live value is what the server holds for the recorded
    /// object (its defaults, the values it chose: a restore's): ownership, not content, and
    /// nothing a repair removes or sets.
    pub(crate) server_values: Vec<ServerValue>,
    /// Who created the live object when Helm never wrote it (deleted and created again outside
    /// Helm: a restore, `kubectl create -f`): the chart's fields are then owned elsewhere.
    pub(crate) recreated: Option<Attribution>,
    /// Who deleted a missing object, as the audit tells it (`None`: no audit was read).
    pub(crate) deleted_by: Option<Audited>,
    /// The release is applied server-side (Helm 4): a field owned elsewhere makes an upgrade
    /// that changes it conflict.
    pub(crate) apply: super::Apply,
    /// Routine changes outside Helm, not counted as drift.
    pub(crate) expected: Vec<Expected>,
    /// Drift the baseline accepted, not counted.
    pub(crate) accepted: Vec<Accepted>,
    pub(crate) ignored: Vec<Ignored>,
    pub(crate) engine: Option<Method>,
    /// The live object (server-owned fields removed), kept for drifted objects only, to render
    /// a diff.
    pub(crate) live: Option<Value>,
    /// A hook object Helm keeps after its hook ran (`--hooks`), reported in a section of its own.
    pub(crate) hook: Option<Box<super::HookOrigin>>,
    /// The mutating webhooks and policies that cover the object, named where the read-only
    /// engine reports a changed value: it may be their rewrite at admission.
    pub(crate) admission: Vec<String>,
    /// Why the Flux HelmRelease that installs the release leaves this object out of its drift
    /// correction (Flux's opt-out annotation on the live object): its drift is reported all the
    /// same, and repair and self-healing leave it as it is, as helm-controller does.
    pub(crate) flux_left_out: Option<String>,
    /// The writer (Helm's field manager) of which the live object holds no managedFields entry:
    /// its ownership record was wiped (or every field taken over), so it is judged strictly
    /// (admission's coverage excuses nothing on it).
    pub(crate) ownership_wiped: Option<String>,
}

impl ObjectDrift {
    /// A verdict with no evidence yet.
    pub(crate) fn new(id: ObjectId, source: Option<&str>, verdict: Verdict) -> ObjectDrift {
        ObjectDrift {
            id,
            source: source.map(str::to_string),
            verdict,
            fields: Vec::new(),
            added: Vec::new(),
            disowned: Vec::new(),
            server_values: Vec::new(),
            recreated: None,
            deleted_by: None,
            apply: super::Apply::ClientSide,
            expected: Vec::new(),
            accepted: Vec::new(),
            ignored: Vec::new(),
            engine: None,
            live: None,
            hook: None,
            admission: Vec::new(),
            flux_left_out: None,
            ownership_wiped: None,
        }
    }

    /// What the verdict is called in reports: the verdict refined by what was found (only added
    /// fields, only expected changes, accepted...). Not the Kubernetes kind (`id.kind`).
    pub(crate) fn drift_kind(&self) -> DriftKind {
        match &self.verdict {
            Verdict::InSync if !self.disowned.is_empty() => DriftKind::TakenOver,
            Verdict::InSync if !self.accepted.is_empty() => DriftKind::Accepted,
            Verdict::InSync if !self.expected.is_empty() => DriftKind::Expected,
            Verdict::InSync => DriftKind::InSync,
            Verdict::Missing => DriftKind::Missing,
            Verdict::Modified if !self.fields.is_empty() => DriftKind::Changed,
            Verdict::Modified if !self.added.is_empty() => DriftKind::FieldsAdded,
            Verdict::Modified => DriftKind::TakenOver,
            Verdict::Unknown { .. } => DriftKind::Unknown,
            Verdict::Excluded { .. } => DriftKind::Excluded,
            Verdict::Error { .. } => DriftKind::Error,
        }
    }

    /// Whether it was not judged because nothing where it lives names the record's release
    /// (a record's claim on another namespace without that namespace's word).
    pub(crate) fn outside_claim(&self) -> bool {
        matches!(&self.verdict, Verdict::Excluded { reason } if reason.starts_with(super::refusal::OUTSIDE_CLAIM))
    }

    /// Why: the reason of an unknown or excluded object, the message of an error.
    pub(crate) fn reason(&self) -> Option<&str> {
        match &self.verdict {
            Verdict::Unknown { reason } | Verdict::Excluded { reason } => Some(reason),
            Verdict::Error { message } => Some(message),
            _ => None,
        }
    }

    /// Who made its drift, each once, at most four: the writers' managers, with the person the
    /// audit names (`kubectl-edit by alice@example.com via admin`), and who deleted it.
    pub(crate) fn makers(&self) -> Vec<String> {
        let deleted = self.deleted_by.iter().map(|d| match d {
            Audited::Found(a) if a.verb == "deletecollection" => format!("deleted by {} (deletecollection)", a.named()),
            Audited::Found(a) => format!("deleted by {}", a.named()),
            Audited::NoRecord(_) => "deleted".to_string(),
        });
        let changers = self.changed_by().chain(self.recreated.as_ref()).map(|w| match &w.audit {
            Some(Audited::Found(a)) => format!("{} by {}", super::manager_shown(&w.manager), a.named()),
            _ => super::manager_shown(&w.manager),
        });
        let others = self.managers().into_iter().map(super::manager_shown);
        let mut out: Vec<String> = Vec::new();
        for m in deleted.chain(changers).chain(others) {
            let said = out.iter().any(|o| *o == m || o.starts_with(&format!("{m} by ")));
            if out.len() < 4 && !said {
                out.push(m);
            }
        }
        out
    }

    /// Who last wrote the differing and added fields, as managedFields tell it (in field order).
    pub(crate) fn changed_by(&self) -> impl Iterator<Item = &Attribution> {
        let fields = self.fields.iter().filter_map(|f| f.changed_by.as_ref());
        fields.chain(self.added.iter().filter_map(|a| a.changed_by.as_ref()))
    }

    /// Every path that differs, is added outside Helm or is owned elsewhere, in that order.
    pub(crate) fn drifted_paths(&self) -> Vec<String> {
        let fields = self.fields.iter().map(|f| f.path.to_string());
        let added = self.added.iter().map(|a| a.path.to_string());
        fields.chain(added).chain(self.disowned.iter().map(|d| d.path.to_string())).collect()
    }

    /// The field managers that last wrote what differs, was added or is owned elsewhere, each
    /// once, in field order.
    pub(crate) fn managers(&self) -> Vec<&str> {
        let mut seen: Vec<&str> = Vec::new();
        let added = self.added.iter().map(|a| a.manager.as_str());
        let owners = self.disowned.iter().map(|d| d.manager.as_str());
        for m in self.changed_by().map(|w| w.manager.as_str()).chain(added).chain(owners) {
            if !seen.contains(&m) {
                seen.push(m);
            }
        }
        seen
    }

    /// Whether it lives outside `namespace` (cluster-scoped, or in another namespace); a
    /// document that is not an object lives nowhere.
    pub(crate) fn lies_outside(&self, namespace: &str) -> bool {
        !self.id.api_version.is_empty() && self.id.namespace.as_deref() != Some(namespace)
    }

    /// Whether the object counts as drift: its kind is, or (with `--strict`) it is only owned
    /// elsewhere, which the comparison then marks modified.
    pub(crate) fn is_drift(&self) -> bool {
        self.drift_kind().is_drift() || (self.drift_kind() == DriftKind::TakenOver && self.verdict == Verdict::Modified)
    }

    /// Whether `--only NAMESPACE/KIND/NAME`, `KIND/NAME` (kind case-insensitive) or `NAME` selects
    /// this object (every object when `only` is empty; see [`super::selector`]).
    pub(crate) fn selected_by(&self, only: &[String]) -> bool {
        only.is_empty() || only.iter().any(|f| self.id.named_by(f))
    }

    /// List items whose key changed (a changed port, a renamed container or env var): each
    /// recorded item missing live, paired with a live-only item of the same list that took its
    /// place, in list order.
    pub(crate) fn replaced_items(&self) -> Vec<(&FieldPath, &FieldPath)> {
        use super::Segment;
        let list = |p: &FieldPath| FieldPath(p.0[..p.0.len().saturating_sub(1)].to_vec()).live_pointer();
        let mut lost: Vec<&FieldPath> = self
            .fields
            .iter()
            .filter(|f| f.live.is_none() && matches!(f.path.0.last(), Some(Segment::Item { live: None, .. })))
            .map(|f| &f.path)
            .collect();
        let live_only = self.fields.iter().filter(|f| f.recorded.is_none()).map(|f| &f.path);
        let mut took: Vec<&FieldPath> = live_only
            .chain(self.added.iter().map(|a| &a.path))
            .filter(|p| matches!(p.0.last(), Some(Segment::Item { recorded: None, .. })))
            .collect();
        lost.sort_by_key(|p| p.order());
        took.sort_by_key(|p| p.order());
        let mut pairs = Vec::new();
        for gone in lost {
            if let Some(i) = took.iter().position(|t| list(t) == list(gone)) {
                pairs.push((gone, took.remove(i)));
            }
        }
        pairs
    }

    pub(crate) fn is_error(&self) -> bool {
        self.drift_kind() == DriftKind::Error
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_distinct_words() {
        let words: std::collections::BTreeSet<_> = DriftKind::WORDS.iter().map(|(_, w, _)| *w).collect();
        assert_eq!(words.len(), DriftKind::WORDS.len());
        assert_eq!(DriftKind::FieldsAdded.word(), "fields-added");
        assert_eq!(DriftKind::InSync.label(), "in sync");
    }

    #[test]
    fn a_changed_key_pairs_the_lost_item_with_the_one_that_took_its_place() {
        use serde_json::json;
        let ports = FieldPath::root().field("ports");
        let mut o = ObjectDrift::new(ObjectId::new("v1", "Pod", Some("ns"), "p"), None, Verdict::Modified);
        o.fields.push(FieldDiff::new(ports.item(Some(0), None, None), Some(&json!({"containerPort": 80})), None));
        let foreign = |i| Foreign {
            path: ports.item(None, Some(i), None),
            value: json!({}),
            manager: "k".into(),
            changed_by: None,
        };
        o.added = vec![foreign(1), foreign(0)];
        o.added.push(Foreign {
            path: FieldPath::root().field("x"),
            value: json!(1),
            manager: "k".into(),
            changed_by: None,
        });
        assert_eq!(
            o.replaced_items(),
            vec![(&o.fields[0].path, &o.added[1].path)],
            "one lost, the first live-only item"
        );
    }

    #[test]
    fn only_filters_by_kind_and_name() {
        let o = ObjectDrift::new(ObjectId::new("apps/v1", "Deployment", Some("ns"), "web"), None, Verdict::Modified);
        assert!(o.selected_by(&[]));
        assert!(o.selected_by(&["deployment/web".into()]));
        assert!(o.selected_by(&["web".into()]));
        assert!(!o.selected_by(&["Service/web".into()]));
        for typed in ["deploy/web", "Deployments/web", "deployments.apps/web", "DEPLOYMENT/web"] {
            assert!(o.selected_by(&[typed.into()]), "{typed}");
        }
        assert!(!o.selected_by(&["ds/web".into()]));
        assert!(o.selected_by(&["ns/Deployment/web".into()]) && !o.selected_by(&["other/Deployment/web".into()]));
    }

    #[test]
    fn identity_reads_like_kubectl() {
        assert_eq!(ObjectId::new("apps/v1", "Deployment", Some("ns"), "web").to_string(), "Deployment ns/web");
        let role = ObjectId::new("rbac.authorization.k8s.io/v1", "ClusterRole", None, "r");
        assert_eq!(role.to_string(), "ClusterRole r");
    }
}

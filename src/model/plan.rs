//! The outcome of `plan`: what the next `helm upgrade` would do to the cluster as it is now,
//! object by object, whether it would fail, and what becomes of today's drift.

use super::{ExitStatus, FieldConflict, FieldDiff, ObjectId};

/// What the upgrade does to one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlannedChange {
    Create,
    Update,
    Delete,
    None,
    /// The object could not be read (forbidden, an error): what the upgrade does to it, and
    /// whether it fails on it, is not known. Never a clean prediction: the plan exits 1.
    Unknown,
}

impl PlannedChange {
    /// The word in text and JSON.
    pub(crate) fn word(self) -> &'static str {
        match self {
            PlannedChange::Create => "create",
            PlannedChange::Update => "update",
            PlannedChange::Delete => "delete",
            PlannedChange::None => "none",
            PlannedChange::Unknown => "unknown",
        }
    }
}

/// One object of the plan: what changes in it (live → after the upgrade), and why the upgrade
/// would fail on it, if it would.
#[derive(Clone, Debug)]
pub(crate) struct PlannedObject {
    pub(crate) id: ObjectId,
    pub(crate) change: PlannedChange,
    /// The fields the upgrade changes: `recorded` is the live value, `live` the value after.
    pub(crate) fields: Vec<FieldDiff>,
    /// Why the upgrade fails on this object (a conflict with another field manager, an
    /// immutable field, an object it does not own), in the server's or helm's words.
    pub(crate) failure: Option<String>,
    /// The fields of other field managers the upgrade's unforced server-side apply meets, as
    /// the server names them (then `failure` is its 409).
    pub(crate) conflicts: Vec<FieldConflict>,
    /// Something worth knowing that changes nothing (kept by `helm.sh/resource-policy`).
    pub(crate) note: Option<String>,
    /// Rendered by a template that calls `lookup`, which answered nothing (the values are not
    /// trusted): what the upgrade changes in it is no prediction, and is not counted.
    pub(crate) unpredictable: bool,
}

/// What becomes of one drift `check` reports today.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DriftFate {
    /// `Kind namespace/name path`.
    pub(crate) drift: String,
    pub(crate) fate: Fate,
}

/// What the upgrade does to one drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// The upgrade writes the chart's value (re-creates the object, or deletes it).
    Wiped,
    /// Still drift after it.
    Kept,
    /// The new chart writes the live value.
    Adopted,
    /// The upgrade fails on it.
    Conflicts,
}

impl Fate {
    /// The word in every format.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Fate::Wiped => "wiped",
            Fate::Kept => "kept",
            Fate::Adopted => "adopted",
            Fate::Conflicts => "conflicts",
        }
    }
}

impl std::fmt::Display for Fate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.word())
    }
}

/// The plan in one sentence; decided from the objects' changes and failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlanVerdict {
    WouldFail,
    /// This many objects could not be read: what the upgrade does is unknown.
    Unknown(usize),
    NoChange,
    /// It changes this many objects.
    Changes(usize),
}

impl PlanVerdict {
    /// 3 the upgrade would fail, 1 an object could not be read (the prediction is incomplete),
    /// 2 it changes something, 0 it changes nothing.
    pub(crate) fn exit_status(self) -> ExitStatus {
        match self {
            PlanVerdict::WouldFail => ExitStatus::WouldFail,
            PlanVerdict::Unknown(_) => ExitStatus::Error,
            PlanVerdict::Changes(_) => ExitStatus::Drift,
            PlanVerdict::NoChange => ExitStatus::InSync,
        }
    }
}

impl std::fmt::Display for PlanVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        match *self {
            PlanVerdict::WouldFail => f.write_str("the upgrade would fail"),
            PlanVerdict::Unknown(n) => {
                write!(f, "what the upgrade does is unknown: {n} object{} could not be read", s(n))
            }
            PlanVerdict::NoChange => f.write_str("the upgrade changes nothing"),
            PlanVerdict::Changes(n) => write!(f, "the upgrade changes {n} object{}", s(n)),
        }
    }
}

/// `plan`'s report.
#[derive(Clone, Debug)]
pub(crate) struct PlanReport {
    pub(crate) release: String,
    pub(crate) namespace: String,
    /// The revision the plan starts from, and the chart it upgrades to (`name-version`).
    pub(crate) revision: u32,
    pub(crate) chart: String,
    /// How the upgrade applies: the release's way, unless `--server-side` says otherwise.
    pub(crate) apply: super::Apply,
    /// How the release was applied until now, when the upgrade switches (`--server-side=true`
    /// on a release Helm 3 installed).
    pub(crate) switched_from: Option<super::Apply>,
    /// Whose upgrade is planned: the release's writer (`helm`, or a controller's name), whose
    /// field manager the dry-runs write as.
    pub(crate) writer: super::HelmWriter,
    pub(crate) objects: Vec<PlannedObject>,
    /// Why the upgrade as a whole fails, in helm's words (`UPGRADE FAILED`: an object it may not
    /// take, a chart that does not render); then no object is planned.
    pub(crate) failure: Option<String>,
    pub(crate) drift: Vec<DriftFate>,
    /// The hooks the upgrade would run (`Kind name (events)`); never run.
    pub(crate) hooks: Vec<String>,
    /// How the plan was made, where it differs from the upgrade (a chart rendered without
    /// the cluster's `lookup`).
    pub(crate) notes: Vec<String>,
}

impl PlanReport {
    /// How the upgrade applies, in words: `server-side apply`, with `, switched from
    /// client-side` when it changes how the release was applied.
    pub(crate) fn applied(&self) -> String {
        match self.switched_from {
            Some(was) => format!("{} apply, switched from {was}", self.apply),
            None => format!("{} apply", self.apply),
        }
    }

    /// Whether the upgrade would fail.
    pub(crate) fn would_fail(&self) -> bool {
        self.failure.is_some() || self.objects.iter().any(|o| o.failure.is_some())
    }

    /// Every reason the upgrade fails: the release's, then each object's (`Kind ns/name: why`).
    pub(crate) fn failures(&self) -> Vec<String> {
        let objects = self.objects.iter().filter_map(|o| Some(format!("{}: {}", o.id, o.failure.as_ref()?)));
        self.failure.iter().cloned().chain(objects).collect()
    }

    /// The plan in one sentence: the upgrade would fail, is unknown, changes N objects, or
    /// changes nothing.
    pub(crate) fn verdict(&self) -> PlanVerdict {
        let guessed = |o: &&PlannedObject| o.unpredictable && o.change == PlannedChange::Update;
        let changed = self.objects.iter().filter(|o| o.change != PlannedChange::None && !guessed(o)).count();
        let unknown = self.objects.iter().filter(|o| o.change == PlannedChange::Unknown).count();
        match (self.would_fail(), changed) {
            (true, _) => PlanVerdict::WouldFail,
            (false, _) if unknown > 0 => PlanVerdict::Unknown(unknown),
            (false, 0) => PlanVerdict::NoChange,
            (false, n) => PlanVerdict::Changes(n),
        }
    }

    /// The exit code of its verdict.
    pub(crate) fn exit_status(&self) -> ExitStatus {
        self.verdict().exit_status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_object_is_never_a_clean_plan() {
        let object = |change, failure: Option<&str>| PlannedObject {
            id: ObjectId {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: Some("shop".into()),
                name: "web".into(),
            },
            change,
            fields: Vec::new(),
            failure: failure.map(String::from),
            conflicts: Vec::new(),
            note: None,
            unpredictable: false,
        };
        let plan = |objects| PlanReport {
            release: "web".into(),
            namespace: "shop".into(),
            revision: 1,
            chart: "web-1.0.0".into(),
            apply: crate::model::Apply::ServerSide,
            switched_from: None,
            writer: crate::model::HelmWriter::helm_command(),
            objects,
            failure: None,
            drift: Vec::new(),
            hooks: Vec::new(),
            notes: Vec::new(),
        };
        let unknown = plan(vec![object(PlannedChange::None, None), object(PlannedChange::Unknown, None)]);
        assert_eq!(unknown.exit_status(), ExitStatus::Error);
        assert_eq!(unknown.verdict().to_string(), "what the upgrade does is unknown: 1 object could not be read");
        let failing = plan(vec![object(PlannedChange::Unknown, None), object(PlannedChange::Update, Some("409"))]);
        assert_eq!(failing.exit_status(), ExitStatus::WouldFail, "a known failure is said whatever is unknown");
        assert_eq!(plan(vec![object(PlannedChange::None, None)]).exit_status(), ExitStatus::InSync);
        let guessed = PlannedObject { unpredictable: true, ..object(PlannedChange::Update, None) };
        assert_eq!(plan(vec![guessed.clone()]).exit_status(), ExitStatus::InSync, "a guess is no change");
        let failing = PlannedObject { failure: Some("409".into()), ..guessed };
        assert_eq!(plan(vec![failing]).exit_status(), ExitStatus::WouldFail, "a failure is said all the same");
    }
}

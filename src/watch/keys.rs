//! The watcher's keys, in one place: a release, one of its objects, a watch, and a touch (what
//! a change says to evaluate again).

use crate::model::{DriftReport, ObjectId};

/// A release: its namespace and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ReleaseKey {
    pub(crate) namespace: String,
    pub(crate) name: String,
}

impl ReleaseKey {
    pub(crate) fn new(namespace: &str, name: &str) -> ReleaseKey {
        ReleaseKey { namespace: namespace.to_string(), name: name.to_string() }
    }

    /// The release a report is about, by where its record is stored (as the watcher lists,
    /// reads and opts releases in: a record stored apart from its release is keyed where it is).
    pub(crate) fn of(report: &DriftReport) -> ReleaseKey {
        ReleaseKey::new(report.stored_in(), &report.release)
    }
}

/// `namespace/name`.
impl std::fmt::Display for ReleaseKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A release and one of its objects: what a drift signature is reported for.
pub(crate) type ReleaseObject = (ReleaseKey, ObjectId);

/// One object a release placed, as a change to it is seen: group, plural, namespace, name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ObjectKey {
    pub(crate) group: String,
    pub(crate) plural: String,
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
}

/// One watch: a kind, in one namespace or cluster-wide.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct WatchKey {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
    pub(crate) namespace: Option<String>,
}

/// Something changed that may change a verdict.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Touch {
    /// A release's storage records changed.
    Release(ReleaseKey),
    /// An object of a watched kind changed.
    Object(ObjectKey),
    /// Objects of this kind (group, plural) went away unseen: a watch listed again after a gap
    /// and some it knew were no longer there (a watch keeps no names, only their hashes).
    Kind(String, String),
    /// Records went away unseen (the records' watch listed again after a gap): every watched
    /// release is looked at again.
    Records,
}

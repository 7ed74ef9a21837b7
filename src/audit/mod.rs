//! The API server's audit as a source of who made a drift: its events parsed with bounds
//! ([`event`]), kept for the objects of the watched releases in a window bounded in time and
//! bytes ([`window`]), matched to each drifted field, deleted and re-created object
//! ([`matching`]), and read from a log backend's file ([`file`]). Metadata only: a request or
//! response body is never read.

pub(crate) mod event;
pub(crate) mod file;
pub(crate) mod matching;
pub(crate) mod window;

pub(crate) use event::AuditedWrite;
pub(crate) use matching::attribute;
pub(crate) use window::{Window, WindowLimits};

/// An object as the audit names it: API group, resource (plural), namespace, name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Target {
    pub(crate) group: String,
    pub(crate) plural: String,
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
}

impl Target {
    /// The collection the object is in (a `deletecollection` names no object: its name is empty).
    pub(crate) fn collection(&self) -> Target {
        Target { name: String::new(), ..self.clone() }
    }

    /// Whether this names a collection rather than one object.
    pub(crate) fn is_collection(&self) -> bool {
        self.name.is_empty()
    }
}

//! Which object: its identity as Helm sent it, and which of its paths hold secret values.

use super::path::under;
use std::fmt;

/// Which object: as Helm sent it (`apiVersion`, `kind`, namespace after placement, name).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ObjectId {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    /// `None` for cluster-scoped objects.
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
}

impl ObjectId {
    pub(crate) fn new(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> ObjectId {
        ObjectId {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        }
    }

    /// A core `Secret`, whose data is never shown unless asked.
    pub(crate) fn is_secret(&self) -> bool {
        self.kind == "Secret" && self.api_version == "v1"
    }

    /// Whether the value at `pointer` of this object is (or holds) secret data: a core Secret's
    /// `data` and `stringData`, and the annotations in which `kubectl apply`, kapp and Rancher
    /// copy them.
    pub(crate) fn is_secret_path(&self, pointer: &str) -> bool {
        self.is_secret() && SECRET_POINTERS.iter().any(|p| under(pointer, p) || under(p, pointer))
    }
}

/// What is shown instead of a secret value.
pub(crate) const HIDDEN: &str = "(hidden)";

/// Pointers whose values (and everything under them) are secret in a core Secret.
pub(crate) const SECRET_POINTERS: [&str; 5] = [
    "/data",
    "/stringData",
    // kubectl apply's copy of the whole object.
    "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
    // kapp's copy of the object as it applied it.
    "/metadata/annotations/kapp.k14s.io~1original",
    // Rancher's (wrangler's) copy of the applied object.
    "/metadata/annotations/objectset.rio.cattle.io~1applied",
];

impl fmt::Display for ObjectId {
    /// `Kind namespace/name`, or `Kind name` for cluster-scoped objects.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

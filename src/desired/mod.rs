//! Desired state: the objects Helm applied for a release, rebuilt from its stored manifest.

mod documents;
mod hooks;
mod manifest;
pub(crate) mod metadata;
mod object;

pub(crate) use documents::diff_documents;
pub(crate) use hooks::hook_objects;
pub(crate) use manifest::split;
pub(crate) use object::{DesiredError, DesiredObject, crds, from_manifest, parse_manifest};

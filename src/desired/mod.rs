//! Desired state: the objects Helm applied for a release, rebuilt from its stored manifest.

mod documents;
mod manifest;
pub mod metadata;
mod object;
pub mod yaml;

pub use documents::diff_documents;
pub use manifest::split;
pub use object::{DesiredError, DesiredObject, crds, from_manifest, parse_manifest};

//! Desired state: the objects Helm applied for a release, rebuilt from its stored manifest.

mod manifest;
mod object;

pub use manifest::{Document, split};
pub use object::{DesiredError, DesiredObject, from_manifest};

//! helm-drift: finds (and repairs) drift between what Helm recorded for a release and the cluster.
//!
//! The pipeline, one module per stage: [`settings`] → [`cluster`] → [`release`] (Helm storage) →
//! [`desired`] (the objects Helm applied) → [`live`] (the cluster's objects) → [`compare`]
//! (differences) → [`repair`] (a plan of changes). Above the stages, the [`engine`] (session,
//! evaluation of a release, scans) produces the [`model`]; thin [`commands`] drive the engine and
//! hand the model to [`report`], the only writer of output. [`helm`] runs the helm binary; [`cli`]
//! is the only clap user.

pub(crate) mod api;
pub(crate) mod baseline;
pub mod cli;
pub(crate) mod commands;
pub(crate) mod compare;
pub(crate) mod desired;
pub(crate) mod engine;
pub(crate) mod errors;
pub(crate) mod explain;
pub(crate) mod helm;
pub(crate) mod live;
pub(crate) mod model;
pub(crate) mod policy;
pub(crate) mod random;
pub(crate) mod release;
pub(crate) mod repair;
pub(crate) mod report;
pub(crate) mod settings;
pub(crate) mod watch;

/// What the fuzz targets (`fuzz/`) call: the parsers of untrusted input, and nothing else.
pub mod fuzzing {
    pub use crate::desired::from_manifest;
    pub use crate::release::decode;
}

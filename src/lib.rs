//! helm-drift: finds (and repairs) drift between what Helm recorded for a release and the cluster.
//!
//! The pipeline, one module per stage: [`settings`] → [`cluster`] → [`release`] (Helm storage) →
//! [`desired`] (the objects Helm applied) → [`live`] (the cluster's objects) → [`compare`]
//! (differences) → [`repair`] (a plan of changes). Above the stages, the [`engine`] (session,
//! evaluation of a release, scans) produces the [`model`]; thin [`commands`] drive the engine and
//! hand the model to [`report`], the only writer of output. [`helm`] runs the helm binary; [`cli`]
//! is the only clap user.

pub mod api;
pub mod baseline;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod desired;
pub mod engine;
pub mod errors;
pub mod explain;
pub mod helm;
pub mod live;
pub mod model;
pub mod policy;
pub mod random;
pub mod release;
pub mod repair;
pub mod report;
pub mod settings;
pub mod watch;

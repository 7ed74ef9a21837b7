//! helm-drift: finds (and repairs) drift between what Helm recorded for a release and the cluster.
//!
//! The pipeline, one module per stage: [`settings`] → [`cluster`] → [`release`] (Helm storage) →
//! [`desired`] (the objects Helm applied) → [`live`] (the cluster's objects) → [`compare`]
//! (verdicts) → [`report`] (the only writer to stdout/stderr). [`cli`] is the only clap user.

pub mod check;
pub mod cli;
pub mod cluster;
pub mod compare;
pub mod desired;
pub mod ignore;
pub mod live;
pub mod release;
pub mod render;
pub mod repair;
pub mod report;
pub mod settings;
pub mod upgrade;

//! The engine: a [`Session`] (connection, discovery, Helm's storage, live cache), the evaluation
//! of one release (record → desired objects → live → compare → verdicts, in [`evaluate`], its
//! pure steps in `steps`), and a
//! [`scan`] of every release a [`Selection`] names, and [`makers`]: who made each drift, from
//! the audit events kept. Commands drive it and hand its model to the
//! report layer.

mod admitted;
mod error;
mod evaluate;
mod flux_rules;
mod grounds;
mod hook_runs;
mod hooks;
mod judge;
pub(crate) mod makers;
mod own_name;
mod rules;
mod scan;
mod session;
mod steps;
mod writer;

pub(crate) use error::{EvaluateError, Failure};
pub(crate) use evaluate::{Evaluated, evaluate, evaluate_selected};
pub(crate) use scan::{
    Selection, evaluate_with_baseline, file_baseline, lists_every_namespace, prefetch_records, scan, select,
};
pub(crate) use session::Session;

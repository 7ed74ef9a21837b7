//! The engine: a [`Session`] (connection, discovery, Helm's storage, live cache), the evaluation
//! of one release (record → desired objects → live → compare → verdicts, in [`evaluate`], its
//! decisions pure in `decide`), and a
//! [`scan`] of every release a [`Selection`] names. Commands drive it and hand its model to the
//! report layer.

mod decide;
mod evaluate;
mod hook_runs;
mod hooks;
mod judge;
mod scan;
mod session;

pub(crate) use decide::TooManyObjects;
pub(crate) use evaluate::{Evaluated, evaluate, evaluate_selected};
pub(crate) use scan::{
    Selection, evaluate_with_baseline, file_baseline, lists_every_namespace, prefetch_records, scan, select,
};
pub(crate) use session::Session;

//! Repair: from the verdicts of a release, a plan of typed steps (one per change to one object),
//! each with the change that makes it, as Helm would make it under the release's writer's name
//! (`helm`, or a controller's): server-side apply for server-side applied releases, create or
//! guarded JSON patches for client-side applied ones.

mod authority;
mod execute;
mod order;
mod owners;
mod patch;
mod run;
mod steps;

pub(crate) use authority::Authority;
pub(crate) use execute::RepairRequest;
pub(crate) use owners::hand_over;
pub(crate) use run::{execute, execute_as};
pub(crate) use steps::{DraftStep, draft};

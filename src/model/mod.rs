//! The report model: plain data that every stage hands on and the report layer renders. It
//! depends on nothing else in the crate: verdicts of objects and releases, field paths, the
//! outcome of each command, and the typed exit status.

mod accept;
mod board;
mod exit;
mod fleet;
mod id;
mod object;
pub mod path;
mod progress;
mod release;
mod render;
mod repair;
mod upgrade;

pub use accept::AcceptReport;
pub use board::BoardRelease;
pub use exit::ExitStatus;
pub use fleet::{ClusterReport, FleetRepair, FleetReport};
pub use id::{HIDDEN, ObjectId, SECRET_POINTERS};
pub use object::{
    Accepted, Attribution, DriftKind, Expected, FieldDiff, Foreign, Ignored, Method, ObjectDrift, Ownership,
    ServerValue, Verdict,
};
pub use path::{FieldPath, ItemKey, Segment};
pub use progress::{Phase, Progress, Tick};
pub use release::{Built, Cause, DriftReport, Explanation, Outcome, ReleaseError, ReleaseVerdict, Rerender, RunReport};
pub use render::{DocChange, DocDiff, RenderReport};
pub use repair::{Action, RepairReport, Skip, Step, StepStatus};
pub use upgrade::UpgradeReport;

//! The report model: plain data that every stage hands on and the report layer renders. It
//! depends on nothing else in the crate: verdicts of objects and releases, field paths, the
//! outcome of each command, and the typed exit status.

pub(crate) mod accept;
mod apply;
mod attribution;
mod board;
mod conflict;
mod decide;
mod duration;
mod exit;
mod fleet;
mod fleet_plan;
mod hook;
mod id;
mod installer;
mod kinds;
mod object;
mod origin;
pub(crate) mod path;
mod plan;
mod progress;
mod published;
mod refusal;
mod release;
mod render;
mod repair;
pub(crate) mod selector;
mod strictness;
mod text;
mod trust;
mod upgrade;
mod writer;

pub(crate) use accept::{AcceptReport, AcceptedDrift};
pub(crate) use apply::Apply;
pub(crate) use attribution::{Actor, Attribution, Audited, HelmWrite, Provenance, manager_shown};
pub(crate) use board::{BoardRelease, DriftEnd, DriftLife};
pub(crate) use conflict::FieldConflict;
pub(crate) use decide::{Deed, Question, Rights, decide};
pub(crate) use duration::parse_duration;
pub(crate) use exit::ExitStatus;
pub(crate) use fleet::{ClusterReport, FleetRepair, FleetReport, NotRun};
pub(crate) use fleet_plan::{ClusterOutcome, ClusterPlan, FleetPlan, ProxyAction};
pub(crate) use hook::HookOrigin;
pub(crate) use id::{HIDDEN, ObjectId, SECRET_POINTERS};
pub(crate) use installer::{DRIFT_BYTES, DriftSpec, FluxInstaller};
pub(crate) use kinds::{KINDS, names_kind};
pub(crate) use object::{
    Accepted, DriftKind, Expected, FieldDiff, Foreign, Ignored, Method, ObjectDrift, Ownership, ServerValue, Verdict,
};
pub(crate) use origin::{
    FLUX_NAME_LABEL, FLUX_NAMESPACE_LABEL, RELEASE_NAME_ANNOTATION, RELEASE_NAMESPACE_ANNOTATION, flux_origin,
    flux_release_name,
};
pub(crate) use path::{FieldPath, ItemKey, Segment};
pub(crate) use plan::{DriftFate, Fate, PlanReport, PlannedChange, PlannedObject};
pub(crate) use progress::{Phase, Progress, Tick};
pub(crate) use refusal::{CONFLICTING_CLAIM, Refusal, place};
pub(crate) use release::{
    Built, Cause, DriftReport, Explanation, Outcome, ReleaseError, ReleaseVerdict, Rerender, RunReport,
};
pub(crate) use render::{DocChange, DocDiff, RenderReport};
pub(crate) use repair::{Action, RepairReport, RepairStep, Skip, StepStatus};
pub(crate) use strictness::Strictness;
pub(crate) use text::percent_decoded;
pub(crate) use trust::{Acting, Home, StoredApart, Trust, Vouch};
pub(crate) use upgrade::UpgradeReport;
pub(crate) use writer::{HELM_COMMAND, HelmWriter, WriterFound};

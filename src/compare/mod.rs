//! Compare: turns desired objects and their live state into per-object verdicts.

pub mod quantity;

use crate::desired::DesiredObject;
use crate::live::{LiveState, Located};

/// The verdict for one desired object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    InSync,
    /// Deleted from the cluster.
    Missing,
    /// The cluster no longer serves the kind; counts as drift.
    Unknown {
        reason: String,
    },
    /// The object could not be checked.
    Error {
        message: String,
    },
}

/// One object's verdict with its identity.
#[derive(Clone, Debug)]
pub struct ObjectDrift {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub source: Option<String>,
    pub verdict: Verdict,
}

impl ObjectDrift {
    pub fn is_drift(&self) -> bool {
        matches!(self.verdict, Verdict::Missing | Verdict::Unknown { .. })
    }
}

/// Verdicts for `desired[i]` against `live[i]`.
pub fn compare(desired: &[DesiredObject], live: Vec<Located>) -> Vec<ObjectDrift> {
    desired
        .iter()
        .zip(live)
        .map(|(d, l)| {
            let verdict = match l.state {
                LiveState::Present(_) => Verdict::InSync,
                LiveState::Absent => Verdict::Missing,
                LiveState::NotServed => {
                    Verdict::Unknown { reason: format!("the cluster does not serve {} {}", d.api_version, d.kind) }
                }
                LiveState::Failed(message) => Verdict::Error { message },
            };
            ObjectDrift {
                api_version: d.api_version.clone(),
                kind: d.kind.clone(),
                namespace: l.namespace,
                name: d.name.clone(),
                source: d.source.clone(),
                verdict,
            }
        })
        .collect()
}

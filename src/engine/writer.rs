//! The writer stage: whose name Helm's writes to one release are under, decided once per
//! release after its objects are read. The one the caller gives wins (`plan`: the writer of the
//! release today), then `--helm-manager`, else it is learnt from who owns the recorded fields
//! ([`crate::compare::writer::learn`]). Judging takes it in [`super::grounds::Grounds`]; repair,
//! healing and `plan` take it from [`super::Evaluated::writer`], never from the report.

use super::judge::Reading;
use crate::compare::provenance::Deployed;
use crate::compare::writer;
use crate::desired::DesiredObject;
use crate::live::LiveState;
use crate::model::{HelmWriter, WriterFound};

/// Helm's writer: the one `given`, else the `configured` one (`--helm-manager`), else learnt from
/// the objects read (present ones only).
pub(crate) fn decide(
    objects: &[DesiredObject],
    reads: &[Reading],
    deployed: &Deployed,
    given: Option<&HelmWriter>,
    configured: Option<&HelmWriter>,
) -> HelmWriter {
    if let Some(w) = given.or(configured) {
        return w.clone();
    }
    let present = objects.iter().zip(reads).filter_map(|(o, r)| match r {
        Reading::Live(LiveState::Present(live), _) => Some(writer::Read { id: o.id(), desired: &o.object, live }),
        _ => None,
    });
    writer::learn(present, deployed)
}

/// What is worth saying about the release's writer: objects whose fields another manager owns
/// (judged and written as the writer all the same), or why it is the helm command's when
/// objects were read and none told.
pub(crate) fn notes(writer: &HelmWriter, read: usize) -> Vec<String> {
    match &writer.found {
        WriterFound::Learnt { others, .. } => others
            .iter()
            .map(|(id, m)| {
                format!(
                    "{id}: its recorded fields are owned by {m}, not by {} (the release's writer: it {}); judged and written as {}",
                    writer.manager,
                    writer.why(),
                    writer.manager
                )
            })
            .collect(),
        WriterFound::Default { .. } if read > 0 => vec![format!("Helm's writer taken as helm: {}", writer.why())],
        _ => Vec::new(),
    }
}

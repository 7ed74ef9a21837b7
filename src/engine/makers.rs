//! Who made each drift of a run, from the audit events kept: where the audit names each drifted
//! object (its resource from discovery), and the attribution of its fields and of its deletion.

use crate::audit::{Target, Window};
use crate::model::{ObjectDrift, ObjectId, Outcome, RunReport};
use std::collections::HashSet;

/// Where the audit names an object: `None` when the kind is not served.
pub(crate) fn target(discovery: &kube::Discovery, release_namespace: &str, id: &ObjectId) -> Option<Target> {
    let at = crate::live::locate(discovery, &id.api_version, &id.kind, id.namespace.as_deref(), release_namespace)?;
    Some(Target {
        group: at.resource.group,
        plural: at.resource.plural,
        namespace: at.namespace,
        name: id.name.clone(),
    })
}

/// The drifted objects of a run, as the audit names them: the only ones whose events are kept.
pub(crate) fn targets(discovery: &kube::Discovery, run: &RunReport) -> HashSet<Target> {
    let mut out = HashSet::new();
    for report in run.checked() {
        let drifted = report.objects.iter().filter(|o| attributable(o));
        out.extend(drifted.filter_map(|o| target(discovery, &report.namespace, &o.id)));
    }
    out
}

/// Attributes the drift of every checked release of the run.
pub(crate) fn attribute(discovery: &kube::Discovery, run: &mut RunReport, window: &Window) {
    for outcome in &mut run.outcomes {
        let Outcome::Checked(report) = outcome else { continue };
        let namespace = report.namespace.clone();
        crate::audit::attribute(report, window, |id| target(discovery, &namespace, id));
    }
}

/// An object with something a write made: a drift, an expected change, a re-creation.
fn attributable(o: &ObjectDrift) -> bool {
    o.drift_kind().is_drift() || !o.expected.is_empty() || o.recreated.is_some() || !o.disowned.is_empty()
}

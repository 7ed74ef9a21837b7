//! The watcher's audit feed: each verdict's drift attributed from the feed's window, and the
//! objects of the watched releases handed to the hub (only writes to them are kept).

use super::Watcher;
use crate::model::DriftReport;

impl Watcher<'_> {
    /// Names who made the report's drift, as far as the audit kept.
    pub(super) fn attribute(&self, report: &mut DriftReport) {
        let Some(a) = &self.audit else { return };
        let discovery = self.session.discovery();
        let namespace = report.namespace.clone();
        a.attribute(report, |id| crate::engine::audit::target(discovery, &namespace, id));
    }

    /// Hands the hub the objects watched now.
    pub(super) fn audit_interest(&self) {
        if let Some(a) = &self.audit {
            a.watching(self.state.objects());
        }
    }
}

//! A plan rendered without the cluster: the objects of templates that call `lookup` (which
//! answered nothing) are no prediction, and what the upgrade changes in them is not counted.

use crate::helm::DryRun;
use crate::model::{PlannedChange, PlannedObject};
use crate::release::LookupUse;

/// Which documents of a preview a template rendered through a `lookup` that answered nothing.
#[derive(Default)]
pub(super) struct Unlooked {
    uses: LookupUse,
    chart: String,
}

impl Unlooked {
    /// From the release helm printed (its chart's templates); nothing when `lookup` was
    /// answered. A chart helm did not print is read as one that may call it anywhere.
    pub(super) fn of(printed: &str, against: DryRun) -> Unlooked {
        if against.reads_the_cluster() {
            return Unlooked::default();
        }
        let release = crate::release::printed_by_helm(printed).ok();
        match release.as_ref().and_then(|r| r.chart.as_ref()) {
            Some(c) => Unlooked { uses: c.lookup_use(), chart: c.metadata.name.clone() },
            None => Unlooked { uses: LookupUse::Anywhere, chart: String::new() },
        }
    }

    /// Marks `p`, rendered from `source`, when its template calls `lookup`: a change in it is
    /// said as a guess and not counted (a failure still is).
    pub(super) fn mark(&self, p: &mut PlannedObject, source: Option<&str>) {
        if p.change != PlannedChange::Update || !source.is_some_and(|s| self.uses.renders(&self.chart, s)) {
            return;
        }
        p.unpredictable = true;
        p.note = Some(
            "not predictable: rendered by a template that calls lookup, which answered nothing (see the notes); \
             not counted as a change"
                .into(),
        );
    }
}

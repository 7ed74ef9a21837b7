//! `repair`: puts drifted objects back to the recorded revision without a new Helm revision.
//! Plans from the same verdicts as `check`; the repair stage validates, applies and checks again.

use crate::engine::Session;
use crate::model::{FleetRepair, RepairReport};
pub use crate::repair::RepairRequest;
use crate::settings::Settings;
use anyhow::Result;

/// Plans, validates and (unless a dry run) applies the repair of one release.
pub async fn run(settings: &Settings, request: &RepairRequest) -> Result<RepairReport> {
    let mut session = Session::open(settings).await?;
    let index = session.history(&request.release).await?;
    crate::repair::execute(&mut session, settings, &index, request).await
}

/// Repairs the one named release in each cluster (`(name, settings)`), one cluster after the
/// other (a repair writes; its report is read cluster by cluster). A cluster where it cannot run
/// is an error for that cluster only; the others are still repaired.
pub async fn fleet(clusters: &[(String, Settings)], request: &RepairRequest) -> FleetRepair {
    let mut out = FleetRepair::default();
    for (cluster, settings) in clusters {
        let report = run(settings, request).await.map_err(|e| crate::errors::chain(&e));
        out.clusters.push((cluster.clone(), report));
    }
    out
}

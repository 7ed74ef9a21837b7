//! `repair`: puts drifted objects back to the recorded revision without a new Helm revision.
//! Plans from the same verdicts as `check`; the repair stage validates, applies and checks again.

use crate::engine::Session;
use crate::model::RepairReport;
pub use crate::repair::RepairRequest;
use crate::settings::Settings;
use anyhow::Result;

/// Plans, validates and (unless a dry run) applies the repair of one release.
pub async fn run(settings: &Settings, request: &RepairRequest) -> Result<RepairReport> {
    let mut session = Session::open(settings).await?;
    let index = session.history(&request.release).await?;
    crate::repair::execute(&mut session, settings, &index, request).await
}

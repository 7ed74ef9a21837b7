//! `check`: compare the selected releases with the cluster.

use crate::engine::{Selection, Session, scan};
use crate::model::RunReport;
use crate::settings::Settings;
use anyhow::Result;

/// Checks every release `selection` names; `progress(done, total)` is called as releases finish.
pub async fn run(
    settings: &Settings,
    selection: &Selection,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<RunReport> {
    let session = Session::open(settings).await?;
    scan(&session, settings, selection, progress).await
}

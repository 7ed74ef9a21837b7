//! `accept`: records the current drift of a release in its baseline, so that `check` fails only
//! on new or changed drift.

use crate::baseline::{self, Store};
use crate::engine::{Session, evaluate};
use crate::model::AcceptReport;
use crate::settings::Settings;
use anyhow::Result;

/// What `accept` asks for.
#[derive(Clone, Debug)]
pub struct AcceptRequest {
    pub release: String,
    /// `KIND/NAME` filters; every drifted object when empty.
    pub only: Vec<String>,
    /// Only drift at or under these pointers; all when empty.
    pub paths: Vec<String>,
    /// Drop the release's entries whose drift is gone.
    pub prune: bool,
    pub store: Store,
}

pub async fn run(settings: &Settings, request: &AcceptRequest) -> Result<AcceptReport> {
    let session = Session::open(settings).await?;
    let index = session.history(&request.release).await?;
    let report = evaluate(&session, settings, &index, None).await?.report;
    let client = &session.cluster.client;
    let (mut b, location) = match &request.store {
        Store::File(path) => (baseline::read_file(path)?, path.display().to_string()),
        Store::Cluster => (
            baseline::read_configmap(client, &report.namespace, &report.release).await?,
            format!("ConfigMap {}/{}", report.namespace, baseline::configmap_name(&report.release)),
        ),
    };
    let now = k8s_openapi::jiff::Timestamp::now().to_string();
    let (accepted, dropped) = baseline::accept(&mut b, &report, &request.only, &request.paths, request.prune, &now);
    match &request.store {
        Store::File(path) => baseline::write_file(path, &b)?,
        Store::Cluster => baseline::write_configmap(client, &report.namespace, &report.release, &b).await?,
    }
    let entries = b.entries.iter().filter(|e| e.release == report.release && e.namespace == report.namespace).count();
    Ok(AcceptReport { release: report.release, location, accepted, dropped, entries })
}

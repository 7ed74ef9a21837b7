//! The `check` command: runs the pipeline for one release and returns its [`DriftReport`].

use crate::compare::{self, ObjectDrift, Verdict};
use crate::release::Storage;
use crate::settings::Settings;
use crate::{cluster, desired, live};
use anyhow::{Context, Result};

/// All verdicts for one release.
#[derive(Debug)]
pub struct DriftReport {
    pub release: String,
    pub namespace: String,
    pub revision: u32,
    pub status: String,
    pub chart: String,
    /// The storage object the revision was read from.
    pub record: String,
    /// The newest revision when it is not the one checked (e.g. a failed upgrade).
    pub newest: Option<(u32, String)>,
    pub objects: Vec<ObjectDrift>,
}

impl DriftReport {
    pub fn drifted(&self) -> usize {
        self.objects.iter().filter(|o| o.is_drift()).count()
    }

    pub fn errors(&self) -> usize {
        self.objects.iter().filter(|o| matches!(o.verdict, Verdict::Error { .. })).count()
    }
}

/// What a check asks for.
#[derive(Clone, Debug)]
pub struct CheckRequest {
    pub release: String,
    pub revision: Option<u32>,
}

/// Reads the release, rebuilds its objects and compares them with the cluster.
pub async fn check(settings: &Settings, request: &CheckRequest) -> Result<DriftReport> {
    let cluster = cluster::connect(&settings.connection).await?;
    let namespace = settings.namespace.clone().unwrap_or_else(|| cluster.default_namespace.clone());
    let storage = Storage::new(cluster.client.clone(), &namespace, settings.driver);
    let selected = storage
        .select(&request.release, request.revision)
        .await
        .with_context(|| format!("cannot read release {:?} (cluster {})", request.release, cluster.server))?;
    let release = &selected.release;
    let objects = desired::from_manifest(&release.manifest)
        .with_context(|| format!("cannot parse the manifest of {}", selected.record))?;
    let discovery =
        live::discover(&cluster.client).await.with_context(|| format!("API discovery failed on {}", cluster.server))?;
    let located = live::fetch(&cluster.client, &discovery, &objects, &release.namespace).await;
    let chart =
        release.chart.as_ref().map(|c| format!("{}-{}", c.metadata.name, c.metadata.version)).unwrap_or_default();
    Ok(DriftReport {
        release: release.name.clone(),
        namespace: release.namespace.clone(),
        revision: release.version,
        status: release.info.status.clone(),
        chart,
        record: selected.record,
        newest: selected.newest,
        objects: compare::compare(&objects, located),
    })
}

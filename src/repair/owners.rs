//! Who owns what after a write: the chart's fields taken back from other managers (a
//! server-side applied release's repair), and the helm command's fields handed to the release's
//! writer after a `helm upgrade` of a controller's release. Each a rewrite of the object's
//! managedFields, guarded by its resourceVersion.

use crate::api::ApiError;
use crate::compare::ownership;
use crate::engine::Evaluated;
use crate::live::{self, Change, Location, WriteTo};
use crate::model::ObjectId;
use serde_json::{Value, json};

/// Rewrites the object's managedFields so that Helm (the writer, `to`'s manager) alone owns
/// what it applies.
pub(super) async fn reclaim(to: WriteTo<'_>, current: Value) -> Result<Value, ApiError> {
    rewrite(to, current, |v| ownership::reclaimed(v, to.manager)).await
}

/// After a `helm upgrade` of a release whose writer is not the helm command: every object's
/// fields the helm command now owns are given to the writer, so that its next upgrade meets no
/// conflict with `helm`. The objects it could not rewrite, with why.
pub(crate) async fn hand_over(client: &kube::Client, evaluated: &Evaluated) -> Vec<(ObjectId, String)> {
    let to = evaluated.writer.manager.as_str();
    let mut failed = Vec::new();
    for (o, at) in evaluated.objects.iter().zip(&evaluated.locations) {
        let Some(at) = at else { continue };
        let current = match live::get(client, at, &o.name).await {
            live::LiveState::Present(v) => v,
            live::LiveState::Absent => continue,
            live::LiveState::Failed(e) => {
                failed.push((o.id(), e.to_string()));
                continue;
            }
        };
        let target = WriteTo { client, at, name: &o.name, manager: to };
        let handed = rewrite(target, current, |v| ownership::handed_over(v, "helm", to)).await;
        if let Err(e) = handed {
            failed.push((o.id(), e.to_string()));
        }
    }
    failed
}

/// Writes the managedFields `owners` makes of the object, guarded by the resourceVersion; when
/// the object changed meanwhile, reads it again and retries. Nothing to change: as it is.
async fn rewrite(
    to: WriteTo<'_>,
    mut current: Value,
    owners: impl Fn(&Value) -> Option<Value>,
) -> Result<Value, ApiError> {
    let mut attempt = 1;
    loop {
        let Some(fields) = owners(&current) else { return Ok(current) };
        let version = current.pointer("/metadata/resourceVersion").cloned().unwrap_or_default();
        let ops = json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": version},
            {"op": "replace", "path": "/metadata/managedFields", "value": fields},
        ]);
        match live::change(to, &Change::Patch(ops), false).await {
            Err(ApiError::Invalid { .. } | ApiError::Conflict { .. }) if attempt < ATTEMPTS => {
                attempt += 1;
                current = present(to.client, to.at, to.name).await?;
            }
            result => return result,
        }
    }
}

/// How often a write guarded by the resourceVersion (a guarded apply, taking ownership back) is
/// tried when a controller wrote the object meanwhile (a Deployment's status after the repair
/// rolled it out).
pub(super) const ATTEMPTS: usize = 5;

/// The object as it is now; gone is an error (a step's object was there when planned).
pub(super) async fn present(client: &kube::Client, at: &Location, name: &str) -> Result<Value, ApiError> {
    match live::get(client, at, name).await {
        live::LiveState::Present(v) => Ok(v),
        live::LiveState::Absent => Err(ApiError::NotFound { message: format!("{name} is gone") }),
        live::LiveState::Failed(e) => Err(e),
    }
}

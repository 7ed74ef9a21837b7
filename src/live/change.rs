//! Changes to live objects as Helm would make them, under the field manager of the release's
//! writer (`helm`, or a controller built on Helm's SDK): server-side apply, create, update,
//! guarded JSON patch, replace; each can be a server dry-run.

use super::{Location, api};
use crate::api::ApiError;
use kube::api::{DynamicObject, Patch, PatchParams};
use serde_json::Value;

/// The object a change is made to, and as whom: the client (its identity), where the object
/// lives, its name and the field manager the change is under.
#[derive(Clone, Copy)]
pub(crate) struct WriteTo<'a> {
    pub(crate) client: &'a kube::Client,
    pub(crate) at: &'a Location,
    pub(crate) name: &'a str,
    pub(crate) manager: &'a str,
}

/// A change to make to one object, as Helm would make it (under the writer's field manager).
#[derive(Clone, Debug)]
pub(crate) enum Change {
    /// Server-side apply of the whole object (forced).
    Apply(Value),
    /// Create the object, for client-side applied releases.
    Create(Value),
    /// A JSON patch; `test` operations guard against concurrent edits.
    Patch(Value),
    /// Write the whole object (an update): what a client-side Helm upgrade leaves.
    Update(Value),
    /// Delete the object, wait until it is gone, create it again (`repair --replace`: a field
    /// that cannot change). Its dry-run validates the delete.
    Replace(Value),
}

/// Makes (or, with `dry_run`, only validates) one change to `to`; returns the object the server
/// made.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn change(to: WriteTo<'_>, change: &Change, dry_run: bool) -> Result<Value, ApiError> {
    let WriteTo { client, at, name, manager } = to;
    let api = api(client, at);
    let plural = &at.resource.plural;
    let invalid = |e: serde_json::Error| ApiError::Other { message: format!("cannot build the request: {e}") };
    let result = match change {
        Change::Apply(body) => {
            let mut params = PatchParams::apply(manager).force();
            params.dry_run = dry_run;
            api.patch(name, &params, &Patch::Apply(body)).await.map_err(|e| ApiError::from_kube(&e, "patch", plural))
        }
        Change::Create(body) => {
            let obj: DynamicObject = serde_json::from_value(body.clone()).map_err(invalid)?;
            let params = kube::api::PostParams { dry_run, field_manager: Some(manager.into()) };
            api.create(&params, &obj).await.map_err(|e| ApiError::from_kube(&e, "create", plural))
        }
        Change::Update(body) => {
            let obj: DynamicObject = serde_json::from_value(body.clone()).map_err(invalid)?;
            let params = kube::api::PostParams { dry_run, field_manager: Some(manager.into()) };
            api.replace(name, &params, &obj).await.map_err(|e| ApiError::from_kube(&e, "update", plural))
        }
        Change::Replace(body) => {
            let params = kube::api::DeleteParams { dry_run, ..kube::api::DeleteParams::background() };
            api.delete(name, &params).await.map_err(|e| ApiError::from_kube(&e, "delete", plural))?;
            if dry_run {
                return Ok(body.clone());
            }
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while api.get_opt(name).await.map_err(|e| ApiError::from_kube(&e, "get", plural))?.is_some() {
                if std::time::Instant::now() > deadline {
                    return Err(ApiError::Other {
                        message: format!(
                            "{name} was deleted but is not gone after 60 s (a finalizer?): not created again"
                        ),
                    });
                }
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            let mut fresh = body.clone();
            if let Some(meta) = fresh.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
            }
            let obj: DynamicObject = serde_json::from_value(fresh).map_err(invalid)?;
            let params = kube::api::PostParams { dry_run, field_manager: Some(manager.into()) };
            api.create(&params, &obj).await.map_err(|e| ApiError::from_kube(&e, "create", plural))
        }
        Change::Patch(ops) => {
            let patch: json_patch::Patch = serde_json::from_value(ops.clone()).map_err(invalid)?;
            let mut params = PatchParams { field_manager: Some(manager.into()), ..Default::default() };
            params.dry_run = dry_run;
            api.patch(name, &params, &Patch::Json::<()>(patch)).await.map_err(|e| {
                match ApiError::from_kube(&e, "patch", plural) {
                    // Without causes, a 422 on a JSON patch means one of its operations failed.
                    ApiError::Invalid { code: 422, reason, detail } if !detail.contains(": ") => ApiError::Invalid {
                        code: 422,
                        reason,
                        detail: format!(
                            "the JSON patch does not apply to the live object (a guarded value changed since it was read, or a path is gone; {detail})"
                        ),
                    },
                    other => other,
                }
            })
        }
    };
    result.and_then(|o| serde_json::to_value(o).map_err(invalid))
}

/// What the object would look like after Helm applied `desired` (server-side apply under
/// `to`'s manager, forced, `dryRun=All`): nothing is changed in the cluster.
pub(crate) async fn apply_dry_run(to: WriteTo<'_>, desired: &Value) -> Result<Value, ApiError> {
    change(to, &Change::Apply(desired.clone()), true).await
}

/// What the server makes of `desired` created anew by `to`'s manager (`dryRun=All`), under a
/// name it generates from `to`'s name: its defaulting and admission at create; nothing stored.
pub(crate) async fn create_dry_run(to: WriteTo<'_>, desired: &Value) -> Result<Value, ApiError> {
    let mut body = desired.clone();
    if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("name");
        meta.remove("resourceVersion");
        // A generated name takes 5 characters; a Service's name may hold 63.
        let base: String = to.name.chars().take(57).collect();
        meta.insert("generateName".into(), Value::String(format!("{}-", base.trim_end_matches(['-', '.']))));
    }
    change(to, &Change::Create(body), true).await
}

/// A server-side apply dry-run as a Helm 4 upgrade by `to`'s manager makes it (forced only
/// with `force`): a conflict with another field manager is the error that upgrade would meet.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn upgrade_dry_run(to: WriteTo<'_>, desired: &Value, force: bool) -> Result<Value, ApiError> {
    let WriteTo { client, at, name, manager } = to;
    let mut params = PatchParams::apply(manager);
    params.force = force;
    params.dry_run = true;
    let plural = &at.resource.plural;
    let made = api(client, at).patch(name, &params, &Patch::Apply(desired)).await;
    let made = made.map_err(|e| ApiError::from_kube(&e, "patch", plural))?;
    serde_json::to_value(made).map_err(|e| ApiError::Other { message: e.to_string() })
}

/// The whole object written as `after` by `to`'s manager (`dryRun=All`), as a client-side Helm
/// upgrade leaves it: what the server refuses (an invalid or immutable field) is what that
/// upgrade would meet. A conflict (a controller wrote the object since it was read: a
/// Deployment's status after an edit) is no answer to a question: asked again without the
/// resourceVersion, where the kind takes that (a CRD does not).
pub(crate) async fn update_dry_run(to: WriteTo<'_>, after: &Value) -> Result<Value, ApiError> {
    match change(to, &Change::Update(after.clone()), true).await {
        Err(ApiError::Conflict { .. }) => {
            let mut body = after.clone();
            if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.remove("resourceVersion");
            }
            change(to, &Change::Update(body), true).await
        }
        answer => answer,
    }
}

//! Carrying out a repair's steps: validate every step with a server dry-run, apply only if all
//! would succeed, take ownership back, record an Event per repaired object.

use super::owners::{ATTEMPTS, present};
use super::{Authority, DraftStep};
use crate::api::ApiError;
use crate::engine::Evaluated;
use crate::live::{self, Change, WriteTo};
use crate::model::{Action, Phase, Progress, RepairStep, StepStatus, Tick};
use serde_json::Value;

/// What a repair asks for.
#[derive(Clone, Debug, Default)]
pub(crate) struct RepairRequest {
    pub(crate) release: String,
    /// `KIND/NAME` filters (kind case-insensitive); empty means every drifted object.
    pub(crate) only: Vec<String>,
    /// Also remove fields other field managers added (changed outside Helm).
    pub(crate) remove_foreign: bool,
    /// Steps and validate only; change nothing.
    pub(crate) dry_run: bool,
    /// Self-healing: the authority the watcher acts within (`None`: a person's repair, whose
    /// authority comes from `trust` and `service_account`, [`Authority::of`]).
    pub(crate) authority: Option<Authority>,
    /// A person's repair: the namespaces whose records the person trusts as their own
    /// (`--trust-namespace`, `HELM_DRIFT_TRUST_NAMESPACE`): only those are written with the
    /// person's rights.
    pub(crate) trust: crate::settings::Trust,
    /// A person's repair of an untrusted record: the ServiceAccount of the record's namespace
    /// to write as (`--repair-service-account`, impersonated).
    pub(crate) service_account: Option<String>,
    /// Told as steps are validated and applied.
    pub(crate) progress: Progress,
    /// Replace (delete and create) an object whose change the server refuses because a field
    /// cannot change (`--replace`, as Fleet's `force`).
    pub(crate) replace: bool,
}

/// What carrying out some steps came to.
pub(super) struct Carried {
    pub(super) steps: Vec<RepairStep>,
    /// A step was refused (by the authority or the server's dry-run): nothing was applied.
    pub(super) refused: bool,
    /// A step failed while applying: the ones after it were not applied.
    pub(super) failed: bool,
    pub(super) events_not_recorded: Vec<(crate::model::ObjectId, String)>,
}

/// Validates every step (against the authority, then by a server dry-run) and, when none is
/// refused and this is no dry run, applies them in order. A change the server refuses because
/// a field cannot change is refused with the hint to replace the object, or, with `--replace`,
/// planned as a replacement (deleted and created as recorded).
pub(super) async fn carry_out(
    client: &kube::Client,
    write_client: &kube::Client,
    evaluated: &Evaluated,
    mut steps: Vec<DraftStep>,
    request: &RepairRequest,
) -> Carried {
    let mut refused = false;
    let total = steps.len();
    for (done, planned) in steps.iter_mut().enumerate() {
        request.progress.tell(Tick::Step { phase: Phase::Validating, done, total });
        if let Some(status) = validate(write_client, evaluated, planned, request).await {
            planned.step.status = status;
            refused = true;
        }
    }
    let mut carried = Carried { steps: Vec::new(), refused, failed: false, events_not_recorded: Vec::new() };
    if refused || request.dry_run {
        carried.steps = steps.into_iter().map(|p| p.step).collect();
        return carried;
    }
    request.progress.tell(Tick::Step { phase: Phase::Validating, done: total, total });
    for (done, planned) in steps.iter_mut().enumerate() {
        request.progress.tell(Tick::Step { phase: Phase::Applying, done, total });
        if carried.failed {
            planned.step.status = StepStatus::NotApplied;
            continue;
        }
        let Some((name, at)) = planned.target(evaluated) else { continue };
        let seen = planned_live(&evaluated.report.objects[planned.index]);
        let to = WriteTo { client: write_client, at, name, manager: &evaluated.writer.manager };
        match apply(to, planned, &seen).await {
            Ok(after) => {
                planned.step.status = StepStatus::Applied;
                let message = event_message(&planned.step, evaluated);
                let Some((ns, subject)) = event_subject(evaluated, request, at.namespace.as_deref(), after) else {
                    continue;
                };
                if let Err(e) = live::record_event(client, &ns, &subject, "DriftRepaired", &message).await {
                    carried.events_not_recorded.push((planned.step.object.clone(), e.to_string()));
                }
            }
            Err(e) => {
                planned.step.status = StepStatus::Failed(scrub(&e.to_string(), evaluated, planned.index));
                carried.failed = true;
            }
        }
    }
    request.progress.tell(Tick::Step { phase: Phase::Applying, done: total, total });
    carried.steps = steps.into_iter().map(|p: DraftStep| p.step).collect();
    carried
}

/// Where the Event of a repaired object (`after`, living in `namespace`) is recorded: on the
/// object, unless self-healing wrote it on the word of a record stored elsewhere: then on that
/// record, in the namespace it is stored in (the watcher writes Events only where the record's
/// writers are; `None` when the record is no object of the cluster: a SQL row).
fn event_subject(
    evaluated: &Evaluated,
    request: &RepairRequest,
    namespace: Option<&str>,
    after: Value,
) -> Option<(String, Value)> {
    let report = &evaluated.report;
    let healing = request.authority.as_ref().is_some_and(|a| a.acting == crate::model::Acting::Watcher);
    if !healing || namespace == Some(report.stored_in()) {
        return Some((live::event_namespace(namespace).to_string(), after));
    }
    let record = report.record_id()?;
    let ns = record.namespace.clone()?;
    let object = serde_json::json!({"apiVersion": record.api_version, "kind": record.kind,
        "metadata": {"name": record.name, "namespace": ns}});
    Some((ns, object))
}

/// Why a step cannot be made, if it cannot: helm-drift's own rule (the authority, the trust
/// rule for a person), or the server's dry-run.
async fn validate(
    write_client: &kube::Client,
    evaluated: &Evaluated,
    planned: &mut DraftStep,
    request: &RepairRequest,
) -> Option<StepStatus> {
    if let Some(why) = own_refusal(evaluated, planned, request) {
        return Some(StepStatus::Withheld(why));
    }
    dry_run(write_client, evaluated, planned, request).await.map(StepStatus::Refused)
}

/// Why helm-drift's own rules refuse a step before anything is asked of the server.
fn own_refusal(evaluated: &Evaluated, planned: &DraftStep, request: &RepairRequest) -> Option<crate::model::Refusal> {
    let (_, at) = planned.target(evaluated)?;
    let o = &evaluated.report.objects[planned.index];
    let authority = request.authority.as_ref()?;
    authority.refusal(&o.id, &planned.step.action, at.namespace.as_deref(), o.live.as_ref())
}

/// The server's dry-run refusal of a step, in its words (a field that cannot change: replaced
/// with `--replace`).
async fn dry_run(
    write_client: &kube::Client,
    evaluated: &Evaluated,
    planned: &mut DraftStep,
    request: &RepairRequest,
) -> Option<String> {
    let (Some((name, at)), Some(first)) = (planned.target(evaluated), planned.changes.first()) else { return None };
    let o = &evaluated.report.objects[planned.index];
    let to = WriteTo { client: write_client, at, name, manager: &evaluated.writer.manager };
    let e = live::change(to, first, true).await.err()?;
    let why = scrub(&e.to_string(), evaluated, planned.index);
    if !super::order::is_immutable(&why) {
        return Some(why);
    }
    if o.is_hook_that_runs() {
        return Some(format!(
            "{why}: only replacing hook {} restores it, and creating a {} runs it (helm upgrade runs hooks)",
            o.id, o.id.kind
        ));
    }
    if !request.replace {
        return Some(format!(
            "{why}: a field that cannot change was changed, so only replacing {} (deleting it and creating it as recorded) restores it; run again with --replace",
            o.id
        ));
    }
    planned.step.action = Action::Replace;
    planned.changes = vec![Change::Replace(evaluated.objects[planned.index].object.clone())];
    planned.reclaim = false;
    let replace = planned.changes[0].clone();
    let e = live::change(to, &replace, true).await.err()?;
    Some(scrub(&e.to_string(), evaluated, planned.index))
}

/// The live values the plan saw at the paths a step restores (`None`: absent live).
fn planned_live(o: &crate::model::ObjectDrift) -> Vec<(String, Option<Value>)> {
    o.fields
        .iter()
        .filter(|f| f.recorded.is_some())
        .filter_map(|f| Some((f.path.live_pointer()?, f.live.clone())))
        .collect()
}

/// Makes a planned step's changes in order under the release's writer's field manager, then
/// (server-side applied releases) takes the chart's fields back from other managers; returns the
/// object as the server left it. A server-side apply of an object that exists is guarded like
/// the client-side patches: the fields it restores must still hold what the plan saw (`seen`).
async fn apply(to: WriteTo<'_>, planned: &DraftStep, seen: &[(String, Option<Value>)]) -> Result<Value, ApiError> {
    let mut after = Value::Null;
    for change in &planned.changes {
        after = match change {
            // (After a guarded patch, which removed items first, the paths seen have moved.)
            Change::Apply(body) if planned.step.action != Action::Recreate && planned.changes.len() == 1 => {
                guarded_apply(to, body, seen).await?
            }
            _ => live::change(to, change, false).await?,
        };
    }
    if planned.reclaim {
        after = super::owners::reclaim(to, after).await?;
    }
    Ok(after)
}

/// A server-side apply that changes nothing the plan did not see: the object is read, the
/// restored fields compared with what the plan saw, and the apply carries the resourceVersion
/// read (the server refuses it with a conflict when the object changed in between; then it is
/// read again, a few times: a controller's status write is no reason to fail).
async fn guarded_apply(to: WriteTo<'_>, body: &Value, seen: &[(String, Option<Value>)]) -> Result<Value, ApiError> {
    let mut attempt = 1;
    loop {
        let current = present(to.client, to.at, to.name).await?;
        if let Some((at, _)) = seen.iter().find(|(p, want)| current.pointer(p) != want.as_ref()) {
            return Err(ApiError::Conflict {
                message: format!("{at} changed since the plan was made"),
                conflicts: Vec::new(),
            });
        }
        let mut guarded = body.clone();
        if let Some(meta) = guarded.get_mut("metadata").and_then(Value::as_object_mut) {
            let version = current.pointer("/metadata/resourceVersion").cloned().unwrap_or_default();
            meta.insert("resourceVersion".into(), version);
        }
        match live::change(to, &Change::Apply(guarded), false).await {
            Err(ApiError::Conflict { .. }) if attempt < ATTEMPTS => attempt += 1,
            other => return other,
        }
    }
}

/// An API server's message about a Secret with the Secret's values (as recorded and as live,
/// base64 and decoded) taken out: an admission webhook or a validation message may quote them,
/// and the message becomes a report line, a log line and an Event.
fn scrub(message: &str, e: &Evaluated, index: usize) -> String {
    let o = &e.report.objects[index];
    if !o.id.is_secret() {
        return message.to_string();
    }
    scrub_values(message, &[&e.objects[index].object, o.live.as_ref().unwrap_or(&Value::Null)])
}

/// `message` without the `data` and `stringData` values of these Secrets.
fn scrub_values(message: &str, secrets: &[&Value]) -> String {
    use base64::Engine;
    let mut values: Vec<String> = Vec::new();
    for object in secrets {
        for (field, encoded) in [("data", true), ("stringData", false)] {
            let Some(map) = object.get(field).and_then(Value::as_object) else { continue };
            for v in map.values().filter_map(Value::as_str) {
                values.push(v.to_string());
                let decoded = base64::engine::general_purpose::STANDARD.decode(v).ok();
                if let Some(text) = decoded.filter(|_| encoded).and_then(|d| String::from_utf8(d).ok()) {
                    values.push(text);
                }
            }
        }
    }
    // Longest first, so that a value containing another is taken out whole; very short values
    // would take ordinary words with them.
    values.retain(|v| v.len() >= 4);
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    values.iter().fold(message.to_string(), |text, v| text.replace(v.as_str(), crate::model::HIDDEN))
}

/// The Event message on a repaired object: what was restored, by JSON pointer.
fn event_message(step: &RepairStep, e: &Evaluated) -> String {
    let (what, paths) = match &step.action {
        Action::Recreate => ("recreated".to_string(), "(whole object)".to_string()),
        Action::Replace => ("replaced (deleted and created)".to_string(), "(whole object)".to_string()),
        Action::Repair { restore, remove, reclaim } => {
            let mut what = vec![format!("restored {} field(s)", restore.len())];
            if !remove.is_empty() {
                what.push(format!("removed {}", remove.len()));
            }
            if !reclaim.is_empty() {
                what.push(format!("ownership taken back from {}", reclaim.join(", ")));
            }
            (what.join(", "), pointers(&[restore.as_slice(), remove.as_slice()].concat()))
        }
    };
    let paths = if paths.is_empty() { String::new() } else { format!(": {paths}") };
    format!(
        "helm-drift restored {} to release {} revision {} ({what}){paths}",
        step.object, e.report.release, e.report.revision
    )
}

/// The paths as JSON pointers, each once, in order.
fn pointers(paths: &[crate::model::FieldPath]) -> String {
    let mut seen = std::collections::BTreeSet::new();
    paths.iter().map(|p| p.pointer()).filter(|p| seen.insert(p.clone())).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn secret_values_are_taken_out_of_server_messages() {
        let recorded = json!({"data": {"password": "aHVudGVyMnB3"}, "stringData": {"token": "s3cr3t-token"}});
        let live = json!({"data": {"password": "bGVha2VkcHc="}});
        let message = "admission webhook denied: password hunter2pw (aHVudGVyMnB3) / leakedpw, token s3cr3t-token, ok";
        let scrubbed = super::scrub_values(message, &[&recorded, &live]);
        for secret in ["hunter2pw", "aHVudGVyMnB3", "leakedpw", "s3cr3t-token"] {
            assert!(!scrubbed.contains(secret), "{scrubbed}");
        }
        assert!(scrubbed.starts_with("admission webhook denied: password (hidden)") && scrubbed.ends_with(", ok"));
    }
}

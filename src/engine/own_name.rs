//! Fields whose name proves nothing: those under Helm's own field-manager name beyond the chart
//! (a name is a claim: `kubectl patch --field-manager=helm`), and those under no name at all
//! (admission's additions, or what a write that rewrote `metadata.managedFields` left). Each is
//! Helm's apply only with evidence: the server's own fields say nothing was written since the
//! record, or the server, asked now, makes it again for Helm's object (its defaults, admission
//! at update or at create); otherwise it is drift.

use super::grounds::{Inquiry, Judge};
use crate::compare::provenance::{self, JudgedObject};
use crate::compare::{defaults, managed, merge, unowned};
use crate::live::{self, WriteTo};
use crate::model::path::under;
use crate::model::{Expected, FieldDiff, Foreign};
use serde_json::Value;

/// The fields under Helm's name (`judge`'s writer) in `live` that the chart (`desired`, as
/// compared) does not set and that Helm's apply does not make. The exact engine asks the server:
/// the live object without them, the chart laid over it, written as a dry-run by Helm's writer
/// (defaulting and admission run); what comes back holds Helm's. The read-only engine cannot ask,
/// so nothing proves them: they are drift.
pub(crate) async fn unexplained(judge: &Judge<'_>, asked: &Inquiry<'_>) -> Vec<Foreign> {
    let helm = judge.grounds.writer.manager.as_str();
    let claimed = found(judge, asked, |held| managed::under_helms_name(asked.desired, held, asked.live, helm)).await;
    if claimed.is_empty() || judge.grounds.options.read_only {
        return claimed;
    }
    // Refused: nothing proves them Helm's.
    made_again_on_update(judge, asked, claimed).await.unwrap_or_else(|claimed| claimed)
}

/// The fields no manager owns in `live` that the chart does not set, the server would not hold
/// and `known` (already found added) does not hold; less those evidence shows were Helm's apply
/// as admission left it, from what only the object's content moves (never whether a
/// controller's status write landed since): the object unchanged since it was created before
/// the record ([`provenance::created_as_recorded`]), or, in the exact engine, the server making
/// them again for Helm's object, at an update without them or at a create of the recorded
/// object under a generated name. Where the server cannot be asked (the read-only engine, a
/// dry-run refused), admission's configuration decides as far as a reader can tell: a built-in
/// plugin's value is the server's, one a mutating webhook or policy covering the object may add
/// is admitted (shown, not counted); anything else is drift.
pub(crate) async fn unowned(
    judge: &Judge<'_>,
    asked: &Inquiry<'_>,
    known: &[Foreign],
) -> (Vec<Foreign>, Vec<Expected>) {
    let mut nobodys = found(judge, asked, |held| unowned::unowned(asked.desired, held, asked.live)).await;
    nobodys.retain(|f| !known.iter().any(|k| under(&f.path.pointer(), &k.path.pointer())));
    let obj = asked.obj;
    let write =
        JudgedObject { group: obj.group(), kind: &obj.kind, live: asked.live, deployed: &judge.grounds.deployed };
    nobodys.retain(|f| provenance::created_as_recorded(&write, &f.path).is_none());
    if nobodys.is_empty() {
        return (nobodys, Vec::new());
    }
    if judge.grounds.options.read_only {
        return super::admitted::judged(judge, asked, nobodys).await;
    }
    match made_again(judge, asked, nobodys).await {
        Ok(left) => (left, Vec::new()),
        // The server refused a question: the reader's word.
        Err(nobodys) => super::admitted::judged(judge, asked, nobodys).await,
    }
}

/// Those of `nobodys` the server does not make again for Helm's object, at a dry-run update
/// without them or at a dry-run create of the recorded object under a generated name (a
/// webhook that mutates only at create); `Err` with them all when the server refuses a question
/// (no right to write, a name the server must be given).
async fn made_again(
    judge: &Judge<'_>,
    asked: &Inquiry<'_>,
    nobodys: Vec<Foreign>,
) -> Result<Vec<Foreign>, Vec<Foreign>> {
    let nobodys = made_again_on_update(judge, asked, nobodys).await?;
    if nobodys.is_empty() {
        return Ok(nobodys);
    }
    let obj = asked.obj;
    let to = WriteTo { client: judge.client, at: asked.at, name: &obj.name, manager: &judge.grounds.writer.manager };
    match live::create_dry_run(to, &obj.object).await {
        Ok(made) => Ok(nobodys.into_iter().filter(|f| !managed::holds_at(&made, &f.path, &f.value)).collect()),
        Err(_) => Err(nobodys),
    }
}

/// What `find` finds against what the server would hold for the chart's object: its built-in
/// defaults, then (for a custom resource, when something is found) its CRD schema's too.
async fn found(judge: &Judge<'_>, asked: &Inquiry<'_>, find: impl Fn(&Value) -> Vec<Foreign>) -> Vec<Foreign> {
    let obj = asked.obj;
    let held = |schema| defaults::held(obj.group(), &obj.kind, asked.desired, schema);
    let first = find(&held(None));
    if first.is_empty() || defaults::is_built_in(obj.group()) {
        return first;
    }
    match judge.cache.crd_schema(judge.client, asked.at).await {
        Some(schema) => find(&held(Some(&schema))),
        None => first,
    }
}

/// Those of `claimed` the server does not make again when the live object is written without
/// them, the chart laid over it, as a dry-run update by Helm's writer (defaulting and admission
/// at update run); `Err` with them all when the server refuses the question.
async fn made_again_on_update(
    judge: &Judge<'_>,
    asked: &Inquiry<'_>,
    claimed: Vec<Foreign>,
) -> Result<Vec<Foreign>, Vec<Foreign>> {
    let gone: Vec<FieldDiff> = claimed.iter().map(|c| FieldDiff::new(c.path.clone(), None, Some(&c.value))).collect();
    let written = merge::client_side(asked.live, &gone, &asked.obj.object, false);
    let helm = judge.grounds.writer.manager.as_str();
    let to = WriteTo { client: judge.client, at: asked.at, name: &asked.obj.name, manager: helm };
    match live::update_dry_run(to, &written).await {
        Ok(after) => Ok(claimed.into_iter().filter(|c| !managed::holds_at(&after, &c.path, &c.value)).collect()),
        // Refused (without them: a field admission requires; or the reader may not write).
        Err(_) => Err(claimed),
    }
}

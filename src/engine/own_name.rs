//! What Helm's own field-manager name holds beyond the chart: a name is a claim, so each such
//! field is Helm's apply only when the server, asked now, makes it again for Helm's object
//! (its defaults, admission); otherwise it was added under a borrowed name, and is drift.

use super::grounds::Judge;
use crate::compare::{defaults, managed, merge};
use crate::desired::DesiredObject;
use crate::live::{self, Location, WriteTo};
use crate::model::{FieldDiff, Foreign};
use serde_json::Value;

/// The fields under Helm's name (`judge`'s writer) in `live` that the chart (`desired`, as
/// compared) does not set and that Helm's apply does not make. The exact engine asks the server:
/// the live object without them, the chart laid over it, written as a dry-run by Helm's writer
/// (defaulting and admission run); what comes back holds Helm's. The read-only engine cannot ask,
/// so nothing proves them: they are drift.
pub(crate) async fn unexplained(
    judge: &Judge<'_>,
    obj: &DesiredObject,
    at: &Location,
    desired: &Value,
    live: &Value,
) -> Vec<Foreign> {
    let helm = judge.grounds.writer.manager.as_str();
    let held = |schema| defaults::held(obj.group(), &obj.kind, desired, schema);
    let mut claimed = managed::under_helms_name(desired, &held(None), live, helm);
    if claimed.is_empty() {
        return claimed;
    }
    if !defaults::is_built_in(obj.group())
        && let Some(schema) = judge.cache.crd_schema(judge.client, at).await
    {
        claimed = managed::under_helms_name(desired, &held(Some(&schema)), live, helm);
    }
    if claimed.is_empty() || judge.grounds.options.read_only {
        return claimed;
    }
    let gone: Vec<FieldDiff> = claimed.iter().map(|c| FieldDiff::new(c.path.clone(), None, Some(&c.value))).collect();
    let written = merge::client_side(live, &gone, &obj.object, false);
    match live::update_dry_run(WriteTo { client: judge.client, at, name: &obj.name, manager: helm }, &written).await {
        Ok(after) => claimed.into_iter().filter(|c| !managed::holds_at(&after, &c.path, &c.value)).collect(),
        // Refused without them (a field admission requires): nothing proves them Helm's.
        Err(_) => claimed,
    }
}

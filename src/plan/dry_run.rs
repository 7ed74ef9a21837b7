//! The upgrade's write of one object by the release's writer, dry-run on the server: Helm 4's
//! server-side apply (forced only with `--force-conflicts`), or the object Helm 3's three-way
//! merge leaves, written whole. On the switch from client-side to server-side apply, Helm first
//! moves its writer's own update entry into its apply entry (client-go's `csaupgrade`), so the
//! fields only that entry holds conflict with no one: the server's answer is read that way.

use crate::api::ApiError;
use crate::compare::merge;
use crate::desired::DesiredObject;
use crate::live::{self, Location, WriteTo};
use crate::model::{Apply, FieldConflict, FieldDiff};
use serde_json::Value;

/// How the release's writer applies the upgrade.
#[derive(Clone, Copy)]
pub(super) struct Applier<'a> {
    /// Its field manager.
    pub(super) manager: &'a str,
    pub(super) apply: Apply,
    /// The release was applied client-side until now and this upgrade applies server-side.
    pub(super) switching: bool,
    /// A server-side apply takes other managers' fields (`--force-conflicts`).
    pub(super) force: bool,
}

/// The write, dry-run: `Err` with the server's refusal (a conflict names its fields).
pub(super) async fn write(
    client: &kube::Client,
    at: &Location,
    desired: &DesiredObject,
    live: Option<&Value>,
    gone: &[FieldDiff],
    by: Applier<'_>,
) -> Result<(), ApiError> {
    let to = WriteTo { client, at, name: &desired.name, manager: by.manager };
    if let (false, Some(live)) = (by.apply.is_server_side(), live) {
        let strategic = crate::compare::defaults::is_built_in(desired.group());
        let after = merge::client_side(live, gone, &desired.object, strategic);
        return live::update_dry_run(to, &after).await.map(|_| ());
    }
    let apply = |force: bool| live::upgrade_dry_run(to, &desired.object, force);
    match apply(by.force).await {
        Ok(_) => Ok(()),
        Err(ApiError::Conflict { message, conflicts }) if by.switching => {
            let others = others(&conflicts, by.manager);
            match (others.len(), conflicts.len()) {
                (_, 0) => Err(ApiError::Conflict { message, conflicts }),
                (n, all) if n == all => Err(ApiError::Conflict { message, conflicts }),
                // Only the writer's own client-side fields: Helm moves them first; whatever
                // else the server says of the write stands.
                (0, _) => apply(true).await.map(|_| ()),
                _ => Err(ApiError::Conflict { message: said(&others), conflicts: others }),
            }
        }
        Err(e) => Err(e),
    }
}

/// The conflicts that are not with `manager`'s own update entry (its client-side writes),
/// which Helm's switch to server-side apply makes its apply entry's.
fn others(conflicts: &[FieldConflict], manager: &str) -> Vec<FieldConflict> {
    let own = |c: &FieldConflict| c.manager == manager && c.by_update && c.subresource.is_none();
    conflicts.iter().filter(|c| !own(c)).cloned().collect()
}

/// The server's words for these conflicts alone.
fn said(conflicts: &[FieldConflict]) -> String {
    let s = if conflicts.len() == 1 { "" } else { "s" };
    let each: Vec<String> = conflicts
        .iter()
        .map(|c| match &c.subresource {
            Some(sub) => format!("conflict with \"{}\" with subresource \"{sub}\": {}", c.manager, c.field),
            None => format!("conflict with \"{}\": {}", c.manager, c.field),
        })
        .collect();
    format!("Apply failed with {} conflict{s}: {}", conflicts.len(), each.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_takes_the_writers_own_client_side_fields() {
        let c = |manager: &str, by_update: bool, subresource: Option<&str>| FieldConflict {
            manager: manager.into(),
            subresource: subresource.map(String::from),
            by_update,
            field: ".spec.x".into(),
        };
        let all =
            [c("helm", true, None), c("helm", false, None), c("helm", true, Some("scale")), c("kubectl", true, None)];
        let left = others(&all, "helm");
        assert_eq!(left, all[1..].to_vec(), "only helm's own update entry of the object itself is moved");
        assert_eq!(said(&left[2..]), "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.x");
    }
}

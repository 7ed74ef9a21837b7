//! The clusters of an inventory the current cluster holds (`--clusters`), each with the
//! settings that reach it through its own vetted kubeconfig: shared by `check` and `repair`.

use crate::inventory::{InventoryKind, Scope};
use crate::report::Terminal;
use crate::settings::Settings;
use anyhow::{Context, Result, bail};

/// The clusters of an inventory, read through the cluster of `settings`; those left out are said
/// on stderr.
pub(crate) async fn members(
    settings: &Settings,
    source: InventoryKind,
    scope: &Scope,
    printer: &mut Terminal,
) -> Result<Vec<(String, Result<Settings, String>)>> {
    let management = crate::api::connect(&settings.connection).await?;
    let found = crate::inventory::read(&management.client, source, scope)
        .await
        .with_context(|| format!("cannot read the cluster inventory (cluster {})", management.server))?;
    for (name, why) in &found.skipped {
        printer.warning(&format!("cluster {name} is not checked: {why}"));
    }
    if found.members.is_empty() && found.skipped.is_empty() {
        let place = scope.namespace.as_ref().map_or("every namespace".to_string(), |ns| format!("namespace {ns}"));
        bail!(
            "--clusters: the inventory at {} holds no cluster ({} in {place}; --clusters-namespace names another)",
            management.server,
            source.entries()
        );
    }
    Ok(found
        .members
        .into_iter()
        .map(|m| {
            let member =
                m.kubeconfig.map(|kubeconfig| settings.for_member(&m.name, kubeconfig)).map_err(|e| e.to_string());
            (m.name, member)
        })
        .collect())
}

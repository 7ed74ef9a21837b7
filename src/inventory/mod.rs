//! Cluster inventories that already exist, read from a management cluster: Cluster API's
//! `Cluster` objects (`cluster.x-k8s.io`) and their `<cluster>-kubeconfig` Secrets ([`capi`]),
//! with the releases Cluster API's Helm add-on provider installs on them ([`caaph`]), and Argo
//! CD's cluster Secrets ([`argocd`]). Whoever may
//! write a Secret in a Cluster's namespace writes the kubeconfig it is reached with, so a
//! kubeconfig read here may only hold inline data: a command to run (`exec`, an auth provider)
//! or a local file to read (a token file, a certificate or key path) would give its writer this
//! process's hands or eyes, and is refused for that cluster alone.

mod argocd;
mod caaph;
mod capi;
pub(crate) use capi::{control_plane_ready, reach};

mod entry;
mod feed;
mod unreachable;
mod vet;
mod watch_store;

pub(crate) use caaph::MAX_PROXIES_PER_MEMBER;
pub(crate) use entry::{Inventory, InventoryKind, Member, Proxy, Scope};
pub(crate) use feed::{InventoryFeed, Trouble};
pub(crate) use unreachable::Unreachable;
#[cfg(test)]
pub(crate) use unreachable::Why;

use crate::api::ApiError;

/// Reads the inventory through `client` (the management cluster).
pub(crate) async fn read(client: &kube::Client, source: InventoryKind, scope: &Scope) -> Result<Inventory, ApiError> {
    match source {
        InventoryKind::Capi => {
            let mut found = capi::read(client, scope).await?;
            caaph::attach(client, scope.namespace.as_deref(), &mut found).await?;
            Ok(found)
        }
        InventoryKind::Argocd => argocd::read(client, scope).await,
    }
}

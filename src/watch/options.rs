//! How `watch` runs, as the command resolved it.

use crate::engine::Selection;
use crate::inventory::{InventoryKind, Scope};
use crate::watch::healing::RepairOptions;
use crate::watch::lease::LeaderOptions;
use crate::watch::outputs::log::Log;
use crate::watch::outputs::notify::Payload;
use std::time::Duration;

/// How `watch` runs.
#[derive(Clone, Debug)]
pub(crate) struct WatchOptions {
    pub(crate) selection: Selection,
    pub(crate) resync: Duration,
    pub(crate) debounce: Duration,
    /// `--max-releases-per-namespace`.
    pub(crate) max_releases_per_namespace: usize,
    /// The most releases watched in all (each namespace an even share), so that the metric
    /// series and memory stay bounded whoever creates namespaces.
    pub(crate) max_releases: usize,
    pub(crate) metrics_address: String,
    pub(crate) notify: Vec<String>,
    pub(crate) notify_format: Payload,
    /// The cluster's name, put on every notification (`--cluster`).
    pub(crate) cluster: Option<String>,
    /// `--ui`: the page at `/`.
    pub(crate) ui: bool,
    pub(crate) log: Log,
    pub(crate) repair: Option<RepairOptions>,
    pub(crate) leader: Option<LeaderOptions>,
    /// The Secret (in the watcher's namespace) holding the key of drift signatures.
    pub(crate) signature_key_secret: String,
    /// The watcher's own namespace, as the operator named it (`--pause-namespace`, else
    /// `--lease-namespace`; the chart names its own): its signature key, pauses and
    /// announcement live there. Unnamed, it is only the session's namespace, which may be a
    /// tenant's: no key is read from it (signatures hold for the process) and its pauses hold
    /// only its own releases.
    pub(crate) home: Option<String>,
    /// `--clusters`: watch every cluster of an inventory the cluster connected to holds.
    pub(crate) fleet: Option<FleetOptions>,
    /// `--audit-address`: the API server's audit webhook, to name who made each drift.
    pub(crate) audit: Option<crate::watch::receiver::AuditOptions>,
}

/// Where a fleet's clusters are listed, and how often the list is read again.
#[derive(Clone, Debug)]
pub(crate) struct FleetOptions {
    pub(crate) source: InventoryKind,
    pub(crate) scope: Scope,
    pub(crate) every: Duration,
    /// `--clusters-max`: the most entries watched (the first by name).
    pub(crate) max: usize,
    /// Where the watcher's own objects live in the management cluster (`--lease-namespace`).
    pub(crate) home: Option<String>,
}

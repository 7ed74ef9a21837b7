//! helm-drift: finds (and repairs) drift between what Helm recorded for a release and the cluster.
//!
//! The module map is the layering, lowest first; a module uses only modules above it in this
//! list (`layering::each_module_uses_only_the_layers_below_it` checks the `crate::` paths of the
//! code, tests aside):
//!
//! 1. Leaves: [`errors`] (an error as one line), [`doors`] (every input others write, its
//!    door, budget and hostile test), [`random`], [`digest`] (hex, SHA-256 names), [`yaml`] (the one budgeted YAML
//!    parser for what others write: records' manifests, baselines), [`model`] (the data every
//!    stage hands on: objects, drift, reports, exit codes).
//! 2. [`api`]: talking to the API server (connection, `ApiError`, retry); [`live`]: the
//!    cluster's objects (discovery, shared lists, changes made as Helm would, Events);
//!    [`inventory`]: the fleets other tools keep (Cluster API, Argo CD, CAAPH's releases).
//! 3. [`compare`]: differences between recorded and live (exact, subset, managed fields,
//!    ownership, merge keys); [`policy`]: what a difference means (ignore, expected, gitops, jq);
//!    [`audit`]: who made a drift, from the API server's audit events (bounded, matched);
//!    [`guard`]: the admission guard's policy (what to write, what a written one says);
//!    [`pause`]: break-glass pauses of self-healing (where they live, what they hold).
//! 4. [`baseline`]: accepted drift and where it is kept; [`release`]: Helm's storage (the one
//!    storage-driver enum, Secrets, ConfigMaps, SQL), records and their index.
//! 5. [`settings`]: what a run needs, resolved once; [`desired`]: the objects Helm
//!    applied, from a record's manifest; [`helm`]: runs the helm binary (render, upgrade,
//!    explain); [`explain`]: which values wrote a drifted field.
//! 6. [`engine`]: a session (client, caches), the evaluation of a release and scans; [`repair`]:
//!    plans and guarded changes, judged by the engine; [`plan`]: what the next `helm upgrade`
//!    would do, rendered by helm and judged by the engine.
//! 7. [`report`]: the only writer of a command's output (text, JSON, JUnit, Markdown, HTML);
//!    [`watch`]: the long-running watcher, in rooms of its own (healing, the audit receiver,
//!    CAAPH's proxies, outputs, the fleet: `watch/mod.rs` lists them by floor).
//! 8. [`cli`]: clap only (the commands' arguments, flags, help); [`commands`]: each command in
//!    one home, its `XxxSettings::resolve` (every rule about its flags) and its run over the
//!    engine; `commands::main` parses, dispatches and sets the exit code.

#![warn(clippy::too_many_lines)]

pub(crate) mod api;
pub(crate) mod audit;
pub(crate) mod baseline;
pub(crate) mod cli;
pub mod commands;
pub(crate) mod compare;
pub(crate) mod desired;
pub(crate) mod digest;
pub(crate) mod doors;
pub(crate) mod engine;
pub(crate) mod errors;
pub(crate) mod explain;
pub(crate) mod guard;
pub(crate) mod helm;
pub(crate) mod inventory;
pub(crate) mod live;
pub(crate) mod model;
pub(crate) mod pause;
pub(crate) mod plan;
pub(crate) mod policy;
pub(crate) mod random;
pub(crate) mod release;
pub(crate) mod repair;
pub(crate) mod report;
pub(crate) mod settings;
pub(crate) mod watch;
pub(crate) mod yaml;

/// What the fuzz targets (`fuzz/`) call: the parsers of untrusted input, and nothing else.
pub mod fuzzing {
    /// Splits and parses a manifest as `check` does; whether it was accepted.
    pub fn from_manifest(manifest: &str) -> bool {
        crate::desired::from_manifest(manifest).is_ok()
    }

    /// Decodes a release record's payload as `check` does; whether it was accepted.
    pub fn decode(encoded: &[u8]) -> bool {
        crate::release::decode(encoded).is_ok()
    }
}

/// What the tests of each Kubernetes version check against its real API server: the tables of
/// what the server does that the engines assume (not an interface of the product).
#[doc(hidden)]
pub mod tables {
    use serde_json::Value;

    /// Whether the engines take `generation` as set to 1 on create and raised on every change.
    pub fn tracks_generation(group: &str, kind: &str) -> bool {
        crate::compare::provenance::tracks_generation(group, kind)
    }

    /// Where the object the server holds (`live`, outside `metadata` and `status`) and the
    /// defaults table's prediction for `desired` disagree, as JSON pointers: `+` a field the
    /// server holds that the table does not predict, `-` one the table predicts that the server
    /// does not hold, `~` a value that differs.
    pub fn defaults_disagree(group: &str, kind: &str, desired: &Value, live: &Value) -> Vec<String> {
        let outside = |v: &Value| {
            let mut v = v.clone();
            if let Some(o) = v.as_object_mut() {
                o.remove("metadata");
                o.remove("status");
            }
            v
        };
        let held = crate::compare::defaults::held(group, kind, desired, None);
        crate::compare::defaults::disagreements(&outside(live), &outside(&held))
    }
}

#[cfg(test)]
mod layering;
#[cfg(test)]
mod testing;

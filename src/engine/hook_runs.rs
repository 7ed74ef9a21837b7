//! The runs of hooks found in a release's earlier records (`--hooks`), remembered by revision:
//! earlier records do not change, so a watcher reads them once per revision.

use crate::release::{Hook, Release};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Earlier runs of the hooks a revision did not run, by release revision: earlier records do not
/// change, so a watcher reads them once per revision (and its hooks as recorded). Bounded in
/// entries and in bytes (what a record writer's hooks hold): past either, it starts afresh.
#[derive(Default)]
pub(crate) struct EarlierRuns(Mutex<(HashMap<String, Runs>, usize)>);

/// Hooks with the revision each ran at, newest first.
pub(crate) type Runs = Arc<Vec<(Hook, u32)>>;

/// The most revisions whose earlier runs are kept.
const REMEMBERED: usize = 1024;
/// The most bytes of hooks kept (their manifests, names and paths).
const REMEMBERED_BYTES: usize = 16 * 1024 * 1024;

/// The bytes a revision's remembered runs hold.
fn bytes(runs: &[(Hook, u32)]) -> usize {
    runs.iter().map(|(h, _)| h.manifest.len() + h.name.len() + h.path.len() + h.kind.len() + 64).sum()
}

impl EarlierRuns {
    /// A revision's key: the release, its revision, and a digest of its recorded hooks.
    pub(super) fn key(release: &Release) -> String {
        let raw = release.hooks.as_deref().map_or("", |h| h.get());
        let digest = crate::digest::sha256_hex(raw, 12);
        format!("{}/{}/{}/{digest}", release.namespace(), release.name(), release.revision())
    }

    pub(super) fn get(&self, key: &str) -> Option<Runs> {
        self.0.lock().expect("earlier runs").0.get(key).cloned()
    }

    pub(super) fn put(&self, key: String, runs: Vec<(Hook, u32)>) -> Runs {
        let size = bytes(&runs);
        let runs = Arc::new(runs);
        if size > REMEMBERED_BYTES {
            return runs; // larger than all it may hold: used once, not kept
        }
        let mut guard = self.0.lock().expect("earlier runs");
        let (map, held) = &mut *guard;
        if map.len() >= REMEMBERED || *held + size > REMEMBERED_BYTES {
            map.clear();
            *held = 0;
        }
        if let Some(old) = map.insert(key, runs.clone()) {
            *held -= bytes(&old).min(*held);
        }
        *held += size;
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(revision: u32, hooks: serde_json::Value) -> Release {
        Release::for_tests(serde_json::json!({"name": "web", "namespace": "apps", "version": revision,
            "info": {"status": "deployed"}, "manifest": "", "hooks": hooks}))
    }

    #[test]
    fn a_revision_is_remembered_by_its_recorded_hooks() {
        let a = EarlierRuns::key(&release(3, serde_json::json!([{"name": "h", "last_run": {"phase": ""}}])));
        let b = EarlierRuns::key(&release(3, serde_json::json!([{"name": "h", "last_run": {"phase": "Succeeded"}}])));
        assert_ne!(a, b, "the same revision with other hooks (helm test ran, or installed again)");
        assert_ne!(a, EarlierRuns::key(&release(4, serde_json::json!([{"name": "h", "last_run": {"phase": ""}}]))));
        let runs = EarlierRuns::default();
        assert!(runs.get(&a).is_none());
        runs.put(a.clone(), vec![(Hook { name: "h".into(), ..Hook::default() }, 1)]);
        assert_eq!(runs.get(&a).unwrap()[0].1, 1);
        for i in 0..REMEMBERED {
            runs.put(format!("k{i}"), Vec::new());
        }
        assert!(runs.0.lock().unwrap().0.len() <= REMEMBERED, "bounded");
    }

    #[test]
    fn remembered_hooks_are_bounded_in_bytes() {
        let hook = |n: usize| Hook { name: "h".into(), manifest: "x".repeat(n), ..Hook::default() };
        let runs = EarlierRuns::default();
        runs.put("huge".into(), vec![(hook(REMEMBERED_BYTES + 1), 1)]);
        assert!(runs.get("huge").is_none(), "larger than the budget: not kept");
        for i in 0..40 {
            runs.put(format!("k{i}"), vec![(hook(1024 * 1024), 1)]);
            assert!(runs.0.lock().unwrap().1 <= REMEMBERED_BYTES);
        }
        assert!(runs.get("k39").is_some(), "the newest is kept");
    }
}

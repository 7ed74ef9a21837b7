//! The runs of hooks found in a release's earlier records (`--hooks`), remembered by revision:
//! earlier records do not change, so a watcher reads them once per revision.

use crate::release::{Hook, Release};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Earlier runs of the hooks a revision did not run, by release revision: earlier records do not
/// change, so a watcher reads them once per revision (and its hooks as recorded).
#[derive(Default)]
pub(crate) struct EarlierRuns(Mutex<HashMap<String, Runs>>);

/// Hooks with the revision each ran at, newest first.
pub(crate) type Runs = Arc<Vec<(Hook, u32)>>;

/// The most revisions whose earlier runs are kept.
const REMEMBERED: usize = 1024;

impl EarlierRuns {
    /// A revision's key: the release, its revision, and a digest of its recorded hooks.
    pub(super) fn key(release: &Release) -> String {
        let raw = release.hooks.as_deref().map_or("", |h| h.get());
        let digest: String = Sha256::digest(raw.as_bytes()).iter().take(12).map(|b| format!("{b:02x}")).collect();
        format!("{}/{}/{}/{digest}", release.namespace(), release.name(), release.revision())
    }

    pub(super) fn get(&self, key: &str) -> Option<Runs> {
        self.0.lock().expect("earlier runs").get(key).cloned()
    }

    pub(super) fn put(&self, key: String, runs: Vec<(Hook, u32)>) -> Runs {
        let runs = Arc::new(runs);
        let mut map = self.0.lock().expect("earlier runs");
        if map.len() >= REMEMBERED {
            map.clear();
        }
        map.insert(key, runs.clone());
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
        assert!(runs.0.lock().unwrap().len() <= REMEMBERED, "bounded");
    }
}

//! The hook objects Helm keeps after their hooks ran (`--hooks`): which of a record's hooks are
//! expected in the cluster, with the content of the run that made them: this revision's, or an
//! earlier revision's for a hook that did not run at this one (a `pre-install` CRD after an
//! upgrade). The decisions are pure; reading the earlier records is the one I/O.

use super::Session;
use super::hook_runs::EarlierRuns;
use crate::release::{Hook, Release, ReleaseIndex};
use anyhow::{Context, Result};
use std::sync::Arc;

/// How many earlier revisions are read, at most, for the hooks that did not run at this one.
const HISTORY: usize = 32;

/// What became of a hook's object after its last run at one revision.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HookFate {
    /// It stays in the cluster as the hook created it.
    Kept,
    /// Helm deleted it after the run (`hook-succeeded`, `hook-failed`).
    Deleted,
    /// The run did not finish (`Running`, `Unknown`): what exists is not known.
    Unfinished,
    /// The hook did not run at that revision.
    NotRun,
}

/// The fate of a hook's object, from its last run and delete policies as recorded. Helm never
/// deletes a CustomResourceDefinition hook (that would delete every object of its kind).
pub(crate) fn fate(hook: &Hook) -> HookFate {
    let deleted_by = match hook.last_run.phase.as_str() {
        "" => return HookFate::NotRun,
        "Succeeded" => "hook-succeeded",
        "Failed" => "hook-failed",
        _ => return HookFate::Unfinished,
    };
    if hook.kind != "CustomResourceDefinition" && hook.delete_policies.iter().any(|p| p == deleted_by) {
        HookFate::Deleted
    } else {
        HookFate::Kept
    }
}

/// The same hook object in another revision's hooks.
fn same(a: &Hook, b: &Hook) -> bool {
    a.kind == b.kind && a.name == b.name
}

/// Whether a hook runs only with `helm test`: one that did not run at this revision is not looked
/// for in earlier ones (a chart's tests are compared at the revision they were run at).
fn test_only(hook: &Hook) -> bool {
    !hook.events.is_empty() && hook.events.iter().all(|e| e == "test" || e == "test-success")
}

/// Whether a hook runs at a rollback (its other hooks are not run then).
fn ran_at_rollback(hook: &Hook) -> bool {
    hook.events.iter().any(|e| e == "pre-rollback" || e == "post-rollback")
}

/// The runs in an earlier revision's `hooks` of the hooks `pending`.
fn runs_of(pending: &[Hook], hooks: &[Hook]) -> Vec<Hook> {
    pending.iter().filter_map(|p| hooks.iter().find(|h| same(h, p) && fate(h) != HookFate::NotRun).cloned()).collect()
}

/// The hooks of one release, sorted by what becomes of them.
#[derive(Debug, Default)]
pub(crate) struct Sorted {
    /// Kept hooks, each with the revision whose run made its object.
    pub(crate) kept: Vec<(Hook, u32)>,
    pub(crate) deleted: usize,
    pub(crate) unfinished: usize,
    /// Tests that did not run at this revision.
    pub(crate) tests: usize,
    /// Hooks that did not run at this revision, still looked for in earlier ones.
    pub(crate) pending: Vec<Hook>,
}

impl Sorted {
    /// The hooks of revision `revision`. A rollback copies the hooks of the revision it went
    /// back to, their runs included: only its rollback hooks ran at it, and the others made
    /// what lives now at their newest run before it.
    pub(crate) fn new(hooks: Vec<Hook>, revision: u32, rollback: bool) -> Sorted {
        let mut sorted = Sorted::default();
        for hook in hooks {
            match rollback && !ran_at_rollback(&hook) {
                true if test_only(&hook) => sorted.tests += 1,
                true => sorted.pending.push(hook),
                false => sorted.settle(hook, revision),
            }
        }
        sorted
    }

    fn settle(&mut self, hook: Hook, revision: u32) {
        match fate(&hook) {
            HookFate::Kept => self.kept.push((hook, revision)),
            HookFate::Deleted => self.deleted += 1,
            HookFate::Unfinished => self.unfinished += 1,
            HookFate::NotRun if test_only(&hook) => self.tests += 1,
            HookFate::NotRun => self.pending.push(hook),
        }
    }

    /// Earlier runs (newest first, each with its revision): each pending hook that ran there is
    /// settled by its newest run.
    pub(crate) fn earlier(&mut self, runs: &[(Hook, u32)]) {
        let pending = std::mem::take(&mut self.pending);
        for hook in pending {
            match runs.iter().find(|(h, _)| same(h, &hook)) {
                Some((ran, revision)) => self.settle(ran.clone(), *revision),
                None => self.pending.push(hook),
            }
        }
    }

    /// What the report says of the hooks that are not compared.
    pub(crate) fn note(&self) -> Option<String> {
        let parts: Vec<String> = [
            (self.deleted, "deleted by their delete policy after they ran"),
            (self.pending.len() + self.tests, "never ran (tests run with helm test; --no-hooks skips them)"),
            (self.unfinished, "whose last run did not finish"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        (!parts.is_empty()).then(|| format!("hooks not compared, not expected to exist: {}", parts.join("; ")))
    }
}

/// The kept hooks of `release` (read from `record`), looking for the hooks that did not run at
/// its revision in the earlier records of `index`, newest first; at most `limit` hooks a record.
pub(crate) async fn kept_hooks(
    session: &Session,
    index: &ReleaseIndex,
    release: &Release,
    record: &str,
    limit: usize,
) -> Result<(Sorted, Vec<String>)> {
    let hooks = release.hooks(limit).with_context(|| format!("cannot read the hooks of {record}"))?;
    let mut sorted = Sorted::new(hooks, release.revision(), release.is_rollback());
    let mut notes = Vec::new();
    if !sorted.pending.is_empty() {
        let key = EarlierRuns::key(release);
        let runs = match session.hook_runs().get(&key) {
            Some(runs) => runs,
            None => {
                let (runs, complete) =
                    walk(session, index, release.revision(), &sorted.pending, limit, &mut notes).await;
                if complete { session.hook_runs().put(key, runs) } else { Arc::new(runs) }
            }
        };
        sorted.earlier(&runs);
    }
    notes.extend(sorted.note());
    Ok((sorted, notes))
}

/// The runs of the hooks `pending` in the records before `revision`, newest first, and whether
/// every record needed could be read.
async fn walk(
    session: &Session,
    index: &ReleaseIndex,
    revision: u32,
    pending: &[Hook],
    limit: usize,
    notes: &mut Vec<String>,
) -> (Vec<(Hook, u32)>, bool) {
    let mut earlier: Vec<u32> = index.records.iter().map(|r| r.revision).filter(|r| *r < revision).collect();
    earlier.sort_unstable_by(|a, b| b.cmp(a));
    let (mut pending, mut runs, mut complete) = (pending.to_vec(), Vec::new(), true);
    for revision in earlier.into_iter().take(HISTORY) {
        if pending.is_empty() {
            break;
        }
        let read = session.storage().select(index, Some(revision)).await;
        let hooks = read.map_err(anyhow::Error::from).and_then(|s| {
            let mut hooks = s.release.hooks(limit)?;
            // A rollback's other hooks carry the runs of the revision it went back to.
            if s.release.is_rollback() {
                hooks.retain(ran_at_rollback);
            }
            Ok(hooks)
        });
        match hooks {
            Ok(hooks) => {
                let found = runs_of(&pending, &hooks);
                pending.retain(|p| !found.iter().any(|f| same(f, p)));
                runs.extend(found.into_iter().map(|h| (h, revision)));
            }
            Err(e) => {
                complete = false;
                notes.push(format!("hooks of revision {revision} not read ({e:#})"));
            }
        }
    }
    (runs, complete)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(kind: &str, name: &str, phase: &str, policies: &[&str]) -> Hook {
        Hook {
            name: name.into(),
            kind: kind.into(),
            manifest: format!("{kind} {name} {phase}"),
            last_run: crate::release::LastRun { phase: phase.into() },
            delete_policies: policies.iter().map(|p| p.to_string()).collect(),
            ..Hook::default()
        }
    }

    #[test]
    fn what_helm_keeps_after_a_hook_ran() {
        assert_eq!(fate(&hook("ConfigMap", "a", "Succeeded", &["before-hook-creation"])), HookFate::Kept);
        assert_eq!(fate(&hook("ConfigMap", "a", "Succeeded", &[])), HookFate::Kept);
        assert_eq!(fate(&hook("Job", "a", "Succeeded", &["hook-succeeded"])), HookFate::Deleted);
        assert_eq!(fate(&hook("Job", "a", "Succeeded", &["hook-failed"])), HookFate::Kept);
        assert_eq!(fate(&hook("Job", "a", "Failed", &["hook-failed"])), HookFate::Deleted);
        assert_eq!(fate(&hook("Job", "a", "Failed", &["hook-succeeded"])), HookFate::Kept);
        // Helm never deletes a CRD hook, whatever its policy says.
        assert_eq!(fate(&hook("CustomResourceDefinition", "a", "Succeeded", &["hook-succeeded"])), HookFate::Kept);
        assert_eq!(fate(&hook("ConfigMap", "a", "Running", &[])), HookFate::Unfinished);
        assert_eq!(fate(&hook("ConfigMap", "a", "Unknown", &[])), HookFate::Unfinished);
        assert_eq!(fate(&hook("ConfigMap", "a", "", &[])), HookFate::NotRun);
    }

    #[test]
    fn a_rollback_runs_only_its_rollback_hooks() {
        let upgrade = Hook {
            events: vec!["post-install".into(), "post-upgrade".into()],
            ..hook("ConfigMap", "cfg", "Succeeded", &[])
        };
        let rollback = Hook { events: vec!["post-rollback".into()], ..hook("ConfigMap", "undo", "Succeeded", &[]) };
        let sorted = Sorted::new(vec![upgrade.clone(), rollback.clone()], 3, true);
        assert_eq!(sorted.kept.iter().map(|(h, r)| (h.name.as_str(), *r)).collect::<Vec<_>>(), [("undo", 3)]);
        assert_eq!(
            sorted.pending,
            std::slice::from_ref(&upgrade),
            "its run was copied from the revision rolled back to"
        );
        let sorted = Sorted::new(vec![upgrade, rollback], 3, false);
        assert_eq!(sorted.kept.len(), 2);
    }

    #[test]
    fn a_hook_that_did_not_run_is_compared_as_its_last_run_made_it() {
        // Revision 3: the pre-install CRD and a test did not run; the upgrade hook did.
        let now = vec![
            hook("CustomResourceDefinition", "crd", "", &[]),
            hook("ConfigMap", "upgrade", "Succeeded", &["before-hook-creation"]),
            Hook { events: vec!["test".into()], ..hook("Pod", "test", "", &[]) },
            hook("Job", "migrate", "Succeeded", &["hook-succeeded"]),
        ];
        let mut sorted = Sorted::new(now, 3, false);
        assert_eq!((sorted.kept.len(), sorted.pending.len(), sorted.tests, sorted.deleted), (1, 1, 1, 1));
        // Revision 2 did not run it either; revision 1 (the install) did.
        let pending = sorted.pending.clone();
        assert!(runs_of(&pending, &[hook("CustomResourceDefinition", "crd", "", &[])]).is_empty());
        let found =
            runs_of(&pending, &[hook("CustomResourceDefinition", "crd", "Succeeded", &["before-hook-creation"])]);
        sorted.earlier(&found.into_iter().map(|h| (h, 1)).collect::<Vec<_>>());
        let (crd, ran_at) = sorted.kept.iter().find(|(h, _)| h.name == "crd").unwrap();
        assert_eq!((crd.manifest.as_str(), *ran_at), ("CustomResourceDefinition crd Succeeded", 1));
        assert_eq!(
            sorted.note().unwrap(),
            "hooks not compared, not expected to exist: 1 deleted by their delete policy after they ran; 1 never ran (tests run with helm test; --no-hooks skips them)"
        );
        assert!(Sorted::new(vec![hook("ConfigMap", "a", "Succeeded", &[])], 1, false).note().is_none());
    }
}

//! The hook objects Helm keeps after their hooks ran (`--hooks`): which of a record's hooks are
//! expected in the cluster, with the content of the run that made them: this revision's, or an
//! earlier revision's for a hook that did not run at this one (a `pre-install` CRD after an
//! upgrade). The decisions are pure; reading the earlier records is the one I/O.

use super::Session;
use crate::release::{Hook, Release, ReleaseIndex};
use anyhow::{Context, Result};

/// How many earlier revisions are read, at most, for the hooks that did not run at this one.
const HISTORY: usize = 32;

/// What became of a hook's object after its last run at one revision.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Fate {
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
pub(crate) fn fate(hook: &Hook) -> Fate {
    let deleted_by = match hook.last_run.phase.as_str() {
        "" => return Fate::NotRun,
        "Succeeded" => "hook-succeeded",
        "Failed" => "hook-failed",
        _ => return Fate::Unfinished,
    };
    if hook.kind != "CustomResourceDefinition" && hook.delete_policies.iter().any(|p| p == deleted_by) {
        Fate::Deleted
    } else {
        Fate::Kept
    }
}

/// The same hook object in another revision's hooks.
fn same(a: &Hook, b: &Hook) -> bool {
    a.kind == b.kind && a.name == b.name
}

/// The hooks of one release, sorted by what becomes of them.
#[derive(Debug, Default)]
pub(crate) struct Sorted {
    /// Kept hooks, each with the revision whose run made its object.
    pub(crate) kept: Vec<(Hook, u32)>,
    pub(crate) deleted: usize,
    pub(crate) unfinished: usize,
    /// Hooks that did not run at this revision, still looked for in earlier ones.
    pub(crate) pending: Vec<Hook>,
}

impl Sorted {
    /// The hooks of revision `revision`.
    pub(crate) fn new(hooks: Vec<Hook>, revision: u32) -> Sorted {
        let mut sorted = Sorted::default();
        for hook in hooks {
            sorted.settle(hook, revision);
        }
        sorted
    }

    fn settle(&mut self, hook: Hook, revision: u32) {
        match fate(&hook) {
            Fate::Kept => self.kept.push((hook, revision)),
            Fate::Deleted => self.deleted += 1,
            Fate::Unfinished => self.unfinished += 1,
            Fate::NotRun => self.pending.push(hook),
        }
    }

    /// An earlier revision's hooks: each pending hook that ran there is settled by that run.
    pub(crate) fn earlier(&mut self, hooks: &[Hook], revision: u32) {
        let pending = std::mem::take(&mut self.pending);
        for hook in pending {
            match hooks.iter().find(|h| same(h, &hook) && fate(h) != Fate::NotRun) {
                Some(ran) => self.settle(ran.clone(), revision),
                None => self.pending.push(hook),
            }
        }
    }

    /// What the report says of the hooks that are not compared.
    pub(crate) fn note(&self) -> Option<String> {
        let parts: Vec<String> = [
            (self.deleted, "deleted by their delete policy after they ran"),
            (self.pending.len(), "never ran (tests run with helm test; --no-hooks skips them)"),
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
    let mut sorted = Sorted::new(hooks, release.revision());
    let mut notes = Vec::new();
    let mut earlier: Vec<u32> = index.records.iter().map(|r| r.revision).filter(|r| *r < release.revision()).collect();
    earlier.sort_unstable_by(|a, b| b.cmp(a));
    for revision in earlier.into_iter().take(HISTORY) {
        if sorted.pending.is_empty() {
            break;
        }
        let read = session.storage.select(index, Some(revision)).await;
        match read.map_err(anyhow::Error::from).and_then(|s| Ok(s.release.hooks(limit)?)) {
            Ok(hooks) => sorted.earlier(&hooks, revision),
            Err(e) => notes.push(format!("hooks of revision {revision} not read ({e:#})")),
        }
    }
    notes.extend(sorted.note());
    Ok((sorted, notes))
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
        assert_eq!(fate(&hook("ConfigMap", "a", "Succeeded", &["before-hook-creation"])), Fate::Kept);
        assert_eq!(fate(&hook("ConfigMap", "a", "Succeeded", &[])), Fate::Kept);
        assert_eq!(fate(&hook("Job", "a", "Succeeded", &["hook-succeeded"])), Fate::Deleted);
        assert_eq!(fate(&hook("Job", "a", "Succeeded", &["hook-failed"])), Fate::Kept);
        assert_eq!(fate(&hook("Job", "a", "Failed", &["hook-failed"])), Fate::Deleted);
        assert_eq!(fate(&hook("Job", "a", "Failed", &["hook-succeeded"])), Fate::Kept);
        // Helm never deletes a CRD hook, whatever its policy says.
        assert_eq!(fate(&hook("CustomResourceDefinition", "a", "Succeeded", &["hook-succeeded"])), Fate::Kept);
        assert_eq!(fate(&hook("ConfigMap", "a", "Running", &[])), Fate::Unfinished);
        assert_eq!(fate(&hook("ConfigMap", "a", "Unknown", &[])), Fate::Unfinished);
        assert_eq!(fate(&hook("ConfigMap", "a", "", &[])), Fate::NotRun);
    }

    #[test]
    fn a_hook_that_did_not_run_is_compared_as_its_last_run_made_it() {
        // Revision 3: the pre-install CRD and a test did not run; the upgrade hook did.
        let now = vec![
            hook("CustomResourceDefinition", "crd", "", &[]),
            hook("ConfigMap", "upgrade", "Succeeded", &["before-hook-creation"]),
            hook("Pod", "test", "", &[]),
            hook("Job", "migrate", "Succeeded", &["hook-succeeded"]),
        ];
        let mut sorted = Sorted::new(now, 3);
        assert_eq!((sorted.kept.len(), sorted.pending.len(), sorted.deleted), (1, 2, 1));
        // Revision 2 did not run it either; revision 1 (the install) did.
        sorted.earlier(&[hook("CustomResourceDefinition", "crd", "", &[])], 2);
        assert_eq!(sorted.pending.len(), 2);
        sorted.earlier(&[hook("CustomResourceDefinition", "crd", "Succeeded", &["before-hook-creation"])], 1);
        let (crd, ran_at) = sorted.kept.iter().find(|(h, _)| h.name == "crd").unwrap();
        assert_eq!((crd.manifest.as_str(), *ran_at), ("CustomResourceDefinition crd Succeeded", 1));
        assert_eq!(
            sorted.note().unwrap(),
            "hooks not compared, not expected to exist: 1 deleted by their delete policy after they ran; 1 never ran (tests run with helm test; --no-hooks skips them)"
        );
        assert!(Sorted::new(vec![hook("ConfigMap", "a", "Succeeded", &[])], 1).note().is_none());
    }
}

//! Where a hook object comes from: the hook Helm ran, and kept in the cluster after it ran.

/// A hook object's origin: its hook's events and delete policies, and the revision whose run
/// created the object that lives now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HookOrigin {
    /// `pre-install`, `post-upgrade`, `test`...
    pub(crate) events: Vec<String>,
    /// As recorded after the run (Helm records `before-hook-creation` when none was set).
    pub(crate) delete_policies: Vec<String>,
    /// The revision at which the hook last ran (the release's, or an earlier one's when it did
    /// not run at this revision: a `pre-install` hook after an upgrade).
    pub(crate) ran_at: u32,
    /// The revision checked.
    pub(crate) revision: u32,
}

impl HookOrigin {
    /// `post-install,post-upgrade hook`, and the revision it ran at when another than the one
    /// checked.
    pub(crate) fn describe(&self) -> String {
        let events = self.events.join(",");
        if self.ran_at == self.revision {
            format!("{events} hook")
        } else {
            format!("{events} hook, as created at revision {}", self.ran_at)
        }
    }
}

/// Jobs and Pods run when they are created: a hook of these kinds is never created again by a
/// repair (that is running the hook; `helm upgrade` runs hooks).
pub(crate) fn runs_when_created(kind: &str) -> bool {
    matches!(kind, "Job" | "Pod")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_hook_says_which_run_made_its_object() {
        let h =
            super::HookOrigin { events: vec!["pre-install".into()], delete_policies: vec![], ran_at: 1, revision: 1 };
        assert_eq!(h.describe(), "pre-install hook");
        let later = super::HookOrigin { revision: 3, ..h };
        assert_eq!(later.describe(), "pre-install hook, as created at revision 1");
        assert!(super::runs_when_created("Job") && !super::runs_when_created("ConfigMap"));
    }
}

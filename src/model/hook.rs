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

impl super::ObjectDrift {
    /// A hook Job or Pod: it runs when it is created, so a repair never creates it again (that
    /// is running the hook; `helm upgrade` runs hooks).
    pub(crate) fn is_hook_that_runs(&self) -> bool {
        self.hook.is_some() && matches!(self.id.kind.as_str(), "Job" | "Pod")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_hook_says_which_run_made_its_object() {
        let h = crate::testing::hook(&["pre-install"], 1, 1);
        assert_eq!(h.describe(), "pre-install hook");
        let later = super::HookOrigin { revision: 3, ..h.clone() };
        assert_eq!(later.describe(), "pre-install hook, as created at revision 1");
        let of = |kind: &str, hook: bool| {
            let mut o = crate::model::ObjectDrift::new(
                crate::model::ObjectId::new("v1", kind, None, "x"),
                None,
                crate::model::Verdict::Missing,
            );
            o.hook = hook.then(|| Box::new(h.clone()));
            o
        };
        assert!(of("Job", true).is_hook_that_runs() && of("Pod", true).is_hook_that_runs());
        assert!(!of("ConfigMap", true).is_hook_that_runs() && !of("Job", false).is_hook_that_runs());
    }
}

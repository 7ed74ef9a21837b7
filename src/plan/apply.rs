//! How the planned upgrade applies: the release's own way (`--server-side=auto`, Helm 4's
//! default), or the switch the user asks for (`--server-side=true|false`), forced or not; and
//! those flags as the helm that renders the plan takes them (Helm 3 has none: it renders, the
//! plan applies as Helm 4 would).

use crate::model::Apply;

/// Helm 4's apply flags of a planned upgrade.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ApplyFlags {
    /// `--server-side=true|false`; `None` for `auto` (the way the release was applied).
    pub(crate) server_side: Option<Apply>,
    /// `--force-conflicts`: fields other managers own are taken.
    pub(crate) force_conflicts: bool,
    /// Every server-side apply is forced (Flux's helm-controller forces them all).
    pub(crate) always_force: bool,
}

impl ApplyFlags {
    /// How the upgrade of a release applied `release` applies.
    pub(crate) fn upgrade(self, release: Apply) -> Apply {
        self.server_side.unwrap_or(release)
    }

    /// Whether the server-side apply of the upgrade takes other managers' fields: with
    /// `--force-conflicts` only. A client-side upgrade writes whatever it sets (no conflict).
    pub(crate) fn forces(self, apply: Apply) -> bool {
        self.force_conflicts || self.always_force || !apply.is_server_side()
    }

    /// The arguments for a helm of major version `major` (`None`: not known, given as they
    /// are), and a note when that helm takes none of them (Helm 3).
    pub(super) fn for_helm(self, major: Option<u32>) -> (Vec<String>, Option<String>) {
        let mut given = Vec::new();
        // Helm 3 applies with the three-way merge: asked for, it is no switch to note.
        let helm3 = major.is_some_and(|m| m < 4);
        if let Some(apply) = self.server_side.filter(|a| a.is_server_side() || !helm3) {
            given.push(format!("--server-side={}", apply.is_server_side()));
        }
        if self.force_conflicts {
            given.push("--force-conflicts".to_string());
        }
        match major {
            Some(m) if m < 4 && !given.is_empty() => {
                let note = format!(
                    "helm v{m} renders the chart; {} planned as Helm 4 applies (helm v{m} has no such flag)",
                    given.join(" ")
                );
                (Vec::new(), Some(note))
            }
            _ => (given, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_follows_the_release_and_a_switch_overrides_it() {
        let auto = ApplyFlags::default();
        assert_eq!(auto.upgrade(Apply::ClientSide), Apply::ClientSide);
        assert_eq!(auto.upgrade(Apply::ServerSide), Apply::ServerSide);
        let on = ApplyFlags { server_side: Some(Apply::ServerSide), ..Default::default() };
        assert_eq!(on.upgrade(Apply::ClientSide), Apply::ServerSide);
        assert!(!on.forces(Apply::ServerSide), "Helm 4 does not force unless told");
        assert!(on.forces(Apply::ClientSide), "a three-way merge overwrites");
        assert!(ApplyFlags { force_conflicts: true, ..on }.forces(Apply::ServerSide));
        assert!(ApplyFlags { always_force: true, ..on }.forces(Apply::ServerSide), "as helm-controller applies");
    }

    #[test]
    fn helm_3_takes_no_apply_flag_and_the_plan_says_so() {
        let on = ApplyFlags { server_side: Some(Apply::ServerSide), force_conflicts: true, always_force: false };
        assert_eq!(on.for_helm(Some(4)).0, ["--server-side=true", "--force-conflicts"]);
        assert_eq!(on.for_helm(None).0, ["--server-side=true", "--force-conflicts"]);
        let (args, note) = on.for_helm(Some(3));
        assert!(args.is_empty());
        assert!(note.unwrap().contains("--server-side=true --force-conflicts planned as Helm 4 applies"));
        assert_eq!(ApplyFlags::default().for_helm(Some(3)), (Vec::new(), None));
        let off = ApplyFlags { server_side: Some(Apply::ClientSide), ..Default::default() };
        assert_eq!(off.for_helm(Some(3)), (Vec::new(), None), "Helm 3 applies that way: nothing to say");
        assert_eq!(off.for_helm(Some(4)).0, ["--server-side=false"]);
    }
}

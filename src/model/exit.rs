//! The process exit status, decided from a command's outcome in one place.

/// What the exit code tells a CI gate: 0 in sync, 2 drift found, 1 error (an error outranks drift);
/// `plan`: 3 the upgrade would fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExitStatus {
    /// Nothing drifted (or nothing left to repair).
    InSync,
    /// Drift found (or, for a dry run, something would change).
    Drift,
    /// Bad input, unreachable or forbidden cluster, a refused step...
    Error,
    /// `plan`: the upgrade would fail (a conflict, an immutable field, an object it cannot take).
    WouldFail,
}

impl ExitStatus {
    /// The exit code: 0, 2, 1 or 3.
    pub(crate) fn code(self) -> u8 {
        match self {
            ExitStatus::InSync => 0,
            ExitStatus::Error => 1,
            ExitStatus::Drift => 2,
            ExitStatus::WouldFail => 3,
        }
    }

    /// The more serious of two statuses (error > would fail > drift > in sync).
    pub(crate) fn max(self, other: ExitStatus) -> ExitStatus {
        let rank = |s: ExitStatus| match s {
            ExitStatus::InSync => 0,
            ExitStatus::Drift => 1,
            ExitStatus::WouldFail => 2,
            ExitStatus::Error => 3,
        };
        if rank(other) > rank(self) { other } else { self }
    }
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(s: ExitStatus) -> Self {
        std::process::ExitCode::from(s.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_outranks_drift() {
        assert_eq!(ExitStatus::Drift.max(ExitStatus::Error), ExitStatus::Error);
        assert_eq!(ExitStatus::Error.max(ExitStatus::Drift), ExitStatus::Error);
        assert_eq!(ExitStatus::InSync.max(ExitStatus::Drift), ExitStatus::Drift);
        assert_eq!([ExitStatus::InSync, ExitStatus::Error, ExitStatus::Drift].map(ExitStatus::code), [0, 1, 2]);
        assert_eq!(ExitStatus::WouldFail.max(ExitStatus::Error), ExitStatus::Error, "1 outranks 3");
    }

    /// What `helm drift --help` through Helm shows (the plugin's description, Helm 3's and Helm
    /// 4's) names every exit code, and which outranks which (issue 85).
    #[test]
    fn the_plugins_description_names_every_exit_code() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for file in ["plugin.yaml", "packaging/helm4/plugin.yaml"] {
            let text = std::fs::read_to_string(root.join(file)).unwrap();
            for said in ["0 in sync", "2 drift found", "1 error", "3 the upgrade would fail", "1 outranks 3"] {
                assert!(text.contains(said), "{file}: {said}");
            }
        }
    }
}

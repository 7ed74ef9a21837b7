//! `--strict`: whether fields another manager took over, still holding the recorded values,
//! count as drift.

/// How fields owned elsewhere with the recorded values are judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Strictness {
    /// Not drift (their own verdict, taken over): the default.
    #[default]
    Lenient,
    /// Drift (`--strict`).
    Strict,
}

impl Strictness {
    /// From the `--strict` flag.
    pub(crate) fn of_flag(strict: bool) -> Strictness {
        if strict { Strictness::Strict } else { Strictness::Lenient }
    }

    pub(crate) fn is_strict(self) -> bool {
        self == Strictness::Strict
    }
}

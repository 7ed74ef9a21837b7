//! How a release's Helm applies its objects: the one name and type of the apply method.

/// Client-side (Helm 3, and Helm 4's `csa`: an Update with a three-way merge) or server-side
/// (Helm 4's `apply_method: ssa`: an Apply under Helm's field manager).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Apply {
    #[default]
    ClientSide,
    ServerSide,
}

impl Apply {
    /// From a record's `apply_method` (Helm 4 writes `ssa` or `csa`; Helm 3 writes none).
    pub(crate) fn of_record(method: Option<&str>) -> Apply {
        if method == Some("ssa") { Apply::ServerSide } else { Apply::ClientSide }
    }

    pub(crate) fn is_server_side(self) -> bool {
        self == Apply::ServerSide
    }

    /// In words, as reports say it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Apply::ServerSide => "server-side",
            Apply::ClientSide => "client-side",
        }
    }

    /// The operation of Helm's entry in an object's `managedFields`.
    pub(crate) fn operation(self) -> &'static str {
        match self {
            Apply::ServerSide => "Apply",
            Apply::ClientSide => "Update",
        }
    }
}

impl std::fmt::Display for Apply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.word())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ssa_is_server_side() {
        assert_eq!(Apply::of_record(Some("ssa")), Apply::ServerSide);
        for m in [None, Some("csa"), Some(""), Some("SSA")] {
            assert_eq!(Apply::of_record(m), Apply::ClientSide, "{m:?}");
        }
        assert_eq!(Apply::ServerSide.to_string(), "server-side");
        assert_eq!(Apply::ClientSide.operation(), "Update");
    }
}

//! Who wrote what: a field's last write as managedFields tell it, what the API server's audit
//! says about that write, and whether a value under Helm's name was Helm's own apply. ("Writer"
//! names Helm's writer alone: [`super::HelmWriter`].)

/// Who last wrote a field, as `metadata.managedFields` tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Attribution {
    pub(crate) manager: String,
    /// `Apply` or `Update`.
    pub(crate) operation: String,
    /// `scale`, `status`... for writes through a subresource.
    pub(crate) subresource: Option<String>,
    /// When that manager last wrote the object (RFC 3339), when recorded.
    pub(crate) time: Option<String>,
    /// Whether the writer looks like a person's tool (kubectl, k9s, Lens, a dashboard) rather
    /// than a controller.
    pub(crate) person: bool,
    /// Who made the write, as the API server's audit tells it (`None`: no audit was read).
    pub(crate) audit: Option<Audited>,
}

/// What the API server's audit says about one write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Audited {
    /// The one audit event that made it.
    Found(Box<Actor>),
    /// No audit event decides it (none in the window read, or several by different users):
    /// said, never guessed.
    NoRecord(&'static str),
}

/// Who made a write, from its audit event (metadata only: never a body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Actor {
    /// The user the request acted as (the impersonated one when there is one).
    pub(crate) user: String,
    /// Their groups that decided the request: `system:masters`, or the groups the authorizer's
    /// reason names.
    pub(crate) groups: Vec<String>,
    /// The user who impersonated them.
    pub(crate) impersonated_by: Option<String>,
    pub(crate) user_agent: String,
    pub(crate) source_ips: Vec<String>,
    pub(crate) audit_id: String,
    /// `create`, `update`, `patch`, `delete`.
    pub(crate) verb: String,
    /// When the request completed (RFC 3339, the API server's clock).
    pub(crate) time: String,
}

/// Whether a value written under Helm's name was the deployed revision's apply (as admission
/// left it) or a later write claiming the name, and the evidence that decided it
/// ([`crate::compare::provenance`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Provenance {
    pub(crate) write: HelmWrite,
    pub(crate) evidence: String,
}

/// A field manager's name as shown to people: bare when it is one plain word, else quoted (and
/// escaped), so that a name like `kubectl-edit by alice@example.com`, which anyone may send,
/// never reads like what the audit found.
pub(crate) fn manager_shown(name: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.:/@+".contains(c);
    if !name.is_empty() && name.chars().all(plain) { name.to_string() } else { format!("{name:?}") }
}

impl Actor {
    /// `alice@example.com via admin`: the user, and who impersonated them.
    pub(crate) fn named(&self) -> String {
        match &self.impersonated_by {
            Some(i) => format!("{} via {i}", self.user),
            None => self.user.clone(),
        }
    }
}

/// Which write a value under Helm's name was, as far as the cluster tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HelmWrite {
    /// The deployed revision's apply (as admission left it): not drift.
    Apply,
    /// A later write that only claims Helm's name: drift.
    Later,
    /// The cluster cannot tell: counted as drift, and said.
    Unknown,
}

impl Provenance {
    /// Helm's apply: not drift.
    pub(crate) fn admitted(&self) -> bool {
        self.write == HelmWrite::Apply
    }

    /// Whether the cluster told which write it was.
    pub(crate) fn decided(&self) -> bool {
        self.write != HelmWrite::Unknown
    }
}

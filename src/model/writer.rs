//! Who wrote what: a field's writer as managedFields tell it, what the API server's audit says
//! about that write, whether a value under Helm's name was Helm's own apply, and whose name
//! Helm's writes to a release are under (the `helm` command's, or a controller's).

use super::ObjectId;

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

/// The field manager Helm's writes to one release are under, and how it was found: the `helm`
/// command writes as `helm`, a controller built on Helm's SDK as its own name (Flux's
/// `helm-controller`, Cluster API's Helm add-on provider `manager`). What it owns is Helm's;
/// everything helm-drift writes to the release is written under it, so that the writer's next
/// upgrade meets no conflict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HelmWriter {
    pub(crate) manager: String,
    pub(crate) found: WriterFound,
}

/// How a release's writer was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum WriterFound {
    /// Named by the operator (`--helm-manager`).
    Given,
    /// Learnt from the managedFields of the release's objects: the manager that owns the most
    /// recorded fields of `objects` of the `of` objects that told; `others` are the objects whose
    /// recorded fields another manager owns most (judged and written as this writer all the
    /// same: the writer's next upgrade writes them under its name).
    Learnt { objects: usize, of: usize, others: Vec<(ObjectId, String)> },
    /// Nothing told (no object read, no entry written as the record's apply method writes, or
    /// only managers that cannot be Helm's): the `helm` command's name. `refused` are managers
    /// that owned the fields and cannot be Helm's writer, with why.
    Default { refused: Vec<(String, &'static str)> },
}

/// The `helm` command's field manager.
pub(crate) const HELM_COMMAND: &str = "helm";

impl Default for HelmWriter {
    fn default() -> HelmWriter {
        HelmWriter::helm_command()
    }
}

impl HelmWriter {
    /// The `helm` command, because nothing told otherwise.
    pub(crate) fn helm_command() -> HelmWriter {
        HelmWriter { manager: HELM_COMMAND.into(), found: WriterFound::Default { refused: Vec::new() } }
    }

    /// Whether `manager` is this writer.
    pub(crate) fn is(&self, manager: &str) -> bool {
        self.manager == manager
    }

    /// Whether it is the `helm` command (the writer of a `helm upgrade`).
    pub(crate) fn is_helm_command(&self) -> bool {
        self.is(HELM_COMMAND)
    }

    /// `given`, `learnt` or `default`.
    pub(crate) fn source(&self) -> &'static str {
        match self.found {
            WriterFound::Given => "given",
            WriterFound::Learnt { .. } => "learnt",
            WriterFound::Default { .. } => "default",
        }
    }

    /// Why this writer: `named by --helm-manager`, `owns the recorded fields of 3 of 3 objects`...
    pub(crate) fn why(&self) -> String {
        match &self.found {
            WriterFound::Given => "named by --helm-manager".into(),
            WriterFound::Learnt { objects, of, .. } => {
                format!("owns the recorded fields of {objects} of {of} object{}", if *of == 1 { "" } else { "s" })
            }
            WriterFound::Default { refused } if refused.is_empty() => {
                "no object tells who applied it: the helm command's name".into()
            }
            WriterFound::Default { refused } => {
                let names: Vec<String> = refused.iter().map(|(m, why)| format!("{m} ({why})")).collect();
                format!(
                    "the managers that own the recorded fields cannot be Helm's: {}; the helm command's name",
                    names.join(", ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_says_how_it_was_found() {
        let learnt = HelmWriter {
            manager: "manager".into(),
            found: WriterFound::Learnt { objects: 2, of: 3, others: Vec::new() },
        };
        assert_eq!((learnt.source(), learnt.why().as_str()), ("learnt", "owns the recorded fields of 2 of 3 objects"));
        assert!(!learnt.is_helm_command() && learnt.is("manager"));
        let fallback = HelmWriter {
            found: WriterFound::Default { refused: vec![("kubectl-edit".into(), "a person's tool")] },
            ..HelmWriter::helm_command()
        };
        assert!(fallback.why().contains("kubectl-edit (a person's tool)"), "{}", fallback.why());
        assert!(fallback.is_helm_command());
    }
}

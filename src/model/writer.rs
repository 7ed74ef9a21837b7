//! Whose name Helm's writes to a release are under (the `helm` command's, or a controller's),
//! and how it was found: the one thing helm-drift calls a writer.

use super::ObjectId;

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

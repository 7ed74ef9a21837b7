//! A field another field manager owns, as the API server names it when a server-side apply
//! meets it unforced (`409 Conflict`, cause `FieldManagerConflict`): the evidence of which
//! writer a switch to server-side apply runs into, field by field.

/// One field in conflict: who the server says owns it, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FieldConflict {
    /// The owning entry's field manager (`kubectl`, `kubectl-edit`, `manager`).
    pub(crate) manager: String,
    /// The subresource it wrote through (`scale`), when not the object itself.
    pub(crate) subresource: Option<String>,
    /// The owning entry was written by an update (a client-side write: the server says which
    /// API version it used), not by a server-side apply.
    pub(crate) by_update: bool,
    /// The field as the server names it (`.spec.replicas`,
    /// `.spec.template.spec.containers[name="web"].image`).
    pub(crate) field: String,
}

impl FieldConflict {
    /// From one cause of the server's conflict: its message (`conflict with "kubectl" with
    /// subresource "scale" using apps/v1`) and field. `None` when the message is not a field
    /// manager's conflict.
    pub(crate) fn from_cause(message: &str, field: &str) -> Option<FieldConflict> {
        let rest = message.trim().strip_prefix("conflict with \"")?;
        let (manager, rest) = rest.split_once('"')?;
        let subresource = rest
            .trim_start()
            .strip_prefix("with subresource \"")
            .and_then(|s| s.split_once('"'))
            .map(|(s, _)| s.to_string());
        let by_update = rest.contains(" using ");
        Some(FieldConflict { manager: manager.to_string(), subresource, by_update, field: field.trim().to_string() })
    }

    /// The owner in words: `kubectl (through /scale)`.
    pub(crate) fn owner(&self) -> String {
        match &self.subresource {
            Some(s) => format!("{} (through /{s})", self.manager),
            None => self.manager.clone(),
        }
    }

    /// Whether it is the field at `dotted` (`.spec.replicas`) or inside it.
    pub(crate) fn is_at(&self, dotted: &str) -> bool {
        !dotted.is_empty()
            && (self.field == dotted
                || self.field.strip_prefix(dotted).is_some_and(|rest| rest.starts_with('.') || rest.starts_with('[')))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_cause_names_the_owner_and_the_field() {
        let c = FieldConflict::from_cause(
            "conflict with \"kubectl\" with subresource \"scale\" using apps/v1",
            ".spec.replicas",
        )
        .unwrap();
        assert_eq!(c.manager, "kubectl");
        assert_eq!(c.subresource.as_deref(), Some("scale"));
        assert_eq!(c.owner(), "kubectl (through /scale)");
        assert!(c.by_update);
        let applied = FieldConflict::from_cause("conflict with \"flux\"", ".spec.paused").unwrap();
        assert!(!applied.by_update, "an apply's entry names no API version");
        let c = FieldConflict::from_cause("conflict with \"kubectl-edit\" using v1", ".data.greeting").unwrap();
        assert_eq!((c.manager.as_str(), c.subresource), ("kubectl-edit", None));
        assert!(FieldConflict::from_cause("the object has been modified", "").is_none());
        // A manager name is whatever the writer sent: quotes end it, nothing else is read.
        let c = FieldConflict::from_cause("conflict with \"a b\" using v1", ".x").unwrap();
        assert_eq!(c.manager, "a b");
    }

    #[test]
    fn a_conflict_is_at_its_field_or_inside_it() {
        let c = FieldConflict {
            manager: "m".into(),
            subresource: None,
            by_update: false,
            field: ".spec.template.spec.containers[name=\"web\"].image".into(),
        };
        assert!(c.is_at(".spec.template.spec.containers"));
        assert!(c.is_at(".spec.template"));
        assert!(!c.is_at(".spec.temp"));
        assert!(!c.is_at(""));
    }
}

//! Whether a planned upgrade takes the values stored in the release record, as Helm decides it
//! (`action.Upgrade`'s `reuseValues`): those values are written by whoever may write Secrets in
//! the record's namespace, and a chart's `tpl` runs them as templates.

/// The value flags of a planned `helm upgrade`, as given.
#[derive(Clone, Debug, Default)]
pub(crate) struct ValueFlags {
    pub(crate) reuse_values: bool,
    pub(crate) reset_values: bool,
    pub(crate) reset_then_reuse_values: bool,
    /// Any `--set`, `--set-string`, `--set-json` or `--set-file`.
    pub(crate) sets: bool,
    /// The `-f/--values` files (paths or URLs).
    pub(crate) files: Vec<String>,
}

impl ValueFlags {
    /// Whether the upgrade may take the record's values: `--reuse-values` and
    /// `--reset-then-reuse-values` do; `--reset-values` does not; else Helm copies them when the
    /// new values are empty (no flag, or only files that hold no value). A file that cannot be
    /// read here (a URL) may be empty, so it counts as none.
    pub(crate) fn take_record_values(&self) -> bool {
        if self.reuse_values || self.reset_then_reuse_values {
            return true;
        }
        if self.reset_values || self.sets {
            return false;
        }
        !self.files.iter().any(|f| holds_values(f))
    }
}

/// Whether the local values file `path` holds a value (a mapping with a key).
fn holds_values(path: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else { return false };
    let mut budget = crate::yaml::Budget::for_manifest(text.len());
    matches!(crate::yaml::to_json_within(&text, &mut budget), Ok(serde_json::Value::Object(m)) if !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_values_are_taken_as_helm_takes_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.to_string_lossy().into_owned()
        };
        let full = file("full.yaml", "replicas: 2\n");
        let empty = file("empty.yaml", "# nothing\n");
        let braces = file("braces.yaml", "{}\n");
        let given = |f: ValueFlags| f.take_record_values();
        assert!(given(ValueFlags::default()), "no value flag: Helm copies the record's");
        assert!(given(ValueFlags { reuse_values: true, sets: true, ..Default::default() }));
        assert!(given(ValueFlags { reset_then_reuse_values: true, ..Default::default() }));
        assert!(!given(ValueFlags { reset_values: true, ..Default::default() }));
        assert!(!given(ValueFlags { sets: true, ..Default::default() }));
        assert!(!given(ValueFlags { files: vec![full.clone()], ..Default::default() }));
        assert!(given(ValueFlags { files: vec![empty, braces], ..Default::default() }), "files holding no value");
        assert!(given(ValueFlags { files: vec!["https://example.invalid/v.yaml".into()], ..Default::default() }));
        assert!(!given(ValueFlags {
            files: vec!["https://example.invalid/v.yaml".into(), full],
            ..Default::default()
        }));
    }
}

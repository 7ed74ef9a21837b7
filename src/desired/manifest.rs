//! Splits a stored manifest into documents the way Helm does, keeping each `# Source:` path.

/// One YAML document of a manifest.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Document<'a> {
    /// The template it was rendered from (`# Source: chart/templates/x.yaml`), if recorded.
    pub(crate) source: Option<&'a str>,
    pub(crate) body: &'a str,
}

/// Splits on lines starting with `---` (Helm 3's `(?:^|\s*\n)---\s*` and Helm 4's
/// `(?m)^---[ \t]*` agree on these), dropping documents that hold only comments or whitespace.
pub(crate) fn split(manifest: &str) -> Vec<Document<'_>> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in manifest.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("---") {
            push(&mut docs, &manifest[start..offset]);
            start = offset + 3 + rest.len() - rest.trim_start_matches([' ', '\t']).len();
        }
        offset += line.len();
    }
    push(&mut docs, &manifest[start..]);
    docs
}

fn push<'a>(docs: &mut Vec<Document<'a>>, body: &'a str) {
    let mut source = None;
    let mut has_content = false;
    for line in body.lines() {
        let t = line.trim();
        if let Some(path) = t.strip_prefix("# Source: ") {
            source.get_or_insert(path.trim());
        } else if !t.is_empty() && !t.starts_with('#') {
            has_content = true;
            break;
        }
    }
    if has_content {
        docs.push(Document { source, body });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_helm_manifest_and_keeps_sources() {
        let m = "---\n# Source: c/templates/a.yaml\nkind: A\n---\n# Source: c/templates/b.yaml\nkind: B\nx: |\n  ---not a separator\n";
        let docs = split(m);
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].source, Some("c/templates/a.yaml"));
        assert_eq!(docs[1].source, Some("c/templates/b.yaml"));
        assert!(docs[1].body.contains("---not a separator"));
    }

    #[test]
    fn drops_empty_and_comment_only_documents() {
        let m = "---\n# Source: c/templates/empty.yaml\n\n---\n   \n---\nkind: A\n--- \t\n";
        let docs = split(m);
        assert_eq!(docs, vec![Document { source: None, body: "\nkind: A\n" }]);
    }

    #[test]
    fn text_after_separator_starts_the_document() {
        let docs = split("kind: A\n--- kind: B\n");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].body, "kind: B\n");
    }

    #[test]
    fn manifest_without_leading_separator_or_comments() {
        let docs = split("kind: A\nmetadata:\n  name: x\n");
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0].source, None);
    }
}

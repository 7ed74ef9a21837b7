//! Two manifests compared document by document: which documents render differently (`render`,
//! `check --rerender`).

use super::split;
use crate::model::{DocChange, DocDiff};

/// Documents keyed by source path (and position among that template's documents).
fn documents(manifest: &str) -> Vec<(String, String)> {
    let mut seen = std::collections::HashMap::new();
    split(manifest)
        .into_iter()
        .map(|d| {
            let source = d.source.unwrap_or("(no source)").to_string();
            let n = seen.entry(source.clone()).and_modify(|n| *n += 1).or_insert(1);
            let key = if *n == 1 { source } else { format!("{source}#{n}") };
            let body: String = d.body.lines().filter(|l| !l.starts_with("# Source: ")).collect::<Vec<_>>().join("\n");
            (key, body.trim().to_string())
        })
        .collect()
}

/// The number of stored documents and every document that renders differently.
pub(crate) fn diff_documents(stored: &str, rendered: &str) -> (usize, Vec<DocDiff>) {
    let a = documents(stored);
    let b = documents(rendered);
    let mut diffs = Vec::new();
    for (source, text) in &a {
        match b.iter().find(|(s, _)| s == source) {
            Some((_, other)) if other == text => {}
            Some((_, other)) => diffs.push(DocDiff {
                source: source.clone(),
                change: DocChange::Changed { stored: text.clone(), rendered: other.clone() },
            }),
            None => diffs.push(DocDiff { source: source.clone(), change: DocChange::OnlyStored(text.clone()) }),
        }
    }
    for (source, text) in &b {
        if !a.iter().any(|(s, _)| s == source) {
            diffs.push(DocDiff { source: source.clone(), change: DocChange::OnlyRendered(text.clone()) });
        }
    }
    (a.len(), diffs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::DocChange;

    #[test]
    fn finds_changed_added_and_removed_documents() {
        let stored = "---\n# Source: c/templates/a.yaml\nkind: A\nx: 1\n---\n# Source: c/templates/b.yaml\nkind: B\n---\n# Source: c/templates/b.yaml\nkind: B2\n";
        let rendered = "---\n# Source: c/templates/a.yaml\nkind: A\nx: 2\n---\n# Source: c/templates/b.yaml\nkind: B\n---\n# Source: c/templates/c.yaml\nkind: C\n";
        let (n, diffs) = diff_documents(stored, rendered);
        assert_eq!(n, 3);
        let sources: Vec<_> = diffs.iter().map(|d| d.source.as_str()).collect();
        assert_eq!(sources, ["c/templates/a.yaml", "c/templates/b.yaml#2", "c/templates/c.yaml"]);
        assert!(matches!(diffs[1].change, DocChange::OnlyStored(_)));
        assert!(diff_documents(stored, stored).1.is_empty());
    }
}

//! The book (`docs/`) builds with mdBook as a reader gets it: every page SUMMARY.md names exists
//! (its `create-missing = false`), the generated reference is in it, and mdBook reports no error.

use crate::support::repo_root;
use std::process::Command;

/// mdBook, installed by `scripts/tools.sh --mdbook` (scripts/test.sh exports its path).
fn mdbook() -> String {
    if let Ok(path) = std::env::var("HELM_DRIFT_MDBOOK") {
        return path;
    }
    let out = Command::new("bash").arg(repo_root().join("scripts/tools.sh")).arg("--mdbook").output().unwrap();
    assert!(
        out.status.success(),
        "mdbook is missing and could not be installed (scripts/tools.sh --mdbook):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn the_book_builds() {
    let into = tempfile::tempdir().unwrap();
    let out =
        Command::new(mdbook()).arg("build").arg(repo_root().join("docs")).arg("-d").arg(into.path()).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "mdbook build docs failed:\n{said}");
    assert!(!said.contains("ERROR") && !said.contains("WARN"), "mdbook build docs said:\n{said}");
    for page in
        ["index.html", "tour.html", "commands/check.html", "reference/helm-drift-check.html", "troubleshooting.html"]
    {
        assert!(into.path().join(page).is_file(), "the book has no {page}");
    }
    let check = std::fs::read_to_string(into.path().join("reference/helm-drift-check.html")).unwrap();
    assert!(check.contains("--all-namespaces"), "the reference page lists the flags");
}

//! Generated parts of the book's pages (test-only, with `reference`): the exit codes tables and
//! a page's marked part.

/// A command's exit codes as a table.
pub(super) fn exit_table(codes: &[(u8, &str)]) -> String {
    let mut out = String::from("| code | meaning |\n|---|---|\n");
    for (code, meaning) in codes {
        out.push_str(&format!("| {code} | {meaning} |\n"));
    }
    out
}

/// Every command's exit codes, for the exit codes page.
pub(super) fn every_exit_code() -> String {
    let mut out = String::from("| command | code | meaning |\n|---|---|---|\n");
    for (command, codes) in super::help::EXITS {
        for (code, meaning) in *codes {
            out.push_str(&format!("| `{command}` | {code} | {meaning} |\n"));
        }
    }
    out
}

/// A page whose part between `<!-- NAME: ... -->` and `<!-- /NAME -->` is `text`.
pub(super) fn marked(page: &str, name: &str, text: &str) -> String {
    let page = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(page)).unwrap();
    let (start, end) = (page.find(&format!("<!-- {name}:")).unwrap(), page.find(&format!("<!-- /{name} -->")).unwrap());
    let marker = &page[start..start + page[start..].find('\n').unwrap() + 1];
    format!("{}{marker}{text}{}", &page[..start], &page[end..])
}

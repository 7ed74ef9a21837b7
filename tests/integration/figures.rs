//! Every memory figure the README and the performance pages quote in prose is one the bench
//! measured (bench/RESULTS.md), rounded as written; a limit or a budget (what the code or the
//! chart sets, not a measurement) says so in its sentence. The figures table itself is generated
//! from bench/RESULTS.md (`src/cli/figures.rs`).

use crate::support::repo_root;

/// The pages that quote the bench.
const PAGES: &[&str] = &[
    "README.md",
    "docs/src/performance.md",
    "docs/src/fleets.md",
    "docs/src/cluster-api.md",
    "docs/src/compared.md",
    "docs/src/faq.md",
    "docs/src/introduction.md",
    "docs/src/getting-started.md",
];

/// Words near a figure (in the 30 characters before it, or the word after it) that make it a setting,
/// not a measurement.
const SETTINGS: &[&str] = &["limit", "budget", "at most", "memoryPerMemberMiB", "memoryBaseMiB"];

/// Each `N MiB` or `N GiB` of a text: the number as written (without thousands' commas) and
/// where it is.
fn figures(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for unit in [" MiB", " GiB"] {
        for (at, _) in text.match_indices(unit) {
            let number: String =
                text[..at].chars().rev().take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',').collect();
            let number: String = number.chars().rev().filter(|c| *c != ',').collect();
            if !number.is_empty() && number.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                out.push((number, at));
            }
        }
    }
    out
}

/// Whether `written` is `measured` rounded as written (as many decimals).
fn rounds_to(measured: f64, written: &str) -> bool {
    let decimals = written.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let scale = 10f64.powi(decimals);
    written.parse::<f64>().is_ok_and(|w| ((measured * scale).round() - w * scale).abs() < 0.5)
}

/// Prose: outside code blocks and the generated figures table, as sentences (lines joined).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut code = false;
    let mut table = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            code = !code;
            continue;
        }
        if line.starts_with("<!-- figures:") {
            table = true;
        }
        if line.starts_with("<!-- /figures") {
            table = false;
            continue;
        }
        if !code && !table {
            out.push_str(line);
            out.push(' ');
        }
    }
    out
}

/// The nearest character boundary at or before `at`.
fn floor(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[test]
fn every_memory_figure_in_prose_is_measured_or_a_setting() {
    let root = repo_root();
    let results = std::fs::read_to_string(root.join("bench/RESULTS.md")).unwrap();
    let measured: Vec<f64> = figures(&results).iter().filter_map(|(n, _)| n.parse().ok()).collect();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for page in PAGES {
        let text = prose(&std::fs::read_to_string(root.join(page)).unwrap());
        for (number, at) in figures(&text) {
            let start = text[..at].rfind(". ").map_or(0, |s| s + 2);
            let end = text[at..].find(". ").map_or(text.len(), |e| at + e);
            let sentence = &text[start..end];
            let near = &text[floor(&text, at.saturating_sub(30))..floor(&text, (at + 11).min(text.len()))];
            if SETTINGS.iter().any(|w| near.contains(w)) {
                continue;
            }
            checked += 1;
            if !measured.iter().any(|m| rounds_to(*m, &number)) {
                wrong.push(format!("{page}: {number} MiB is not in bench/RESULTS.md: {sentence}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(checked >= 8, "the pages quote the bench ({checked})");
}

#[test]
fn figures_are_read_as_written() {
    assert_eq!(
        figures("held 1,128 MiB and 0.56 MiB; 2 GiB"),
        [("1128".to_string(), 10), ("0.56".to_string(), 23), ("2".to_string(), 30)]
    );
    assert!(rounds_to(582.2, "582") && rounds_to(151.5, "152") && rounds_to(0.4207, "0.42"));
    assert!(!rounds_to(161.7, "129") && !rounds_to(0.56, "0.5"));
}

//! The performance page's one table of figures, generated from `bench/RESULTS.md` (test-only,
//! with `reference`): each row a workload (releases, objects, clusters), the command, what it
//! took, and the day it was measured, so that no page quotes a figure the bench did not give.

use std::fmt::Write;

/// One section of `bench/RESULTS.md`: its text up to the next `## ` heading.
struct Section<'a>(&'a str);

impl<'a> Section<'a> {
    /// The first date the section names (`Measured 2026-12-06 ...`).
    fn date(&self) -> Option<&'a str> {
        let b = self.0.as_bytes();
        (0..b.len().saturating_sub(9))
            .find(|&i| {
                let d = &b[i..i + 10];
                d[4] == b'-'
                    && d[7] == b'-'
                    && d.iter().enumerate().all(|(j, c)| j == 4 || j == 7 || c.is_ascii_digit())
            })
            .map(|i| &self.0[i..i + 10])
    }

    /// The cells of the table row whose first cell is `first`.
    fn row(&self, first: &str) -> Option<Vec<&'a str>> {
        self.0.lines().map(cells).find(|c| c.first() == Some(&first))
    }

    /// Every table row whose first cell is a number (the fleet tables: one row per size).
    fn sized(&self) -> Vec<Vec<&'a str>> {
        self.0.lines().map(cells).filter(|c| c.first().is_some_and(|f| f.parse::<u32>().is_ok())).collect()
    }
}

fn cells(line: &str) -> Vec<&str> {
    let Some(inner) = line.trim().strip_prefix('|').and_then(|l| l.strip_suffix('|')) else { return Vec::new() };
    inner.split('|').map(str::trim).collect()
}

/// The sections of the results: the first (before any `## `) and each `## ` by its title's start.
fn sections(text: &str) -> Vec<(&str, Section<'_>)> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut title = "";
    loop {
        match rest.find("\n## ") {
            Some(at) => {
                out.push((title, Section(&rest[..at])));
                let line_end = rest[at + 1..].find('\n').map_or(rest.len(), |e| at + 1 + e);
                title = &rest[at + 4..line_end];
                rest = &rest[line_end..];
            }
            None => {
                out.push((title, Section(rest)));
                return out;
            }
        }
    }
}

/// `2,000` from 2000.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `0.35 s` from `0.352 s`, `100 s` from `99.79 s`: two significant figures, at least.
fn seconds(cell: &str) -> String {
    let Some(v) = cell.trim_end_matches(" s").parse::<f64>().ok() else { return cell.to_string() };
    if v >= 10.0 {
        format!("{v:.0} s")
    } else if v >= 1.0 {
        format!("{v:.1} s")
    } else {
        format!("{v:.2} s")
    }
}

/// `122 MiB` from `122.4 MiB (...)`.
fn mib(cell: &str) -> String {
    let first = cell.split(" MiB").next().unwrap_or(cell);
    first.parse::<f64>().map_or(cell.to_string(), |v| format!("{} MiB", grouped(v.round() as u64)))
}

/// The peak of an `RSS (peak)` cell (the cell itself when it has no peak).
fn peak(cell: &str) -> &str {
    cell.split_once(" (").map_or(cell, |(_, p)| p.trim_end_matches(')'))
}

/// The p99 of a `median, p99 (max)` cell.
fn p99(cell: &str) -> String {
    cell.split(", ").nth(1).map_or(cell.to_string(), |p| seconds(p.split(" (").next().unwrap_or(p)))
}

/// One row of the table: workload, releases, objects, clusters, command, time, peak memory, an
/// edit seen, kubectl reading the same, the day.
type FigureRow = [String; 10];

/// The table, from the text of `bench/RESULTS.md`.
pub(super) fn table(results: &str) -> String {
    let all = sections(results);
    // A section that names no day was measured in the run the first section dates.
    let run = all.first().and_then(|(_, s)| s.date()).unwrap_or("?");
    let find = |start: &str| all.iter().find(|(t, _)| t.starts_with(start)).map(|(_, s)| (s, s.date().unwrap_or(run)));
    let mut out = String::from(
        "| workload | releases | objects | clusters | command | time | peak memory | an edit seen, p99 | kubectl reading the same | measured |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for row in checks(&find).into_iter().chain(watches(&find)).chain(fleets(&find)) {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out
}

/// Finds a section by the start of its title, with its day.
type Find<'a, 'b> = dyn Fn(&str) -> Option<(&'b Section<'a>, &'a str)> + 'b;

/// The rows of `check`: one release, then scans of every namespace.
fn checks(find: &Find<'_, '_>) -> Vec<FigureRow> {
    let cases: [(&str, &str, &str, &str, &str, &str); 6] = [
        ("", "F1 clean, helm-drift binary", "F1 floor (kubectl)", "one release", "1", "50"),
        ("", "F2 clean -A", "", "100 releases in 10 namespaces", "100", "2,000"),
        ("", "F3 clean -A", "F3 floor (kubectl)", "500 releases in 50 namespaces", "500", "10,000"),
        ("F4", "F4 clean -A", "F4 floor (kubectl)", "2,000 releases in 100 namespaces", "2,000", "40,000"),
        (
            "F4",
            "F4b clean -A (5,000 x 5)",
            "F4b floor (kubectl)",
            "5,000 small releases in 100 namespaces",
            "5,000",
            "25,000",
        ),
        ("Restored", "R restored -A", "", "500 releases, every object re-created by a restore", "500", "10,000"),
    ];
    let mut rows = Vec::new();
    for (section, case, floor, workload, releases, objects) in cases {
        let Some((s, day)) = find(section) else { continue };
        let Some(r) = s.row(case) else { continue };
        let kubectl = s.row(floor).map_or(String::new(), |f| format!("{}, {}", seconds(f[1]), mib(f[3])));
        let command = if case.starts_with("F1") { "`check`" } else { "`check -A`" };
        let time = seconds(r[1]);
        rows.push(
            [workload, releases, objects, "1", command, &time, &mib(r[3]), "", &kubectl, day].map(str::to_string),
        );
    }
    rows
}

/// The rows of `watch -A`.
fn watches(find: &Find<'_, '_>) -> Vec<FigureRow> {
    let cases = [
        ("helm-drift watch on F3", "500 releases in 50 namespaces", "500", "10,000"),
        ("F4", "2,000 releases in 100 namespaces", "2,000", "40,000"),
    ];
    let mut rows = Vec::new();
    for (section, workload, releases, objects) in cases {
        let Some((s, day)) = find(section) else { continue };
        // F4's watch table follows its check table: its rows are found from its heading on.
        let w = Section(s.0.find("helm-drift watch").map_or(s.0, |i| &s.0[i..]));
        let (Some(ready), Some(rss)) = (w.row("time to ready (first full check)"), w.row("RSS (peak)")) else {
            continue;
        };
        let edit = w.row("edit-to-metric over 100 edits: median, p99 (max)").map(|r| p99(r[1]));
        let edit = edit.or_else(|| w.row("p99 (max)").map(|r| seconds(r[1].split(" (").next().unwrap_or(r[1]))));
        let time = format!("{} to ready", seconds(ready[1]));
        let edit = edit.unwrap_or_default();
        rows.push(
            [workload, releases, objects, "1", "`watch -A`", &time, &mib(rss[1]), &edit, "", day].map(str::to_string),
        );
    }
    rows
}

/// The rows of a fleet's watcher, one per size measured.
fn fleets(find: &Find<'_, '_>) -> Vec<FigureRow> {
    let cases = [
        ("F5", 100, "100 releases x 20 objects, every edit seen by every cluster"),
        ("F6:", 5, "5 releases x 20 objects (add-ons), every edit seen by every cluster"),
        ("F6own", 5, "5 releases x 20 objects of their own, an edit seen by its cluster alone"),
    ];
    let mut rows = Vec::new();
    for (section, each, per) in cases {
        let Some((s, day)) = find(section) else { continue };
        for r in s.sized() {
            let entries: u64 = r[0].parse().unwrap_or(0);
            let releases = entries * each;
            let workload = format!("a fleet: {} clusters of {per}", grouped(entries));
            let time = format!("{} to ready", seconds(r[2]));
            let (releases, objects, clusters) = (grouped(releases), grouped(releases * 20), grouped(entries));
            let command = "`watch --clusters capi`";
            // Since issue 92 a fleet's table also says the management API server's load (column 6).
            let (rss, edit) = if r.len() >= 9 { (r[7], r[8]) } else { (r[6], r[7]) };
            let row = [&workload, &releases, &objects, &clusters, command, &time, &mib(peak(rss)), &p99(edit), "", day];
            rows.push(row.map(str::to_string));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULTS: &str = "# Benchmark results\n\nMeasured 2026-12-06 on this machine.\n\n\
        | case | median wall | min - max | peak RSS (max) | API requests in one run |\n|---|---|---|---|---|\n\
        | F3 clean -A | 1.020 s | 0.980 - 1.120 s | 53.2 MiB | GET=2 |\n| F3 floor (kubectl) | 4.040 s | 4 - 4 s | 322.8 MiB | LIST=30 |\n\n\
        ## F6: a fleet (issue 84)\n\nMeasured 2026-12-07 on the same machine.\n\n\
        | entries | releases watched | ready | requests | rest | idle | RSS (peak) | edit |\n|---|---|---|---|---|---|---|---|\n\
        | 1000 | 5000 | 99.79 s | get=1 | get=2 | 5 % | 1238.2 MiB (1260.9 MiB) | 12.158 s, 19.274 s (19.274 s) |\n";

    #[test]
    fn each_row_is_a_workload_with_its_figures_and_its_day() {
        let t = table(RESULTS);
        assert!(t.contains("| 500 releases in 50 namespaces | 500 | 10,000 | 1 | `check -A` | 1.0 s | 53 MiB |  | 4.0 s, 323 MiB | 2026-12-06 |"), "{t}");
        assert!(t.contains("| a fleet: 1,000 clusters of 5 releases x 20 objects (add-ons), every edit seen by every cluster | 5,000 | 100,000 | 1,000 | `watch --clusters capi` | 100 s to ready | 1,261 MiB | 19 s |  | 2026-12-07 |"), "the peak, not the RSS at rest: {t}");
        assert_eq!(t.lines().count(), 4, "a row for each case found, none for those missing: {t}");
    }
}

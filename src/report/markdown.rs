//! The Markdown report (`-o markdown`, `--summary-file`): a one-line verdict, a table of the
//! releases, then per drifted release a table of its drifted objects and a collapsible
//! `<details>` per object with its evidence and diff in fenced blocks. Kept under a size limit
//! (GitHub's 64 KiB for a comment, 1 MiB for a step summary) by leaving out the longest diffs
//! first, then the last objects, each time with a note of what was left out.

use super::present::{evidence, object_diff, plural, upgrade_command, worth_showing};
use super::style::Style;
use crate::model::{DriftReport, FleetReport, ObjectDrift, Outcome, ReleaseVerdict, RunReport};
use std::fmt::Write;

/// GitHub's limit for a comment (65,536 characters; bytes are at least as many).
pub(crate) const COMMENT_LIMIT: usize = 65_536;
/// GitHub's limit for a job's step summary.
pub(crate) const SUMMARY_LIMIT: usize = 1 << 20;

/// A piece of the document; the diff of an object's details is the first thing to go.
struct Block {
    text: String,
    /// An object's diff (fenced), and what follows it in the block (`</details>`).
    diff: Option<(String, String)>,
    /// Whether the block is an object's details (dropped from the end when diffs are not enough).
    object: bool,
}

impl Block {
    fn plain(text: String) -> Block {
        Block { text, diff: None, object: false }
    }

    fn len(&self, with_diff: bool) -> usize {
        self.text.len()
            + self
                .diff
                .as_ref()
                .map_or(0, |(d, rest)| if with_diff { d.len() } else { LEFT_OUT.len() + 2 } + rest.len())
    }
}

const LEFT_OUT: &str = "_diff left out to keep the report under the size limit: `helm drift check` shows it_";

/// One run's report in at most `limit` bytes.
/// `check -o markdown`: kept under a GitHub comment's size.
pub(crate) fn run(run: &RunReport, style: &Style) -> String {
    run_within(run, style, COMMENT_LIMIT)
}

/// `fleet -o markdown`.
pub(crate) fn fleet(fleet: &FleetReport, style: &Style) -> String {
    fleet_within(fleet, style, COMMENT_LIMIT)
}

/// A run in at most `limit` bytes.
pub(crate) fn run_within(run: &RunReport, style: &Style, limit: usize) -> String {
    let mut blocks = vec![Block::plain(format!("{}\n\n", headline(run.counts(), run.drifted_objects())))];
    releases(&mut blocks, run, style, "");
    fit(blocks, limit)
}

/// A fleet's report in at most `limit` bytes: the fleet's verdict, then each cluster's.
/// A fleet in at most `limit` bytes.
pub(crate) fn fleet_within(fleet: &FleetReport, style: &Style, limit: usize) -> String {
    let drifted = fleet.clusters.iter().map(|c| c.run.drifted_objects()).sum();
    let mut head = format!("{}\n\n", headline(fleet.counts(), drifted));
    let _ = writeln!(head, "| Cluster | Releases | In sync | Drifted | Errors |\n|---|---:|---:|---:|---:|");
    for c in &fleet.clusters {
        let (a, b, e) = c.run.counts();
        let _ = writeln!(head, "| {} | {} | {a} | {b} | {e} |", cell(&c.cluster), c.run.outcomes.len());
    }
    head.push('\n');
    let mut blocks = vec![Block::plain(head)];
    for c in &fleet.clusters {
        blocks.push(Block::plain(format!("## Cluster {}\n\n", cell(&c.cluster))));
        releases(&mut blocks, &c.run, style, "#");
    }
    fit(blocks, limit)
}

/// `**helm drift: drift found** (1 of 3 releases drifted, 2 in sync, 0 errors; 2 objects)`.
fn headline((in_sync, drifted, errors): (usize, usize, usize), objects: usize) -> String {
    let total = in_sync + drifted + errors;
    let verdict = super::present::run_verdict(errors, drifted);
    let objects = if drifted > 0 { format!("; {objects} drifted object{}", plural(objects)) } else { String::new() };
    format!(
        "**helm drift: {verdict}**: {drifted} of {total} release{} drifted, {in_sync} in sync, {errors} error{}{objects}",
        plural(total),
        plural(errors)
    )
}

/// The table of a run's releases, then each drifted (or failed) release under its heading.
fn releases(blocks: &mut Vec<Block>, run: &RunReport, style: &Style, deeper: &str) {
    let mut table = String::from("| Release | Namespace | Revision | Chart | Verdict |\n|---|---|---:|---|---|\n");
    // Many releases: the table lists those that need a look, and counts the others.
    let quiet = run.outcomes.len() > MANY_RELEASES && !style.verbose;
    let mut unlisted = 0;
    for o in &run.outcomes {
        match o {
            Outcome::Checked(r) if quiet && r.verdict() == ReleaseVerdict::InSync => unlisted += 1,
            Outcome::Checked(r) => {
                let _ = writeln!(
                    table,
                    "| {} | {} | {} | {} | {} |",
                    cell(&r.release),
                    cell(&r.namespace),
                    r.revision,
                    cell(&r.chart),
                    verdict(r)
                );
            }
            Outcome::Failed(e) => {
                let _ = writeln!(table, "| {} | {} | | | error |", cell(&e.release), cell(&e.namespace));
            }
        }
    }
    if unlisted > 0 {
        let _ = writeln!(table, "\n{unlisted} more release{} in sync (not listed).", plural(unlisted));
    }
    table.push('\n');
    blocks.push(Block::plain(table));
    for o in &run.outcomes {
        match o {
            Outcome::Checked(r) if r.verdict() != ReleaseVerdict::InSync || style.verbose => {
                release(blocks, r, style, deeper);
            }
            Outcome::Checked(_) => {}
            Outcome::Failed(e) => {
                let mut text =
                    format!("###{deeper} {} (namespace {}): error\n\n", cell(&e.release), cell(&e.namespace));
                text.push_str(&fenced(&e.message, "text"));
                blocks.push(Block::plain(text));
            }
        }
    }
}

/// A release's verdict in words: `2 of 4 drifted` or `in sync`.
fn verdict(r: &DriftReport) -> String {
    match r.verdict() {
        ReleaseVerdict::InSync => "in sync".into(),
        ReleaseVerdict::Drifted => format!("**{} of {} drifted**", r.drifted(), r.objects.len()),
        ReleaseVerdict::Error => format!("**error** ({} of {} not checked)", r.errors(), r.objects.len()),
    }
}

/// One release: heading, notes, the table of its objects worth showing, and their details.
fn release(blocks: &mut Vec<Block>, r: &DriftReport, style: &Style, deeper: &str) {
    let mut text = format!(
        "###{deeper} {}: {}\n\nnamespace `{}`, revision {} {}{}\n\n",
        cell(&r.release),
        verdict(r),
        code(&r.namespace),
        r.revision,
        cell(&r.status),
        if r.chart.is_empty() { String::new() } else { format!(", chart `{}`", code(&r.chart)) }
    );
    for f in &r.findings {
        let _ = writeln!(text, "- finding: {}", cell(f));
    }
    if !r.findings.is_empty() {
        text.push('\n');
    }
    let shown: Vec<&ObjectDrift> = r.objects.iter().filter(|o| worth_showing(o, style)).collect();
    if !shown.is_empty() {
        text.push_str("| Object | Verdict | Paths | Changed by |\n|---|---|---|---|\n");
        for o in &shown {
            let _ = writeln!(
                text,
                "| {} | {} | {} | {} |",
                cell(&if o.hook.is_some() { format!("hook {}", o.id) } else { o.id.to_string() }),
                o.drift_kind().label(),
                paths(o),
                managers(o)
            );
        }
        text.push('\n');
    }
    if let Some(line) = upgrade_command(r, style) {
        let _ = write!(text, "To make the live state the desired state:\n\n{}", fenced(&line, "sh"));
    }
    blocks.push(Block::plain(text));
    for o in shown {
        blocks.push(details(o, style));
    }
}

/// The paths that differ, as code spans (at most a few; the details list them all).
fn paths(o: &ObjectDrift) -> String {
    let all = o.drifted_paths();
    let mut out: Vec<String> = all.iter().take(4).map(|p| format!("`{}`", code(p))).collect();
    if all.len() > 4 {
        out.push(format!("and {} more", all.len() - 4));
    }
    out.join(", ")
}

/// The field managers that last wrote what differs, each once.
fn managers(o: &ObjectDrift) -> String {
    o.managers().iter().map(|m| format!("`{}`", code(m))).collect::<Vec<_>>().join(", ")
}

/// An object's collapsible details: its evidence, then its diff.
fn details(o: &ObjectDrift, style: &Style) -> Block {
    let summary = format!("{}: {}", o.id, o.drift_kind().label());
    let mut text = format!("<details><summary>{}</summary>\n\n", html_escape(&summary));
    if let Some(src) = &o.source {
        let _ = write!(text, "from `{}`\n\n", code(src));
    }
    let lines: Vec<String> = evidence(o, style).into_iter().map(|(_, l)| l).collect();
    if !lines.is_empty() {
        text.push_str(&fenced(&lines.join("\n"), "text"));
    }
    let rest = "</details>\n\n".to_string();
    match object_diff(o, style) {
        Some(diff) => Block { text, diff: Some((fenced(diff.trim_end(), "diff"), rest)), object: true },
        None => Block { text: text + &rest, diff: None, object: true },
    }
}

/// The blocks in at most `limit` bytes: the longest diffs are left out first, then objects
/// from the end, each with a note.
fn fit(mut blocks: Vec<Block>, limit: usize) -> String {
    let mut keep: Vec<bool> = blocks.iter().map(|_| true).collect();
    let size = |blocks: &[Block], keep: &[bool]| blocks.iter().zip(keep).map(|(b, k)| b.len(*k)).sum::<usize>();
    let mut by_length: Vec<usize> = (0..blocks.len()).filter(|i| blocks[*i].diff.is_some()).collect();
    by_length.sort_by_key(|i| std::cmp::Reverse(blocks[*i].diff.as_ref().map_or(0, |(d, _)| d.len())));
    // Room for the note of what was left out, when something is.
    let room = if size(&blocks, &keep) <= limit { limit } else { limit.saturating_sub(300) };
    let mut diffs_left_out = 0;
    for i in by_length {
        if size(&blocks, &keep) <= room {
            break;
        }
        keep[i] = false;
        diffs_left_out += 1;
    }
    // Still too long: whole objects go, from the end.
    let mut objects_left_out = 0;
    while size(&blocks, &keep) > room {
        let Some(last) = blocks.iter().rposition(|b| b.object) else { break };
        blocks.remove(last);
        keep.remove(last);
        objects_left_out += 1;
    }
    let mut out = String::new();
    for (b, k) in blocks.iter().zip(&keep) {
        out.push_str(&b.text);
        if let Some((diff, rest)) = &b.diff {
            if *k {
                out.push_str(diff);
            } else {
                let _ = write!(out, "{LEFT_OUT}\n\n");
            }
            out.push_str(rest);
        }
    }
    if diffs_left_out + objects_left_out > 0 {
        let _ = writeln!(
            out,
            "_Left out to stay under {} KiB: {diffs_left_out} diff{} (the longest) and {objects_left_out} object detail{}; `helm drift check` shows everything._",
            limit / 1024,
            plural(diffs_left_out),
            plural(objects_left_out)
        );
    }
    cut(out, limit)
}

/// Releases above which the table lists only those that are not in sync.
const MANY_RELEASES: usize = 50;

/// The last resort (tables and headings alone over the limit): whole lines up to the limit, an
/// open fence closed, and a note.
fn cut(text: String, limit: usize) -> String {
    if text.len() <= limit {
        return text;
    }
    const NOTE: &str =
        "\n_The report was cut here to stay under the size limit: `helm drift check` shows everything._\n";
    let room = limit.saturating_sub(NOTE.len() + 64);
    let mut out = String::new();
    let mut open: Option<String> = None;
    for line in text.split_inclusive('\n') {
        if out.len() + line.len() > room {
            break;
        }
        let bare = line.trim_end();
        match &open {
            Some(f) if bare == f => open = None,
            Some(_) => {}
            None if bare.starts_with("```") => open = Some(bare.trim_end_matches(|c: char| c != '`').to_string()),
            None => {}
        }
        out.push_str(line);
    }
    if let Some(fence) = open {
        let _ = writeln!(out, "{fence}");
    }
    out.push_str(NOTE);
    out
}

/// Text in a fence longer than any run of backticks in it, so that nothing in it ends it.
pub(super) fn fenced(text: &str, lang: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{text}\n{fence}\n\n")
}

/// Text for a table cell: no line breaks, no column separators, no HTML.
pub(super) fn cell(text: &str) -> String {
    html_escape(text).replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// Text for inside a code span: no backticks or line breaks to end it early.
pub(super) fn code(text: &str) -> String {
    text.replace('`', "'").replace(['\n', '\r'], " ").replace('|', "\\|")
}

fn html_escape(text: &str) -> String {
    super::junit::esc(text)
}

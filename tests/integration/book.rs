//! Every `helm drift` command line of the README and the book (its code blocks; the reference is
//! generated from the code) is run by a test against the real control plane with the flags it
//! shows, or marked as not runnable there with the reason. The marker is an HTML comment right
//! above the block, invisible where the page is read:
//!
//! - `<!-- book: run SCENARIO in NS [NS...]; exits CODE... -->`: `book_run` sets SCENARIO up in
//!   a namespace of its own (standing for the page's first NS; further ones are made beside it)
//!   and runs the block's commands in order, each exit code checked against the list (`ready`
//!   for a `watch`: it must report its first full check);
//! - `<!-- snapshot: ... -->`: the commands are real runs held by their snapshots
//!   (`messages::the_examples_show_the_real_output`);
//! - `<!-- book: not run: REASON -->`: what the control plane here cannot be (a cloud, a registry).
//!
//! A command whose comment says `exit N` must have N in the list, so the prose and the run agree.

use crate::support::repo_root;

/// What a block's marker asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Marker {
    Run { scenario: String, namespaces: Vec<String>, exits: Vec<Expect> },
    Snapshot,
    NotRun(String),
    Missing,
}

/// What a command of a run block must do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expect {
    Exit(i32),
    /// A `watch` that reports its first full check.
    Ready,
}

/// A code block holding `helm drift` commands.
#[derive(Debug)]
pub struct Block {
    pub page: String,
    pub line: usize,
    pub marker: Marker,
    /// The commands after `helm drift `, continuation lines joined, comments kept apart.
    pub commands: Vec<Command>,
    /// `export NAME=VALUE` lines before its commands, in order.
    pub exports: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub struct Command {
    pub args: String,
    pub comment: String,
}

impl Block {
    pub fn at(&self) -> String {
        format!("{}:{}", self.page, self.line)
    }
}

/// Every block of the README and the book holding a `helm drift` command.
pub fn blocks() -> Vec<Block> {
    let mut out = Vec::new();
    for (page, text) in crate::release::documents(&repo_root()) {
        out.extend(blocks_of(&page, &text));
    }
    out
}

/// The blocks of one page.
pub fn blocks_of(page: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for code in code_blocks(&lines) {
        let (commands, exports) = commands_of(code.body, code.info == "text");
        if !commands.is_empty() {
            let marker = marker_above(code.above);
            out.push(Block { page: page.to_string(), line: code.line, marker, commands, exports });
        }
    }
    out
}

/// A code block of a page: the line its fence opens on, its info string, every line above it
/// and its own lines.
pub struct Code<'a> {
    pub line: usize,
    pub info: &'a str,
    pub above: &'a [&'a str],
    pub body: &'a [&'a str],
}

/// The code blocks of a page's lines (a fence closes on one at least as long).
pub fn code_blocks<'a>(lines: &'a [&'a str]) -> Vec<Code<'a>> {
    let mut out = Vec::new();
    let mut n = 0;
    while n < lines.len() {
        let line = lines[n].trim_start();
        let ticks = line.len() - line.trim_start_matches('`').len();
        if ticks < 3 {
            n += 1;
            continue;
        }
        let start = n + 1;
        let mut end = start;
        while end < lines.len() && !closes(lines[end], ticks) {
            end += 1;
        }
        let body = &lines[start..end.min(lines.len())];
        out.push(Code { line: n + 1, info: line[ticks..].trim(), above: &lines[..n], body });
        n = end + 1;
    }
    out
}

/// The HTML comments right above a block, nearest first (blank lines between are allowed):
/// each comment's text.
pub fn comments_above<'a>(above: &[&'a str]) -> Vec<&'a str> {
    above
        .iter()
        .rev()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .map_while(|l| l.strip_prefix("<!--").and_then(|l| l.strip_suffix("-->")).map(str::trim))
        .collect()
}

/// A block's lines, trimmed, each continued line (`\` at its end) joined with the next.
pub fn joined(body: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut n = 0;
    while n < body.len() {
        let mut line = body[n].trim().to_string();
        n += 1;
        while line.ends_with('\\') && n < body.len() {
            line.pop();
            line.push(' ');
            line.push_str(body[n].trim());
            n += 1;
        }
        out.push(line);
    }
    out
}

fn closes(line: &str, ticks: usize) -> bool {
    let t = line.trim_start();
    let own = t.len() - t.trim_start_matches('`').len();
    own >= ticks && t[own..].trim().is_empty()
}

/// The marker in the comment lines right above a block (blank lines and other comments between
/// are allowed).
fn marker_above(above: &[&str]) -> Marker {
    for inner in comments_above(above) {
        if inner.starts_with("snapshot:") {
            return Marker::Snapshot;
        }
        if let Some(book) = inner.strip_prefix("book:") {
            if book.trim().starts_with("chart ") {
                continue;
            }
            return parse_marker(book.trim());
        }
    }
    Marker::Missing
}

/// `run SCENARIO in NS...; exits ...` or `not run: REASON`.
pub fn parse_marker(text: &str) -> Marker {
    if let Some(reason) = text.strip_prefix("not run:") {
        return Marker::NotRun(reason.trim().to_string());
    }
    let Some(run) = text.strip_prefix("run ") else { return Marker::Missing };
    let (what, exits) = run.split_once("; exits ").unwrap_or((run, ""));
    let mut words = what.split_whitespace();
    let scenario = words.next().unwrap_or_default().to_string();
    let namespaces: Vec<String> = words.skip_while(|w| *w != "in").skip(1).map(str::to_string).collect();
    let exits = exits
        .split_whitespace()
        .map(|e| if e == "ready" { Expect::Ready } else { Expect::Exit(e.parse().unwrap_or(-1)) })
        .collect();
    Marker::Run { scenario, namespaces, exits }
}

/// A block's `helm drift` commands (in a `text` block only those after `$ `) and its exports.
fn commands_of(body: &[&str], text: bool) -> (Vec<Command>, Vec<(String, String)>) {
    let mut commands = Vec::new();
    let mut exports = Vec::new();
    for line in joined(body) {
        let prompted = line.strip_prefix("$ ");
        if text && prompted.is_none() {
            continue;
        }
        let (code, comment) = split_comment(prompted.unwrap_or(&line));
        if let Some(export) = code.strip_prefix("export ") {
            if let Some((k, v)) = export.split_once('=') {
                exports.push((k.trim().to_string(), v.trim().to_string()));
            }
        } else if let Some(args) = code.strip_prefix("helm drift ") {
            commands.push(Command { args: squeeze(args), comment: comment.to_string() });
        }
    }
    (commands, exports)
}

/// A line's command and its `# comment` (a `#` outside quotes, after a space).
pub fn split_comment(line: &str) -> (&str, &str) {
    let mut quote = None;
    let bytes = line.as_bytes();
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if i == 0 || bytes[i - 1] == b' ' => return (line[..i].trim(), line[i + 1..].trim()),
            _ => {}
        }
    }
    (line.trim(), "")
}

fn squeeze(args: &str) -> String {
    args.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The words of a command as a shell splits them (quotes removed; no expansion).
pub fn words(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut any = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, ' ') => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

/// The `exit N` a command's comment promises, if any.
fn promised_exit(comment: &str) -> Option<i32> {
    let at = comment.find("exit ")?;
    comment[at + 5..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// Every block is marked; a run block lists one outcome per command, agreeing with what its
/// comments promise; a reason is given for each block not run.
#[test]
fn every_command_of_the_book_is_run_or_marked() {
    let mut wrong = Vec::new();
    let mut run = 0;
    for block in blocks() {
        match &block.marker {
            Marker::Missing => wrong.push(format!("{}: no marker above a block of `helm drift` commands", block.at())),
            Marker::NotRun(reason) if reason.is_empty() => {
                wrong.push(format!("{}: not run without a reason", block.at()))
            }
            Marker::Run { exits, namespaces, .. } => {
                if exits.len() != block.commands.len() {
                    wrong.push(format!("{}: {} commands, {} outcomes", block.at(), block.commands.len(), exits.len()));
                }
                if namespaces.is_empty() {
                    wrong.push(format!("{}: a run names the page's namespace (`in NS`)", block.at()));
                }
                for (c, e) in block.commands.iter().zip(exits) {
                    if let Some(promised) = promised_exit(&c.comment)
                        && *e != Expect::Exit(promised)
                    {
                        wrong.push(format!("{}: `{}` says exit {promised}, the marker {e:?}", block.at(), c.args));
                    }
                }
                run += block.commands.len();
            }
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(run >= 30, "the book's runs cover its commands ({run})");
}

#[test]
fn markers_and_commands_are_read_as_written() {
    let page = "intro\n<!-- book: run drifted in shop platform; exits 2 0 ready -->\n```sh\nexport HELM_DRIFT_TRUST_NAMESPACE=shop\nhelm drift repair web -n shop --dry-run   # the plan; exit 2\nhelm drift watch web \\\n  --reason \"a # b\"  # ends\n$ helm drift check web\n```\n```text\nhelm drift check in output\n```\n";
    let blocks = blocks_of("p.md", page);
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    let b = &blocks[0];
    assert_eq!(b.line, 3);
    assert_eq!(
        b.marker,
        Marker::Run {
            scenario: "drifted".into(),
            namespaces: vec!["shop".into(), "platform".into()],
            exits: vec![Expect::Exit(2), Expect::Exit(0), Expect::Ready]
        }
    );
    assert_eq!(b.exports, [("HELM_DRIFT_TRUST_NAMESPACE".to_string(), "shop".to_string())]);
    let args: Vec<&str> = b.commands.iter().map(|c| c.args.as_str()).collect();
    assert_eq!(args, ["repair web -n shop --dry-run", "watch web --reason \"a # b\"", "check web"]);
    assert_eq!(promised_exit(&b.commands[0].comment), Some(2));
    assert_eq!(words("watch web --reason \"a # b\" --x 'y z'"), ["watch", "web", "--reason", "a # b", "--x", "y z"]);
    assert_eq!(parse_marker("not run: needs a cloud"), Marker::NotRun("needs a cloud".into()));
}

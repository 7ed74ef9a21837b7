//! The reference, generated from the CLI's one flag table (clap's `Command`): a Markdown page per
//! command for the book (`docs/src/reference/`, listed in `SUMMARY.md`), a man page per command
//! (`docs/man/`, with clap_mangen) and Helm's static completion (`completion.yaml`). The test
//! fails when a generated file is out of date; `HELM_DRIFT_WRITE_DOCS=1 cargo test --lib
//! reference` writes them all.

use super::Cli;
use clap::{Arg, ArgAction, Command, CommandFactory, Parser};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The exit codes, as `model::ExitStatus` decides them.
const EXIT_CODES: &str = "| code | meaning |\n|---|---|\n| 0 | in sync (nothing left to repair) |\n| 2 | drift \
                          found (or, for a dry run, something would change) |\n| 1 | an error (bad input, a \
                          release or cluster that cannot be read, a refused step); an error outranks drift |\n";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn cli() -> Command {
    let mut cli = Cli::command();
    cli.build();
    cli
}

/// The commands a person runs, in `--help`'s order.
fn subcommands(cli: &Command) -> Vec<&Command> {
    cli.get_subcommands().filter(|c| !c.is_hide_set() && c.get_name() != "help").collect()
}

/// Help text as one line of a Markdown table cell (its `|` and `<` escaped).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|").replace('<', "&lt;").replace('>', "&gt;")
}

/// A flag as `--help` names it: `-n, --namespace <NAME>`.
fn flag(a: &Arg) -> String {
    let mut names = Vec::new();
    if let Some(s) = a.get_short() {
        names.push(format!("-{s}"));
    }
    if let Some(l) = a.get_long() {
        names.push(format!("--{l}"));
    }
    let takes = matches!(a.get_action(), ArgAction::Set | ArgAction::Append);
    let value = match a.get_value_names() {
        Some(v) if takes => format!(" <{}>", v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("> <")),
        _ if takes => format!(" <{}>", a.get_id().as_str().to_uppercase()),
        _ => String::new(),
    };
    format!("`{}{value}`", names.join(", "))
}

/// What a flag says beside its name: its help, its values, its default and its variable.
fn described(a: &Arg) -> String {
    let mut help = a.get_long_help().or(a.get_help()).map(|h| one_line(&h.to_string())).unwrap_or_default();
    if !help.is_empty() && !help.ends_with(['.', ':']) {
        help.push('.');
    }
    let mut out = vec![help];
    let takes = matches!(a.get_action(), ArgAction::Set | ArgAction::Append);
    let values: Vec<String> =
        a.get_possible_values().iter().filter(|v| !v.is_hide_set()).map(|v| format!("`{}`", v.get_name())).collect();
    if !values.is_empty() && takes {
        out.push(format!("Values: {}.", values.join(", ")));
    }
    let defaults: Vec<String> = a.get_default_values().iter().map(|d| d.to_string_lossy().to_string()).collect();
    if !defaults.is_empty() && takes {
        out.push(format!("Default: `{}`.", defaults.join(",")));
    }
    if let Some(env) = a.get_env() {
        out.push(format!("Environment: `{}`.", env.to_string_lossy()));
    }
    out.retain(|s| !s.is_empty());
    out.join(" ")
}

/// A table of flags, under their help headings (in the order `--help` shows them).
fn flags_table(args: &[&Arg]) -> String {
    let mut by_heading: Vec<(String, Vec<&Arg>)> = Vec::new();
    for a in args {
        let heading = a.get_help_heading().unwrap_or("Options").to_string();
        match by_heading.iter_mut().find(|(h, _)| *h == heading) {
            Some((_, list)) => list.push(a),
            None => by_heading.push((heading, vec![a])),
        }
    }
    let mut out = String::new();
    for (heading, list) in by_heading {
        out.push_str(&format!("### {heading}\n\n| flag | what it does |\n|---|---|\n"));
        for a in list {
            out.push_str(&format!("| {} | {} |\n", flag(a), described(a)));
        }
        out.push('\n');
    }
    out
}

/// A flag the page lists: not hidden, not clap's own `--help` and `--version` (`plan --version` is).
fn shown(a: &&Arg) -> bool {
    !a.is_hide_set()
        && !matches!(a.get_action(), ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version)
}

/// The page of one command.
fn page(cmd: &Command, path: &str) -> String {
    let mut cmd = cmd.clone();
    let usage = cmd.render_usage().to_string().replace("Usage: ", "");
    let about = cmd.get_long_about().or(cmd.get_about()).map(|a| a.to_string()).unwrap_or_default();
    let mut out = format!("# `{path}`\n\n{}\n\n## Usage\n\n```text\n{}\n```\n\n", about.trim(), usage.trim());
    let positionals: Vec<&Arg> = cmd.get_positionals().filter(shown).collect();
    if !positionals.is_empty() {
        out.push_str("## Arguments\n\n| argument | what it is |\n|---|---|\n");
        for a in positionals {
            let name = a.get_value_names().and_then(|v| v.first()).map_or(a.get_id().as_str(), |v| v.as_str());
            out.push_str(&format!("| `{name}` | {} |\n", described(a)));
        }
        out.push('\n');
    }
    let own: Vec<&Arg> =
        cmd.get_arguments().filter(|a| !a.is_positional() && !a.is_global_set()).filter(shown).collect();
    if !own.is_empty() {
        out.push_str("## Flags\n\n");
        out.push_str(&flags_table(&own));
    }
    let subs: Vec<&Command> = cmd.get_subcommands().filter(|c| !c.is_hide_set() && c.get_name() != "help").collect();
    if !subs.is_empty() {
        out.push_str("## Commands\n\n");
        for s in subs {
            let about = s.get_about().map(|a| one_line(&a.to_string())).unwrap_or_default();
            out.push_str(&format!("- `{path} {}`: {about}\n", s.get_name()));
        }
        out.push('\n');
    }
    out.push_str("The global flags (connection, output, Helm's) are on [helm drift](helm-drift.md).\n\n");
    let command = path.split(' ').nth(2).unwrap_or_default();
    out.push_str(&format!("## Exit codes\n\n{}", super::pages::exit_table(super::help::exits(command))));
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        // The examples; the exit codes are the table above.
        let after = after.to_string();
        let examples = after.split("\n\nExit codes:").next().unwrap_or_default().trim();
        if !examples.is_empty() {
            out.push_str(&format!("\n## Examples\n\n```text\n{examples}\n```\n"));
        }
    }
    out
}

/// The top page: what the command is, every command, the global flags, Helm's environment.
fn index(cli: &Command) -> String {
    let about = cli.get_long_about().or(cli.get_about()).map(|a| a.to_string()).unwrap_or_default();
    let mut out = format!("# `helm drift`\n\n{}\n\n## Commands\n\n", about.trim());
    for s in subcommands(cli) {
        let about = s.get_about().map(|a| one_line(&a.to_string())).unwrap_or_default();
        out.push_str(&format!("- [`helm drift {0}`](helm-drift-{0}.md): {about}\n", s.get_name()));
    }
    let global: Vec<&Arg> = cli.get_arguments().filter(|a| !a.is_positional()).filter(shown).collect();
    out.push_str("\n## Global flags\n\nEvery command takes these.\n\n");
    out.push_str(&flags_table(&global));
    out.push_str(
        "## Environment\n\nHelm's plugin environment, which Helm sets when it runs the plugin (a flag overrides \
                  it):\n\n| variable | what it sets |\n|---|---|\n",
    );
    for (name, what) in super::pages::HELM_ENV {
        out.push_str(&format!("| `{name}` | {what} |\n"));
    }
    out.push_str(&format!("\n## Exit codes\n\n{EXIT_CODES}| 3 | `plan` only: the upgrade would fail |\n"));
    out.push_str("\nEach command's own: on its page, and all together on [Exit codes](../exit-codes.md).\n");
    out
}

/// Helm's static completion: every command and its own long flags (Helm pairs short flags with
/// long ones by position, which clashes with its own), release names from `plugin.complete`.
fn completion(cli: &Command) -> String {
    let mut out = String::from(
        "# Static completion for Helm (`helm drift <TAB>`): sub-commands and their flags. Release names\n\
         # come from plugin.complete. Generated from the CLI (HELM_DRIFT_WRITE_DOCS=1 cargo test --lib\n\
         # reference). Only long flags: Helm pairs listed short flags with long ones by position, which\n\
         # clashes with its own.\nname: drift\ncommands:\n",
    );
    for sub in subcommands(cli) {
        out.push_str(&format!("  - name: {}\n", sub.get_name()));
        let mut flags: Vec<String> = sub
            .get_arguments()
            .filter(|a| !a.is_positional() && !a.is_global_set())
            .filter_map(|a| a.get_long().filter(|l| *l != "help").map(str::to_string))
            .collect();
        if sub.get_name() != "version" {
            flags.push("color".into());
        }
        if !flags.is_empty() {
            out.push_str("    flags:\n");
            for f in flags {
                out.push_str(&format!("      - {f}\n"));
            }
        }
    }
    out
}

fn man(cmd: &Command, name: &str) -> String {
    let mut buffer = Vec::new();
    // clap names commands by `&'static str` (without its `string` feature): a test may leak one.
    let name: &'static str = Box::leak(name.to_string().into_boxed_str());
    clap_mangen::Man::new(cmd.clone().name(name)).render(&mut buffer).expect("a man page renders");
    String::from_utf8(buffer).expect("man pages are UTF-8")
}

/// Every generated file, by path from the repository root.
fn generated() -> BTreeMap<PathBuf, String> {
    let cli = cli();
    let mut out = BTreeMap::new();
    out.insert(PathBuf::from("docs/src/reference/helm-drift.md"), index(&cli));
    out.insert(PathBuf::from("docs/man/helm-drift.1"), man(&cli, "helm-drift"));
    let mut listed = String::from("- [helm drift](reference/helm-drift.md)\n");
    for sub in subcommands(&cli) {
        let name = sub.get_name();
        out.insert(
            PathBuf::from(format!("docs/src/reference/helm-drift-{name}.md")),
            page(sub, &format!("helm drift {name}")),
        );
        out.insert(PathBuf::from(format!("docs/man/helm-drift-{name}.1")), man(sub, &format!("helm-drift-{name}")));
        listed.push_str(&format!("  - [helm drift {name}](reference/helm-drift-{name}.md)\n"));
    }
    out.insert(PathBuf::from("completion.yaml"), completion(&cli));
    out.insert(PathBuf::from("docs/src/reference/environment.md"), super::pages::environment(&cli));
    listed.push_str("  - [Environment variables](reference/environment.md)\n");
    out.insert(PathBuf::from("docs/src/SUMMARY.md"), super::pages::marked("docs/src/SUMMARY.md", "reference", &listed));
    out.insert(
        PathBuf::from("docs/src/exit-codes.md"),
        super::pages::marked("docs/src/exit-codes.md", "exits", &super::pages::every_exit_code()),
    );
    let results = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/RESULTS.md"));
    let figures = super::figures::table(&results.expect("bench/RESULTS.md"));
    out.insert(
        PathBuf::from("docs/src/performance.md"),
        super::pages::marked("docs/src/performance.md", "figures", &figures),
    );
    out
}

#[test]
fn the_generated_reference_is_up_to_date() {
    let write = std::env::var_os("HELM_DRIFT_WRITE_DOCS").is_some();
    let mut stale = Vec::new();
    let files = generated();
    for (path, text) in &files {
        let at = root().join(path);
        if std::fs::read_to_string(&at).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        if write {
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(&at, text).unwrap();
        } else {
            stale.push(path.display().to_string());
        }
    }
    // A page or man page of a command that no longer exists.
    for dir in ["docs/src/reference", "docs/man"] {
        for entry in std::fs::read_dir(root().join(dir)).into_iter().flatten().flatten() {
            let path = entry.path().strip_prefix(root()).unwrap().to_path_buf();
            if !files.contains_key(&path) {
                if write {
                    std::fs::remove_file(entry.path()).unwrap();
                } else {
                    stale.push(format!("{} (no such command)", path.display()));
                }
            }
        }
    }
    assert!(stale.is_empty(), "out of date (HELM_DRIFT_WRITE_DOCS=1 cargo test --lib reference): {stale:?}");
}

#[test]
fn every_command_and_flag_is_in_the_reference() {
    let files = generated();
    let cli = cli();
    for sub in subcommands(&cli) {
        let page = &files[&PathBuf::from(format!("docs/src/reference/helm-drift-{}.md", sub.get_name()))];
        // Its own filter, not the generator's: only what clap adds by itself and hidden flags.
        let clap_s_own = |a: &&Arg| a.is_hide_set() || matches!(a.get_action(), ArgAction::Help | ArgAction::Version);
        for a in sub.get_arguments().filter(|a| !a.is_global_set() && !clap_s_own(a)) {
            if let Some(l) = a.get_long() {
                assert!(page.contains(&format!("--{l}")), "{}: --{l} is not on its page", sub.get_name());
            }
        }
    }
    let completion = &files[&PathBuf::from("completion.yaml")];
    let parsed: serde_json::Value = crate::yaml::to_json(completion).unwrap();
    assert_eq!(parsed["name"], "drift");
}

/// Words as a shell splits them (quotes kept together, not interpreted further).
fn words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quote) = (Vec::new(), String::new(), None);
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ' ') => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            _ => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Each `helm drift …` command line in the code blocks of the README and the book (the
/// reference aside), by where it is: what a reader copies.
fn examples() -> Vec<(String, String)> {
    let mut pages = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with("reference") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap().replace("\\\n", " ");
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        // A block closes at a fence at least as long as its own with nothing after it.
        let mut fence = None::<usize>;
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
            match fence {
                Some(open) if ticks >= open && trimmed[ticks..].trim().is_empty() => fence = None,
                None if ticks >= 3 => fence = Some(ticks),
                _ => {}
            }
            if ticks >= 3 {
                continue;
            }
            let Some(at) = line.find(" drift ").filter(|_| fence.is_some()) else { continue };
            // A command line: `[$ ] [VAR=value ...] helm[3|4] drift ...`; anything else in a block
            // (output, prose) is not.
            let mut before: Vec<&str> = line[..at].split_whitespace().collect();
            if before.first() == Some(&"$") {
                before.remove(0);
            }
            let Some((helm, env)) = before.split_last() else { continue };
            let helm = helm.rsplit('/').next().unwrap_or_default();
            if !["helm", "helm3", "helm4"].contains(&helm) || !env.iter().all(|w| w.contains('=')) {
                continue;
            }
            // The demo's transcripts annotate a command after three spaces.
            let command = line[at + " drift ".len()..].split(" #").next().unwrap();
            let command = command.split("   (").next().unwrap();
            let command = command.split(['|', ';', '>']).next().unwrap().split(" && ").next().unwrap();
            let command = command.split(" || ").next().unwrap().trim();
            // A synopsis (`RELEASE [RELEASE...]`) or an elided tail is not a command to copy.
            // A `${x:+...}` expansion is words only the shell can tell.
            if command.contains('[') || command.contains("...") || command.contains('…') || command.contains(":+") {
                continue;
            }
            out.push((format!("{name}:{}", n + 1), command.to_string()));
        }
    }
    out
}

#[test]
fn every_example_command_in_the_readme_and_the_book_parses() {
    let examples = examples();
    assert!(examples.len() > 40, "the examples are found ({})", examples.len());
    let refused: Vec<String> = examples
        .into_iter()
        .filter_map(|(at, command)| {
            let args = std::iter::once("helm-drift".to_string()).chain(words(&command));
            let e = Cli::try_parse_from(args).err()?;
            let shown =
                matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion);
            (!shown)
                .then(|| format!("{at}: helm drift {command}: {}", e.to_string().lines().next().unwrap_or_default()))
        })
        .collect();
    assert!(refused.is_empty(), "examples the CLI refuses:\n{}", refused.join("\n"));
}

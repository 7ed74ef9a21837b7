//! The module map of `lib.rs` kept true, and the shape of the code: each top-level module uses
//! only the modules below it, no two files of a folder use each other (directly or round a
//! circle), no file is over 400 lines and no function over 80 outside tests, and no code outside
//! tests takes every name of its parent (`use super::*`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules, lowest layer first (as `lib.rs` lists them).
const LAYERS: &[&str] = &[
    "errors",
    "doors",
    "random",
    "digest",
    "yaml",
    "model",
    "api",
    "live",
    "inventory",
    "compare",
    "policy",
    "audit",
    "guard",
    "pause",
    "baseline",
    "release",
    "settings",
    "desired",
    "helm",
    "explain",
    "engine",
    "repair",
    "plan",
    "report",
    "watch",
    "cli",
    "commands",
];

/// Fails, listing them, when a check found anything.
pub(crate) fn none(found: impl IntoIterator<Item = String>, what: &str) {
    let found: BTreeSet<String> = found.into_iter().collect();
    assert!(found.is_empty(), "{what}:\n{found:#?}");
}

const MAX_FILE_LINES: usize = 400;
const MAX_FN_LINES: usize = 80;

/// One source file: its module path (`["watch", "heal"]`) and its code, tests left out.
pub(crate) struct Source {
    pub(crate) file: PathBuf,
    module: Vec<String>,
    pub(crate) code: String,
}

pub(crate) fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every file of the crate but the test-only ones (`tests.rs`, `testing.rs`, this file).
pub(crate) fn sources() -> Vec<Source> {
    let mut out = Vec::new();
    let mut dirs = vec![src()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                dirs.push(path);
            } else if name.ends_with(".rs") && !["tests.rs", "layering.rs", "testing.rs"].contains(&name.as_str()) {
                let relative = path.strip_prefix(src()).unwrap().with_extension("");
                let mut module: Vec<String> = relative.iter().map(|p| p.to_string_lossy().to_string()).collect();
                if module.last().is_some_and(|m| m == "mod" || m == "lib" || m == "main") {
                    module.pop();
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("\n#[cfg(test)]\nmod ").next().unwrap_or_default().to_string();
                out.push(Source { file: path, module, code });
            }
        }
    }
    out.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

/// The paths a piece of code names from `crate`, `super` or `self`, made absolute
/// (`super::{a, b::C}` in `watch::healing` gives `watch::a` and `watch::b::C`).
fn paths(source: &Source) -> Vec<Vec<String>> {
    let code = without_comments_and_strings(&source.code);
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(c) = code[at..].chars().next() {
        let starts = !code[..at].ends_with(|p: char| p.is_alphanumeric() || p == '_' || p == ':');
        if starts && ["crate::", "super::", "self::"].iter().any(|r| code[at..].starts_with(r)) {
            let (found, used) = expand(&code[at..]);
            out.extend(found.iter().map(|path| absolute(&source.module, path)));
            at += code[at..].chars().take(used.max(1)).map(char::len_utf8).sum::<usize>();
            continue;
        }
        at += c.len_utf8();
    }
    out
}

/// Blanks comments, string and char literals, so that a `crate::` inside them is not a use.
pub(crate) fn without_comments_and_strings(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let find = |from: usize, what: &str| -> usize {
        let what: Vec<char> = what.chars().collect();
        (from..chars.len()).find(|&j| chars[j..].starts_with(&what)).map_or(chars.len(), |j| j + what.len())
    };
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < chars.len() {
        let next = |k: usize| chars.get(i + k).copied();
        i = match chars[i] {
            '/' if next(1) == Some('/') => find(i, "\n") - 1,
            'r' if next(1) == Some('#') && next(2) == Some('"') => find(i + 3, "\"#"),
            '"' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '"' {
                    j += if chars[j] == '\\' { 2 } else { 1 };
                }
                j + 1
            }
            '\'' if next(2) == Some('\'') => i + 3,
            '\'' if next(1) == Some('\\') => find(i + 3, "'"),
            c => {
                out.push(c);
                i + 1
            }
        };
    }
    out
}

/// One path expression from its start: the paths it names (a `{...}` group gives several) and
/// how many characters it spans.
fn expand(text: &str) -> (Vec<Vec<String>>, usize) {
    let chars: Vec<char> = text.chars().collect();
    let mut prefix: Vec<String> = Vec::new();
    let mut i = 0;
    loop {
        let word: String = chars[i..].iter().take_while(|c| c.is_alphanumeric() || **c == '_' || **c == '*').collect();
        if !word.is_empty() {
            prefix.push(word.clone());
            i += word.chars().count();
        }
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
            if chars.get(i) == Some(&'{') {
                let mut depth = 0;
                let start = i + 1;
                let mut end = start;
                for (j, c) in chars.iter().enumerate().skip(i) {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = j;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let inner: String = chars[start..end].iter().collect();
                let mut out = Vec::new();
                for item in split_top(&inner) {
                    let item = item.trim();
                    if item.is_empty() {
                        continue;
                    }
                    let (found, _) = expand(item);
                    for path in found {
                        let mut full = prefix.clone();
                        full.extend(path.into_iter().filter(|p| p != "self"));
                        out.push(full);
                    }
                }
                return (out, end + 1);
            }
            continue;
        }
        return (vec![prefix], i);
    }
}

fn split_top(text: &str) -> Vec<String> {
    let (mut out, mut depth, mut current) = (Vec::new(), 0, String::new());
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out
}

fn absolute(module: &[String], path: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => rest = &path[1..],
        Some("self") => {
            out = module.to_vec();
            rest = &path[1..];
        }
        _ => {
            out = module.to_vec();
            while rest.first().is_some_and(|p| p == "super") {
                out.pop();
                rest = &rest[1..];
            }
        }
    }
    out.extend(rest.iter().cloned());
    out
}

#[test]
fn each_module_uses_only_the_layers_below_it() {
    let mut problems = BTreeSet::new();
    for source in sources() {
        let Some(module) = source.module.first() else { continue };
        let Some(i) = LAYERS.iter().position(|m| m == module) else { continue };
        for path in paths(&source) {
            let Some(used) = path.first().filter(|u| *u != module && *u != "*") else { continue };
            match LAYERS.iter().position(|m| m == used) {
                Some(j) if j < i => {}
                Some(_) => _ = problems.insert(format!("{module} uses {used}, a layer at or above it")),
                None => _ = problems.insert(format!("{module} uses {used}, which is not in the module map")),
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The watcher's rooms, by floor, lowest first (as `watch/mod.rs` lists them): a room uses only
/// the rooms of floors below its own (`watch/mod.rs`, the start, uses any).
const WATCH_ROOMS: &[&[&str]] = &[
    &["clock"],
    &["keys", "lease", "shutdown"],
    &["store"],
    &["caaph"],
    &["outputs"],
    &["scheduler", "sources"],
    &["receiver"],
    &["healing"],
    &["options"],
    &["reconciler"],
    &["fleet"],
];

#[test]
fn each_room_of_the_watcher_uses_only_the_rooms_below_it() {
    let floor = |room: &str| WATCH_ROOMS.iter().position(|f| f.contains(&room));
    let mut problems = BTreeSet::new();
    let mut rooms = BTreeSet::new();
    for source in sources().iter().filter(|s| s.module.len() > 1 && s.module[0] == "watch") {
        let room = source.module[1].as_str();
        rooms.insert(room.to_string());
        let Some(at) = floor(room) else {
            problems.insert(format!("watch::{room} is not a room of WATCH_ROOMS"));
            continue;
        };
        for path in paths(source).iter().filter(|p| p.len() > 1 && p[0] == "watch" && p[1] != room) {
            if floor(&path[1]).is_none_or(|used| used >= at) {
                problems.insert(format!("watch::{room} uses watch::{}, a room not below it", path[1]));
            }
        }
    }
    let listed: BTreeSet<String> = WATCH_ROOMS.iter().flat_map(|f| f.iter().map(|r| r.to_string())).collect();
    assert_eq!(rooms, listed, "WATCH_ROOMS and the folders of src/watch differ");
    let doc = include_str!("watch/mod.rs");
    for room in &listed {
        assert!(doc.contains(&format!("[`{room}`]")), "watch/mod.rs does not describe {room}");
    }
    none(problems, "rooms of the watcher using rooms at or above them");
}

/// Each function outside the CLI edge (`cli`, `commands`) with its first doc line and its
/// signature, as `(file, first doc line, signature)`.
fn signatures() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for source in sources().iter().filter(|s| !matches!(s.module.first().map(String::as_str), Some("cli" | "commands")))
    {
        let file = source.file.strip_prefix(src()).unwrap().display().to_string();
        let lines: Vec<&str> = source.code.lines().collect();
        let mut doc = String::new();
        for (i, line) in lines.iter().enumerate() {
            let t = line.trim();
            if t.starts_with("///") {
                if doc.is_empty() {
                    doc = t.trim_start_matches('/').trim().to_string();
                }
                continue;
            }
            if fn_name(t).is_some() {
                let signature: String = lines[i..]
                    .iter()
                    .map(|l| l.trim())
                    .scan(false, |done, l| {
                        (!std::mem::replace(done, l.ends_with('{') || l.ends_with(';'))).then_some(l)
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                out.push((file.clone(), std::mem::take(&mut doc), signature));
            } else if !t.starts_with("#[") {
                doc.clear();
            }
        }
    }
    out
}

#[test]
fn decisions_are_types_not_strings() {
    let strings = signatures()
        .into_iter()
        .filter(|(_, doc, signature)| {
            let refusal = doc.starts_with("Why") && signature.contains("-> Option<String>");
            refusal || result_errors(signature).iter().any(|e| e == "String")
        })
        .map(|(file, _, signature)| format!("{file}: {signature}"));
    none(strings, "refusals as Option<String> or errors as Result<_, String> outside the CLI edge (make them types)");
    let fields = sources()
        .into_iter()
        .filter(|s| !matches!(s.module.first().map(String::as_str), Some("cli" | "commands")))
        .flat_map(|s| {
            let file = s.file.strip_prefix(src()).unwrap().display().to_string();
            let lines = s.code.lines().filter(|l| result_errors(l).iter().any(|e| e == "String"));
            lines.map(move |l| format!("{file}: {}", l.trim())).collect::<Vec<_>>()
        });
    none(fields, "errors as Result<_, String> outside the CLI edge (make them types)");
}

/// The error type of each `Result<T, E>` written in `text` (a one-argument `Result<T>` is
/// anyhow's, its error typed).
fn result_errors(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("Result<") {
        let (mut depth, mut args, mut arg) = (0, Vec::new(), String::new());
        for c in text[at + "Result<".len()..].chars() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => break,
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    args.push(std::mem::take(&mut arg));
                    continue;
                }
                _ => {}
            }
            arg.push(c);
        }
        args.push(arg);
        if args.len() == 2 {
            out.push(args[1].trim().to_string());
        }
    }
    out
}

#[test]
fn the_decision_check_reads_the_error_type() {
    assert_eq!(result_errors("-> Result<BTreeMap<String, String>, SqlError> {"), ["SqlError"]);
    assert_eq!(result_errors("x: Result<Option<String>, String>"), ["String"]);
    assert_eq!(result_errors("-> Result<(Vec<u8>, String)>"), Vec::<String>::new());
    assert_eq!(result_errors("Result<(), String>, y: Result<u8, E>"), ["String", "E"]);
}

/// The watcher is a privileged agent: it never runs helm, so no chart a record stores ever runs
/// with its rights (`lookup`, hooks).
#[test]
fn the_watcher_runs_no_chart() {
    let found = sources()
        .into_iter()
        .filter(|s| s.module.first().map(String::as_str) == Some("watch"))
        .filter(|s| paths(s).iter().any(|p| p.first().map(String::as_str) == Some("helm")))
        .map(|s| s.file.display().to_string());
    none(found, "the watcher uses crate::helm");
}

/// Where YAML is read with `serde_yaml` (or a library built on it) outside tests, and why: what
/// the user writes. Everything someone else writes is read by `crate::yaml`, the one budgeted
/// parser behind its door; the two files that hand a document to a library after it are named.
const YAML_READERS: &[(&str, &str)] = &[
    ("policy/config.rs", "the user's --config file"),
    ("baseline/document.rs", "a baseline, bounded by crate::yaml first (helm-drift renders it with serde_yaml)"),
    ("inventory/capi.rs", "a kubeconfig Secret, bounded by crate::yaml first (kube's Kubeconfig reads it)"),
];

#[test]
fn yaml_others_write_is_read_by_the_one_budgeted_parser() {
    let readers = ["serde_yaml::from_", "serde_yaml::Deserializer", "from_yaml("];
    let found = sources()
        .into_iter()
        .filter(|s| !matches!(s.module.first().map(String::as_str), Some("cli" | "commands" | "yaml")))
        .filter(|s| readers.iter().any(|r| without_comments_and_strings(&s.code).contains(r)))
        .map(|s| s.file.strip_prefix(src()).unwrap().display().to_string())
        .filter(|f| !YAML_READERS.iter().any(|(allowed, _)| f == allowed));
    none(found, "YAML read outside crate::yaml where someone else may write it");
}

/// The functions a production file keeps for its tests, each because it reads the file's private
/// state (shared fixtures live in `src/testing.rs`).
const TEST_ACCESSORS: &[&str] = &[
    "watch/store/tracker.rs::reported",
    "engine/session.rs::from_parts",
    "report/printer.rs::into_parts",
    "release/record.rs::for_tests",
    "yaml.rs::to_json",
];

#[test]
fn test_only_functions_in_production_files_read_private_state() {
    let mut found = BTreeSet::new();
    for source in sources() {
        let file = source.file.strip_prefix(src()).unwrap().display().to_string();
        let lines: Vec<&str> = source.code.lines().map(str::trim).collect();
        for pair in lines.windows(2).filter(|w| w[0] == "#[cfg(test)]") {
            if let Some(name) = fn_name(pair[1]) {
                found.insert(format!("{file}::{name}"));
            }
        }
    }
    let listed: BTreeSet<String> = TEST_ACCESSORS.iter().map(|s| s.to_string()).collect();
    assert_eq!(found, listed, "a #[cfg(test)] function beside production code (fixtures go to src/testing.rs)");
}

/// Each type's inherent `impl` blocks, by the files they are in.
fn inherent_impls() -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for source in sources() {
        let file = source.file.strip_prefix(src()).unwrap().display().to_string();
        for line in source.code.lines().filter(|l| l.starts_with("impl")) {
            let rest = line.strip_prefix("impl").unwrap();
            let rest =
                if rest.starts_with('<') { rest.split_once("> ").map_or("", |(_, r)| r) } else { rest.trim_start() };
            if rest.contains(" for ") || !rest.ends_with('{') {
                continue;
            }
            let name = rest.split(['<', ' ', '{']).next().unwrap_or_default();
            // A type is named by its folder and its name (two `Window`s are two types).
            let folder = Path::new(&file).parent().map(|p| p.display().to_string()).unwrap_or_default();
            out.entry(format!("{folder}/{name}")).or_default().insert(file.clone());
        }
    }
    out
}

#[test]
fn a_type_s_own_impl_lives_in_at_most_two_files() {
    let spread = inherent_impls()
        .into_iter()
        .filter(|(_, files)| files.len() > 2)
        .map(|(ty, files)| format!("{ty}: {}", files.into_iter().collect::<Vec<_>>().join(", ")));
    none(spread, "types whose own impl blocks are spread over more than two files");
}

/// The part of a folder a module path falls in: a child file or folder, or `mod` (the folder's
/// own file) for a name defined there.
fn part(
    folder: &[String],
    path: &[String],
    children: &BTreeSet<String>,
    facades: &BTreeMap<String, String>,
) -> Option<String> {
    if path.len() <= folder.len() || path[..folder.len()] != *folder {
        return None;
    }
    let name = &path[folder.len()];
    if children.contains(name) {
        return Some(name.clone());
    }
    Some(facades.get(name).cloned().unwrap_or_else(|| "mod".into()))
}

/// For each folder, which of its parts use which; the folder's own file re-exporting a child's
/// name (`pub use heal::Policy`) is a facade, not a use.
fn folder_graphs() -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let sources = sources();
    let mut folders: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for source in &sources {
        if source.file.ends_with("mod.rs") || source.file.ends_with("lib.rs") {
            folders.entry(source.module.clone()).or_default();
        }
        if let Some((last, parent)) = source.module.split_last() {
            folders.entry(parent.to_vec()).or_default().insert(last.clone());
        }
    }
    let mut graphs = BTreeMap::new();
    for (folder, children) in &folders {
        let own = sources.iter().find(|s| s.module == *folder);
        let mut facades = BTreeMap::new();
        if let Some(own) = own {
            for line in own.code.lines().filter(|l| l.trim_start().starts_with("pub") && l.contains(" use ")) {
                let used = line.split(" use ").nth(1).unwrap_or_default().trim_end_matches(';');
                let (found, _) = expand(used);
                for path in found.iter().filter(|p| p.len() > 1 && children.contains(&p[0])) {
                    facades.insert(path.last().unwrap().clone(), path[0].clone());
                }
            }
        }
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for source in sources.iter().filter(|s| s.module.len() >= folder.len() && s.module[..folder.len()] == *folder) {
            let from = source.module.get(folder.len()).cloned().unwrap_or_else(|| "mod".into());
            let is_own = from == "mod";
            let code = if is_own {
                source
                    .code
                    .lines()
                    .filter(|l| !(l.trim_start().starts_with("pub") && l.contains(" use ")))
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                source.code.clone()
            };
            let shaped = Source { file: source.file.clone(), module: source.module.clone(), code };
            let mut found = paths(&shaped);
            if is_own {
                // The folder's own file names its children bare (`store::parse`).
                let code = without_comments_and_strings(&shaped.code);
                for child in children {
                    let bare = format!("{child}::");
                    let named = code
                        .match_indices(&bare)
                        .any(|(at, _)| !code[..at].ends_with(|c: char| c == ':' || c == '_' || c.is_alphanumeric()));
                    if named {
                        found.push([folder.clone(), vec![child.clone()]].concat());
                    }
                }
            }
            for path in found {
                if let Some(to) = part(folder, &path, children, &facades).filter(|to| *to != from) {
                    graph.entry(from.clone()).or_default().insert(to);
                }
            }
        }
        graphs.insert(folder.clone(), graph);
    }
    graphs
}

/// A circle through `start`, if one comes back to it.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((at, trail)) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if next == start {
                return Some([trail.clone(), vec![start.to_string()]].concat());
            }
            if seen.insert(next.clone()) {
                stack.push((next.clone(), [trail.clone(), vec![next.clone()]].concat()));
            }
        }
    }
    None
}

#[test]
fn no_two_files_of_a_folder_use_each_other() {
    let mut problems = BTreeSet::new();
    for (folder, graph) in folder_graphs() {
        for start in graph.keys() {
            if let Some(mut trail) = circle(&graph, start) {
                trail.pop();
                let at = trail.iter().position(|p| p == trail.iter().min().unwrap()).unwrap();
                trail.rotate_left(at);
                let folder = if folder.is_empty() { "src".to_string() } else { folder.join("/") };
                problems.insert(format!("{folder}: {}", trail.join(" -> ")));
            }
        }
    }
    none(problems, "circles between the files of a folder");
}

#[test]
fn the_folder_check_sees_a_circle() {
    let graph: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a")]
        .into_iter()
        .map(|(f, t)| (f.to_string(), BTreeSet::from([t.to_string()])))
        .collect();
    assert_eq!(circle(&graph, "a").unwrap(), ["a", "b", "c", "a"]);
    let source = Source {
        file: "src/watch/heal.rs".into(),
        module: vec!["watch".into(), "heal".into()],
        code: "use super::{tracker::Key, state};\nuse crate::model::{self, X};\n// crate::cli\nlet s = \"crate::cli\";"
            .into(),
    };
    let found: Vec<String> = paths(&source).iter().map(|p| p.join("::")).collect();
    assert_eq!(found, ["watch::tracker::Key", "watch::state", "model", "model::X"]);
}

#[test]
fn no_file_is_over_400_lines_outside_tests() {
    let long: Vec<String> = sources()
        .iter()
        .map(|s| (s.file.strip_prefix(src()).unwrap().display().to_string(), s.code.lines().count()))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(f, n)| format!("{f}: {n} lines"))
        .collect();
    none(long, "files over 400 lines outside tests");
}

/// Functions longer than the limit, as `file:line name (n lines)`; rustfmt puts a body's closing
/// brace at its `fn`'s indentation.
fn long_functions(source: &Source) -> Vec<String> {
    let lines: Vec<&str> = source.code.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let Some(name) = fn_name(trimmed) else { continue };
        if trimmed.ends_with('}') || trimmed.ends_with(';') {
            continue;
        }
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(end) = lines[i + 1..].iter().position(|l| *l == close)
            && end + 2 > MAX_FN_LINES
        {
            let file = source.file.strip_prefix(src()).unwrap().display();
            out.push(format!("{file}:{} {name} ({} lines)", i + 1, end + 2));
        }
    }
    out
}

/// The name of the function a line starts, whatever its visibility and qualifiers (`pub(crate)
/// async fn run(`, `pub(in crate::x) const unsafe extern "C" fn f<T>(`).
pub(crate) fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line;
    loop {
        if let Some(after) = rest.strip_prefix("pub(") {
            rest = after.split_once(')')?.1.trim_start();
            continue;
        }
        let word = ["pub ", "async ", "const ", "unsafe ", "default ", "extern \"C\" ", "extern "]
            .iter()
            .find(|w| rest.starts_with(**w));
        match word {
            Some(w) => rest = rest[w.len()..].trim_start(),
            None => break,
        }
    }
    let name = rest.strip_prefix("fn ")?.split(['(', '<']).next()?.trim();
    (!name.is_empty()).then_some(name)
}

#[test]
fn every_form_of_a_function_is_measured() {
    for (line, name) in [
        ("fn a(", "a"),
        ("pub fn b<T>(", "b"),
        ("pub(crate) async fn run(", "run"),
        ("pub(super) const fn c(", "c"),
        ("pub(in crate::x) unsafe extern \"C\" fn d(", "d"),
        ("async fn e(", "e"),
    ] {
        assert_eq!(fn_name(line), Some(name), "{line}");
    }
    for line in ["let f = fn_name(x);", "// fn g(", "struct Fn;", "pub(crate) struct H {"] {
        assert_eq!(fn_name(line), None, "{line}");
    }
}

#[test]
fn no_function_is_over_80_lines_outside_tests() {
    none(sources().iter().flat_map(long_functions), "functions over 80 lines outside tests");
}

#[test]
fn no_code_outside_tests_takes_every_name_of_its_parent() {
    let globs: Vec<String> = sources()
        .iter()
        .filter(|s| {
            let lines: Vec<&str> = s.code.lines().map(str::trim).collect();
            // A test module nested in a module (`#[cfg(test)] mod tests { use super::*;`) is a test.
            let in_test = |i: usize| i >= 2 && lines[i - 1].starts_with("mod ") && lines[i - 2] == "#[cfg(test)]";
            lines.iter().enumerate().any(|(i, l)| *l == "use super::*;" && !in_test(i))
        })
        .map(|s| s.file.strip_prefix(src()).unwrap().display().to_string())
        .collect();
    none(globs, "use super::* outside tests");
}

#[test]
fn the_module_map_lists_the_layers_in_their_order() {
    let lib = include_str!("lib.rs");
    let doc: String = lib.lines().take_while(|l| l.starts_with("//!")).collect::<Vec<_>>().join("\n");
    let mut named: Vec<(usize, &str)> =
        LAYERS.iter().filter_map(|m| doc.find(&format!("[`{m}`]")).map(|at| (at, *m))).collect();
    named.sort();
    let order: Vec<&str> = named.into_iter().map(|(_, m)| m).collect();
    assert_eq!(order, LAYERS, "lib.rs's module map and LAYERS order the floors differently");
}

#[test]
fn the_contributor_docs_name_every_floor_and_room_and_only_files_that_exist() {
    let doc = include_str!("../docs/src/contributing/architecture.md");
    for module in LAYERS.iter().chain(WATCH_ROOMS.iter().flat_map(|f| f.iter())) {
        assert!(doc.contains(&format!("`{module}`")), "architecture.md does not name {module}");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let missing: Vec<String> = doc
        .split('`')
        .filter(|w| w.starts_with("src/") && w.ends_with(".rs"))
        .filter(|w| !root.join(w).is_file())
        .map(String::from)
        .collect();
    none(missing, "files architecture.md names that do not exist");
}

#[test]
fn the_module_map_names_every_module() {
    let lib = include_str!("lib.rs");
    for module in LAYERS {
        assert!(lib.contains(&format!("[`{module}`]")), "lib.rs does not describe {module}");
        assert!(lib.contains(&format!("mod {module};")), "{module} is not a module");
    }
    let declared = lib.lines().filter(|l| l.contains(" mod ") && l.ends_with(';') && !l.contains("layering")).count();
    assert_eq!(declared, LAYERS.len(), "a module missing from LAYERS");
}

/// The types a piece of code declares: structs, enums, traits at any depth and type aliases at
/// the top of a file (an indented `type X =` is an impl's associated type).
fn declared_types(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in without_comments_and_strings(code).lines() {
        let top = !line.starts_with(char::is_whitespace);
        let mut rest = line.trim_start();
        if let Some(after) = rest.strip_prefix("pub(") {
            rest = after.split_once(')').map_or("", |(_, r)| r.trim_start());
        }
        rest = rest.strip_prefix("pub ").unwrap_or(rest);
        let name = ["struct ", "enum ", "trait "]
            .iter()
            .find_map(|w| rest.strip_prefix(w))
            .or_else(|| rest.strip_prefix("type ").filter(|_| top));
        if let Some(name) = name.and_then(|n| n.split(|c: char| !c.is_alphanumeric() && c != '_').next()) {
            out.push(name.to_string());
        }
    }
    out
}

#[test]
fn one_type_per_name_across_the_crate() {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for source in sources() {
        for name in declared_types(&source.code) {
            by_name.entry(name).or_default().push(source.file.strip_prefix(src()).unwrap().display().to_string());
        }
    }
    let twice =
        by_name.into_iter().filter(|(_, files)| files.len() > 1).map(|(name, files)| format!("{name}: {files:?}"));
    none(twice, "type names declared twice (give each its own name)");
}

#[test]
fn the_type_name_check_sees_every_form_and_skips_associated_types() {
    let code = "pub(crate) struct A {\nenum B {}\npub trait C {}\ntype D = u8;\nimpl X for Y {\n    type Value = u8;\n    struct E;\n}\n// struct F\n";
    assert_eq!(declared_types(code), ["A", "B", "C", "D", "E"]);
}

/// The `(file, item)` pairs of the contributor map's "Where to look": each backticked
/// `src/….rs` followed by `, ` and a backticked name (`Type::function`, `function`, `Type`).
fn map_pairs(doc: &str) -> Vec<(String, String)> {
    let section = doc.split("## Where to look").nth(1).unwrap_or_default();
    let words: Vec<&str> = section.split('`').collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate().skip(1).step_by(2) {
        if w.starts_with("src/")
            && w.ends_with(".rs")
            && words.get(i + 1) == Some(&", ")
            && let Some(item) = words.get(i + 2)
        {
            out.push((w.to_string(), item.to_string()));
        }
    }
    out
}

#[test]
fn the_contributor_map_names_functions_that_exist() {
    let doc = include_str!("../docs/src/contributing/architecture.md");
    let pairs = map_pairs(doc);
    assert!(pairs.len() >= 8, "the map names fewer functions than its questions: {pairs:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let declares = |code: &str, name: &str| {
        ["fn ", "struct ", "enum ", "trait ", "const ", "type "].iter().any(|k| {
            code.match_indices(&format!("{k}{name}"))
                .any(|(at, m)| !code[at + m.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
        })
    };
    let wrong = pairs.iter().filter_map(|(file, item)| {
        let code = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        let parts: Vec<&str> = item.split("::").collect();
        let last = parts.last()?;
        let owner_ok = parts.len() < 2 || declares(&code, parts[0]) || code.contains(&format!("impl {}", parts[0]));
        (!(declares(&code, last) && owner_ok)).then(|| format!("{file}: {item}"))
    });
    none(wrong, "architecture.md names items its files do not declare");
}

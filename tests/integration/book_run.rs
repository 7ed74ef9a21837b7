//! The book's run blocks (`<!-- book: run ... -->`, see [`crate::book`]) played on the real
//! control plane: each block in a namespace of its own with its scenario set up, its commands run
//! in order as the page writes them, each outcome checked. What the run changes, and why:
//!
//! - the page's namespaces are the block's own (`shop` is the test's namespace, a second name a
//!   namespace beside it); `-A` is narrowed to that namespace (`--all -n NS`), since the shared
//!   control plane holds every other test's releases (and a `watch -A --repair` would heal them);
//! - a receiver URL of the page (`https://hooks.example/...`) is a loopback port nothing serves;
//! - a `watch` gets `--metrics-address 127.0.0.1:0` and must report its first full check;
//! - `./charts/NAME` is the project's test chart the scenario installed.
//!
//! Each command runs as a reader types it: `helm drift ...` in bash, through Helm 4 and the
//! plugin installed from this checkout, with `export`s of the block in its environment.

use crate::book::{Block, Expect, Marker};
use crate::support::{Env, Helm, chart_path};
use crate::watching::Watching;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long a watch has to report its first full check.
const READY_WITHIN: Duration = Duration::from_secs(120);

#[test]
fn the_books_commands_run_as_written() {
    let blocks: Vec<Block> =
        crate::book::blocks().into_iter().filter(|b| matches!(b.marker, Marker::Run { .. })).collect();
    assert!(!blocks.is_empty(), "the book has run blocks");
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = blocks
            .chunks(blocks.len().div_ceil(4))
            .map(|chunk| s.spawn(move || chunk.iter().filter_map(|b| play(b).err()).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Plays one block; an error names the block, the command as run and what it said.
fn play(block: &Block) -> Result<(), String> {
    let Marker::Run { scenario, namespaces, exits } = &block.marker else { unreachable!() };
    let page = block.page.rsplit('/').next().unwrap().trim_end_matches(".md").to_lowercase();
    let env = Env::new(&format!("book-{page}-{}", block.line));
    let mut names = vec![(namespaces[0].clone(), env.ns.clone())];
    for (i, other) in namespaces.iter().enumerate().skip(1) {
        let made = format!("{}-{i}", env.ns);
        env.kubectl(&["create", "namespace", &made]).success();
        names.push((other.clone(), made));
    }
    let _watcher = set_up(&env, scenario, &names);
    install_plugin(&env);
    let exports: Vec<(String, String)> =
        block.exports.iter().map(|(k, v)| (k.clone(), substitute(v, &names))).collect();
    for (command, expect) in block.commands.iter().zip(exits) {
        let mut words = crate::book::words(&substitute(&command.args, &names));
        narrow(&mut words, &env.ns);
        let got = if words[0] == "watch" { watch(&env, &words, &exports) } else { run(&env, &words, &exports) };
        if got.0 != *expect {
            return Err(format!(
                "{}: `helm drift {}` ran as {words:?}: {:?}, the page says {expect:?}\n{}",
                block.at(),
                command.args,
                got.0,
                got.1
            ));
        }
    }
    Ok(())
}

/// The scenario a block's commands start from, in the test's namespace; a watcher it started
/// runs until the block ends.
fn set_up(env: &Env, scenario: &str, names: &[(String, String)]) -> Option<Watching> {
    let charts = env.home().join("charts");
    std::fs::create_dir_all(&charts).unwrap();
    for (name, chart) in [("basic", "basic"), ("web", "basic"), ("hooked", "hooked")] {
        let _ = std::os::unix::fs::symlink(chart_path(chart), charts.join(name));
    }
    std::fs::write(env.home().join("values.yaml"), "greeting: hello\n").unwrap();
    match scenario {
        "clean" => env.install(Helm::V4, "web", "basic", &[]),
        "drifted" => {
            env.install(Helm::V4, "web", "basic", &["--labels", "team=web"]);
            drift(env);
        }
        // Drifted, with a watcher healing it that reads pauses in the block's second namespace.
        "healing" => {
            env.install(Helm::V4, "web", "basic", &["--labels", "helm-drift.io/repair=true"]);
            drift(env);
            let args = ["--all", "--repair", "--trust-namespace", &env.ns, "--pause-namespace", &names[1].1];
            return Some(Watching::start(env, &args).ready());
        }
        "revisions" => {
            env.install(Helm::V4, "web", "basic", &[]);
            env.install_again(Helm::V4, "web", "basic");
            env.install_again(Helm::V4, "web", "basic");
            drift(env);
        }
        "helm3-scaled" => {
            env.install(Helm::V3, "web", "basic", &[]);
            env.kubectl(&["scale", "deployment", "web-web", "--replicas=3"]).success();
        }
        // The replicas accepted into the baseline of the block's second namespace.
        "accepted" => {
            env.install(Helm::V4, "web", "basic", &[]);
            env.kubectl(&["scale", "deployment", "web-web", "--replicas=4"]).success();
            env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited by hand"}}"#);
            let baseline = format!("cluster={}", names[1].1);
            let accept =
                ["accept", "web", "--baseline", &baseline, "--only", "deploy/web-web", "--path", "/spec/replicas"];
            env.drift(&accept).success();
        }
        // A kept hook object edited by hand.
        "hooked" => {
            env.install(Helm::V4, "web", "hooked", &[]);
            env.merge_patch("configmap", "web-hook", r#"{"data":{"ran":"edited"}}"#);
        }
        other => panic!("no scenario {other} (book_run::set_up)"),
    }
    None
}

/// Drift a person makes by hand: a scale, an edit, a label added.
fn drift(env: &Env) {
    env.kubectl(&["scale", "deployment", "web-web", "--replicas=5"]).success();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited by hand"}}"#);
    env.kubectl(&["label", "service", "web-web", "owner=someone"]).success();
}

/// The page's namespaces replaced by the block's own, whole words only; receivers on loopback.
fn substitute(text: &str, names: &[(String, String)]) -> String {
    let mut out = text.replace("https://hooks.example", "http://127.0.0.1:9");
    for (page, own) in names {
        let mut next = String::new();
        let mut rest = out.as_str();
        while let Some(at) = rest.find(page.as_str()) {
            let before = rest[..at].chars().next_back();
            let after = rest[at + page.len()..].chars().next();
            let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
            next.push_str(&rest[..at]);
            next.push_str(if word(before) || word(after) { page } else { own });
            rest = &rest[at + page.len()..];
        }
        next.push_str(rest);
        out = next;
    }
    out
}

/// `-A` becomes the block's namespace, with every release of it.
fn narrow(words: &mut Vec<String>, ns: &str) {
    let Some(at) = words.iter().position(|w| w == "-A" || w == "--all-namespaces") else { return };
    words.remove(at);
    words.extend(["-n".to_string(), ns.to_string()]);
    if !words.iter().any(|w| w == "--all") {
        words.push("--all".to_string());
    }
}

/// The plugin installed into the block's Helm 4 home, and `helm` on the PATH as that Helm, as a
/// reader has them.
fn install_plugin(env: &Env) {
    let dir = env.plugin_dir();
    env.helm(Helm::V4, &["plugin", "install", dir.to_str().unwrap()]).success();
    let bin = env.home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env.helm_bin(Helm::V4), bin.join("helm")).unwrap();
}

/// `helm drift WORDS` in a shell, through Helm and the plugin, the current namespace the
/// block's (`$HELM_NAMESPACE`, as a kubeconfig context's would be), in a process group of its
/// own (a watch is stopped with everything it started).
fn command(env: &Env, words: &[String], exports: &[(String, String)]) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let quoted: Vec<String> = words.iter().map(|w| format!("'{}'", w.replace('\'', r"'\''"))).collect();
    let mut cmd = env.command(std::path::Path::new("/bin/bash"));
    let path = format!("{}:{}", env.home().join("bin").display(), std::env::var("PATH").unwrap_or_default());
    cmd.arg("-c").arg(format!("exec helm drift {}", quoted.join(" "))).env("PATH", path).env("HELM_NAMESPACE", &env.ns);
    cmd.process_group(0);
    for (k, v) in exports {
        cmd.env(k, v);
    }
    cmd
}

fn run(env: &Env, words: &[String], exports: &[(String, String)]) -> (Expect, String) {
    let out = command(env, words, exports).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (Expect::Exit(out.status.code().unwrap_or(-1)), said)
}

/// A watch, until it reports its first full check (then stopped) or exits.
fn watch(env: &Env, words: &[String], exports: &[(String, String)]) -> (Expect, String) {
    let mut words = words.to_vec();
    words.extend(["--metrics-address".to_string(), "127.0.0.1:0".to_string()]);
    let mut cmd = command(env, &words, exports);
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + READY_WITHIN;
    let mut said = String::new();
    let outcome = loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) if line.contains("first full check done") => break Expect::Ready,
            Ok(line) => said += &format!("{line}\n"),
            Err(_) => break Expect::Exit(child.try_wait().ok().flatten().and_then(|s| s.code()).unwrap_or(-1)),
        }
    };
    let _ = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
    let _ = child.wait();
    (outcome, said)
}

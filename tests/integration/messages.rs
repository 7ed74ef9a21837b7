//! What users read: every error path we can provoke is one clean line (no Rust debug dump, each
//! cause once), a refused dry-run says what the server said, and snapshots of exit code, stdout
//! and stderr for representative runs (clean, drift, error, repair plan).

use crate::support::{Done, Env, Helm, transcript};

/// Marks of a Rust debug dump or a kube error printed as is.
const DUMPS: [&str; 5] = ["Some(", "Status {", "ApiError", "StatusDetails", "None,"];

/// Asserts that no output of `done` holds a debug dump and that no cause is said twice.
pub fn clean(done: &Done) {
    let all = format!("{}{}", done.stdout(), done.stderr());
    for dump in DUMPS {
        assert!(!all.contains(dump), "debug dump {dump:?} in output\n{}", done.dump());
    }
    for line in done.stderr().lines() {
        let parts: Vec<&str> = line.split(": ").filter(|p| p.len() > 12).collect();
        for (i, p) in parts.iter().enumerate() {
            assert!(!parts[i + 1..].contains(p), "cause {p:?} said twice in {line:?}");
        }
    }
}

/// A changed containerPort makes the server-side apply dry-run invalid (two ports named `http`):
/// the report says what the server said and what the tool did (compared client-side), and the
/// diff shows the port that changed, not the protocol the server defaulted.
fn refused_dry_run(helm: Helm) {
    let env = Env::with_full_chart(helm, &format!("msg-port-{}", helm.tag()));
    env.kubectl(&[
        "patch",
        "deployment",
        "app-web",
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/spec/template/spec/containers/0/ports/0/containerPort","value":9090}]"#,
    ])
    .success();
    let out = env.drift(&["check", "app"]).code(2);
    clean(&out);
    // The apply dry-run merges the recorded port into the live list and the server refuses the
    // list it makes (a duplicate name): the exact engine decides with a dry-run update of the
    // whole object instead, so there is no read-only engine line to apologise.
    assert!(!out.stdout().contains("engine:"), "the exact engine decided\n{}", out.dump());
    out.stdout_has("- spec.template.spec.containers[name=web].ports[containerPort=8080,protocol=TCP]: ")
        .stdout_has("+ spec.template.spec.containers[name=web].ports[containerPort=9090,protocol=TCP]: ");
    // The unified diff's lines (not the evidence lines, which name the whole items).
    let stdout = out.stdout();
    let diff: Vec<&str> = stdout
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with(['+', '-']) && !l.starts_with("+++") && !l.starts_with("---"))
        .filter(|l| !l.starts_with("+ spec.") && !l.starts_with("- spec."))
        .collect();
    assert!(diff.iter().any(|l| l.contains("containerPort: 8080")), "{}", out.dump());
    assert!(diff.iter().any(|l| l.contains("containerPort: 9090")), "{}", out.dump());
    assert!(!diff.iter().any(|l| l.contains("protocol")), "server defaults are not changes\n{}", out.dump());

    // JSON: each path resolves in the object it describes.
    let json = env.drift(&["check", "app", "-o", "json"]).code(2).stdout();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let web =
        doc["releases"][0]["objects"].as_array().unwrap().iter().find(|o| o["name"] == "app-web").unwrap().clone();
    let live: serde_json::Value =
        serde_json::from_str(&env.kubectl(&["get", "deployment", "app-web", "-o", "json"]).success().stdout()).unwrap();
    for d in web["differences"].as_array().unwrap() {
        let at = d["path"].as_str().unwrap();
        assert!(!at.contains('['), "a pointer, not a display path: {at}");
        if !d["live"].is_null() {
            assert_eq!(live.pointer(at), Some(&d["live"]), "{at} resolves live");
        } else {
            assert_eq!(at, "/spec/template/spec/containers/0/ports/0", "the recorded object's pointer");
        }
    }
    for a in web["addedOutsideHelm"].as_array().unwrap() {
        let at = a["path"].as_str().unwrap();
        assert_eq!(live.pointer(at), Some(&a["value"]), "{at} resolves live");
    }
}

helm_matrix! {
    fn refused_dry_run_says_what_the_server_said(helm: Helm) {
        refused_dry_run(helm);
    }
}

/// Arguments, environment, exit code, and a text the output must hold.
type ErrorRun<'a> = (Vec<&'a str>, Vec<(&'a str, String)>, i32, &'a str);

/// Every error we can provoke: one line on stderr, no debug dump, each cause once.
#[test]
fn every_error_path_is_one_clean_line() {
    let env = Env::new("msg-errors");
    env.install(Helm::V4, "web", "basic", &[]);
    crate::storage::store(&env, "corrupt", Some("%%%"));
    // A ConfigMap edited and made immutable: its repair is refused by the server.
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"x"},"immutable":true}"#);
    let runs: Vec<ErrorRun> = vec![
        (vec!["check", "nope"], vec![], 1, "release \"nope\" not found"),
        (
            vec!["check", "web"],
            vec![("HELM_KUBEASUSER", "nobody".into())],
            1,
            "forbidden: the identity may not list secrets",
        ),
        (
            vec!["check", "web"],
            vec![("HELM_KUBEAPISERVER", format!("https://{}", crate::support::REFUSED))],
            1,
            "cannot reach the cluster",
        ),
        (vec!["check", "--bogus"], vec![], 1, "unexpected argument '--bogus'"),
        (vec!["check"], vec![], 1, "name a release to check"),
        (vec!["check", "-A", "--revision", "1"], vec![], 1, "--revision needs exactly one release"),
        (vec!["check", "web"], vec![("HELM_DRIVER", "floppy".into())], 1, "unknown Helm storage driver"),
        (vec!["check", "corrupt"], vec![], 1, "bad base64: Invalid symbol 37"),
        (vec!["repair", "nope"], vec![], 1, "release \"nope\" not found"),
        (vec!["repair", "web", "--only", "Deployment/nope"], vec![], 1, "--only Deployment/nope: no such object"),
        (vec!["render", "nope"], vec![], 1, "release \"nope\" not found"),
        (vec!["check", "web", "--ignore", "name=(:/x"], vec![], 1, "invalid regex"),
        (
            vec!["repair", "web"],
            vec![],
            1,
            "refused by the server dry-run: 422 Invalid: data: Forbidden: field is immutable",
        ),
    ];
    for (args, vars, code, want) in runs {
        let mut run = env.drift(&args);
        for (k, v) in &vars {
            run = run.env(k, v);
        }
        let out = run.code(code);
        assert!(
            out.stdout().contains(want) || out.stderr().contains(want),
            "{args:?}: {want:?} missing\n{}",
            out.dump()
        );
        clean(&out);
        if !args.contains(&"--bogus") {
            assert!(out.stderr().lines().count() <= 1, "{args:?}: one line\n{}", out.dump());
        }
        assert!(out.stderr().matches("Invalid symbol 37").count() <= 1, "cause once\n{}", out.dump());
    }
}

#[test]
fn snapshots_of_representative_runs() {
    let env = Env::new("msg-snap");
    env.install(Helm::V4, "web", "basic", &[]);
    insta::assert_snapshot!("clean", transcript(&env, &["check", "web"]));
    env.kubectl(&["delete", "configmap", "web-config"]).success();
    env.kubectl(&["scale", "deployment", "web-web", "--replicas=3"]).success();
    env.kubectl(&["label", "service", "web-web", "team=ops"]).success();
    insta::assert_snapshot!("drift", transcript(&env, &["check", "web"]));
    insta::assert_snapshot!("repair_plan", transcript(&env, &["repair", "web", "--dry-run"]));
    // The upgrade of the same chart over the hand-scaled Deployment (Helm 4: server-side apply).
    let chart = crate::support::chart_path("basic").display().to_string();
    insta::assert_snapshot!("plan", transcript(&env, &["plan", "web", &chart, "--reuse-values"]));
    insta::assert_snapshot!("error", transcript(&env, &["check", "web", "absent"]));
}

/// An example in the README or the book marked `<!-- snapshot: PATH... -->` shows the real
/// output the snapshots hold (recorded on the real control plane by
/// `snapshots_of_representative_runs` and by the tests of each feature through
/// [`crate::support::example`]), ages aside: copy it and see it. The block's `$ helm drift`
/// commands take the snapshots in turn (a block without a command is one excerpt), each with the
/// arguments its snapshot ran (`-n` aside) and a part of its stdout or stderr as its output;
/// other commands (`$ kubectl ...`) set the scene and are not held.
#[test]
fn the_examples_show_the_real_output() {
    let root = crate::support::repo_root();
    let mut shown = 0;
    for (page, text) in crate::release::documents(&root) {
        for (at, _) in text.match_indices("<!-- snapshot: ") {
            let rest = &text[at + "<!-- snapshot: ".len()..];
            let mut snapshots = rest[..rest.find(" -->").unwrap()].split_whitespace();
            let fence = rest.find("```text\n").expect("a text block after the marker");
            // A block in a list item is indented as the item is.
            let indent = fence - rest[..fence].rfind('\n').map_or(0, |n| n + 1);
            let block = &rest[fence + "```text\n".len()..];
            let block = &block[..block[..block.find("```").unwrap()].rfind('\n').map_or(0, |n| n + 1)];
            let block: String = block.lines().map(|l| format!("{}\n", l.get(indent..).unwrap_or_default())).collect();
            for (command, output) in segments(&block) {
                if command.as_ref().is_some_and(|c| !c.starts_with("helm drift ")) {
                    continue;
                }
                let snapshot = snapshots.next().unwrap_or_else(|| panic!("{page}: no snapshot left for {command:?}"));
                let recorded = std::fs::read_to_string(root.join(snapshot)).unwrap_or_else(|_| panic!("{snapshot}"));
                let ran = recorded.lines().find_map(|l| l.strip_prefix("$ ")).expect("the command run");
                if let Some(command) = &command {
                    assert_eq!(arguments(command), arguments(ran), "{page}: the example runs what {snapshot} ran");
                }
                let stdout = &recorded[recorded.find("--- stdout\n").unwrap() + "--- stdout\n".len()..];
                let output = crate::support::neutral(&output);
                assert!(stdout.contains(&output), "{page}: the example is not what {snapshot} holds:\n{output}");
                shown += 1;
            }
            assert!(snapshots.next().is_none(), "{page}: a snapshot no command of the block shows");
        }
    }
    assert!(
        shown >= 13,
        "the README's check and repair, the pages of check, plan, accept, explain, render, hooks, guard and restores show real output ({shown})"
    );
}

/// A block's commands (the text after `$ `) and each one's output lines.
fn segments(block: &str) -> Vec<(Option<String>, String)> {
    let mut out: Vec<(Option<String>, String)> = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(command) => out.push((Some(command.to_string()), String::new())),
            None if out.is_empty() => out.push((None, format!("{line}\n"))),
            None => out.last_mut().unwrap().1 += &format!("{line}\n"),
        }
    }
    out
}

/// A command's arguments as compared: `-n NAMESPACE` aside (the snapshot's namespace is its
/// test's) and a path by its last part (`./charts/basic`, `./tests/charts/basic`), comments cut.
fn arguments(command: &str) -> Vec<String> {
    let command = command.split("  #").next().unwrap();
    let mut words: Vec<&str> = command.split_whitespace().collect();
    while let Some(at) = words.iter().position(|w| *w == "-n") {
        words.drain(at..(at + 2).min(words.len()));
    }
    words.iter().map(|w| if w.starts_with('.') { w.rsplit('/').next().unwrap() } else { w }.to_string()).collect()
}

/// A newcomer's first refusals, through the binary as Helm runs it: `-h` fits a screen (Helm's
/// connection flags wait in `--help`), a flag of another command names the commands it belongs
/// to, a missing argument's usage line asks only for it (not for the flags Helm's environment
/// set), and `-o` lists only what the command writes.
#[test]
fn help_and_refusals_say_what_a_newcomer_needs() {
    let env = Env::new("msg-help");
    let short = env.drift(&["check", "-h"]).code(0).stdout();
    assert!(short.lines().count() <= 60 && short.contains("see more with '--help'"), "{short}");
    assert!(!short.contains("--kube-token"), "connection flags wait in --help:\n{short}");
    env.drift(&["check", "--help"]).code(0).stdout_has("--kube-token");
    env.drift(&["check", "web", "--only", "cm/x"])
        .code(1)
        .stderr_has("error: --only is not a flag of check; it belongs to repair and accept");
    let usage = env.drift(&["repair"]).env("HELM_DRIVER", "secrets").env("HELM_KUBEASUSER", "someone").code(1);
    usage.stderr_has("Usage: helm drift repair [OPTIONS] <RELEASE>\n");
    assert!(!usage.stderr().contains("--driver"), "{}", usage.dump());
    env.drift(&["render", "web", "-o", "junit"]).code(1).stderr_has("[possible values: text, json]");
    env.drift(&["accept", "web", "-o", "html"]).code(1).stderr_has("[possible values: text, json]");
    // kubectl's --context is --kube-context here: said, not "invalid digit".
    env.drift(&["check", "web", "--context", "kind-prod"]).code(1).stderr_has("use --kube-context kind-prod");
}

//! The reports people look at, of a real drifted release: Markdown for pull requests and step
//! summaries, and the self-contained HTML report read by a real browser (headless Chromium,
//! Debian's `chromium-headless-shell`, which `scripts/test.sh` installs): its DOM holds the
//! verdict counts and every drifted path, never a secret value; a screenshot is kept under
//! `target/pictures/`.

use crate::support::{Env, Helm, repo_root};
use std::path::{Path, PathBuf};

/// The browser: `HELM_DRIFT_CHROMIUM`, else Debian's headless shell or chromium on PATH.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("HELM_DRIFT_CHROMIUM") {
        return PathBuf::from(p);
    }
    for name in ["chromium-headless-shell", "chromium", "chromium-browser"] {
        for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
            if dir.join(name).is_file() {
                return dir.join(name);
            }
        }
    }
    panic!(
        "no headless Chromium: scripts/test.sh installs Debian's chromium-headless-shell (or set HELM_DRIFT_CHROMIUM)"
    );
}

/// Chromium on `page`: the DOM it built (`--dump-dom`) and a screenshot at `png`.
fn browse(page: &Path, png: &Path) -> String {
    browse_at(page, png, "1200,1400")
}

/// [`browse`] in a window of `size` (`WIDTH,HEIGHT`).
pub fn browse_at(page: &Path, png: &Path, size: &str) -> String {
    let url = format!("file://{}", page.display());
    let run = |extra: &[&str]| {
        let profile = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(chromium())
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(&url)
            .output()
            .expect("run chromium");
        assert!(out.status.success(), "chromium {extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let dom = run(&["--dump-dom"]);
    run(&[&format!("--screenshot={}", png.display()), &format!("--window-size={size}"), "--hide-scrollbars"]);
    dom
}

/// Releases `web` (basic) and `s` (secretive) in namespace `name-<helm>`, drifted by hand.
fn drifted(helm: Helm, name: &str) -> Env {
    let env = Env::new(&format!("{name}-{}", helm.tag()));
    env.install(helm, "web", "basic", &[]);
    env.install(helm, "s", "secretive", &["--set", "password=hunter2pw"]);
    drift_by_hand(&env);
    env
}

/// Drift a person makes by hand: a ConfigMap edited, a Deployment scaled, a Secret's value
/// changed.
fn drift_by_hand(env: &Env) {
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited by hand"}}"#);
    env.kubectl(&["scale", "deployment", "web-web", "--replicas", "3"]).success();
    // base64 of "stolen-secret-value"
    env.merge_patch("secret", "s-creds", r#"{"data":{"password":"c3RvbGVuLXNlY3JldC12YWx1ZQ=="}}"#);
}

const SECRETS: [&str; 4] = ["hunter2pw", "aHVudGVyMnB3", "stolen-secret-value", "c3RvbGVuLXNlY3JldC12YWx1ZQ=="];

helm_matrix! {
    fn markdown_for_pull_requests_and_step_summaries(helm: Helm) {
        let env = drifted(helm, "markdown");
        let summary = env.home().join("step-summary.md");
        let check = || {
            env.drift(&["check", "--all", "-o", "markdown", "--summary-file", summary.to_str().unwrap()]).code(2).stdout()
        };
        let md = check();
        assert!(md.starts_with("**helm drift: drift found**: 2 of 2 releases drifted, 0 in sync, 0 errors; 3 drifted objects\n"), "{md}");
        let ns = &env.ns;
        for line in [
            format!("| web | {ns} | 1 | basic-0.1.0 | **2 of 4 drifted** |"),
            format!("| ConfigMap {ns}/web-config | changed | `data.greeting` | `kubectl-patch` |"),
            format!("| Deployment {ns}/web-web | changed | `spec.replicas` | `kubectl` |"),
            format!("<details><summary>Secret {ns}/s-creds: changed</summary>"),
            "~ data.greeting: \"hello\" -> \"edited by hand\"  (kubectl-patch".to_string(),
            "+  greeting: edited by hand".to_string(),
            "```diff\n".to_string(),
        ] {
            assert!(md.contains(&line), "{line}\n{md}");
        }
        for secret in SECRETS {
            assert!(!md.contains(secret), "no secret value: {secret}\n{md}");
        }
        // The summary file gets the same document, appended run after run (GitHub's
        // $GITHUB_STEP_SUMMARY is one file for every step of a job).
        assert_eq!(std::fs::read_to_string(&summary).unwrap(), md);
        // (The second run's own document: its ages, "0 s ago", may have moved on by a second.)
        let second = check();
        assert_eq!(std::fs::read_to_string(&summary).unwrap(), format!("{md}{second}"));
        // In sync: the one-line verdict says so, exit 0.
        env.drift(&["repair", "web"]).success();
        env.drift(&["repair", "s"]).success();
        env.drift(&["check", "--all", "-o", "markdown"])
            .code(0)
            .stdout_has("**helm drift: in sync**: 0 of 2 releases drifted, 2 in sync, 0 errors\n");
        // A run that cannot check writes its error to the summary too, and fails.
        let broken = env.home().join("broken-summary.md");
        env.drift(&["check", "nope", "--summary-file", broken.to_str().unwrap()])
            .code(1)
            .stderr_has("nope");
        let text = std::fs::read_to_string(&broken).unwrap();
        assert!(text.starts_with("**helm drift: error**"), "{text}");
    }
}

helm_matrix! {
    fn the_html_report_in_a_real_browser(helm: Helm) {
        let env = drifted(helm, "html");
        let page = env.home().join("drift-report.html");
        let html = env.drift(&["check", "--all", "-o", "html"]).code(2).stdout();
        std::fs::write(&page, &html).unwrap();
        for external in ["<script", " src=", "href=\"http", "@import", "url("] {
            assert!(!html.contains(external), "self-contained: {external}");
        }
        let shots = repo_root().join("target/pictures");
        std::fs::create_dir_all(&shots).unwrap();
        let png = shots.join(format!("report-{}.png", helm.tag()));
        let dom = browse(&page, &png);
        for (id, n) in [("releases-drifted", 2), ("releases-in-sync", 0), ("releases-error", 0)] {
            assert!(dom.contains(&format!("<span id=\"{id}\">{n}</span>")), "{id} = {n}\n{dom}");
        }
        for path in ["data.greeting", "spec.replicas", "data.password"] {
            assert!(dom.contains(&format!("<code class=\"path\">{path}</code>")), "{path}\n{dom}");
        }
        assert!(dom.contains("<code class=\"manager\">kubectl-patch</code>"), "{dom}");
        assert!(dom.contains("<label for=\"show-changed\" class=\"changed\">changed (3)</label>"), "{dom}");
        assert!(dom.contains("<span class=\"add\">+  greeting: edited by hand</span>"), "{dom}");
        for secret in SECRETS {
            assert!(!dom.contains(secret), "no secret value: {secret}");
        }
        let shot = std::fs::read(&png).unwrap();
        assert!(shot.starts_with(b"\x89PNG") && shot.len() > 10_000, "a screenshot of the page: {}", png.display());
        eprintln!("screenshot of the HTML report: {}", png.display());
        if helm == Helm::V4 {
            keep(&png, &dom, "html-report");
        }
    }
}

/// What a drawn page says, as the words that would make a picture of it lie when they change:
/// verdicts, filter labels, panel titles and column heads (counts and names left out).
fn words(dom: &str) -> String {
    let mut found = std::collections::BTreeSet::new();
    for (open, close) in [("class=\"verdict", "<"), ("<label", "<"), ("<h3", "<"), ("<th", "<")] {
        for (at, _) in dom.match_indices(open) {
            let Some(start) = dom[at..].find('>').map(|n| at + n + 1) else { continue };
            let text = &dom[start..start + dom[start..].find(close).unwrap_or(0)];
            let text = text.trim_end_matches(|c: char| c.is_ascii_digit() || " ()".contains(c)).trim();
            if !text.is_empty() {
                found.insert(text.to_string());
            }
        }
    }
    found.into_iter().map(|w| w + "\n").collect()
}

/// The book's copy of a picture this test drew (`docs/src/images/NAME.png`), with the words of
/// its page beside it (`NAME.words`). `HELM_DRIFT_WRITE_PICTURES=1` writes both; otherwise the
/// committed words must be the drawn page's: a picture whose page now says something else (a
/// verdict renamed) is out of date, and the test says how to draw it again.
pub fn keep(png: &Path, dom: &str, name: &str) {
    let images = repo_root().join("docs/src/images");
    let (book_png, book_words) = (images.join(format!("{name}.png")), images.join(format!("{name}.words")));
    if std::env::var_os("HELM_DRIFT_WRITE_PICTURES").is_some() {
        std::fs::copy(png, &book_png).unwrap();
        std::fs::write(&book_words, words(dom)).unwrap();
        return;
    }
    assert!(book_png.is_file(), "the book has no {}", book_png.display());
    let committed = std::fs::read_to_string(&book_words).unwrap_or_default();
    assert_eq!(
        committed,
        words(dom),
        "{} shows a page that says something else now: draw it again (HELM_DRIFT_WRITE_PICTURES=1 cargo test --test integration {name})",
        book_png.display()
    );
}

#[test]
fn the_words_of_a_page_are_its_verdicts_labels_and_heads() {
    let dom = r#"<td class="verdict missing">missing</td><label for="x" class="changed">changed (3)</label><h3>Drifted</h3><th>release</th><td>web</td>"#;
    assert_eq!(words(dom), "Drifted\nchanged\nmissing\nrelease\n");
}

/// `helm-drift ARGS` on a pseudo-terminal (util-linux `script`): everything it wrote there.
fn on_a_terminal(env: &Env, args: &[&str]) -> String {
    let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_helm-drift"))
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let mut cmd = env.command(Path::new("script"));
    // The operator trusts the test's namespace once, as Env::drift's repairs do.
    cmd.env("HELM_NAMESPACE", &env.ns).env(crate::support::TRUST_ENV, &env.ns).env("TERM", "xterm");
    cmd.args(["-qefc", &quoted.join(" "), "/dev/null"]);
    let out = cmd.output().expect("run script (util-linux)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A progress line on a terminal for work over several releases and repair steps; none when
/// the output is a document or stderr is not a terminal.
#[test]
fn progress_on_a_terminal_only() {
    let env = Env::new("progress");
    for release in ["a", "b", "c"] {
        env.install(Helm::V4, release, "basic", &[]);
    }
    env.merge_patch("configmap", "a-config", r#"{"data":{"greeting":"edited"}}"#);
    env.kubectl(&["scale", "deployment", "a-web", "--replicas", "3"]).success();
    let shown = on_a_terminal(&env, &["check", "--all"]);
    assert!(shown.contains("checked 1/3 releases, 4 objects"), "{shown:?}");
    assert!(shown.contains("2 of 4 objects drifted"), "the report follows: {shown:?}");
    for doc in ["json", "markdown", "html", "junit"] {
        let out = on_a_terminal(&env, &["check", "--all", "-o", doc]);
        assert!(!out.contains("checked 1/3 releases"), "-o {doc}: {out:?}");
    }
    let piped = env.drift(&["check", "--all"]).code(2);
    assert!(!piped.stderr().contains("checked"), "{}", piped.dump());
    let repaired = on_a_terminal(&env, &["repair", "a"]);
    assert!(repaired.contains("repair: validated (server dry-run) 1/2 steps"), "{repaired:?}");
    assert!(repaired.contains("repair: applied 1/2 steps"), "{repaired:?}");
    env.drift(&["check", "a"]).code(0);
}

/// `watch --ui`: a read-only page on the metrics address, read by headless Chromium: releases
/// with their verdicts, drifted objects with paths and writers, never a value; none without
/// `--ui`.
#[test]
fn the_watchers_page_in_a_real_browser() {
    use crate::watching::Watching;
    let env = Env::new("watch-ui");
    env.install(Helm::V4, "web", "basic", &[]);
    env.install(Helm::V3, "s", "secretive", &["--set", "password=hunter2pw"]);
    let plain = Watching::start(&env, &["--all"]).ready();
    assert_eq!(plain.get("/").0, 404, "no page without --ui");
    drop(plain);
    let w = Watching::start(&env, &["--all", "--ui"]).ready();
    env.kubectl(&["delete", "configmap", "web-config"]).success();
    env.merge_patch("service", "web-web", r#"{"metadata":{"labels":{"edited":"by-hand-value"}}}"#);
    env.merge_patch("secret", "s-creds", r#"{"data":{"password":"c3RvbGVuLXNlY3JldC12YWx1ZQ=="}}"#);
    let drifted = |r: &str| format!("helm_drift_release_drifted{{namespace=\"{}\",release=\"{r}\"}}", env.ns);
    w.wait_for(&drifted("web"), 1.0);
    w.wait_for(&drifted("s"), 1.0);
    let missing = format!("helm_drift_objects{{namespace=\"{}\",release=\"web\",verdict=\"missing\"}}", env.ns);
    w.wait_for(&missing, 1.0);
    let (status, html) = w.get("/");
    assert_eq!(status, 200, "{html}");
    let page = env.home().join("watch.html");
    std::fs::write(&page, &html).unwrap();
    let shots = repo_root().join("target/pictures");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join("watch-ui.png");
    let dom = browse(&page, &png);
    let ns = &env.ns;
    for text in [
        "<span id=\"releases-drifted\">2</span>".to_string(),
        format!("<td class=\"id\">ConfigMap {ns}/web-config</td><td class=\"verdict missing\">missing</td>"),
        "<code class=\"path\">metadata.labels.edited</code>".to_string(),
        "<code class=\"manager\">kubectl-patch</code>".to_string(),
        "<code class=\"path\">data.password</code>".to_string(),
    ] {
        assert!(dom.contains(&text), "{text}\n{dom}");
    }
    for value in ["by-hand-value", "hello", "hunter2pw", "stolen-secret-value", "c3RvbGVuLXNlY3JldC12YWx1ZQ=="] {
        assert!(!dom.contains(value), "no value on the page: {value}");
    }
    let shot = std::fs::read(&png).unwrap();
    assert!(shot.starts_with(b"\x89PNG") && shot.len() > 10_000, "{}", png.display());
    keep(&png, &dom, "watch-ui");
}

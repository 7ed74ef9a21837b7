//! The release pipeline, as far as it runs on this machine: the workflows pass actionlint and
//! do what a release needs, one version everywhere (and the tag), release notes from the
//! changelog, the crate packages for crates.io. (Installing a release archive served on loopback
//! through Helm 3 and Helm 4, and refusing a tampered one, is in `plugin.rs`.)

use crate::support::repo_root;
use std::path::Path;
use std::process::{Command, Output};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// actionlint, built from its Go module by `scripts/tools.sh --actionlint` (scripts/test.sh does
/// it first and exports HELM_DRIFT_ACTIONLINT).
fn actionlint() -> String {
    if let Ok(path) = std::env::var("HELM_DRIFT_ACTIONLINT") {
        return path;
    }
    let out = run(Command::new("bash").arg(repo_root().join("scripts/tools.sh")).arg("--actionlint"));
    assert!(
        out.status.success(),
        "actionlint is missing and could not be built (scripts/tools.sh --actionlint):\n{}",
        text(&out)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The book's CI recipes (docs/src/ci/): the GitHub workflows pass actionlint, the GitLab file
/// has its jobs on the events it says, and each installs this version and reads the exit codes
/// the page gives (a plan accepts 2, a check fails on it).
#[test]
fn the_ci_recipes_are_valid() {
    let root = repo_root();
    let dir = root.join("docs/src/ci");
    let github = ["github-plan.yml", "github-check.yml", "github-gate.yml"].map(|w| dir.join(w));
    let out = run(Command::new(actionlint()).args(&github).current_dir(&root));
    assert!(out.status.success(), "actionlint:\n{}", text(&out));
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    // Each pins a Helm the project tests (issue 85), not one it never ran.
    let versions = std::fs::read_to_string(root.join("scripts/versions.env")).unwrap();
    let tested = |v: &str| ["HELM3_VERSION", "HELM4_VERSION"].iter().any(|k| versions.contains(&format!("{k}={v}\n")));
    for name in ["github-plan.yml", "github-check.yml", "github-gate.yml", "gitlab-ci.yml"] {
        let recipe = read(name);
        assert!(recipe.contains(&format!("--version v{VERSION}")), "{name} installs v{VERSION}");
        let pinned: Vec<String> = recipe
            .lines()
            .filter_map(|l| l.split("version: ").nth(1).or_else(|| l.split("DESIRED_VERSION=").nth(1)))
            .filter_map(|v| v.split_whitespace().next())
            .map(|v| v.trim_matches('"').to_string())
            .filter(|v| v.starts_with("v3") || v.starts_with("v4"))
            .collect();
        assert!(!pinned.is_empty(), "{name} pins a Helm version");
        for v in pinned {
            assert!(tested(&v), "{name} pins Helm {v}, which scripts/versions.env does not test");
        }
    }
    // The page shows each file as it is (no mdBook include: it reads on the code host too).
    let page = std::fs::read_to_string(root.join("docs/src/ci.md")).unwrap();
    for name in ["check-reader.yaml", "github-plan.yml", "github-gate.yml", "github-check.yml", "gitlab-ci.yml"] {
        assert!(page.contains(&format!("```yaml\n{}```", read(name))), "docs/src/ci.md shows {name} as it is");
    }
    assert!(!page.contains("{{#include"), "docs/src/ci.md reads without mdBook");
    let plan: serde_yaml::Value = serde_yaml::from_str(&read("github-plan.yml")).unwrap();
    assert_eq!(plan["permissions"]["contents"], "read", "checkout of a private repository");
    assert_eq!(plan["permissions"]["pull-requests"], "write", "the comment");
    let steps = serde_yaml::to_string(&plan["jobs"]["plan"]["steps"]).unwrap();
    assert!(steps.contains("helm drift plan") && steps.contains("[ \"$code\" -eq 2 ]"), "{steps}");
    let gate: serde_yaml::Value = serde_yaml::from_str(&read("github-gate.yml")).unwrap();
    assert_eq!(gate["permissions"]["contents"], "read", "checkout of a private repository");
    let steps = serde_yaml::to_string(&gate["jobs"]["drift"]["steps"]).unwrap();
    assert!(steps.contains("helm drift check -A -o markdown") && steps.contains("gh pr comment"), "{steps}");
    let check: serde_yaml::Value = serde_yaml::from_str(&read("github-check.yml")).unwrap();
    assert!(check["on"]["schedule"][0]["cron"].is_string());
    assert!(serde_yaml::to_string(&check["jobs"]).unwrap().contains("helm drift check -A"));

    let gitlab: serde_yaml::Value = serde_yaml::from_str(&read("gitlab-ci.yml")).unwrap();
    let job = |name: &str| {
        (
            serde_yaml::to_string(&gitlab[name]["rules"]).unwrap(),
            serde_yaml::to_string(&gitlab[name]["script"]).unwrap(),
        )
    };
    let (rules, script) = job("drift-plan");
    assert!(
        rules.contains("merge_request_event") && script.contains("helm drift plan") && script.contains("[ $? -eq 2 ]"),
        "{rules}{script}"
    );
    let (rules, script) = job("drift-check");
    assert!(rules.contains("schedule") && script.contains("helm drift check -A"), "{rules}{script}");
    assert!(gitlab["drift-plan"]["artifacts"]["reports"]["junit"].is_string());
    // Each follows the page (issue 93): the plan's writing identity only in a protected
    // environment, and never for a check; a fork's pull request skipped, not failed.
    let fork_guard = "github.event.pull_request.head.repo.full_name == github.repository";
    assert_eq!(plan["jobs"]["plan"]["environment"], "helm-drift-plan");
    assert_eq!(plan["jobs"]["plan"]["if"], fork_guard);
    assert_eq!(gate["jobs"]["drift"]["if"], fork_guard);
    let secrets = |doc: &serde_yaml::Value| {
        let text = serde_yaml::to_string(doc).unwrap();
        text.match_indices("secrets.")
            .map(|(at, _)| text[at..].split([' ', '}']).next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(secrets(&plan), ["secrets.KUBECONFIG_PLAN"]);
    assert_eq!(secrets(&gate), ["secrets.KUBECONFIG_READ_ONLY"]);
    assert_eq!(secrets(&check), ["secrets.KUBECONFIG_READ_ONLY"]);
    assert_eq!(gitlab["drift-plan"]["variables"]["KUBECONFIG"], "$PLAN_KUBECONFIG");
    assert_eq!(gitlab["drift-plan"]["environment"]["name"], "helm-drift-plan");
    assert_eq!(gitlab["drift-check"]["variables"]["KUBECONFIG"], "$CHECK_KUBECONFIG");
    // The read identity names the chart's read kinds, one by one, reading only.
    let reader: serde_yaml::Value =
        serde_yaml::from_str(read("check-reader.yaml").split("\n---\n").next().unwrap()).unwrap();
    let values: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(root.join("charts/helm-drift/values.yaml")).unwrap()).unwrap();
    let kinds = |rules: &serde_yaml::Value| {
        let mut out: Vec<String> = rules
            .as_sequence()
            .unwrap()
            .iter()
            .flat_map(|r| {
                let groups = r["apiGroups"].as_sequence().unwrap().clone();
                let resources = r["resources"].as_sequence().unwrap().clone();
                groups.into_iter().flat_map(move |g| {
                    resources
                        .clone()
                        .into_iter()
                        .map(move |x| format!("{}/{}", g.as_str().unwrap(), x.as_str().unwrap()))
                })
            })
            .collect();
        out.sort();
        out
    };
    assert_eq!(
        kinds(&reader["rules"]),
        kinds(&values["rbac"]["readRules"]),
        "check-reader.yaml reads the chart's kinds"
    );
    for rule in reader["rules"].as_sequence().unwrap() {
        assert_eq!(serde_yaml::to_string(&rule["verbs"]).unwrap().trim(), "- get\n- list", "{rule:?}");
    }
    // The flags the recipes give exist (the binary parses them).
    for line in [read("github-plan.yml"), read("github-check.yml"), read("github-gate.yml"), read("gitlab-ci.yml")]
        .concat()
        .lines()
    {
        if let Some(at) = line.find("helm drift ") {
            let words: Vec<&str> = line[at + "helm drift ".len()..]
                .split_whitespace()
                .take_while(|w| !w.starts_with('>') && *w != "\\" && *w != "||")
                .collect();
            let parsed = run(Command::new(env!("CARGO_BIN_EXE_helm-drift")).args(&words).arg("--help"));
            assert!(parsed.status.success(), "{line}: {}", text(&parsed));
        }
    }
}

/// Where `.github/workflows/book.yml` publishes the book (the repository's Pages site).
const BOOK_URL: &str = "https://helm-drift.github.io/helm-drift/";

#[test]
fn workflows_pass_actionlint_and_build_what_a_release_needs() {
    let root = repo_root();
    let workflows = ["ci.yml", "release.yml", "book.yml"].map(|w| root.join(".github/workflows").join(w));
    let out = run(Command::new(actionlint()).args(&workflows).current_dir(&root));
    assert!(out.status.success(), "actionlint:\n{}", text(&out));

    let ci = std::fs::read_to_string(&workflows[0]).unwrap();
    assert!(ci.contains("run: scripts/test.sh"), "CI runs the README's test command");
    // The book the README links is built from docs/ with the pinned mdBook and published.
    let book = std::fs::read_to_string(&workflows[2]).unwrap();
    assert!(book.contains("scripts/tools.sh --mdbook") && book.contains("actions/deploy-pages"), "{book}");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains(BOOK_URL), "the README links the published book");
    let release: serde_yaml::Value = serde_yaml::from_str(&std::fs::read_to_string(&workflows[1]).unwrap()).unwrap();
    assert_eq!(release["on"]["push"]["tags"][0], "v*");
    let jobs = &release["jobs"];
    let steps = |job: &str| serde_yaml::to_string(&jobs[job]["steps"]).unwrap();
    assert!(steps("version").contains("scripts/version.sh --check \"$GITHUB_REF_NAME\""));
    let targets: Vec<String> = jobs["build"]["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|t| format!("{}-{}", t["os"].as_str().unwrap(), t["arch"].as_str().unwrap()))
        .collect();
    assert_eq!(targets, ["linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64"]);
    let build = steps("build");
    assert!(build.contains("cargo auditable build --release --locked"), "{build}");
    assert!(build.contains("scripts/package.sh --binary target/release/helm-drift"), "{build}");
    let publish = steps("publish");
    assert!(publish.contains("sha256sum helm-drift-*.tgz drift-*.tgz >helm-drift-checksums.txt"), "{publish}");
    assert!(publish.contains("scripts/release-notes.sh"), "{publish}");
    // The Helm 4 package: every platform's binary (the archives' top-level helm-drift), signed
    // by the release key, checked, published with its .prov and the public key, pushed to OCI
    // the way distribution.rs installs it.
    for platform in &targets {
        assert!(publish.contains(platform.as_str()), "the Helm 4 package carries {platform}: {publish}");
    }
    for needed in [
        "secrets.HELM_DRIFT_SIGNING_KEY",
        "secrets.HELM_DRIFT_SIGNING_PASSPHRASE",
        "tar -xzf \"dist/helm-drift-$platform.tgz\" -C \"bins/$platform\" helm-drift",
        "scripts/package-helm4.sh --out dist --key \"$uid\" --keyring \"$RUNNER_TEMP/secring.gpg\"",
        "helm plugin verify \"dist/drift-$VERSION.tgz\" --keyring dist/helm-drift-signing-key.asc",
        "gpg --batch --armor --export >dist/helm-drift-signing-key.asc",
        "scripts/push-plugin.sh \"dist/drift-$VERSION.tgz\" \"ghcr.io/$OWNER/helm-plugins/drift:$VERSION\"",
    ] {
        assert!(publish.contains(needed), "the publish job lacks {needed}");
    }
    let versions = std::fs::read_to_string(root.join("scripts/versions.env")).unwrap();
    let helm4 = versions.lines().find_map(|l| l.strip_prefix("HELM4_VERSION=")).unwrap();
    let setup_helm = jobs["publish"]["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("azure/setup-helm@")))
        .expect("the publish job sets up Helm");
    assert_eq!(setup_helm["with"]["version"].as_str(), Some(helm4), "the Helm 4 the tests sign with");
    let image = steps("image");
    assert!(image.contains("linux/amd64,linux/arm64") && image.contains("needs.version.outputs.version"), "{image}");
    let chart = steps("chart");
    assert!(
        chart.contains("--version \"$VERSION\" --app-version \"$VERSION\"") && chart.contains("helm push"),
        "{chart}"
    );
    // The archive names are the ones install-binary.sh downloads.
    let installer = std::fs::read_to_string(root.join("install-binary.sh")).unwrap();
    assert!(installer.contains("helm-drift-checksums.txt"));
    assert!(
        installer.contains("name=\"helm-drift-$(platform).tgz\""),
        "install-binary.sh names the archives as the workflow does"
    );
    for os in ["linux | darwin", "x86_64 | amd64) arch=amd64", "aarch64 | arm64) arch=arm64"] {
        assert!(installer.contains(os), "install-binary.sh maps {os}");
    }
}

/// A copy of the files that carry the version, for scripts/version.sh to check or rewrite.
fn version_files(dir: &Path) {
    let root = repo_root();
    for f in [
        "Cargo.toml",
        "Cargo.lock",
        "plugin.yaml",
        "packaging/helm4/plugin.yaml",
        "CHANGELOG.md",
        "charts/helm-drift/Chart.yaml",
    ] {
        let to = dir.join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(f), to).unwrap();
    }
}

fn version_script(root: &Path, args: &[&str]) -> Output {
    run(Command::new("bash").arg(repo_root().join("scripts/version.sh")).args(args).env("HELM_DRIFT_ROOT", root))
}

#[test]
fn one_version_everywhere_and_the_tag() {
    let root = repo_root();
    let ok = version_script(&root, &["--check", &format!("v{VERSION}")]);
    assert!(ok.status.success(), "{}", text(&ok));
    assert_eq!(String::from_utf8_lossy(&version_script(&root, &[]).stdout).trim(), VERSION);
    let tag = version_script(&root, &["--check", "v99.0.0"]);
    assert_eq!(tag.status.code(), Some(1));
    assert!(text(&tag).contains(&format!("tag v99.0.0 does not match version {VERSION}")), "{}", text(&tag));

    let copy = tempfile::tempdir().unwrap();
    version_files(copy.path());
    let plugin = copy.path().join("plugin.yaml");
    let edited =
        std::fs::read_to_string(&plugin).unwrap().replace(&format!("version: \"{VERSION}\""), "version: \"0.0.9\"");
    std::fs::write(&plugin, edited).unwrap();
    let bad = version_script(copy.path(), &["--check"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad).contains("plugin.yaml: version is \"0.0.9\""), "{}", text(&bad));

    // --set writes every place; the changelog section is the one thing left to write by hand.
    let set = version_script(copy.path(), &["--set", "1.2.3"]);
    assert!(set.status.success(), "{}", text(&set));
    let v1 = std::fs::read_to_string(copy.path().join("packaging/helm4/plugin.yaml")).unwrap();
    assert!(v1.contains("\nversion: \"1.2.3\"\n"), "Helm 4's plugin.yaml too:\n{v1}");
    let missing = version_script(copy.path(), &["--check", "v1.2.3"]);
    assert_eq!(text(&missing).trim(), "CHANGELOG.md: no \"## [1.2.3]\" section");
    let changelog = copy.path().join("CHANGELOG.md");
    let notes = std::fs::read_to_string(&changelog)
        .unwrap()
        .replace("## [Unreleased]\n", "## [Unreleased]\n\n## [1.2.3] - 2027-01-01\n\n### Fixed\n\n- Something.\n");
    std::fs::write(&changelog, notes).unwrap();
    let good = version_script(copy.path(), &["--check", "v1.2.3"]);
    assert!(good.status.success(), "{}", text(&good));
}

#[test]
fn release_notes_come_from_the_changelog() {
    let script = repo_root().join("scripts/release-notes.sh");
    let out = run(Command::new("bash").arg(&script).arg(format!("v{VERSION}")));
    assert!(out.status.success(), "{}", text(&out));
    let notes = String::from_utf8_lossy(&out.stdout);
    assert!(notes.starts_with("### Added"), "{notes}");
    assert!(!notes.contains("## ["), "only this version's section: {notes}");
    let none = run(Command::new("bash").arg(&script).arg("0.0.0"));
    assert_eq!(none.status.code(), Some(1));
    assert!(text(&none).contains("CHANGELOG.md has no notes for version 0.0.0"));
}

/// `cargo package` passes offline and the package holds what a build needs only. (Tests reach
/// nothing beyond this machine: `cargo publish --dry-run`, which asks crates.io, runs in the
/// release workflow and was run by hand; the full verification build of `cargo package` too.)
#[test]
fn the_crate_packages_for_crates_io() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = tempfile::tempdir().unwrap();
    let list = run(Command::new(&cargo)
        .args(["package", "--list", "--locked", "--allow-dirty", "--offline"])
        .current_dir(repo_root()));
    assert!(list.status.success(), "{}", text(&list));
    let files = String::from_utf8_lossy(&list.stdout);
    for f in ["src/main.rs", "build.rs", "Cargo.lock", "LICENSE", "README.md", "CHANGELOG.md"] {
        assert!(files.lines().any(|l| l == f), "{f} packaged:\n{files}");
    }
    assert!(!files.lines().any(|l| l.starts_with("tests/") || l.starts_with("charts/")), "{files}");
    let package = run(Command::new(&cargo)
        .args(["package", "--no-verify", "--locked", "--allow-dirty", "--offline", "--target-dir"])
        .arg(target.path())
        .current_dir(repo_root()));
    assert!(package.status.success(), "{}", text(&package));
    let crate_file = target.path().join(format!("package/helm-drift-{VERSION}.crate"));
    assert!(crate_file.is_file(), "{}", text(&package));
}

/// The image cannot be built here (no container engine): what its build stage copies is checked
/// instead. The copied tree is a complete workspace holding every file of the crate's package,
/// and the image runs as non-root on a static base.
#[test]
fn the_dockerfile_copies_what_the_build_needs() {
    let root = repo_root();
    let dockerfile = std::fs::read_to_string(root.join("Dockerfile")).unwrap();
    let context = tempfile::tempdir().unwrap();
    for line in dockerfile.lines().filter(|l| l.starts_with("COPY ") && !l.contains("--from")) {
        let words: Vec<&str> = line.split_whitespace().skip(1).collect();
        let (sources, dest) = words.split_at(words.len() - 1);
        for src in sources {
            let to = if dest[0].ends_with('/') || dest[0] == "." {
                context.path().join(src)
            } else {
                context.path().join(dest[0])
            };
            let out = run(Command::new("cp").arg("-r").arg(root.join(src)).arg(&to));
            assert!(out.status.success(), "{line}: {}", text(&out));
        }
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let meta = run(Command::new(&cargo)
        .args(["metadata", "--locked", "--offline", "--format-version", "1", "--no-deps"])
        .current_dir(context.path()));
    assert!(meta.status.success(), "the copied workspace: {}", text(&meta));
    let list = run(Command::new(&cargo)
        .args(["package", "--list", "--locked", "--allow-dirty", "--offline"])
        .current_dir(&root));
    assert!(list.status.success(), "{}", text(&list));
    let sources: Vec<String> = String::from_utf8_lossy(&list.stdout)
        .lines()
        .filter(|f| f.starts_with("src/") || *f == "build.rs")
        .map(str::to_string)
        .collect();
    assert!(sources.len() > 20, "the package lists the sources: {sources:?}");
    for f in &sources {
        assert!(context.path().join(f).is_file(), "the image build lacks {f}");
    }
    assert!(dockerfile.contains("FROM gcr.io/distroless/static-debian12:nonroot"));
    assert!(dockerfile.contains("USER 65532:65532"));
    assert!(dockerfile.contains("ARG HELM_DRIFT_COMMIT"));
}

/// `tests/CLAIMS.md` names, for every section of the README and the book, its claims and the
/// tests that guard them: a new section needs a row, and every test a row names exists.
#[test]
fn every_readme_section_has_a_guarded_claim() {
    let root = repo_root();
    let claims = std::fs::read_to_string(root.join("tests/CLAIMS.md")).unwrap();
    let rows: Vec<Vec<&str>> = claims
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Section") && !l.starts_with("|---"))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
        .collect();
    let mut missing = Vec::new();
    for (page, text) in documents(&root) {
        for (line, in_code) in fenced(&text) {
            let heading = line.trim_start_matches('#');
            // The README's title is the project's name, not a section.
            let title = page == "README.md" && line.starts_with("# ");
            if in_code || title || heading.len() == line.len() || !heading.starts_with(' ') {
                continue;
            }
            let heading = heading.trim();
            if !rows.iter().any(|r| r[0] == heading) {
                missing.push(format!("{page}: {heading}"));
            }
        }
    }
    assert!(missing.is_empty(), "sections of the README and the book without a row in tests/CLAIMS.md: {missing:#?}");
    let mut unknown = Vec::new();
    for row in &rows {
        assert_eq!(row.len(), 3, "a row is | section | claim | tests |: {row:?}");
        for test in row[2].split(", ").map(|t| t.trim_matches('`')) {
            let (file, name) = test.rsplit_once("::").unwrap_or_else(|| panic!("not file::test: {test}"));
            let path = if file.starts_with("src/") {
                root.join(file)
            } else {
                root.join(format!("tests/integration/{file}.rs"))
            };
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if !text.contains(&format!("fn {name}(")) {
                unknown.push(test.to_string());
            }
        }
    }
    assert!(unknown.is_empty(), "tests/CLAIMS.md names tests that do not exist: {unknown:?}");
}

/// The README is what a platform engineer reads first: at most 200 lines, the demo and the test
/// suite first, no line over 200 characters; the rest is the book's.
#[test]
fn the_readme_is_short_and_starts_with_the_two_commands() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    assert!(readme.lines().count() <= 200, "README.md has {} lines", readme.lines().count());
    let long: Vec<&str> = readme.lines().filter(|l| l.chars().count() > 200).collect();
    assert!(long.is_empty(), "lines over 200 characters: {long:#?}");
    let first = readme.find("```sh\n").expect("a first code block");
    let block = &readme[first..];
    assert!(block.starts_with("```sh\nscripts/demo.sh ") && block.contains("\nscripts/test.sh "), "{block:.200}");
}

/// The CHANGELOG is in Keep a Changelog's shape: one section of each kind per release, in its
/// order (Added, Changed, Deprecated, Removed, Fixed, Security).
#[test]
fn the_changelog_has_one_section_of_each_kind_per_release() {
    let text = std::fs::read_to_string(repo_root().join("CHANGELOG.md")).unwrap();
    let order = ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"];
    for release in text.split("\n## ").skip(1) {
        let title = release.lines().next().unwrap_or_default();
        let kinds: Vec<usize> = release
            .lines()
            .filter_map(|l| l.strip_prefix("### "))
            .map(|k| order.iter().position(|o| *o == k).unwrap_or_else(|| panic!("{title}: unknown section {k}")))
            .collect();
        assert!(kinds.windows(2).all(|w| w[0] < w[1]), "{title}: sections repeated or out of order: {kinds:?}");
    }
}

/// Every relative link of the README and the book names a file that exists (the book's own
/// build refuses a page SUMMARY.md names that does not).
#[test]
fn every_link_in_the_readme_and_the_book_resolves() {
    let root = repo_root();
    let mut pages = documents(&root);
    pages.push(("docs/src/SUMMARY.md".into(), std::fs::read_to_string(root.join("docs/src/SUMMARY.md")).unwrap()));
    for entry in std::fs::read_dir(root.join("docs/src/reference")).unwrap().flatten() {
        let name = entry.path().strip_prefix(&root).unwrap().display().to_string();
        pages.push((name, std::fs::read_to_string(entry.path()).unwrap()));
    }
    let mut broken = Vec::new();
    for (page, text) in &pages {
        let dir = root.join(page).parent().unwrap().to_path_buf();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            if !dir.join(target).exists() {
                broken.push(format!("{page}: {target}"));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:#?}");
}

/// The tour is a run of the demo, as `scripts/tour.sh` writes it: its sections are the demo's
/// (each `say` from the plugin's install on, Helm 4's), in the demo's order.
#[test]
fn the_tour_is_a_run_of_the_demo() {
    let root = repo_root();
    let demo = std::fs::read_to_string(root.join("scripts/demo.sh")).unwrap();
    let says: Vec<&str> = demo
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("say \"")?.strip_suffix('"'))
        .skip_while(|t| !t.starts_with("Installing the plugin the way Helm 4"))
        .filter(|t| !t.contains("$("))
        .collect();
    let tour = std::fs::read_to_string(root.join("docs/src/tour.md")).unwrap();
    let titles: Vec<&str> = fenced(&tour)
        .into_iter()
        .filter(|(_, in_code)| !in_code)
        .filter_map(|(line, _)| line.strip_prefix("**")?.strip_suffix("**"))
        .collect();
    assert_eq!(titles, says, "docs/src/tour.md is not a run of scripts/demo.sh: run scripts/tour.sh");
    assert!(tour.contains("`scripts/tour.sh` writes it"), "the tour says how it is written");
}

/// Each line of a Markdown page, and whether it is in a fenced code block (fences included): as
/// CommonMark reads it, a block closes at a fence at least as long as its own with nothing after
/// it, so a block of 4 backticks can show one of 3.
fn fenced(text: &str) -> Vec<(&str, bool)> {
    let mut fence = None::<usize>;
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
            match fence {
                Some(open) if ticks >= open && trimmed[ticks..].trim().is_empty() => fence = None,
                Some(_) => {}
                None if ticks >= 3 => fence = Some(ticks),
                None => return (line, false),
            }
            (line, true)
        })
        .collect()
}

/// A code block of the README or the book holds no line that would open a block of its own (a
/// Markdown report with its fences shown): such a block needs a longer fence than any inside it,
/// or the page shows the rest of it as prose.
#[test]
fn no_code_block_holds_a_fence_as_long_as_its_own() {
    let mut nested = Vec::new();
    for (page, text) in documents(&repo_root()) {
        let mut fence = None::<usize>;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            let ticks = line.len() - line.trim_start_matches('`').len();
            match fence {
                Some(open) if ticks >= open && line[ticks..].trim().is_empty() => fence = None,
                Some(open) if ticks >= open => nested.push(format!("{page}:{}: {line}", n + 1)),
                Some(_) => {}
                None if ticks >= 3 => fence = Some(ticks),
                None => {}
            }
        }
    }
    assert!(nested.is_empty(), "fences inside code blocks of their own length: {nested:#?}");
}

/// The README and every page of the book but the reference (generated from the code, and held
/// to it by `cli::reference`), by path.
pub fn documents(root: &std::path::Path) -> Vec<(String, String)> {
    let mut out = vec![("README.md".to_string(), std::fs::read_to_string(root.join("README.md")).unwrap())];
    let mut dirs = vec![root.join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with("reference") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") && !path.ends_with("SUMMARY.md") {
                let name = path.strip_prefix(root).unwrap().display().to_string();
                out.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// `cargo binstall helm-drift` takes the release archive of each platform the workflow builds:
/// the metadata names the archives `scripts/package.sh` makes, and its `bin-dir` is where the
/// binary is in them (at the top, no directory: Helm 3 reinstalls need that too).
#[test]
fn cargo_binstall_takes_the_release_archives() {
    let root = repo_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = run(Command::new(cargo)
        .args(["metadata", "--offline", "--no-deps", "--format-version", "1", "--manifest-path"])
        .arg(root.join("Cargo.toml")));
    assert!(out.status.success(), "cargo metadata:\n{}", text(&out));
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let package = metadata["packages"].as_array().unwrap().iter().find(|p| p["name"] == "helm-drift").unwrap();
    let binstall = &package["metadata"]["binstall"];
    assert_eq!(binstall["pkg-fmt"], "tgz");
    assert_eq!(binstall["bin-dir"], "{ bin }{ binary-ext }");
    let targets = [
        ("x86_64-unknown-linux-gnu", "linux-amd64"),
        ("aarch64-unknown-linux-gnu", "linux-arm64"),
        ("x86_64-apple-darwin", "darwin-amd64"),
        ("aarch64-apple-darwin", "darwin-arm64"),
    ];
    assert_eq!(binstall["overrides"].as_object().unwrap().len(), targets.len());
    for (triple, platform) in targets {
        let url = format!("{{ repo }}/releases/download/v{{ version }}/helm-drift-{platform}.tgz");
        assert_eq!(binstall["overrides"][triple]["pkg-url"], url.as_str(), "{triple}");
    }
    let dist = tempfile::tempdir().unwrap();
    let packaged = run(Command::new("bash")
        .arg(root.join("scripts/package.sh"))
        .arg("--binary")
        .arg(crate::support::packaged_binary())
        .arg("--out")
        .arg(dist.path()));
    assert!(packaged.status.success(), "scripts/package.sh:\n{}", text(&packaged));
    let archive = String::from_utf8_lossy(&packaged.stdout).trim().to_string();
    let listing = run(Command::new("tar").args(["-tzf", &archive]));
    let entries: Vec<String> = String::from_utf8_lossy(&listing.stdout).lines().map(String::from).collect();
    assert!(entries.iter().any(|e| e == "helm-drift"), "{entries:?}");
    assert!(entries.iter().all(|e| !e.contains('/')), "no directory in the archive: {entries:?}");
}

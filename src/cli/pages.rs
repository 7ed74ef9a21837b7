//! Generated parts of the book's pages (test-only, with `reference`): the exit codes tables,
//! the environment variables page and a page's marked part.

use clap::Command;

/// A command's exit codes as a table.
pub(super) fn exit_table(codes: &[(u8, &str)]) -> String {
    let mut out = String::from("| code | meaning |\n|---|---|\n");
    for (code, meaning) in codes {
        out.push_str(&format!("| {code} | {meaning} |\n"));
    }
    out
}

/// Every command's exit codes, for the exit codes page.
pub(super) fn every_exit_code() -> String {
    let mut out = String::from("| command | code | meaning |\n|---|---|---|\n");
    for (command, codes) in super::help::EXITS {
        for (code, meaning) in *codes {
            out.push_str(&format!("| `{command}` | {code} | {meaning} |\n"));
        }
    }
    out
}

/// A page whose part between `<!-- NAME: ... -->` and `<!-- /NAME -->` is `text`.
pub(super) fn marked(page: &str, name: &str, text: &str) -> String {
    let page = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(page)).unwrap();
    let (start, end) = (page.find(&format!("<!-- {name}:")).unwrap(), page.find(&format!("<!-- /{name} -->")).unwrap());
    let marker = &page[start..start + page[start..].find('\n').unwrap() + 1];
    format!("{}{marker}{text}{}", &page[..start], &page[end..])
}

/// Helm's plugin environment, which every command reads (flags override it).
pub(super) const HELM_ENV: &[(&str, &str)] = &[
    ("HELM_NAMESPACE", "the namespace (`-n`)"),
    ("HELM_KUBECONTEXT", "the kubeconfig context (`--kube-context`)"),
    ("KUBECONFIG", "the kubeconfig files (`--kubeconfig`)"),
    ("HELM_DRIVER", "Helm's storage driver: secrets (the default), configmaps or sql"),
    ("HELM_DRIVER_SQL_CONNECTION_STRING", "the SQL driver's connection string"),
    ("HELM_BIN", "the helm binary helm-drift runs (`plan`, `--rerender`, `--explain`, `repair --upgrade`)"),
    (
        "HELM_DRIFT_KUSTOMIZE",
        "the Kustomize (a `kustomize` or a `kubectl`) `plan --helmrelease` runs a HelmRelease's `postRenderers` with; default: `kustomize`, else `kubectl`, on `PATH`",
    ),
    ("HELM_DEBUG", "`--debug`: where the run looked and what it found, on stderr"),
    ("NO_COLOR", "no colours (as `--color never`)"),
];

/// What else the process reads from its environment (not a flag's).
const OTHER_ENV: &[(&str, &str)] = &[
    ("HELM_KUBEINSECURE_SKIP_TLS_VERIFY", "`--kube-insecure-skip-tls-verify` (Helm's)"),
    ("CLICOLOR_FORCE", "colours even when stdout is not a terminal (unless `NO_COLOR` or `--color never`)"),
    ("HELM_PLUGIN_DIR", "set by Helm when it runs the plugin: `watch` then leaves SIGINT to Helm"),
    ("KUBERNETES_SERVICE_HOST", "set in a pod: without a kubeconfig, the pod's service account is used"),
    ("POD_NAME", "`watch`: this replica's name in its Lease (else `HOSTNAME`)"),
    ("HOSTNAME", "`watch`: this replica's name in its Lease when `POD_NAME` is not set"),
    ("HOME", "the SQL driver's default CA file, `~/.postgresql/root.crt` (as libpq)"),
];

/// The environment variables page: every variable a flag reads (from the CLI's definition:
/// which flag, which commands), then Helm's and the rest.
pub(super) fn environment(cli: &Command) -> String {
    let mut flags: std::collections::BTreeMap<String, (String, Vec<String>)> = Default::default();
    let mut add = |cmd: &str, a: &clap::Arg| {
        let Some(var) = a.get_env().map(|v| v.to_string_lossy().to_string()) else { return };
        let entry = flags.entry(var).or_insert_with(|| (format!("--{}", a.get_long().unwrap_or_default()), Vec::new()));
        if !entry.1.contains(&cmd.to_string()) {
            entry.1.push(cmd.to_string());
        }
    };
    for a in cli.get_arguments() {
        add("every command", a);
    }
    for sub in cli.get_subcommands() {
        for a in sub.get_arguments().filter(|a| !a.is_global_set()) {
            add(sub.get_name(), a);
        }
    }
    let mut out = String::from(
        "# Environment variables\n\nEvery variable helm-drift reads. A flag given on the command line wins over its \
         variable. Generated from the CLI and checked against the code (`HELM_DRIFT_WRITE_DOCS=1 cargo test --lib \
         reference`).\n\n## Variables of flags\n\n| variable | flag | commands |\n|---|---|---|\n",
    );
    for (var, (flag, commands)) in &flags {
        out.push_str(&format!("| `{var}` | `{flag}` | {} |\n", commands.join(", ")));
    }
    out.push_str("\n## Helm's plugin environment and the rest\n\n| variable | what it sets |\n|---|---|\n");
    for (var, what) in HELM_ENV.iter().chain(OTHER_ENV).filter(|(v, _)| !flags.contains_key(*v)) {
        out.push_str(&format!("| `{var}` | {what} |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    /// The user pages of the book (every page but the generated reference and the contributors'),
    /// by path from the book's root.
    fn user_pages() -> Vec<(String, String)> {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src");
        let mut out = Vec::new();
        for dir in ["", "commands", "concepts"] {
            for entry in std::fs::read_dir(src.join(dir)).unwrap().flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "md") {
                    let name = path.strip_prefix(&src).unwrap().display().to_string();
                    out.push((name, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        out
    }

    /// The `--flags` a text names.
    fn flags(text: &str) -> std::collections::BTreeSet<String> {
        let mut out = std::collections::BTreeSet::new();
        for (i, _) in text.match_indices("--") {
            let name: String = text[i + 2..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
                .collect();
            let before = text[..i].chars().next_back();
            if name.len() > 1
                && name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && before.is_none_or(|c| !c.is_alphanumeric() && c != '-')
            {
                out.insert(name.trim_end_matches('-').to_string());
            }
        }
        out
    }

    /// Issue 85: the book describes the version its install lines install. A flag first named in
    /// the changelog's `Unreleased` section (in no released section) is not in that version, so
    /// where the book names it, the line says `(unreleased)`; cutting a release (which empties
    /// `Unreleased`) lifts that.
    #[test]
    fn the_book_marks_what_the_version_it_installs_lacks() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let changelog = std::fs::read_to_string(root.join("CHANGELOG.md")).unwrap();
        let start = changelog.find("## [Unreleased]").expect("an Unreleased section");
        let end = changelog[start + 3..].find("\n## [").map_or(changelog.len(), |e| start + 3 + e);
        let released = flags(&changelog[end..]);
        let new: Vec<String> = flags(&changelog[start..end]).into_iter().filter(|f| !released.contains(f)).collect();
        let mut unmarked = Vec::new();
        for (name, text) in user_pages()
            .iter()
            .chain(&[("README.md".to_string(), std::fs::read_to_string(root.join("README.md")).unwrap())])
        {
            for line in text.lines().filter(|l| !l.contains("(unreleased)")) {
                let named = flags(line);
                unmarked.extend(new.iter().filter(|f| named.contains(*f)).map(|f| format!("{name}: --{f}")));
            }
        }
        assert!(
            unmarked.is_empty(),
            "flags not in the version the install lines pin, named without (unreleased): {unmarked:?}"
        );
    }

    /// Issue 85: no wall of text in the user pages. Each paragraph or list item (tables and code
    /// aside) stays under 250 words; past that, it becomes sections, a list or a table.
    #[test]
    fn no_paragraph_of_the_book_is_a_wall() {
        const MOST: usize = 250;
        let mut walls = Vec::new();
        for (name, text) in user_pages() {
            let mut in_code = false;
            let mut words = 0;
            for line in text.lines().chain([""]) {
                if line.trim_start().starts_with("```") {
                    in_code = !in_code;
                }
                let item = line.trim_start().starts_with("- ")
                    || line.split_once(". ").is_some_and(|(n, _)| n.parse::<u32>().is_ok());
                if in_code || line.trim().is_empty() || line.starts_with('|') || line.starts_with('#') || item {
                    if words > MOST {
                        walls.push(format!("{name}: a paragraph of {words} words before {line:?}"));
                    }
                    words = 0;
                }
                if !in_code && !line.starts_with('|') {
                    words += line.split_whitespace().count();
                }
            }
        }
        assert!(walls.is_empty(), "walls of text (make them sections, lists or tables): {walls:#?}");
    }

    /// Issue 85: the glossary defines the book's words, every page that uses them links it, and
    /// no user page (nor the README or the changelog) speaks in the code's private phrases.
    #[test]
    fn the_book_speaks_plainly_and_links_its_glossary() {
        let pages = user_pages();
        let glossary = &pages.iter().find(|(n, _)| n == "glossary.md").expect("docs/src/glossary.md").1;
        let words = ["release", "revision", "record", "writer", "field manager", "engine: exact and read-only"];
        let more = ["baseline", "pause", "repair window", "fleet member", "inventory", "trusted namespace"];
        let defined: Vec<&str> = glossary.split("**").skip(1).step_by(2).collect();
        for word in words.iter().chain(&more) {
            assert!(defined.iter().any(|d| d.contains(word)), "the glossary defines {word}");
        }
        let uses = |text: &str| ["record", "writer", "engine", "baseline", "fleet"].iter().any(|w| text.contains(w));
        for (name, text) in pages.iter().filter(|(n, _)| n != "glossary.md" && n != "SUMMARY.md") {
            assert!(!uses(text) || text.contains("glossary.md"), "{name} uses the glossary's words without linking it");
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let others =
            ["README.md", "CHANGELOG.md"].map(|f| (f.to_string(), std::fs::read_to_string(root.join(f)).unwrap()));
        let private = [
            "on its word",
            "record's word",
            "writer's word",
            "HelmRelease's word",
            "operator's word",
            "editors' word",
            "borrow someone",
            "rooms of their own",
            "lends the namespace",
            "speaks only for",
            "speaks for",
        ];
        for (name, text) in pages.iter().chain(&others) {
            for phrase in private {
                assert!(!text.contains(phrase), "{name} says {phrase:?}: say it plainly");
            }
        }
    }

    /// The migration page does not promise more than `plan` does (issue 85): Helm 3's releases
    /// are not applied server-side, and `plan`'s dry-runs need write rights.
    #[test]
    fn the_migration_page_says_what_plan_needs_and_how_it_applies() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let page = std::fs::read_to_string(root.join("docs/src/migrating.md")).unwrap();
        assert!(!page.contains("always three-way, server-side"));
        for said in ["Helm 3's three-way merge patch", "`plan` needs the rights an upgrade needs"] {
            assert!(page.contains(said), "{said}");
        }
    }

    /// The Cluster API page states the limits a fleet meets (issue 85): the chart's
    /// `clusters.max` and the command line's `--clusters-max`, as the chart and the code set them.
    #[test]
    fn the_cluster_api_page_states_both_limits_on_clusters() {
        use clap::CommandFactory;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let values: serde_json::Value =
            serde_yaml::from_str(&std::fs::read_to_string(root.join("charts/helm-drift/values.yaml")).unwrap())
                .unwrap();
        let chart = values["clusters"]["max"].as_u64().unwrap();
        let cli = crate::cli::Cli::command();
        let watch = cli.find_subcommand("watch").unwrap();
        let flag = watch.get_arguments().find(|a| a.get_id() == "clusters_max").unwrap();
        let default = flag.get_default_values()[0].to_string_lossy().to_string();
        let page = std::fs::read_to_string(root.join("docs/src/cluster-api.md")).unwrap();
        let page = page.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(chart.to_string(), default, "the chart's clusters.max is the command line's default");
        let said = format!("({chart} by default, as the command line's `--clusters-max`)");
        assert!(page.contains(&said), "the chart's {chart}");
        for said in ["A kubeconfig that runs a command is refused", "`awsAuthConfig`", "`execProviderConfig`"] {
            assert!(page.contains(said), "{said}");
        }
    }

    /// Every variable the code reads is on the environment page: `env::var("X")`, `var_os("X")` and
    /// the `*_ENV` constants of the code outside tests (the tests' own `HELM_DRIFT_WRITE_*` and
    /// `PATH` left out).
    #[test]
    fn every_variable_the_code_reads_is_on_the_environment_page() {
        let page = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/reference/environment.md"),
        )
        .unwrap();
        let mut missing = Vec::new();
        for source in crate::layering::sources() {
            for (at, _) in source
                .code
                .match_indices("var(\"")
                .chain(source.code.match_indices("var_os(\""))
                .chain(source.code.match_indices("_ENV: &str = \""))
            {
                let rest = &source.code[at..];
                let name: String = rest[rest.find('"').unwrap() + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect();
                if !name.is_empty()
                    && name != "PATH"
                    && !name.starts_with("HELM_DRIFT_WRITE_")
                    && !page.contains(&format!("`{name}`"))
                {
                    missing.push(format!("{}: {name}", source.file.display()));
                }
            }
        }
        crate::layering::none(missing, "variables the code reads that the environment page does not list");
    }
}

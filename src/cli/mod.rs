//! The command line: clap definitions ([`args`]), turned once per command into complete
//! [`Settings`] ([`resolve`]); [`run`] has one function per command; `main` maps the outcome to
//! an exit code.

mod args;
mod complete;
mod flags;
mod help;
mod resolve;
mod run;

use args::{Cli, ColorChoice, Command, CompareArgs, OutputArgs, OutputFormat};
use complete::complete;

use crate::model::{ExitStatus, RunReport};
use crate::report::{Format, Style, Terminal};
use crate::settings::Settings;
use crate::watch;
use anyhow::Result;
use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;

/// Parses the command line, runs it and returns the process exit code (0, 1 or 2).
pub fn main() -> ExitCode {
    watch::note_parent();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            let mut printer = Terminal::terminal(Style::default());
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    printer.text(&text);
                    ExitStatus::InSync.into()
                }
                _ => {
                    printer.usage(&text);
                    ExitStatus::Error.into()
                }
            };
        }
    };
    let now = Some(k8s_openapi::jiff::Timestamp::now());
    let mut printer = Terminal::terminal(Style { color: use_color(cli.global.color), now, ..Style::default() });
    match run(cli, &mut printer) {
        Ok(status) => status.into(),
        Err(e) => {
            printer.error(&e);
            ExitStatus::Error.into()
        }
    }
}

fn run(cli: Cli, printer: &mut Terminal) -> Result<ExitStatus> {
    let g = &cli.global;
    match cli.command {
        Command::Version => {
            printer.text(&format!("{}\n", version_line()));
            Ok(ExitStatus::InSync)
        }
        Command::Complete { words } => {
            let lines = runtime()?.block_on(complete(&resolve::settings(g)?, &words));
            printer.text(&lines);
            Ok(ExitStatus::InSync)
        }
        Command::Check(a) => run::check(g, a, printer),
        Command::Repair(a) => run::repair(g, a, printer),
        Command::Render(a) => run::render(g, a, printer),
        Command::Accept(a) => run::accept(g, a, printer),
        Command::Watch(a) => run::watch(g, a, printer),
        Command::Guard(a) => run::guard(g, a, printer),
    }
}

/// `helm-drift VERSION (commit C, built DATE)`: the version, the commit it was built from and
/// the build date (see build.rs).
pub fn version_line() -> String {
    format!(
        "helm-drift {} (commit {}, built {})",
        env!("CARGO_PKG_VERSION"),
        env!("HELM_DRIFT_COMMIT"),
        env!("HELM_DRIFT_BUILD_DATE")
    )
}

/// This replica's name in a Lease: the pod's (host) name and the process id.
fn identity() -> String {
    let host = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_string()))
        .unwrap_or_else(|| "helm-drift".into());
    format!("{host}-{}", std::process::id())
}

/// When no Flux HelmRelease or Argo CD Application of the config file describes a release this
/// run checked, each says so: its rules apply to nothing (an Application named unlike its
/// release, without `spec.source.helm.releaseName`, is the common cause).
fn unmatched_gitops(settings: &Settings, run: &RunReport) -> Vec<String> {
    let checked: Vec<&str> = run
        .outcomes
        .iter()
        .filter_map(|o| match o {
            crate::model::Outcome::Checked(r) => Some(r.release.as_str()),
            crate::model::Outcome::Failed(_) => None,
        })
        .collect();
    let docs = &settings.compare.gitops;
    if checked.is_empty() || docs.iter().any(|(_, release)| checked.contains(&release.as_str())) {
        return Vec::new();
    }
    docs.iter()
        .map(|(what, release)| {
            format!("{what} describes release {release:?}, which this run did not check: its rules apply to nothing (name the release in spec.source.helm.releaseName or spec.releaseName)")
        })
        .collect()
}

/// What `--debug` / `HELM_DEBUG` adds on stderr: where the run looked and what it found
/// (never credentials).
fn debug_summary(settings: &Settings, run: &RunReport, took: std::time::Duration) -> String {
    let c = &settings.connection;
    format!(
        "kubeconfig {:?}, context {}, API server {}, auth {}, namespace {}, driver {}; {} release(s), {} object(s) in {:.3}s",
        c.kubeconfig,
        c.context.as_deref().unwrap_or("(current)"),
        c.api_server.as_deref().unwrap_or("(from kubeconfig)"),
        if c.token.is_some() { "bearer token (hidden)" } else { "kubeconfig user" },
        settings.namespace.as_deref().unwrap_or("(context default)"),
        settings.driver.name(),
        run.outcomes.len(),
        run.objects(),
        took.as_secs_f64()
    )
}

/// The async runtime a command runs on.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build()
}

/// The report style the output and comparison flags ask for (no colour in JSON or JUnit).
fn output_style(style: &mut Style, compare: &CompareArgs, output: &OutputArgs) {
    style.verbose = compare.verbose;
    style.show_secrets = compare.show_secrets;
    style.context = output.context;
    style.quiet = output.quiet;
    style.summary = output.summary;
    style.format = match output.output {
        OutputFormat::Json => Format::Json,
        OutputFormat::Junit => Format::Junit,
        OutputFormat::Text => Format::Text,
        OutputFormat::Markdown => Format::Markdown,
        OutputFormat::Html => Format::Html,
    };
    if style.format != Format::Text {
        style.color = false;
    }
}

/// `--color` > `NO_COLOR` > `CLICOLOR_FORCE` > whether stdout is a terminal.
fn use_color(flag: ColorChoice) -> bool {
    let env = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    match flag {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        _ if env("NO_COLOR") => false,
        _ if std::env::var("CLICOLOR_FORCE").is_ok_and(|v| !v.is_empty() && v != "0") => true,
        _ => std::io::stdout().is_terminal(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// Each command's help groups its flags under headings, Helm's connection flags last, and
    /// ends with examples.
    #[test]
    fn help_groups_flags_and_ends_with_examples() {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        cli.build();
        for (name, headings) in [
            ("check", &["Selection:", "Comparison:", "Output:", "Connection"][..]),
            ("repair", &["Repair:", "Comparison:", "Output:", "Connection"][..]),
            ("render", &["Selection:", "Output:", "Connection"][..]),
        ] {
            let help = cli.find_subcommand_mut(name).unwrap().render_long_help().to_string();
            let at: Vec<usize> = headings.iter().map(|h| help.find(&format!("\n{h}")).expect(h)).collect();
            assert!(at.windows(2).all(|w| w[0] < w[1]), "{name}: headings in order\n{help}");
            let examples = help.find("\nExamples:\n  helm drift ").expect("examples");
            assert!(examples > at[at.len() - 1], "{name}: examples after the flags");
        }
    }

    /// One version, one place: plugin.yaml and the chart carry Cargo.toml's version, and the
    /// changelog has its section (scripts/version.sh --set writes them, --check checks a tag).
    #[test]
    fn one_version_everywhere() {
        let v = env!("CARGO_PKG_VERSION");
        let plugin: serde_yaml::Value = serde_yaml::from_str(include_str!("../../plugin.yaml")).unwrap();
        assert_eq!(plugin["version"], v, "plugin.yaml");
        let v1: serde_yaml::Value = serde_yaml::from_str(include_str!("../../packaging/helm4/plugin.yaml")).unwrap();
        assert_eq!(v1["version"], v, "packaging/helm4/plugin.yaml");
        let chart: serde_yaml::Value =
            serde_yaml::from_str(include_str!("../../charts/helm-drift/Chart.yaml")).unwrap();
        assert_eq!(chart["version"], v, "charts/helm-drift/Chart.yaml version");
        assert_eq!(chart["appVersion"], v, "charts/helm-drift/Chart.yaml appVersion");
        assert!(include_str!("../../CHANGELOG.md").contains(&format!("\n## [{v}] - ")), "CHANGELOG.md section");
        let line = version_line();
        assert!(line.starts_with(&format!("helm-drift {v} (commit ")) && line.contains(", built "), "{line}");
    }

    /// Helm 4's plugin.yaml (v1, packaging/helm4) says what the legacy one at the root says: the
    /// same name, version, help, flags handling, command per OS and install/update hooks.
    #[test]
    fn both_plugin_formats_say_the_same() {
        let legacy: serde_yaml::Value = serde_yaml::from_str(include_str!("../../plugin.yaml")).unwrap();
        let v1: serde_yaml::Value = serde_yaml::from_str(include_str!("../../packaging/helm4/plugin.yaml")).unwrap();
        assert_eq!(
            (&v1["apiVersion"], &v1["type"], &v1["runtime"]),
            (&"v1".into(), &"cli/v1".into(), &"subprocess".into())
        );
        assert_eq!(v1["name"], legacy["name"]);
        assert_eq!(v1["version"], legacy["version"]);
        let config = &v1["config"];
        assert!(config["usage"].as_str().unwrap().starts_with("drift"), "Helm 4 makes usage the command's name");
        assert_eq!(config["shortHelp"], legacy["usage"]);
        assert_eq!(config["longHelp"], legacy["description"]);
        assert_eq!(config["ignoreFlags"], legacy["ignoreFlags"]);
        let commands = |v: &serde_yaml::Value| -> Vec<(String, String)> {
            v.as_sequence()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c["os"].as_str().unwrap().into(),
                        c["command"].as_str().unwrap().replace("${", "$").replace('}', ""),
                    )
                })
                .collect()
        };
        assert_eq!(commands(&v1["runtimeConfig"]["platformCommand"]), commands(&legacy["platformCommand"]));
        for (hook, script) in [
            ("install", legacy["hooks"]["install"].as_str().unwrap()),
            ("update", legacy["hooks"]["update"].as_str().unwrap()),
        ] {
            for c in v1["runtimeConfig"]["platformHooks"][hook].as_sequence().unwrap() {
                let line = c["args"][1].as_str().unwrap().replace('"', "");
                assert_eq!((c["command"].as_str(), line.as_str()), (Some("sh"), script), "{hook} hook");
            }
        }
    }

    /// completion.yaml (Helm's static completion) lists every sub-command and its own flags.
    #[test]
    fn completion_yaml_matches_the_cli() {
        use clap::CommandFactory;
        #[derive(serde::Deserialize)]
        struct Cmd {
            name: String,
            #[serde(default)]
            flags: Vec<String>,
            #[serde(default)]
            commands: Vec<Cmd>,
        }
        let file: Cmd = serde_yaml::from_str(include_str!("../../completion.yaml")).unwrap();
        assert_eq!(file.name, "drift");
        let cli = Cli::command();
        let global: Vec<String> = cli.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect();
        let subs: Vec<_> = cli.get_subcommands().filter(|c| !c.is_hide_set()).collect();
        let listed: Vec<&str> = file.commands.iter().map(|c| c.name.as_str()).collect();
        let expected: Vec<&str> = subs.iter().map(|c| c.get_name()).filter(|n| *n != "help").collect();
        assert_eq!(listed, expected);
        for sub in subs {
            let mut flags: Vec<String> = Vec::new();
            for a in sub.get_arguments().filter(|a| !a.is_positional()) {
                if let Some(l) = a.get_long().filter(|l| !global.contains(&l.to_string()) && *l != "help") {
                    flags.push(l.to_string());
                }
            }
            if sub.get_name() != "version" {
                flags.push("color".into());
            }
            let entry = file.commands.iter().find(|c| c.name == sub.get_name()).unwrap();
            let mut have = entry.flags.clone();
            have.sort();
            flags.sort();
            assert_eq!(have, flags, "flags of {}", sub.get_name());
        }
    }
}

//! The commands, each in one home: `XxxSettings::resolve` holds every rule about its flags,
//! then its entry point runs it over the engine and hands the report to the one printer.
//! [`main`] parses the command line, dispatches, and maps the outcome to an exit code. A
//! command never imports another command.

pub(crate) mod accept;
mod audit_log;
pub(crate) mod check;
mod complete;
pub(crate) mod guard;
mod members;
mod pause;
mod plan;
pub(crate) mod render;
pub(crate) mod repair;
mod runtime;
mod settings;
mod watch;

use crate::cli::{Cli, ColorChoice, Command};
use crate::model::ExitStatus;
use crate::report::{Style, Terminal};
use anyhow::Result;
use clap::Parser;
use runtime::runtime;
use std::io::IsTerminal;
use std::process::ExitCode;

/// Parses the command line, runs it and returns the process exit code (0 in sync, 2 drift, 1
/// error, 3 `plan`: the upgrade would fail; see [`ExitStatus`]).
pub fn main() -> ExitCode {
    crate::watch::note_parent();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let args: Vec<String> = std::env::args().collect();
            let text = crate::cli::refusal(&e, &args);
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
    match dispatch(cli, &mut printer) {
        Ok(status) => status.into(),
        Err(e) => {
            printer.error(&e);
            ExitStatus::Error.into()
        }
    }
}

fn dispatch(cli: Cli, printer: &mut Terminal) -> Result<ExitStatus> {
    let g = &cli.global;
    // `--chunk-size` is the process's: set here once, before any connection lists anything.
    crate::api::set_chunk_size(g.chunk_size);
    match cli.command {
        Command::Version => {
            printer.text(&format!("{}\n", version_line()));
            Ok(ExitStatus::InSync)
        }
        Command::Complete { words } => {
            let lines = runtime()?.block_on(complete::complete(&settings::settings(g)?, &words));
            printer.text(&lines);
            Ok(ExitStatus::InSync)
        }
        Command::Check(a) => check::execute(check::CheckSettings::resolve(g, a)?, printer),
        Command::Repair(a) => repair::execute(repair::RepairSettings::resolve(g, a)?, printer),
        Command::Render(a) => render::execute(render::RenderSettings::resolve(g, a)?, printer),
        Command::Accept(a) => accept::execute(accept::AcceptSettings::resolve(g, a)?, printer),
        Command::Watch(a) => watch::execute(watch::WatchSettings::resolve(g, a)?, printer),
        Command::Guard(a) => guard::execute(guard::GuardSettings::resolve(g, a)?, printer),
        Command::Pause(a) => pause::execute(pause::PauseSettings::resolve(g, a)?, printer),
        Command::Plan(a) => plan::execute(plan::PlanSettings::resolve(g, a)?, printer),
    }
}

/// `helm-drift VERSION (commit C, built DATE)`: the version, the commit it was built from and
/// the build date (see build.rs).
pub(crate) fn version_line() -> String {
    format!(
        "helm-drift {} (commit {}, built {})",
        env!("CARGO_PKG_VERSION"),
        env!("HELM_DRIFT_COMMIT"),
        env!("HELM_DRIFT_BUILD_DATE")
    )
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

    /// The rule a command's settings refuse the command line with (`None`: resolved).
    fn refusal(line: &str) -> Option<String> {
        let cli = Cli::try_parse_from(std::iter::once("helm-drift").chain(line.split(' '))).expect(line);
        let g = &cli.global;
        let refused = match cli.command {
            Command::Check(a) => check::CheckSettings::resolve(g, a).err(),
            Command::Repair(a) => repair::RepairSettings::resolve(g, a).err(),
            Command::Render(a) => render::RenderSettings::resolve(g, a).err(),
            Command::Watch(a) => watch::WatchSettings::resolve(g, a).err(),
            _ => unreachable!("{line}"),
        };
        refused.map(|e| e.to_string())
    }

    /// Each command's flag rules are its settings' (refused before anything is read).
    #[test]
    fn each_command_refuses_the_flag_combinations_it_cannot_serve() {
        for (line, said) in [
            ("check web --kube-context a --kube-context b --explain", "--explain and --rerender check one cluster"),
            ("check web --chart ./chart", "--chart is for --explain and --rerender"),
            ("repair web --upgrade --kube-context a --kube-context b", "--upgrade runs helm against one cluster"),
            ("watch -A -v", "-v and --show-secrets shape check's report"),
            ("check -A --kube-context a --all-contexts", "--all-contexts checks every context of the kubeconfig"),
            (
                "check -A --kube-context a --kube-context b --clusters capi --clusters-namespace f",
                "--clusters reads the inventory from one",
            ),
            ("watch -A --clusters argocd --ui", "--ui shows one cluster; with --clusters the fleet is in /metrics"),
            ("check -A --clusters capi", "--clusters capi: name the namespace of the Cluster API Clusters"),
            ("watch -A --clusters capi --clusters-selector a=b", "--clusters capi: name the namespace"),
            ("watch -A --clusters argocd --kube-context a --kube-context b", "--clusters reads the inventory from one"),
        ] {
            let got = refusal(line).unwrap_or_default();
            assert!(got.starts_with(said), "{line}: {got}");
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
}

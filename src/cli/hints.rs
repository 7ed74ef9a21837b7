//! Hints for a command line clap refuses: a flag that belongs to another command is named with
//! the commands it belongs to, instead of clap's guess at a similar flag of this one; the usage
//! line names the command's arguments, never the optional flags the environment set.

use super::Cli;
use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

/// What to print for a command line clap refused: clap's error with a usage line of the
/// command's arguments only (the environment's HELM_* flags are not asked for), or the error
/// for a flag that another command takes.
pub(crate) fn refusal(e: &clap::Error, args: &[String]) -> String {
    let text = e.render().to_string();
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return text;
    }
    if let Some(hint) = unknown_flag(e, args) {
        return hint;
    }
    let cli = Cli::command();
    let Some(command) = args.iter().skip(1).find_map(|a| cli.find_subcommand(a)) else { return text };
    let usage = format!("Usage: helm drift {} [OPTIONS]{}", command.get_name(), positional(command));
    text.lines().map(|l| if l.starts_with("Usage: ") { usage.as_str() } else { l }).collect::<Vec<_>>().join("\n")
        + "\n"
}

/// The error for an unknown flag `args` holds that another command takes, or `None` (clap's own
/// error stands).
fn unknown_flag(e: &clap::Error, args: &[String]) -> Option<String> {
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(given)) = e.get(ContextKind::InvalidArg) else { return None };
    let flag = given.split('=').next()?.strip_prefix("--")?;
    let cli = Cli::command();
    let command = args.iter().skip(1).find_map(|a| cli.find_subcommand(a))?;
    let owners: Vec<&str> = cli
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_arguments().any(|a| a.get_long() == Some(flag)))
        .map(|c| c.get_name())
        .collect();
    if owners.is_empty() {
        return None;
    }
    let name = command.get_name();
    let mut text = format!("error: --{flag} is not a flag of {name}; it belongs to {}\n", and_list(&owners));
    text.push_str(&format!("\nUsage: helm drift {name} [OPTIONS]{}\n", positional(command)));
    text.push_str("\nFor more information, try '--help'.\n");
    Some(text)
}

/// `check`, `check and repair`, `check, repair and accept`.
fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The command's positional arguments as its usage line writes them.
fn positional(command: &clap::Command) -> String {
    command
        .get_positionals()
        .map(|a| {
            let name = a.get_id().as_str().to_uppercase();
            match (a.is_required_set(), matches!(a.get_action(), clap::ArgAction::Append)) {
                (true, _) => format!(" <{name}>"),
                (false, true) => format!(" [{name}]..."),
                (false, false) => format!(" [{name}]"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn hint(line: &str) -> Option<String> {
        let args: Vec<String> = std::iter::once("helm-drift").chain(line.split(' ')).map(str::to_string).collect();
        let e = Cli::try_parse_from(&args).expect_err(line);
        unknown_flag(&e, &args)
    }

    #[test]
    fn a_flag_of_another_command_names_its_commands() {
        let only = hint("check web --only cm/x").unwrap();
        assert!(only.starts_with("error: --only is not a flag of check; it belongs to repair and accept\n"), "{only}");
        assert!(only.contains("Usage: helm drift check [OPTIONS] [RELEASES]...\n"), "{only}");
        let clusters = hint("accept web --clusters capi").unwrap();
        assert!(clusters.contains("it belongs to check, repair and watch"), "{clusters}");
        assert!(!clusters.contains("include-crds"), "{clusters}");
        assert!(clusters.contains("Usage: helm drift accept [OPTIONS] <RELEASE>\n"), "{clusters}");
        assert_eq!(hint("check web --nosuch"), None, "clap's own error for a flag no command has");
    }

    /// A missing argument's usage line names the arguments, not the flags the environment set.
    #[test]
    fn the_usage_line_asks_only_for_arguments() {
        let args: Vec<String> =
            ["helm-drift", "repair", "--namespace", "x", "--driver", "secrets"].map(String::from).into();
        let e = Cli::try_parse_from(&args).expect_err("no release");
        let text = refusal(&e, &args);
        assert!(text.contains("\nUsage: helm drift repair [OPTIONS] <RELEASE>\n"), "{text}");
        assert!(text.contains("<RELEASE>") && !text.contains("--driver"), "{text}");
    }
}

//! The command line as clap sees it, and nothing else: the commands and their flags
//! ([`args`], `watch`'s in [`watch`], groups and value enums in [`flags`]), their help texts
//! ([`help`]). Each command
//! resolves these into its settings and runs in `commands`.

mod args;
mod flags;
mod help;
mod hints;
mod plan;
mod watch;

pub(crate) use args::*;
pub(crate) use hints::refusal;
pub(crate) use watch::{AuditArgs, WatchArgs};

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

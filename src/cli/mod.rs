//! The command line as clap sees it, and nothing else: the commands and their flags
//! ([`args`], `watch`'s in [`watch`], groups and value enums in [`flags`]), their help texts
//! ([`help`]); the reference generated from them is `reference`'s. Each command
//! resolves these into its settings and runs in `commands`.

mod args;
#[cfg(test)]
mod figures;
mod flags;
mod help;
mod hints;
#[cfg(test)]
mod pages;
mod plan;
#[cfg(test)]
mod reference;
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
}

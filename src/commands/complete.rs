//! Shell completion through Helm's `plugin.complete`: release names from the cluster (every
//! namespace's with `-A`), and the values of flags that take one of a few words (`-o json`).

use crate::settings::Settings;
use clap::CommandFactory;

/// Cobra's "no file completion" directive.
const NO_FILE_COMPLETION: &str = ":4\n";

/// Release names for `check`/`render`/`repair`/`accept` arguments, one per line, then the directive.
/// Errors (no cluster, no rights) give no candidates rather than noise in the shell.
pub(crate) async fn complete(settings: &Settings, words: &[String]) -> String {
    let (Some(sub), Some(word)) = (words.first(), words.last()) else { return NO_FILE_COMPLETION.into() };
    if let Some(values) = words.len().checked_sub(2).and_then(|i| flag_values(sub, &words[i])) {
        let mut out: String =
            values.into_iter().filter(|v| v.starts_with(word.as_str())).map(|v| format!("{v}\n")).collect();
        out.push_str(NO_FILE_COMPLETION);
        return out;
    }
    if words.len() < 2 || word.starts_with('-') || !["check", "render", "repair", "accept"].contains(&sub.as_str()) {
        return NO_FILE_COMPLETION.into();
    }
    let every_namespace = words.iter().any(|w| w == "-A" || w == "--all-namespaces");
    let names = async {
        let cluster = crate::api::connect(&settings.connection).await.ok()?;
        let ns = settings.namespace.clone().unwrap_or_else(|| cluster.default_namespace.clone());
        let storage =
            crate::release::Storage::open(cluster.client, settings.driver, settings.sql_connection.as_deref())
                .await
                .ok()?;
        storage.releases((!every_namespace).then_some(ns.as_str()), None).await.ok()
    }
    .await
    .unwrap_or_default();
    let mut names: Vec<String> = names.into_iter().map(|r| r.name).collect();
    names.sort();
    names.dedup();
    let mut out: String = names
        .into_iter()
        .filter(|n| n.starts_with(word.as_str()) && !words[1..words.len() - 1].contains(n))
        .map(|n| format!("{n}\n"))
        .collect();
    out.push_str(NO_FILE_COMPLETION);
    out
}

/// The words a flag of subcommand `sub` takes (`-o`/`--output`: text, json, junit), read from
/// the CLI's own definition; `None` for flags without a fixed set of values.
fn flag_values(sub: &str, flag: &str) -> Option<Vec<String>> {
    let cli = crate::cli::Cli::command();
    let command = cli.find_subcommand(sub)?;
    let arg = command.get_arguments().chain(cli.get_arguments()).find(|a| {
        flag.strip_prefix("--").is_some_and(|long| a.get_long() == Some(long))
            || flag.strip_prefix('-').and_then(|s| s.parse::<char>().ok()).is_some_and(|c| a.get_short() == Some(c))
    })?;
    if !arg.get_action().takes_values() {
        return None;
    }
    let values: Vec<String> = arg.get_possible_values().iter().map(|v| v.get_name().to_string()).collect();
    (!values.is_empty()).then_some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_with_a_few_values_complete_them() {
        assert_eq!(flag_values("check", "-o").unwrap(), ["text", "json", "junit", "markdown", "html"]);
        assert_eq!(flag_values("check", "--output").unwrap(), ["text", "json", "junit", "markdown", "html"]);
        assert_eq!(flag_values("check", "--color").unwrap(), ["auto", "always", "never"]);
        assert_eq!(flag_values("watch", "--notify-format").unwrap(), ["json", "slack"]);
        assert_eq!(flag_values("check", "--selector"), None, "free text");
        assert_eq!(flag_values("check", "--explain"), None, "no value");
    }
}

//! Shell completion through Helm's `plugin.complete`: release names from the cluster.

use crate::settings::Settings;

/// Cobra's "no file completion" directive.
const NO_FILE_COMPLETION: &str = ":4\n";

/// Release names for `check`/`render`/`repair`/`accept` arguments, one per line, then the directive.
/// Errors (no cluster, no rights) give no candidates rather than noise in the shell.
pub async fn complete(settings: &Settings, words: &[String]) -> String {
    let (Some(sub), Some(word)) = (words.first(), words.last()) else { return NO_FILE_COMPLETION.into() };
    if words.len() < 2 || word.starts_with('-') || !["check", "render", "repair", "accept"].contains(&sub.as_str()) {
        return NO_FILE_COMPLETION.into();
    }
    let names = async {
        let cluster = crate::cluster::connect(&settings.connection).await.ok()?;
        let ns = settings.namespace.clone().unwrap_or_else(|| cluster.default_namespace.clone());
        let storage =
            crate::release::Storage::open(cluster.client, settings.driver, settings.sql_connection.as_deref())
                .await
                .ok()?;
        storage.releases(Some(&ns), None).await.ok()
    }
    .await
    .unwrap_or_default();
    let mut out: String = names
        .into_iter()
        .map(|r| r.name)
        .filter(|n| n.starts_with(word.as_str()) && !words[1..words.len() - 1].contains(n))
        .map(|n| format!("{n}\n"))
        .collect();
    out.push_str(NO_FILE_COMPLETION);
    out
}

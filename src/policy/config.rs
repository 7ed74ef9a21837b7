//! The config file (`--config`, `$HELM_DRIFT_CONFIG`, else `./.helm-drift.yaml` when present):
//! one or more YAML documents, each helm-drift's own settings, a Flux `HelmRelease` or an Argo CD
//! `Application`; anything else is named in a warning and left out.

use super::expected;
use super::gitops::{self, Imported};
use super::ignore::{IgnoreError, IgnoreRule, IgnoreSpec};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The default config file, looked for in the current directory.
pub(crate) const DEFAULT_CONFIG: &str = ".helm-drift.yaml";

/// Why the config file cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("invalid config file {path}: {why}")]
    Invalid { path: String, why: String },
    #[error(transparent)]
    Rule(#[from] IgnoreError),
}

/// helm-drift's own document of the config file.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct File {
    #[serde(default)]
    ignore: Vec<IgnoreSpec>,
    #[serde(default)]
    check_hpa_replicas: bool,
    #[serde(default)]
    expected: Vec<expected::ExpectedSpec>,
}

/// What the config file says.
#[derive(Default)]
pub(crate) struct Config {
    /// Its ignore rules, then those of the GitOps documents.
    pub(crate) rules: Vec<IgnoreRule>,
    pub(crate) check_hpa_replicas: bool,
    /// The built-in expected-change rules with the file's.
    pub(crate) expected: Vec<expected::ExpectedRule>,
    /// What the Flux and Argo CD documents said besides their rules.
    pub(crate) imported: Imported,
}

/// The config file to read: `flag` (an empty one means none), else the default file when it
/// exists.
pub(crate) fn path(flag: Option<&Path>) -> Option<PathBuf> {
    match flag {
        Some(p) if !p.as_os_str().is_empty() => Some(p.to_path_buf()),
        _ => {
            let default = PathBuf::from(DEFAULT_CONFIG);
            default.is_file().then_some(default)
        }
    }
}

/// Reads the config file `--config` names, else the default one (see [`path`]).
pub(crate) fn from_flag(flag: Option<&Path>) -> Result<Config, ConfigError> {
    load(path(flag).as_deref())
}

/// Reads the config file at `path` (the built-in rules alone without one).
pub(crate) fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
    let Some(path) = path else {
        return Ok(Config { expected: expected::rules(Vec::new(), "config")?, ..Config::default() });
    };
    let at = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: at.clone(), source })?;
    parse(&text, &at)
}

/// The config file's text, read from `at`.
pub(crate) fn parse(text: &str, at: &str) -> Result<Config, ConfigError> {
    let invalid = |e: &dyn std::fmt::Display| ConfigError::Invalid { path: at.to_string(), why: e.to_string() };
    let mut file = File::default();
    let mut imported = Imported::default();
    for doc in serde_yaml::Deserializer::from_str(text) {
        let doc = serde_json::Value::deserialize(doc).map_err(|e| invalid(&e))?;
        if doc.is_null() {
            continue;
        }
        if gitops::kind_of(&doc).is_some() {
            let found = gitops::import(&doc, at)?;
            imported.rules.extend(found.rules);
            imported.warnings.extend(found.warnings);
            imported.describes.extend(found.describes);
        } else if doc.get("kind").is_some() && doc.get("apiVersion").is_some() {
            imported.warnings.push(format!(
                "{at}: a {} document is not a helm-drift config, a Flux HelmRelease or an Argo CD Application, and was left out",
                doc["kind"].as_str().unwrap_or("?")
            ));
        } else {
            file = serde_json::from_value(doc).map_err(|e| invalid(&e))?;
        }
    }
    let mut rules = Vec::new();
    for (i, spec) in file.ignore.into_iter().enumerate() {
        rules.push(IgnoreRule::from_spec(spec, &format!("{at} ignore[{i}]"))?);
    }
    rules.append(&mut imported.rules);
    Ok(Config {
        rules,
        check_hpa_replicas: file.check_hpa_replicas,
        expected: expected::rules(file.expected, at)?,
        imported,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_settings_gitops_documents_and_strangers() {
        let text = "ignore:\n  - paths: [/spec/replicas]\ncheckHpaReplicas: true\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
        let c = parse(text, "f.yaml").unwrap();
        assert_eq!(c.rules.len(), 1);
        assert!(c.check_hpa_replicas);
        assert!(
            c.imported.warnings[0].contains("a ConfigMap document is not a helm-drift config"),
            "{:?}",
            c.imported.warnings
        );
        assert!(c.expected.len() >= 3, "the built-in rules too");
        let err = parse("ignored: []\n", "f.yaml").err().unwrap().to_string();
        assert!(err.starts_with("invalid config file f.yaml: unknown field `ignored`"), "{err}");
    }
}

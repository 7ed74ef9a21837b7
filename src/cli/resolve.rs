//! Raw flags and Helm's environment turned into resolved [`Settings`] once: connection,
//! storage driver, config file and ignore rules. Core code never sees clap.

use super::args::{CompareArgs, Global};
use crate::api::Connection;
use crate::policy::ignore::Rule;
use crate::release::Driver;
use crate::settings::{CompareOptions, Settings};
use anyhow::{Result, bail};
use std::path::PathBuf;

/// Where a command's accepted drift comes from.
pub enum Baseline {
    /// None (repair, accept: accept writes to its own store).
    None,
    /// `--baseline FILE|cluster`, else `./.helm-drift-baseline.yaml` when it exists.
    Flag(Option<String>),
}

/// Complete settings for a command that compares: [`settings`], the comparison options from
/// its flags and config file, and its baseline.
pub fn complete(g: &Global, compare: &CompareArgs, baseline: Baseline) -> Result<Settings> {
    let mut settings = settings(g)?;
    settings.compare = compare_options(compare)?;
    settings.baseline = match baseline {
        Baseline::None => None,
        Baseline::Flag(flag) => {
            let default_file = std::path::Path::new(crate::baseline::DEFAULT_FILE).is_file();
            baseline_store(flag.as_deref(), default_file)
        }
    };
    Ok(settings)
}

/// The settings every command shares: connection, storage driver, debug; default comparison
/// options and no baseline (see [`complete`]).
pub fn settings(g: &Global) -> Result<Settings> {
    let driver = match g.driver.as_deref().unwrap_or("") {
        "" | "secret" | "secrets" => Driver::Secrets,
        "configmap" | "configmaps" => Driver::ConfigMaps,
        "sql" => Driver::Sql,
        "memory" => {
            bail!("the Helm storage driver \"memory\" is not supported: it keeps releases only inside one helm process")
        }
        other => bail!("unknown Helm storage driver {other:?} (HELM_DRIVER): use secrets, configmaps or sql"),
    };
    let nonempty = |s: &Option<String>| s.clone().filter(|v| !v.is_empty());
    Ok(Settings {
        connection: Connection {
            kubeconfig: g
                .kubeconfig
                .as_deref()
                .map(|k| std::env::split_paths(k).filter(|p| !p.as_os_str().is_empty()).collect())
                .unwrap_or_default(),
            context: one_context(&g.kube_context)?,
            api_server: nonempty(&g.kube_apiserver),
            token: nonempty(&g.kube_token),
            as_user: nonempty(&g.kube_as_user),
            as_groups: g.kube_as_group.iter().filter(|s| !s.is_empty()).cloned().collect(),
            ca_file: nonempty(&g.kube_ca_file).map(PathBuf::from),
            insecure_skip_tls_verify: g.kube_insecure_skip_tls_verify
                || flag("HELM_KUBEINSECURE_SKIP_TLS_VERIFY", &std::env::var("HELM_KUBEINSECURE_SKIP_TLS_VERIFY").ok())?,
            tls_server_name: nonempty(&g.kube_tls_server_name),
            qps: number("--qps (HELM_QPS)", &g.qps)?,
            burst: number("--burst-limit (HELM_BURST_LIMIT)", &g.burst_limit)?,
            timeout: Some(g.timeout),
            chunk_size: g.chunk_size,
        },
        namespace: nonempty(&g.namespace),
        driver,
        sql_connection: nonempty(&g.sql_connection),
        debug: g.debug || flag("HELM_DEBUG", &std::env::var("HELM_DEBUG").ok())?,
        compare: CompareOptions::default(),
        baseline: None,
    })
}

/// The one kubeconfig context of a command that works on one cluster (several are for `check`
/// and `repair`, which split them before they get here).
fn one_context(contexts: &[String]) -> Result<Option<String>> {
    match contexts {
        [] => Ok(None),
        [one] => Ok(Some(one.clone()).filter(|c| !c.is_empty())),
        _ => bail!(
            "several --kube-context ({}): only `check` and `repair` run over a fleet of clusters; this command works on one",
            contexts.join(", ")
        ),
    }
}

/// The comparison options from the flags and the config file.
pub fn compare_options(a: &CompareArgs) -> Result<CompareOptions> {
    let config = crate::policy::config::from_flag(a.config.as_deref())?;
    let mut rules = config.rules;
    let imported = config.imported;
    for text in &a.ignore {
        rules.push(Rule::parse_flag(text)?);
    }
    Ok(CompareOptions {
        read_only: a.read_only,
        rules,
        check_hpa_replicas: a.check_hpa_replicas || config.check_hpa_replicas,
        include_crds: a.include_crds,
        expected: config.expected,
        strict: a.strict,
        trust_live_annotations: a.trust_live_annotations,
        max_objects: a.max_objects,
        disabled_releases: imported.disabled,
        warnings: imported.warnings,
        gitops: imported.describes,
        confined: None,
    })
}

/// `--baseline FILE|cluster`; without it, `./.helm-drift-baseline.yaml` when `default_file` says
/// so (always for `accept`, which creates it; when present for `check`).
pub fn baseline_store(flag: Option<&str>, default_file: bool) -> Option<crate::baseline::Store> {
    use crate::baseline::{DEFAULT_FILE, Store};
    match flag.map(str::trim).filter(|f| !f.is_empty()) {
        Some("cluster") => Some(Store::Cluster),
        Some(path) => Some(Store::File(PathBuf::from(path))),
        None if default_file => Some(Store::File(PathBuf::from(DEFAULT_FILE))),
        None => None,
    }
}

/// `500ms`, `30s`, `2m`, `1h` (a plain number is seconds).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let (number, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len()));
    let n: f64 = number.parse().map_err(|_| format!("{text:?} is not a duration (like 500ms, 30s, 2m)"))?;
    let seconds = match unit {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (ms, s, m, h)")),
    };
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(format!("{text:?}: must be more than zero"));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

/// A number from a flag or Helm's environment (empty = unset).
fn number<T: std::str::FromStr>(name: &str, value: &Option<String>) -> Result<Option<T>> {
    match value.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| anyhow::anyhow!("{name}: expected a number, got {v:?}")),
    }
}

/// A boolean flag or environment value as Helm writes it (`true`/`false`, empty = unset).
fn flag(name: &str, value: &Option<String>) -> Result<bool> {
    match value.as_deref().map(str::trim).unwrap_or("").to_ascii_lowercase().as_str() {
        "" | "false" | "0" | "no" | "off" => Ok(false),
        "true" | "1" | "yes" | "on" => Ok(true),
        other => bail!("{name}: expected true or false, got {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(std::time::Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(std::time::Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(std::time::Duration::from_secs(3)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("5 weeks").is_err());
    }
}

//! What every command resolves alike: Helm's environment and the connection flags into
//! [`Settings`], the comparison flags and config file, the baseline, how the report is shown.
//! Each command's own rules are in its `XxxSettings::resolve`; core code never sees clap.

use crate::api::Connection;
use crate::cli::{CompareArgs, Global, OutputArgs};
use crate::policy::ignore::IgnoreRule;
use crate::release::Driver;
use crate::settings::{CompareOptions, Settings, TrustRules};
use anyhow::{Result, bail};
use std::path::PathBuf;

/// Where a command's accepted drift comes from.
pub(crate) enum BaselineSource {
    /// None (repair, accept: accept writes to its own store).
    None,
    /// `--baseline FILE|cluster[=NAMESPACE]`, else `./.helm-drift-baseline.yaml` when it exists.
    Flag(Option<String>),
}

/// What a check reads besides the cluster (its baseline, and where from), said on stderr before
/// its report (not with `-q`).
pub(crate) fn say_notes(settings: &Settings, printer: &mut crate::report::Terminal) {
    for n in &settings.said.notices {
        printer.note(n);
    }
}

/// The config file's warnings, said once on stderr before the command runs.
pub(crate) fn say_warnings(settings: &Settings, printer: &mut crate::report::Terminal) {
    for w in &settings.said.warnings {
        printer.warning(w);
    }
}

/// Complete settings for a command that compares: [`settings`], the comparison options from
/// its flags and config file, and its baseline.
pub(crate) fn complete(g: &Global, compare: &CompareArgs, baseline: BaselineSource) -> Result<Settings> {
    let mut settings = settings(g)?;
    compare_options(compare, &mut settings)?;
    settings.baseline = match baseline {
        BaselineSource::None => None,
        BaselineSource::Flag(flag) => {
            let default_file = std::path::Path::new(crate::baseline::DEFAULT_FILE).is_file();
            let store = baseline_store(flag.as_deref(), default_file)?;
            if let Some(crate::baseline::Store::File(path)) = &store
                && flag.is_some()
                && !path.is_file()
            {
                bail!(
                    "--baseline {}: no such file (helm drift accept --baseline {} creates it)",
                    path.display(),
                    path.display()
                );
            }
            if let Some(said) = store.as_ref().map(|s| baseline_said(s, flag.is_none())) {
                settings.said.notices.push(said);
            }
            store
        }
    };
    Ok(settings)
}

/// What a run says of the baseline it reads (on stderr, before the report): where, how many
/// entries, and how many end by themselves; `implicit` when found in the working directory.
fn baseline_said(store: &crate::baseline::Store, implicit: bool) -> String {
    use crate::baseline::Store;
    match store {
        Store::Cluster { home: None } => {
            "accepted drift read from each release's ConfigMap in a namespace you trust (--baseline cluster)"
                .to_string()
        }
        Store::Cluster { home: Some(ns) } => {
            format!("accepted drift read from ConfigMaps in {ns} (--baseline cluster={ns})")
        }
        Store::File(path) => {
            let found = match crate::baseline::read_file(path) {
                Ok(b) => {
                    let expiring = b.entries.iter().filter(|e| e.expires_at.is_some()).count();
                    let ends = if expiring > 0 { format!(", {expiring} ending by themselves") } else { String::new() };
                    let n = b.entries.len();
                    format!("{n} {}{ends}", if n == 1 { "entry" } else { "entries" })
                }
                Err(e) => format!("unreadable: {e}"),
            };
            let how = if implicit { "; found in the working directory, --baseline names another" } else { "" };
            format!("accepted drift read from {} ({found}{how})", path.display())
        }
    }
}

/// The settings every command shares: connection, storage driver, debug; default comparison
/// options and no baseline (see [`complete`]).
pub(crate) fn settings(g: &Global) -> Result<Settings> {
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
            given: None,
        },
        namespace: nonempty(&g.namespace),
        driver,
        sql_connection: nonempty(&g.sql_connection),
        debug: g.debug || flag("HELM_DEBUG", &std::env::var("HELM_DEBUG").ok())?,
        compare: Default::default(),
        said: Default::default(),
        trust: Default::default(),
        helm_manager: Default::default(),
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

/// The comparison flags and the config file, resolved into `settings`: the comparison rules,
/// what is said of the config file, trust and the writer the operator named.
fn compare_options(a: &CompareArgs, settings: &mut Settings) -> Result<()> {
    let config = crate::policy::config::from_flag(a.config.as_deref())?;
    let mut rules = config.rules;
    let imported = config.imported;
    for text in &a.ignore {
        rules.push(IgnoreRule::parse_flag(text)?);
    }
    settings.said.warnings = imported.warnings;
    settings.said.gitops = imported.describes;
    settings.trust = TrustRules { namespaces: crate::settings::Trust::new(a.trust_namespace.clone()), confined: false };
    settings.helm_manager = crate::compare::writer::WriterPins::parse(&a.helm_manager)?;
    settings.compare = std::sync::Arc::new(CompareOptions {
        read_only: a.read_only,
        rules,
        check_hpa_replicas: a.check_hpa_replicas || config.check_hpa_replicas,
        include_crds: a.include_crds,
        hooks: a.hooks,
        expected: config.expected,
        strict: a.strict,
        trust_live_annotations: a.trust_live_annotations,
        max_objects: a.max_objects,
        upgrade: false,
    });
    Ok(())
}

/// `--baseline FILE|cluster|cluster=NAMESPACE`; without it, `./.helm-drift-baseline.yaml` when
/// `default_file` says so (always for `accept`, which creates it; when present for `check`).
pub(crate) fn baseline_store(flag: Option<&str>, default_file: bool) -> Result<Option<crate::baseline::Store>> {
    use crate::baseline::{DEFAULT_FILE, Store};
    Ok(match flag.map(str::trim).filter(|f| !f.is_empty()) {
        Some("cluster") => Some(Store::Cluster { home: None }),
        Some(named) if named.starts_with("cluster=") => {
            let home = named["cluster=".len()..].trim();
            if !is_namespace_name(home) {
                bail!("--baseline {named}: expected cluster=NAMESPACE, a namespace's name");
            }
            Some(Store::Cluster { home: Some(home.to_string()) })
        }
        Some(path) => Some(Store::File(PathBuf::from(path))),
        None if default_file => Some(Store::File(PathBuf::from(DEFAULT_FILE))),
        None => None,
    })
}

/// Whether `name` can name a namespace (an RFC 1123 label).
fn is_namespace_name(name: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    (1..=63).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && edge(name.chars().next())
        && edge(name.chars().last())
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

/// How a command's report is shown, from its output and comparison flags.
#[derive(Clone, Debug)]
pub(crate) struct Shown {
    verbose: bool,
    show_secrets: bool,
    context: usize,
    quiet: bool,
    summary: bool,
    pub(crate) format: crate::report::Format,
}

impl Shown {
    pub(crate) fn resolve(compare: &CompareArgs, output: &OutputArgs) -> Shown {
        Shown {
            verbose: compare.verbose,
            show_secrets: compare.show_secrets,
            context: output.context,
            quiet: output.quiet,
            summary: output.summary,
            format: output.output,
        }
    }

    /// The report style these ask for (no colour but in text).
    pub(crate) fn apply(&self, style: &mut crate::report::Style) {
        style.verbose = self.verbose;
        style.show_secrets = self.show_secrets;
        style.context = self.context;
        style.quiet = self.quiet;
        style.summary = self.summary;
        style.format = self.format;
        if style.format != crate::report::Format::Text {
            style.color = false;
        }
    }
}

/// One settings per kubeconfig context (each named once, in the order given) for a fleet run.
pub(crate) fn per_context(settings: &Settings, mut contexts: Vec<String>) -> Vec<(String, Settings)> {
    let mut seen = std::collections::HashSet::new();
    contexts.retain(|c| !c.is_empty() && seen.insert(c.clone()));
    contexts
        .into_iter()
        .map(|context| {
            let member = settings.for_context(&context);
            (context, member)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::baseline_store;
    use crate::baseline::Store;

    #[test]
    fn a_cluster_baseline_is_next_to_the_release_or_where_the_operator_names() {
        assert_eq!(baseline_store(Some("cluster"), false).unwrap(), Some(Store::Cluster { home: None }));
        let named = baseline_store(Some("cluster=platform"), false).unwrap();
        assert_eq!(named, Some(Store::Cluster { home: Some("platform".into()) }));
        for bad in ["cluster=", "cluster=Platform", "cluster=a.b", "cluster=-x"] {
            assert!(baseline_store(Some(bad), false).is_err(), "{bad}");
        }
        assert_eq!(baseline_store(Some("b.yaml"), false).unwrap(), Some(Store::File("b.yaml".into())));
        assert_eq!(baseline_store(None, false).unwrap(), None);
    }
}

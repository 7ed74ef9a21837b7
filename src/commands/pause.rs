//! `pause`: writes (or ends) a break-glass pause of a release's self-healing in the watcher's
//! namespace, with who wrote it (the API server's word), why, and until when.

use super::runtime::runtime;
use super::settings::settings;
use crate::cli::{Global, PauseArgs};
use crate::model::ExitStatus;
use crate::pause::{self, Pause};
use crate::report::Terminal;
use crate::settings::Settings;
use anyhow::{Context, Result, bail};

/// `pause`, resolved.
pub(crate) struct PauseSettings {
    settings: Settings,
    args: PauseArgs,
}

impl PauseSettings {
    pub(crate) fn resolve(g: &Global, a: PauseArgs) -> Result<PauseSettings> {
        Ok(PauseSettings { settings: settings(g)?, args: a })
    }
}

/// Writes or ends the pause, and says so.
pub(crate) fn execute(s: PauseSettings, printer: &mut Terminal) -> Result<ExitStatus> {
    let said = runtime()?.block_on(run(&s))?;
    printer.text(&said);
    Ok(ExitStatus::InSync)
}

async fn run(s: &PauseSettings) -> Result<String> {
    let cluster = crate::api::connect(&s.settings.connection).await?;
    let namespace = s.settings.namespace.clone().unwrap_or_else(|| cluster.default_namespace.clone());
    let a = &s.args;
    let mut p = Pause {
        namespace: namespace.clone(),
        release: a.release.clone(),
        object: a.object.clone(),
        cluster: a.cluster.clone(),
        reason: a.reason.clone().unwrap_or_default(),
        by: String::new(),
        until: jiff::Timestamp::now(),
    };
    let mut what = match &p.object {
        Some(o) => format!("{o} of release {namespace}/{}", a.release),
        None => format!("release {namespace}/{}", a.release),
    };
    if let Some(c) = &p.cluster {
        what.push_str(&format!(" on cluster {c}"));
    }
    let homes = homes(&cluster.client, a.pause_namespace.as_deref(), &namespace, &what, a.end).await?;
    if a.end {
        let mut said = String::new();
        for home in &homes {
            let ended = pause::end(&cluster.client, home, &p)
                .await
                .with_context(|| format!("cannot end the pause of {what} in namespace {home}"))?;
            said.push_str(&if ended {
                format!("pause of {what} ended (namespace {home}): the watcher heals it again\n")
            } else {
                format!("{what} was not paused (no pause in namespace {home})\n")
            });
        }
        return Ok(said);
    }
    let duration = a.duration.expect("clap requires --for without --end");
    p.until = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::try_from(duration).context("--for is too long")?)
        .context("--for is too long")?;
    p.by = pause::whoami(&cluster.client).await;
    let mut written = Vec::new();
    for home in &homes {
        let name = pause::write(&cluster.client, home, &p).await.with_context(|| {
            format!("cannot write the pause of {what} in namespace {home} (the watcher's namespace: --pause-namespace)")
        })?;
        written.push(format!("ConfigMap {home}/{name}"));
    }
    let end = format!(
        "helm drift pause {} -n {namespace} --end{}",
        a.release,
        [p.object.as_ref().map(|o| format!(" --object {o}")), p.cluster.as_ref().map(|c| format!(" --cluster {c}"))]
            .into_iter()
            .flatten()
            .collect::<String>()
    );
    Ok(format!(
        "{what} paused until {:.0} by {} ({}): the watcher reports its drift as paused and does not heal it; helm drift check still reports it\n  {}; end it sooner with: {end}\n",
        p.until,
        p.by,
        p.reason,
        written.join(", "),
    ))
}

/// The namespaces the pause goes to: where the running watchers that heal releases of
/// `namespace` announce they read pauses (`--pause-namespace`: that one, once a watcher there
/// says so). A pause no watcher reads is refused (ending one is not: it may outlive its watcher).
async fn homes(
    client: &kube::Client,
    named: Option<&str>,
    namespace: &str,
    what: &str,
    ending: bool,
) -> Result<Vec<String>> {
    use crate::pause::announce::{USUAL_HOME, announced, homes_for};
    let now = jiff::Timestamp::now();
    if let Some(home) = named {
        if ending {
            return Ok(vec![home.to_string()]);
        }
        let found = announced(client, Some(home))
            .await
            .with_context(|| format!("cannot read which watchers read pauses in namespace {home}"))?;
        if homes_for(&found, namespace, now).is_empty() {
            bail!(
                "no running watcher that heals releases of namespace {namespace} reads pauses in namespace {home} (none \
                 announces it there): a pause of {what} would hold nothing. Start the watcher with --repair (its \
                 namespace, or --pause-namespace, is where it reads them), or leave --pause-namespace out to find it"
            );
        }
        return Ok(vec![home.to_string()]);
    }
    let (found, looked) = match announced(client, None).await {
        Ok(found) => (found, "any namespace".to_string()),
        Err(_) => {
            let found = announced(client, Some(USUAL_HOME)).await.with_context(|| {
                format!(
                    "cannot find where the watchers read pauses (announcements in every namespace, or in {USUAL_HOME}): \
                     name it with --pause-namespace"
                )
            })?;
            (found, format!("namespace {USUAL_HOME} (every namespace cannot be listed)"))
        }
    };
    let homes = homes_for(&found, namespace, now);
    if homes.is_empty() {
        bail!(
            "no running watcher announces that it heals releases of namespace {namespace} (looked in {looked}): a \
             pause of {what} would hold nothing. Start the watcher with --repair, or name its namespace with \
             --pause-namespace"
        );
    }
    Ok(homes)
}

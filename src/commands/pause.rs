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
    let home = home(&cluster.client, a.pause_namespace.as_deref(), &namespace, &what, a.end).await?;
    if a.end {
        let ended = pause::end(&cluster.client, &home, &p)
            .await
            .with_context(|| format!("cannot end the pause of {what} in namespace {home}"))?;
        return Ok(if ended {
            format!("pause of {what} ended (namespace {home}): the watcher heals it again\n")
        } else {
            format!("{what} was not paused (no pause in namespace {home})\n")
        });
    }
    let duration = a.duration.expect("clap requires --for without --end");
    p.until = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::try_from(duration).context("--for is too long")?)
        .context("--for is too long")?;
    p.by = pause::whoami(&cluster.client).await;
    let name = pause::write(&cluster.client, &home, &p).await.with_context(|| {
        format!("cannot write the pause of {what} in namespace {home} (the watcher's namespace: --pause-namespace)")
    })?;
    let end = format!(
        "helm drift pause {} -n {namespace} --end{}",
        a.release,
        [p.object.as_ref().map(|o| format!(" --object {o}")), p.cluster.as_ref().map(|c| format!(" --cluster {c}"))]
            .into_iter()
            .flatten()
            .collect::<String>()
    );
    Ok(format!(
        "{what} paused until {:.0} by {} ({}): the watcher reports its drift as paused and does not heal it; helm drift check still reports it\n  ConfigMap {home}/{name}; end it sooner with: {end}\n",
        p.until, p.by, p.reason,
    ))
}

/// The namespace the pause goes to: the one the operator names (`--pause-namespace`,
/// `$HELM_DRIFT_PAUSE_NAMESPACE`), else the chart's usual home, once a running watcher that heals
/// releases of `namespace` announces there that it reads pauses. Announcements are read only
/// there: whoever may write a ConfigMap in any other namespace could have written one, and would
/// receive every operator's pause and reason. Those elsewhere are only named, so the operator
/// can name their namespace. Ending a pause needs no announcement (it may outlive its watcher).
async fn home(client: &kube::Client, named: Option<&str>, namespace: &str, what: &str, ending: bool) -> Result<String> {
    use crate::pause::announce::{USUAL_HOME, announced, homes_for, named_elsewhere};
    let home = named.unwrap_or(USUAL_HOME);
    if ending {
        return Ok(home.to_string());
    }
    let found = announced(client, home)
        .await
        .with_context(|| format!("cannot read which watchers read pauses in namespace {home}"))?;
    if !homes_for(&found, namespace, jiff::Timestamp::now()).is_empty() {
        return Ok(home.to_string());
    }
    let elsewhere = named_elsewhere(client, home).await;
    let hint = if elsewhere.is_empty() {
        String::new()
    } else {
        format!(
            ". Announcements in namespace {} are not read: a pause goes only to a namespace you name (whoever may \
             write a ConfigMap there could have written them)",
            elsewhere.join(", ")
        )
    };
    let how = if named.is_some() { "" } else { " (--pause-namespace or $HELM_DRIFT_PAUSE_NAMESPACE: the watcher's)" };
    bail!(
        "no running watcher that heals releases of namespace {namespace} reads pauses in namespace {home} (none \
         announces it there): a pause of {what} would hold nothing{hint}. Start the watcher with --repair (its \
         namespace, or its --pause-namespace, is where it reads them), or name that namespace{how}"
    )
}

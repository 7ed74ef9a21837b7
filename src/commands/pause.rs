//! `pause`: writes (or ends) a break-glass pause of a release's self-healing in the watcher's
//! namespace, with who wrote it (the API server's word), why, and until when.

use super::runtime::runtime;
use super::settings::settings;
use crate::cli::{Global, PauseArgs};
use crate::model::ExitStatus;
use crate::pause::{self, Pause};
use crate::report::Terminal;
use crate::settings::Settings;
use anyhow::{Context, Result};

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
    let home = &a.pause_namespace;
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
    if a.end {
        let ended = pause::end(&cluster.client, home, &p)
            .await
            .with_context(|| format!("cannot end the pause of {what} in namespace {home}"))?;
        return Ok(if ended {
            format!("pause of {what} ended: the watcher heals it again\n")
        } else {
            format!("{what} was not paused (no pause in namespace {home})\n")
        });
    }
    let duration = a.duration.expect("clap requires --for without --end");
    p.until = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::try_from(duration).context("--for is too long")?)
        .context("--for is too long")?;
    p.by = pause::whoami(&cluster.client).await;
    let name = pause::write(&cluster.client, home, &p).await.with_context(|| {
        format!("cannot write the pause of {what} in namespace {home} (the watcher's namespace: --pause-namespace)")
    })?;
    Ok(format!(
        "{what} paused until {:.0} by {} ({}): the watcher reports its drift as paused and does not heal it; helm drift check still reports it\n  ConfigMap {home}/{name}; end it sooner with: helm drift pause {} -n {namespace} --end{}\n",
        p.until,
        p.by,
        p.reason,
        a.release,
        [p.object.as_ref().map(|o| format!(" --object {o}")), p.cluster.as_ref().map(|c| format!(" --cluster {c}"))]
            .into_iter()
            .flatten()
            .collect::<String>()
    ))
}

//! `accept`: records the current drift of a release in its baseline, so that `check` fails only
//! on new or changed drift.

use super::runtime::runtime;
use super::settings::{BaselineSource, baseline_store, complete, say_warnings};
use crate::baseline::{self, Acceptance, Store};
use crate::cli::{AcceptArgs, AcceptFormat, Global};
use crate::engine::{Session, evaluate};
use crate::model::{AcceptReport, AcceptedDrift, ExitStatus};
use crate::report::{Format, Terminal};
use crate::settings::Settings;
use anyhow::Result;

/// `accept`, resolved.
pub(crate) struct AcceptSettings {
    settings: Settings,
    request: AcceptRequest,
    /// `-o text` or `-o json`.
    format: Format,
}

impl AcceptSettings {
    pub(crate) fn resolve(g: &Global, a: AcceptArgs) -> Result<AcceptSettings> {
        let AcceptArgs { release, only, path, prune, expires, baseline, dry_run, output, compare } = a;
        let settings = complete(g, &compare, BaselineSource::None)?;
        let store = baseline_store(baseline.as_deref(), true)?.expect("accept always has a store");
        let request = AcceptRequest { release, only, paths: path, prune, expires, store, dry_run };
        Ok(AcceptSettings {
            settings,
            request,
            format: if output == AcceptFormat::Json { Format::Json } else { Format::Text },
        })
    }
}

/// Runs `accept` and prints what it wrote.
pub(crate) fn execute(s: AcceptSettings, printer: &mut Terminal) -> Result<ExitStatus> {
    say_warnings(&s.settings, printer);
    let report = runtime()?.block_on(run(&s.settings, &s.request))?;
    printer.style.format = s.format;
    printer.accept(&report);
    Ok(ExitStatus::InSync)
}

/// What `accept` asks for.
#[derive(Clone, Debug)]
struct AcceptRequest {
    release: String,
    /// `KIND/NAME` filters; every drifted object when empty.
    only: Vec<String>,
    /// Only drift at or under these pointers; all when empty.
    paths: Vec<String>,
    /// Drop the release's entries whose drift is gone.
    prune: bool,
    /// The acceptance ends by itself this long after now (`--expires`).
    expires: Option<std::time::Duration>,
    store: Store,
    /// Say what would be accepted; write nothing.
    dry_run: bool,
}

async fn run(settings: &Settings, request: &AcceptRequest) -> Result<AcceptReport> {
    let session = Session::open(settings).await?;
    let index = session.history(&request.release).await?;
    let report = evaluate(&session, settings, &index, None).await?.report;
    let client = session.client();
    let (mut b, location) = match &request.store {
        Store::File(path) => (baseline::read_file(path)?, path.display().to_string()),
        Store::Cluster { home } => {
            let place = baseline::Place::of(home.as_deref(), &report.namespace, &report.release);
            let location = match place.named || settings.trust.namespaces.trusts(&report.namespace) {
                true => place.to_string(),
                false => format!("{place} (a check takes it only with --trust-namespace {})", place.namespace),
            };
            (baseline::read_configmap(client, &place).await?, location)
        }
    };
    let now = jiff::Timestamp::now();
    let expires_at = match request.expires {
        Some(d) => Some(now.checked_add(jiff::SignedDuration::try_from(d)?)?.to_string()),
        None => None,
    };
    let how = Acceptance {
        only: &request.only,
        paths: &request.paths,
        prune: request.prune,
        strict: settings.compare.strict,
        now,
        expires_at,
    };
    crate::model::selector::one_namespace_each(report.objects.iter().map(|o| &o.id), &request.only, &report.release)?;
    let (accepted, dropped) = baseline::accept(&mut b, &report, &how);
    match (&request.store, request.dry_run) {
        (_, true) => {}
        (Store::File(path), false) => baseline::write_file(path, &b)?,
        (Store::Cluster { home }, false) => {
            let place = baseline::Place::of(home.as_deref(), &report.namespace, &report.release);
            baseline::write_configmap(client, &place, (&report.namespace, &report.release), &b).await?
        }
    }
    let entries = b.entries.iter().filter(|e| e.release == report.release && e.namespace == report.namespace).count();
    let accepted = accepted
        .into_iter()
        .map(|e| AcceptedDrift { object: e.object, path: e.path, change: e.change, expires_at: e.expires_at })
        .collect();
    Ok(AcceptReport {
        release: report.release,
        namespace: report.namespace,
        location,
        accepted,
        dropped,
        entries,
        dry_run: request.dry_run,
    })
}

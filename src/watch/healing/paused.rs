//! Break-glass pauses in self-healing: the drifted objects a pause holds are not repaired, and
//! each is reported as paused once per pause (metric, log line, a `DriftPaused` Event with the
//! reason, who and until when); the release is looked at again when the pause ends.

use crate::model::{DriftReport, ObjectId};
use crate::pause::{Held, Pause};
use crate::watch::clock::Instant;
use crate::watch::keys::ReleaseKey;
use crate::watch::outputs::Outputs;
use crate::watch::outputs::drift_events as events;
use crate::watch::store::signature::Signer;
use jiff::Timestamp;

/// The pauses last read from the watcher's namespace.
#[derive(Default)]
pub(crate) struct Pauses {
    read_at: Option<Instant>,
    list: Vec<Pause>,
    /// What was said, by release and object: until when.
    said: std::collections::HashMap<(ReleaseKey, ObjectId), Timestamp>,
}

/// Where pauses are read, and what is said through.
pub(super) struct PauseSource<'a> {
    /// The cluster pauses are read from: the management cluster of a fleet, else the watched one.
    pub(super) client: &'a kube::Client,
    /// The watcher's cluster name (a fleet member's): a pause naming another cluster holds nothing.
    pub(super) cluster: Option<&'a str>,
    pub(super) home: &'a str,
    /// The operator named `home` (`--pause-namespace`, a fleet's namespace): its pauses hold
    /// every release. Otherwise it is only the session's namespace, which may be a tenant's:
    /// its pauses hold only its own releases.
    pub(super) chosen: bool,
    pub(super) outputs: &'a Outputs,
    pub(super) signer: &'a Signer,
}

impl Pauses {
    /// The pauses that hold objects of `candidates`, with the object each holds (a pause read
    /// from a namespace the operator did not name holds only that namespace's releases).
    pub(super) fn holding(
        &self,
        key: &ReleaseKey,
        candidates: &[ObjectId],
        at: &PauseSource<'_>,
    ) -> Vec<(ObjectId, Pause)> {
        let now = Timestamp::now();
        let mut held = Vec::new();
        for object in candidates {
            let name = object.selector();
            let here = Held { namespace: &key.namespace, release: &key.name, object: &name, cluster: at.cluster };
            let pause = self.list.iter().find(|p| p.holds(here, now) && (at.chosen || p.namespace == at.home));
            if let Some(p) = pause {
                held.push((object.clone(), p.clone()));
            }
        }
        held
    }

    /// Forgets what was said of a release gone.
    pub(super) fn forget(&mut self, release: &ReleaseKey) {
        self.said.retain(|(r, _), _| r != release);
    }

    /// Says the objects pauses hold, once per pause (metric, log line, a `DriftPaused` Event),
    /// and sets the release's paused metric to when the first pause ends.
    pub(super) async fn say(&mut self, report: &DriftReport, held: &[(ObjectId, Pause)], at: &PauseSource<'_>) {
        let key = ReleaseKey::of(report);
        at.outputs.metrics.paused(&key.namespace, &key.name, held.iter().map(|(_, p)| p.until).min());
        for (object, p) in held {
            if self.said.insert((key.clone(), object.clone()), p.until) == Some(p.until) {
                continue;
            }
            at.outputs.metrics.repair("paused");
            let until = format!("{:.0}", p.until);
            at.outputs.log.info(
                "drift paused: not healed until the pause ends",
                &[("release", &key), ("object", object), ("reason", &p.reason), ("by", &p.by), ("until", &until)],
            );
            let message =
                format!("drift of {object} is paused until {until} (by {}, as the pause says): {}", p.by, p.reason);
            at.outputs.announce_repair(report, object, events::PAUSED, &message, at.signer).await;
        }
    }

    /// Reads the pauses, right before each healing decision (a pause written a moment before
    /// an edit holds it; unreadable: none, said once: a pause never stops detection).
    pub(super) async fn read(&mut self, at: &PauseSource<'_>) {
        let home = at.home;
        match crate::pause::read(at.client, home).await {
            Ok((list, bad)) => {
                if bad > 0 {
                    at.outputs.metrics.rejected("record", bad as u64);
                }
                self.list = list;
            }
            Err(e) => {
                if self.read_at.is_none() {
                    let fields: [(&str, &(dyn ToString + Sync)); 2] = [("namespace", &home), ("error", &e)];
                    at.outputs.log.warn("cannot read the pauses: none is honoured", &fields);
                }
                self.list.clear();
            }
        }
        self.read_at = Some(Instant::now());
    }
}

/// What a healing watcher announces of where it reads pauses.
pub(crate) struct Reach<'a> {
    /// The watcher's name among the announcements (`LEASE|NAMESPACE|CLUSTER`).
    pub(crate) watcher: &'a str,
    /// The namespaces whose releases it heals (`*`: all).
    pub(crate) namespaces: Vec<String>,
    /// It heals a fleet's members (pauses there name a cluster).
    pub(crate) fleet: bool,
    /// How often the announcement is renewed.
    pub(crate) every: std::time::Duration,
}

/// Says where a healing watcher reads pauses (`pause::announce`), so that `helm drift pause`
/// finds it: in `home`, for the releases its reach names. A failure is said and counted; healing
/// goes on.
pub(crate) async fn announce(
    client: &kube::Client,
    home: &str,
    reach: Reach<'_>,
    metrics: &crate::watch::outputs::metrics::Metrics,
    log: &crate::watch::outputs::log::Log,
) {
    use crate::pause::announce::{Announcement, announce, name};
    let Reach { watcher, namespaces, fleet, every } = reach;
    let a = Announcement {
        namespaces,
        fleet,
        renewed: Timestamp::now(),
        every: jiff::SignedDuration::try_from(every).unwrap_or(jiff::SignedDuration::from_secs(600)),
    };
    if let Err(e) = announce(client, home, &name(watcher), &a).await {
        metrics.error("announce");
        let fields: [(&str, &(dyn ToString + Sync)); 2] = [("namespace", &home), ("error", &e)];
        log.warn("cannot announce where pauses are read: helm drift pause will not find this watcher", &fields);
    }
}

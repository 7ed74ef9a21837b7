//! The act of healing: the facts of a drifted release read (opt-in, what the rate limit and
//! fights leave, pauses, windows, authority, the history read again), the one course decided
//! by [`course`], then carried out: a repair within the release's authority (only while
//! leading), each step logged, refusals, pauses and abandoned objects announced, and the
//! verdicts after the repair taken in.

use super::course::{Course, Facts, Fresh, course};
use super::decide::{Decision, superseded};
use super::{Healing, paused};
use crate::engine::Session;
use crate::model::{DriftReport, ObjectId, RepairReport, StepStatus};
use crate::release::ReleaseIndex;
use crate::repair::{Authority, RepairRequest};
use crate::settings::Settings;
use crate::watch::clock::Instant;
use crate::watch::keys::ReleaseKey;
use crate::watch::outputs::Outputs;
use crate::watch::outputs::drift_events as events;
use crate::watch::store::tracker::Tracker;

/// What healing acts with: the watcher's session (its writes), settings, outputs and tracker.
pub(crate) struct Hands<'a> {
    pub(crate) session: &'a mut Session,
    pub(crate) settings: &'a Settings,
    pub(crate) outputs: &'a Outputs,
    pub(crate) tracker: &'a mut Tracker,
    /// The audit feed, to learn who ended a drift.
    pub(crate) audit: Option<&'a crate::watch::receiver::Link>,
}

/// The moment `at` (a little after: a pause or window ends at it) on the runtime's clock: the
/// one place a wall-clock time (a window's opening in its zone, a pause's end) becomes the
/// runtime's, which every other decision of healing and scheduling runs on.
pub(crate) fn instant(at: jiff::Timestamp) -> crate::watch::clock::Instant {
    let left = at.duration_since(jiff::Timestamp::now()).unsigned_abs();
    crate::watch::clock::Instant::now() + left + std::time::Duration::from_millis(10)
}

impl Healing {
    /// Heals a drifted release: reads the facts the decision asks for, in the order it asks
    /// ([`course`]), then carries the one course out; the moment to look again (the rate limit,
    /// a window, a pause), if any.
    pub(crate) async fn heal(
        &mut self,
        report: &DriftReport,
        hands: Hands<'_>,
    ) -> Option<crate::watch::clock::Instant> {
        let key: ReleaseKey = ReleaseKey::of(report);
        let opted_in = self.opts_in(&key);
        let decision = match self.releases.get(&key).filter(|_| opted_in) {
            Some(h) => self.decider.decide(&h.memory, report, Instant::now()),
            None => Decision::default(),
        };
        let home = self.options.pauses.clone().unwrap_or_else(|| hands.session.namespace().to_string());
        let source = paused::PauseSource {
            client: self.pause_client.as_ref().unwrap_or(hands.session.client()),
            cluster: self.cluster.as_deref(),
            home: &home,
            chosen: self.options.pauses.is_some(),
            outputs: hands.outputs,
            signer: hands.tracker.signer(),
        };
        let gate = self.gate(&key, jiff::Timestamp::now());
        let refusal = self.options.authority(report).refuses_all();
        let (mut held, mut fresh) = (None, Fresh::NotRead);
        let decided = loop {
            let facts = Facts {
                opted_in,
                decision: &decision,
                held: held.as_deref(),
                gate: &gate,
                refusal: refusal.as_ref(),
                fresh: &fresh,
            };
            match course(&facts) {
                // Read right before deciding (a pause written a moment before an edit holds it).
                Course::ReadPauses => {
                    self.pauses.read(&source).await;
                    held = Some(self.pauses.holding(&key, &decision.repair, &source));
                }
                Course::ReadHistory => fresh = read_again(hands.session, &key, report.revision).await,
                decided => break decided,
            }
        };
        if decided == Course::NotOptedIn {
            return None;
        }
        self.releases.entry(key.clone()).or_default().memory.abandon(&decision.abandoned);
        for (id, manager) in &decision.abandoned {
            self.abandon(report, id, manager, &hands).await;
        }
        let held = held.unwrap_or_default();
        self.pauses.say(report, &held, &source).await;
        let paused = held.iter().map(|(_, p)| p.until).min().map(instant);
        let waited = self.releases.get_mut(&key).and_then(|h| h.waiting.take());
        if matches!(decided, Course::Waiting { .. }) {
            self.entry(&key).waiting = waited;
        } else if waited.is_some() {
            hands.outputs.metrics.window(&key.namespace, &key.name, None);
        }
        self.carry_out(report, decided, paused, hands).await
    }

    /// Does what the course says (its count first, when it has one); the moment to look again.
    async fn carry_out(
        &mut self,
        report: &DriftReport,
        decided: Course,
        paused: Option<Instant>,
        hands: Hands<'_>,
    ) -> Option<Instant> {
        let key = ReleaseKey::of(report);
        if let Some(result) = decided.counted() {
            hands.outputs.metrics.repair(result);
        }
        match decided {
            // `heal` reads what these ask for before it gets here.
            Course::NotOptedIn | Course::Nothing | Course::ReadPauses | Course::ReadHistory => None,
            Course::Paused(until) => Some(instant(until)),
            Course::Later(at) => {
                hands.outputs.log.info("repair postponed (rate limit)", &[("release", &key)]);
                Some(at)
            }
            Course::Waiting { why, until } => self.wait(&key, why, until, &hands),
            Course::Refused(why, objects) => {
                self.repaired_now(&key, &[]);
                for o in report.objects.iter().filter(|o| o.is_drift() && objects.contains(&o.id)) {
                    refused(report, &o.id, &why.to_string(), &hands).await;
                }
                None
            }
            Course::Changed(why) => {
                hands.outputs.log.info(
                    "repair skipped: the release changed since it was checked",
                    &[("release", &key), ("reason", &why)],
                );
                paused
            }
            Course::Unreadable(e) => {
                hands.outputs.log.error("repair failed", &[("release", &key), ("error", &e)]);
                paused
            }
            Course::Repair(objects, history) => {
                self.repair(report, history, objects, hands).await;
                paused
            }
        }
    }

    /// A drifted release outside its repair windows: said once per window (the metric holds
    /// when it opens), looked at again then.
    fn wait(
        &mut self,
        key: &ReleaseKey,
        why: String,
        until: Option<jiff::Timestamp>,
        hands: &Hands<'_>,
    ) -> Option<crate::watch::clock::Instant> {
        if self.releases.get(key).and_then(|h| h.waiting.as_ref()) != Some(&why) {
            hands.outputs.metrics.repair("waiting");
            // No opening ahead (a deny window without end): 0.
            let opens = until.unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            hands.outputs.metrics.window(&key.namespace, &key.name, Some(opens));
            hands.outputs.log.info("repair waits for its window", &[("release", key), ("reason", &why)]);
            self.entry(key).waiting = Some(why);
        }
        until.map(instant)
    }

    async fn repair(&mut self, report: &DriftReport, fresh: ReleaseIndex, objects: Vec<ObjectId>, hands: Hands<'_>) {
        let key = ReleaseKey::of(report);
        let Some((request, writes)) = self.prepare(report, objects, &hands).await else { return };
        if !hands.outputs.leading("repair").await {
            return;
        }
        hands.session.forget_live();
        let result = crate::repair::execute_as(hands.session, hands.settings, &fresh, &request, &writes).await;
        let applied: Vec<ObjectId> = match &result {
            Ok(r) => r.steps.iter().filter(|s| s.status == StepStatus::Applied).map(|s| s.object.clone()).collect(),
            Err(_) => Vec::new(),
        };
        self.repaired_now(&key, &applied);
        match result {
            Ok(repair) => self.repaired(report, &repair, hands).await,
            Err(e) => {
                hands.outputs.metrics.repair("failed");
                hands.outputs.log.error("repair failed", &[("release", &key), ("error", &crate::errors::chain(&e))]);
            }
        }
    }

    async fn abandon(&self, report: &DriftReport, id: &ObjectId, manager: &str, hands: &Hands<'_>) {
        let release = ReleaseKey::of(report).to_string();
        hands.outputs.metrics.repair("abandoned");
        let message = format!(
            "helm-drift stopped repairing {id} of release {release}: it drifted again after each of {} repairs; {manager} keeps changing it",
            self.options.policy.fight_limit
        );
        hands.outputs.log.warn(
            "repair abandoned: something keeps changing the object",
            &[("release", &release), ("object", id), ("manager", &manager)],
        );
        hands.outputs.announce_repair(report, id, events::ABANDONED, &message, hands.tracker.signer()).await;
    }

    /// The repair request and the client to write with; `None` (said) when no client can be
    /// made.
    async fn prepare(
        &mut self,
        report: &DriftReport,
        only: Vec<ObjectId>,
        hands: &Hands<'_>,
    ) -> Option<(RepairRequest, kube::Client)> {
        let key: ReleaseKey = ReleaseKey::of(report);
        let authority = self.options.authority(report);
        let writes = match self.write_client(&authority, hands).await {
            Ok(w) => w,
            Err(e) => {
                hands.outputs.metrics.repair("failed");
                hands.outputs.log.error("repair failed", &[("release", &key), ("error", &crate::errors::chain(&e))]);
                return None;
            }
        };
        let request = RepairRequest {
            release: report.release.clone(),
            // Each by its full name: `--only`'s words for exactly that object.
            only: only.iter().map(ObjectId::selector).collect(),
            remove_foreign: self.options.remove_foreign,
            dry_run: false,
            authority: Some(authority),
            trust: Default::default(),
            service_account: None,
            progress: Default::default(),
            replace: false,
        };
        Some((request, writes))
    }

    async fn repaired(&mut self, report: &DriftReport, repair: &RepairReport, hands: Hands<'_>) {
        hands.outputs.metrics.repair(repair_result(&repair.steps.iter().map(|s| &s.status).collect::<Vec<_>>()));
        let release = ReleaseKey::of(report).to_string();
        for s in &repair.steps {
            let result = s.status.word();
            let mut fields: Vec<(&str, &(dyn ToString + Sync))> =
                vec![("release", &release), ("object", &s.object), ("result", &result)];
            match &s.status {
                StepStatus::Refused(why) => {
                    refused(report, &s.object, why, &hands).await;
                    continue;
                }
                StepStatus::Withheld(why) => {
                    refused(report, &s.object, &why.to_string(), &hands).await;
                    continue;
                }
                StepStatus::Failed(why) => fields.push(("reason", why)),
                _ => {}
            }
            hands.outputs.log.info("repair", &fields);
        }
        // What helm-drift's own rule keeps as it is (the rest was repaired all the same).
        for (object, skip) in &repair.skipped {
            if let crate::model::Skip::Withheld(why) = skip {
                refused(report, object, &why.to_string(), &hands).await;
            }
        }
        if let Some(after) = &repair.after {
            hands.outputs.metrics.record(after, 0.0);
            self.observe(after);
            let transitions = hands.tracker.update(after);
            let ender = crate::watch::receiver::ender(hands.audit, hands.session, &after.namespace);
            hands.outputs.chronicle(after, &transitions, true, ender.as_ref().map(|e| e as _));
            for t in &transitions {
                hands.outputs.announce(after, t).await;
            }
        }
    }

    /// The client a repair writes with: the watcher's own, or one impersonating the release's
    /// ServiceAccount (made once per user).
    async fn write_client(&mut self, authority: &Authority, hands: &Hands<'_>) -> anyhow::Result<kube::Client> {
        let Some(user) = authority.impersonated_user() else { return Ok(hands.session.client().clone()) };
        if let Some(c) = self.impersonated.get(&user) {
            return Ok(c.clone());
        }
        let client =
            authority.write_client(&hands.settings.connection).await?.unwrap_or_else(|| hands.session.client().clone());
        self.impersonated.insert(user, client.clone());
        Ok(client)
    }
}

/// The release's history read again right before a repair: whether the revision judged is
/// still the deployed one.
async fn read_again(session: &Session, key: &ReleaseKey, judged: u32) -> Fresh {
    match session.storage().history(&key.namespace, &key.name).await {
        Ok(index) => match superseded(&index, judged) {
            Some(why) => Fresh::Changed(why),
            None => Fresh::Unchanged(index),
        },
        Err(e) => Fresh::Unreadable(e.to_string()),
    }
}

async fn refused(report: &DriftReport, object: &ObjectId, why: &str, hands: &Hands<'_>) {
    let release = ReleaseKey::of(report).to_string();
    let fields: [(&str, &(dyn ToString + Sync)); 4] =
        [("release", &release), ("object", object), ("result", &"refused"), ("reason", &why)];
    hands.outputs.log.info("repair", &fields);
    let message = format!("helm-drift did not repair {object} of release {release}: {why}");
    hands.outputs.announce_repair(report, object, events::REFUSED, &message, hands.tracker.signer()).await;
}

/// A repair's outcome for the metric: a refusal outranks a failure, which outranks success.
fn repair_result(steps: &[&StepStatus]) -> &'static str {
    if steps.iter().any(|s| s.refused()) {
        "refused"
    } else if steps.iter().any(|s| matches!(s, StepStatus::Failed(_) | StepStatus::NotApplied)) {
        "failed"
    } else {
        "applied"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_outranks_a_failure_which_outranks_success() {
        let failed = StepStatus::Failed("conflict".into());
        let refused = StepStatus::Withheld(crate::model::Refusal::Untrusted {
            namespace: "tenant".into(),
            acting: crate::model::Acting::Watcher,
        });
        assert_eq!(repair_result(&[&StepStatus::Applied, &StepStatus::Applied]), "applied");
        assert_eq!(repair_result(&[&StepStatus::Applied, &failed]), "failed");
        assert_eq!(repair_result(&[&StepStatus::Applied, &StepStatus::NotApplied]), "failed");
        assert_eq!(repair_result(&[&failed, &refused]), "refused");
        assert_eq!(repair_result(&[]), "applied");
    }
}

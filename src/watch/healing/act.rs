//! The act of healing: the drift of a release that opted in, repaired within its authority
//! (only while leading, only at the revision judged), each step logged, refusals and abandoned
//! objects announced, and the verdicts after the repair taken in.

use super::decide::{Decision, superseded};
use super::{Healing, paused};
use crate::engine::Session;
use crate::model::{DriftReport, ObjectId, Refusal, RepairReport, StepStatus};
use crate::release::ReleaseIndex;
use crate::repair::{Authority, RepairRequest};
use crate::settings::Settings;
use crate::watch::keys::ReleaseKey;
use crate::watch::outputs::Outputs;
use crate::watch::outputs::drift_events as events;
use crate::watch::store::tracker::Tracker;
use tokio::time::Instant;

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
pub(crate) fn instant(at: jiff::Timestamp) -> tokio::time::Instant {
    let left = at.duration_since(jiff::Timestamp::now()).unsigned_abs();
    tokio::time::Instant::now() + left + std::time::Duration::from_millis(10)
}

/// What one decision comes to, before anything is written.
#[derive(Debug, PartialEq)]
enum Course {
    /// Nothing to repair now.
    Nothing,
    /// The rate limit holds: look again then.
    Later(Instant),
    /// The release's authority allows no write: each of these objects is refused, for this reason.
    Refuse(Refusal, Vec<ObjectId>),
    /// Repair these objects.
    Repair(Vec<ObjectId>),
}

/// The course a decision comes to, given whether the release's authority refuses every write.
fn course(decision: &Decision, refusal: Option<Refusal>) -> Course {
    if let Some(at) = decision.later {
        return Course::Later(at);
    }
    if decision.repair.is_empty() {
        return Course::Nothing;
    }
    match refusal {
        Some(why) => Course::Refuse(why, decision.repair.clone()),
        None => Course::Repair(decision.repair.clone()),
    }
}

impl Healing {
    /// Heals a drifted release of an opted-in release; the moment to look again when the rate
    /// limit postpones it.
    pub(crate) async fn heal(&mut self, report: &DriftReport, hands: Hands<'_>) -> Option<tokio::time::Instant> {
        let key: ReleaseKey = ReleaseKey::of(report);
        let mut decision = self.decider.decide(report, Instant::now());
        for (id, manager) in &decision.abandoned {
            self.abandon(report, id, manager, &hands).await;
        }
        let home = self.options.pauses.clone().unwrap_or_else(|| hands.session.namespace().to_string());
        let reading = paused::PauseSource {
            client: self.pause_client.as_ref().unwrap_or(hands.session.client()),
            cluster: self.cluster.as_deref(),
            home: &home,
            chosen: self.options.pauses.is_some(),
            outputs: hands.outputs,
            signer: hands.tracker.signer(),
        };
        let paused = self.pauses.held(report, &mut decision, reading).await.map(instant);
        if !decision.repair.is_empty()
            && let super::window::Gate::Wait { why, until } = self.gate(&key, jiff::Timestamp::now())
        {
            return self.wait(&key, why, until, &hands);
        }
        if self.waiting.remove(&key).is_some() {
            hands.outputs.metrics.window(&key.namespace, &key.name, None);
        }
        let refusal = self.options.authority(report).refuses_all();
        match course(&decision, refusal) {
            Course::Nothing => paused,
            Course::Later(at) => {
                hands.outputs.metrics.repair("rate-limited");
                hands.outputs.log.info("repair postponed (rate limit)", &[("release", &key)]);
                Some(at)
            }
            Course::Refuse(why, objects) => {
                self.decider.repaired(report, &[], Instant::now());
                hands.outputs.metrics.repair("refused");
                for o in report.objects.iter().filter(|o| o.is_drift() && objects.contains(&o.id)) {
                    refused(report, &o.id, &why.to_string(), &hands).await;
                }
                None
            }
            Course::Repair(objects) => {
                self.repair(report, objects, hands).await;
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
    ) -> Option<tokio::time::Instant> {
        if self.waiting.get(key) != Some(&why) {
            hands.outputs.metrics.repair("waiting");
            // No opening ahead (a deny window without end): 0.
            let opens = until.unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            hands.outputs.metrics.window(&key.namespace, &key.name, Some(opens));
            hands.outputs.log.info("repair waits for its window", &[("release", key), ("reason", &why)]);
            self.waiting.insert(key.clone(), why);
        }
        until.map(instant)
    }

    async fn repair(&mut self, report: &DriftReport, objects: Vec<ObjectId>, hands: Hands<'_>) {
        let key = ReleaseKey::of(report);
        let Some((fresh, request, writer)) = self.prepare(report, objects, &hands).await else { return };
        if !hands.outputs.leading("repair").await {
            return;
        }
        hands.session.forget_live();
        let result = crate::repair::execute_as(hands.session, hands.settings, &fresh, &request, &writer).await;
        let applied: Vec<ObjectId> = match &result {
            Ok(r) => r.steps.iter().filter(|s| s.status == StepStatus::Applied).map(|s| s.object.clone()).collect(),
            Err(_) => Vec::new(),
        };
        self.decider.repaired(report, &applied, Instant::now());
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

    /// The release's history read again, the repair request and the client to write with; `None`
    /// (said) when the release changed since it was judged or no writer can be made.
    async fn prepare(
        &mut self,
        report: &DriftReport,
        only: Vec<ObjectId>,
        hands: &Hands<'_>,
    ) -> Option<(ReleaseIndex, RepairRequest, kube::Client)> {
        let key: ReleaseKey = ReleaseKey::of(report);
        let failed = |e: &dyn std::fmt::Display| {
            hands.outputs.metrics.repair("failed");
            hands.outputs.log.error("repair failed", &[("release", &key), ("error", &e.to_string())]);
        };
        let fresh = match hands.session.storage().history(&key.namespace, &key.name).await {
            Ok(fresh) => fresh,
            Err(e) => {
                failed(&e);
                return None;
            }
        };
        if let Some(why) = superseded(&fresh, report.revision) {
            hands.outputs.metrics.repair("superseded");
            hands.outputs.log.info(
                "repair skipped: the release changed since it was checked",
                &[("release", &key), ("reason", &why)],
            );
            return None;
        }
        let authority = self.options.authority(report);
        let writer = match self.write_client(&authority, hands).await {
            Ok(w) => w,
            Err(e) => {
                failed(&crate::errors::chain(&e));
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
            progress: Default::default(),
            replace: false,
        };
        Some((fresh, request, writer))
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
        if let Some(after) = &repair.after {
            hands.outputs.metrics.record(after, 0.0);
            self.decider.observe(after);
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
        if let Some(c) = self.writers.get(&user) {
            return Ok(c.clone());
        }
        let client =
            authority.write_client(&hands.settings.connection).await?.unwrap_or_else(|| hands.session.client().clone());
        self.writers.insert(user, client.clone());
        Ok(client)
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
        let refused = StepStatus::Withheld(Refusal::Untrusted { namespace: "tenant".into() });
        assert_eq!(repair_result(&[&StepStatus::Applied, &StepStatus::Applied]), "applied");
        assert_eq!(repair_result(&[&StepStatus::Applied, &failed]), "failed");
        assert_eq!(repair_result(&[&StepStatus::Applied, &StepStatus::NotApplied]), "failed");
        assert_eq!(repair_result(&[&failed, &refused]), "refused");
        assert_eq!(repair_result(&[]), "applied");
    }

    fn untrusted() -> Refusal {
        Refusal::Untrusted { namespace: "tenant".into() }
    }

    fn decision(repair: &[&str], later: Option<Instant>) -> Decision {
        let id = |s: &&str| ObjectId::new("v1", s.split('/').next().unwrap(), Some("ns"), s.split('/').nth(1).unwrap());
        Decision { repair: repair.iter().map(id).collect(), later, abandoned: Vec::new() }
    }

    #[test]
    fn a_rate_limited_release_waits_even_when_its_authority_would_refuse() {
        let at = Instant::now();
        assert_eq!(course(&decision(&[], Some(at)), None), Course::Later(at));
        assert_eq!(course(&decision(&[], Some(at)), Some(untrusted())), Course::Later(at));
    }

    #[test]
    fn an_authority_that_allows_no_write_refuses_each_object_and_repairs_none() {
        let d = decision(&["Deployment/web", "Service/web"], None);
        assert_eq!(course(&d, Some(untrusted())), Course::Refuse(untrusted(), d.repair.clone()));
        assert_eq!(course(&d, None), Course::Repair(d.repair.clone()));
        assert_eq!(
            course(&decision(&[], None), Some(untrusted())),
            Course::Nothing,
            "nothing drifted: nothing refused"
        );
    }
}

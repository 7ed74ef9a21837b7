//! Self-healing: repairs what the policy allows for a release that opted in, through the
//! release's own authority, and gives up on what fights back.

use super::*;
use crate::model::DriftReport;

impl Watcher<'_> {
    /// Self-healing of one release: repair what the policy allows, abandon what fights back.
    pub(super) async fn heal(&mut self, report: &DriftReport) {
        let Some(healer) = self.healer.as_mut() else { return };
        let key: ReleaseKey = ReleaseKey::of(report);
        let decision = healer.decide(report, Instant::now());
        for (id, manager) in &decision.abandoned {
            self.abandon(report, id, manager).await;
        }
        if let Some(at) = decision.later {
            self.metrics.repair("rate-limited");
            self.log.info("repair postponed (rate limit)", &[("release", &key)]);
            self.schedule.later(key, at.into());
            return;
        }
        if decision.repair.is_empty() {
            return;
        }
        // Nothing such a record asks is written: refused as it stands, without reading the release
        // again (a namespace full of forged records costs no more than their first check).
        let options = self.options.repair.as_ref().expect("healing needs repair options");
        if let Some(why) = options.authority(&key.namespace, &key.name).refuses_all() {
            if let Some(h) = self.healer.as_mut() {
                h.repaired(report, &[], Instant::now());
            }
            self.metrics.repair("refused");
            let wanted = |o: &&crate::model::ObjectDrift| decision.repair.contains(&heal::only(&o.id));
            for o in report.objects.iter().filter(|o| o.is_drift()).filter(wanted) {
                self.refused(report, &o.id, &why).await;
            }
            return;
        }
        let Some((fresh, request, writer)) = self.prepare(report, decision.repair).await else { return };
        if !self.leading("repair").await {
            return;
        }
        self.session.forget_live();
        let result = crate::repair::execute_as(&mut self.session, self.settings, &fresh, &request, &writer).await;
        let applied: Vec<ObjectId> = match &result {
            Ok(r) => r.steps.iter().filter(|s| s.status == StepStatus::Applied).map(|s| s.object.clone()).collect(),
            Err(_) => Vec::new(),
        };
        if let Some(h) = self.healer.as_mut() {
            h.repaired(report, &applied, Instant::now());
        }
        match result {
            Ok(repair) => self.repaired(report, &repair).await,
            Err(e) => {
                self.metrics.repair("failed");
                self.log.error("repair failed", &[("release", &key), ("error", &crate::errors::chain(&e))]);
            }
        }
    }

    /// An object something keeps changing: no more repairs of it until it is in sync again.
    async fn abandon(&self, report: &DriftReport, id: &ObjectId, manager: &str) {
        let release = ReleaseKey::of(report).to_string();
        self.metrics.repair("abandoned");
        let message = format!(
            "helm-drift stopped repairing {id} of release {release}: it drifted again after each of {} repairs; {manager} keeps changing it",
            self.options.repair.as_ref().map_or(0, |r| r.policy.fight_limit)
        );
        self.log.warn(
            "repair abandoned: something keeps changing the object",
            &[("release", &release), ("object", id), ("manager", &manager)],
        );
        self.announce_repair(report, id, events::ABANDONED, &message).await;
    }

    /// What a repair needs, read right before acting: the release's history (an upgrade that
    /// started since the release was judged is never undone), the request and the client it
    /// writes through. `None` (said and counted) when it must not or cannot go ahead.
    async fn prepare(
        &mut self,
        report: &DriftReport,
        only: Vec<String>,
    ) -> Option<(ReleaseIndex, RepairRequest, kube::Client)> {
        let options = self.options.repair.as_ref().expect("healing needs repair options");
        let key: ReleaseKey = ReleaseKey::of(report);
        let fresh = match self.session.storage.history(&key.namespace, &key.name).await {
            Ok(fresh) => fresh,
            Err(e) => {
                self.metrics.repair("failed");
                self.log.error("repair failed", &[("release", &key), ("error", &e)]);
                return None;
            }
        };
        if let Some(why) = heal::superseded(&fresh, report.revision) {
            self.metrics.repair("superseded");
            self.log.info(
                "repair skipped: the release changed since it was checked",
                &[("release", &key), ("reason", &why)],
            );
            return None;
        }
        let authority = options.authority(&key.namespace, &key.name);
        let remove_foreign = options.remove_foreign;
        let writer = match self.writer(&authority).await {
            Ok(w) => w,
            Err(e) => {
                self.metrics.repair("failed");
                self.log.error("repair failed", &[("release", &key), ("error", &crate::errors::chain(&e))]);
                return None;
            }
        };
        let request = RepairRequest {
            release: report.release.clone(),
            only,
            remove_foreign,
            dry_run: false,
            authority: Some(authority),
            progress: Default::default(),
        };
        Some((fresh, request, writer))
    }

    /// A repair done: each step logged, refusals announced, the verdict after it taken in.
    async fn repaired(&mut self, report: &DriftReport, repair: &crate::model::RepairReport) {
        let outcome = repair_result(&repair.steps.iter().map(|s| &s.status).collect::<Vec<_>>());
        self.metrics.repair(outcome);
        let release = ReleaseKey::of(report).to_string();
        for s in &repair.steps {
            let result = s.status.word();
            let mut fields: Vec<(&str, &dyn ToString)> =
                vec![("release", &release), ("object", &s.object), ("result", &result)];
            match &s.status {
                StepStatus::Refused(why) => {
                    self.refused(report, &s.object, why).await;
                    continue;
                }
                StepStatus::Failed(why) => fields.push(("reason", why)),
                _ => {}
            }
            self.log.info("repair", &fields);
        }
        if let Some(after) = &repair.after {
            self.metrics.record(after, 0.0);
            if let Some(h) = self.healer.as_mut() {
                h.observe(after);
            }
            let transitions = self.tracker.update(after);
            for t in &transitions {
                self.announce(after, t).await;
            }
        }
    }

    /// A step refused: logged, and announced (Event, notification) as the rule that refused it.
    async fn refused(&self, report: &DriftReport, object: &ObjectId, why: &str) {
        let release = ReleaseKey::of(report).to_string();
        let fields: [(&str, &dyn ToString); 4] =
            [("release", &release), ("object", object), ("result", &"refused"), ("reason", &why)];
        self.log.info("repair", &fields);
        let message = format!("helm-drift did not repair {object} of release {release}: {why}");
        self.announce_repair(report, object, events::REFUSED, &message).await;
    }

    /// The client repairs write through: the watcher's own, or one impersonating the release
    /// namespace's ServiceAccount (kept per namespace).
    pub(super) async fn writer(&mut self, authority: &crate::repair::Authority) -> Result<kube::Client> {
        let Some(user) = authority.impersonated_user() else { return Ok(self.session.cluster.client.clone()) };
        if let Some(c) = self.writers.get(&user) {
            return Ok(c.clone());
        }
        let mut connection = self.settings.connection.clone();
        connection.as_user = Some(user.clone());
        connection.as_groups = Vec::new();
        let client = crate::api::connect(&connection).await?.client;
        self.writers.insert(user, client.clone());
        Ok(client)
    }
}

/// One word for a repair's outcome (a metric label).
pub(super) fn repair_result(steps: &[&StepStatus]) -> &'static str {
    if steps.iter().any(|s| matches!(s, StepStatus::Refused(_))) {
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
        let refused = StepStatus::Refused("outside its namespace".into());
        assert_eq!(repair_result(&[&StepStatus::Applied, &StepStatus::Applied]), "applied");
        assert_eq!(repair_result(&[&StepStatus::Applied, &failed]), "failed");
        assert_eq!(repair_result(&[&StepStatus::Applied, &StepStatus::NotApplied]), "failed");
        assert_eq!(repair_result(&[&failed, &refused]), "refused");
        assert_eq!(repair_result(&[]), "applied");
    }
}

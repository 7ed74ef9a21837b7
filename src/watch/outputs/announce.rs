//! Announcing: a drift transition or a repair not made becomes an Event (once per drift
//! signature, only while leading), a log line and a notification.

use super::Outputs;
use super::drift_events as events;
use crate::model::{DriftReport, ObjectDrift, ObjectId};
use crate::watch::keys::ReleaseKey;
use crate::watch::store::signature::{self, Signer};
use crate::watch::store::tracker::Transition;
use std::collections::BTreeSet;

impl Outputs {
    /// Records the Event for a transition and, when it is news, notifies.
    pub(crate) async fn announce(&self, report: &DriftReport, t: &Transition) {
        let key = ReleaseKey::of(report);
        // Who the audit says made it is for the page and the log unless published: Events are
        // read by everyone who may read the namespace's, notifications by the receiver's channel.
        // Nothing of an object a record stored apart only claims: its readers may not read it.
        let public = match t {
            Transition::Detected { object, .. } if report.seals(&object.id) => Some(object.without_values()),
            Transition::Detected { object, .. } if !self.publish_names => Some(object.without_people()),
            _ => None,
        };
        let (reason, id, signature, drifted): (&str, _, _, Option<&ObjectDrift>) = match t {
            Transition::Detected { object, signature } => {
                (events::DETECTED, &object.id, signature, Some(public.as_ref().unwrap_or(object)))
            }
            Transition::Resolved { object, signature } => (events::RESOLVED, object, signature, None),
        };
        let message = match drifted {
            Some(o) => detected_message(report, o),
            None => format!(
                "{id} is back in sync with release {}/{} revision {}",
                report.namespace, report.release, report.revision
            ),
        };
        let paths = drifted.map(signature::paths).unwrap_or_default().join(" ");
        let release = key.to_string();
        let short: String = signature.chars().take(16).collect();
        if self.record(report, id, reason, signature, &message).await {
            let mut fields: Vec<(&str, &(dyn ToString + Sync))> =
                vec![("release", &release), ("object", id), ("reason", &reason), ("signature", &short)];
            if drifted.is_some() && !paths.is_empty() {
                fields.push(("paths", &paths));
            }
            self.log.info(if drifted.is_some() { "drift detected" } else { "drift resolved" }, &fields);
            self.notifier.send(crate::report::json::notification(reason, report, signature, drifted, id));
        }
    }

    /// Records the Event about `id` (only while leading) and says whether it is news: anything but
    /// an Event helm-drift itself already recorded for this signature (one it could not record, or
    /// one of that name someone else wrote, is news all the same).
    pub(crate) async fn record(
        &self,
        report: &DriftReport,
        id: &ObjectId,
        reason: &str,
        signature: &str,
        message: &str,
    ) -> bool {
        if !self.leading("record an Event").await {
            return false;
        }
        let key = ReleaseKey::of(report);
        let client = &self.events;
        self.on_proxy(&key, reason, signature, message).await;
        match events::record(client, (&subject(report, id), None), &key, reason, signature, message).await {
            Ok(events::Recorded::Created) => {
                self.metrics.event(reason);
                true
            }
            Ok(events::Recorded::Existing) => false,
            Ok(events::Recorded::Foreign) => {
                self.metrics.rejected("event", 1);
                self.log.warn(
                    "an Event helm-drift did not write holds this drift's name: notified all the same",
                    &[("object", id)],
                );
                true
            }
            Err(e) => {
                self.metrics.error(e.reason());
                self.log.warn("cannot record the Event", &[("object", id), ("error", &e)]);
                true
            }
        }
    }

    /// The same Event on the release's HelmReleaseProxy in the management cluster, when CAAPH
    /// installed it (where the platform team looks; its failure is said, never in the way).
    async fn on_proxy(&self, key: &ReleaseKey, reason: &str, signature: &str, message: &str) {
        let Some(s) = self.proxies.as_ref().and_then(|p| p.subject(key, message)) else { return };
        match events::record(s.client, (&s.id, s.uid), key, reason, signature, &s.message).await {
            Err(e) => {
                self.metrics.error(e.reason());
                self.log.warn("cannot record the Event on the HelmReleaseProxy", &[("release", key), ("error", &e)]);
            }
            Ok(events::Recorded::Foreign) => self.metrics.rejected("event", 1),
            Ok(_) => {}
        }
    }

    /// A release judged at the revision CAAPH recorded while another is deployed: said once
    /// (log, and an Event on its HelmReleaseProxy). Its drift is judged against CAAPH's
    /// revision, and it is not healed (a repair heals only the deployed revision it judged).
    pub(crate) async fn unrecorded_revision(&self, index: &crate::release::ReleaseIndex, judged: u32) {
        let Some(proxies) = &self.proxies else { return };
        let key = ReleaseKey::new(&index.namespace, &index.name);
        let Some(deployed) = index.deployed().and_then(|r| proxies.unrecorded(&key, r.revision)) else { return };
        self.metrics.rejected("record", 1);
        let message = format!(
            "release {key} is at revision {deployed} on its cluster, CAAPH recorded revision {judged}: judged against {judged}, not healed"
        );
        self.log.warn(
            "a revision CAAPH did not record is deployed",
            &[("release", &key), ("deployed", &deployed), ("recorded", &judged)],
        );
        if self.leading("record an Event").await
            && let Some(s) = proxies.subject(&key, &message)
            && let Err(e) = events::record(
                s.client,
                (&s.id, s.uid),
                &key,
                events::UNRECORDED,
                &format!("{deployed:016}"),
                &s.message,
            )
            .await
        {
            self.log.warn("cannot record the Event on the HelmReleaseProxy", &[("release", &key), ("error", &e)]);
        }
    }

    /// An Event and a notification about a repair not made (abandoned, refused), once per drift
    /// signature of the object.
    pub(crate) async fn announce_repair(
        &self,
        report: &DriftReport,
        id: &ObjectId,
        reason: &str,
        message: &str,
        signer: &Signer,
    ) {
        let key = ReleaseKey::of(report);
        self.chronicle_step(report, id, message.to_string());
        let object = report.objects.iter().find(|o| &o.id == id);
        let signature = object.and_then(|o| signer.of(&key, o)).unwrap_or_else(|| "0".repeat(64));
        if !self.record(report, id, reason, &signature, message).await {
            return;
        }
        let sealed = object.filter(|o| report.seals(&o.id)).map(ObjectDrift::without_values);
        let mut note = crate::report::json::notification(reason, report, &signature, sealed.as_ref().or(object), id);
        note["message"] = serde_json::Value::String(message.to_string());
        self.notifier.send(note);
    }
}

/// What an Event about object `id` of a release is recorded on: the object when it lives in the
/// namespace the release's record is stored in, else the storage record, so that a record (which
/// anyone who may write Secrets there can forge) never makes the watcher write Events into other
/// namespaces (a record stored apart included: its Events stay where it is stored). The message
/// names the object either way.
fn subject(report: &DriftReport, id: &ObjectId) -> ObjectId {
    if id.namespace.as_deref() == Some(report.stored_in()) {
        return id.clone();
    }
    report.record_id().unwrap_or_else(|| id.clone())
}

/// The Event message of a new drift: the verdict, the paths and who changed them (no values).
pub(crate) fn detected_message(report: &DriftReport, o: &ObjectDrift) -> String {
    let paths = signature::paths(o);
    // With --audit-publish-names the person the audit names too (else the object comes without).
    let who = |a: &crate::model::Attribution| match &a.audit {
        Some(crate::model::Audited::Found(p)) => {
            format!("{} by {}", a.manager, p.named())
        }
        _ => a.manager.clone(),
    };
    let mut by: BTreeSet<String> = o.changed_by().map(who).collect();
    if let Some(crate::model::Audited::Found(p)) = &o.deleted_by {
        by.insert(format!("deleted by {}", p.named()));
    }
    let by = if by.is_empty() {
        String::new()
    } else {
        format!(" (changed by {})", by.into_iter().collect::<Vec<_>>().join(", "))
    };
    let at = if paths.is_empty() { String::new() } else { format!(": {}", paths.join(", ")) };
    let message = format!(
        "{} drifted from release {}/{} revision {} ({}){at}{by}",
        o.id,
        report.namespace,
        report.release,
        report.revision,
        o.drift_kind().label()
    );
    // Read in terminals (kubectl describe, get events): no control character from the cluster.
    crate::report::controls::escaped(&message, false).into_owned()
}

#[cfg(test)]
mod tests {
    use crate::model::ObjectId;

    #[test]
    fn events_about_objects_beyond_the_release_namespace_go_on_its_record() {
        let mut report = crate::testing::report("tenant", "evil", Vec::new());
        report.record = "Secret tenant/sh.helm.release.v1.evil.v1".into();
        let own = ObjectId::new("v1", "ConfigMap", Some("tenant"), "c");
        assert_eq!(super::subject(&report, &own), own);
        let record = ObjectId::new("v1", "Secret", Some("tenant"), "sh.helm.release.v1.evil.v1");
        for beyond in [
            ObjectId::new("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None, "admin"),
            ObjectId::new("v1", "ConfigMap", Some("kube-system"), "x"),
        ] {
            assert_eq!(super::subject(&report, &beyond), record);
        }
        report.record = "SQL row tenant/sh.helm.release.v1.evil.v1".into();
        let crb = ObjectId::new("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None, "admin");
        assert_eq!(super::subject(&report, &crb), crb, "no Kubernetes object to record it on");
    }
}

//! What the watcher publishes about a verdict (Events, notifications, the page) to readers who
//! may not see everything it saw: without the people the audit names, and, for an object a
//! record stored apart only claims, without its live values.

use super::{DriftReport, ObjectDrift};
use serde_json::Value;
use std::borrow::Cow;

impl ObjectDrift {
    /// The same verdict without who the audit says made it (for what everyone who may read a
    /// namespace's Events reads).
    pub(crate) fn without_people(&self) -> ObjectDrift {
        let mut o = self.clone();
        o.deleted_by = None;
        let fields = o.fields.iter_mut().filter_map(|f| f.changed_by.as_mut());
        let added = o.added.iter_mut().filter_map(|a| a.changed_by.as_mut());
        let expected = o.expected.iter_mut().filter_map(|e| e.changed_by.as_mut());
        for by in fields.chain(added).chain(expected).chain(o.recreated.as_mut()) {
            by.audit = None;
        }
        o
    }

    /// The same verdict without anything of the live object: its values and who wrote them
    /// become `(hidden)`, the paths stay (what is published to readers who may not read the
    /// object: those of the namespace a record stored apart is stored in).
    pub(crate) fn without_values(&self) -> ObjectDrift {
        let mut o = self.without_people();
        let hidden = || Value::String(super::HIDDEN.to_string());
        for f in &mut o.fields {
            f.live = f.live.as_ref().map(|_| hidden());
            (f.changed_by, f.provenance) = (None, None);
        }
        for a in &mut o.added {
            (a.value, a.manager, a.changed_by) = (hidden(), super::HIDDEN.to_string(), None);
        }
        for e in &mut o.expected {
            (e.value, e.changed_by) = (hidden(), None);
        }
        for d in &mut o.disowned {
            d.manager = super::HIDDEN.to_string();
        }
        for v in &mut o.server_values {
            v.manager = super::HIDDEN.to_string();
        }
        (o.live, o.recreated, o.deleted_by) = (None, None, None);
        o
    }
}

impl DriftReport {
    /// Whether what is published about object `id` leaves its live values out: it lives outside
    /// the storage namespace of a record stored apart that the operator does not trust, whose
    /// readers (those of the storage namespace) may not read it.
    pub(crate) fn seals(&self, id: &super::ObjectId) -> bool {
        let untrusted = self.stored_apart.as_ref().is_some_and(|s| s.vouch != super::Vouch::Trusted);
        untrusted && id.namespace.as_deref() != Some(self.stored_in())
    }

    /// The report as the watcher publishes it (Events, notifications, the page): each object it
    /// [`seals`](Self::seals) without its live values.
    pub(crate) fn published(&self) -> Cow<'_, DriftReport> {
        if !self.objects.iter().any(|o| self.seals(&o.id)) {
            return Cow::Borrowed(self);
        }
        let mut sealed = self.clone();
        for o in &mut sealed.objects {
            if self.seals(&o.id) {
                *o = o.without_values();
            }
        }
        Cow::Owned(sealed)
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{FieldDiff, ObjectDrift, ObjectId, StoredApart, Verdict, Vouch};
    use serde_json::json;

    fn drifted(ns: &str) -> ObjectDrift {
        let mut o = ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some(ns), "web"), None, Verdict::Modified);
        o.fields.push(FieldDiff::new(
            crate::testing::path("/data/password"),
            Some(&json!("a")),
            Some(&json!("s3cret")),
        ));
        o.live = Some(json!({"data": {"password": "s3cret"}}));
        o
    }

    #[test]
    fn nothing_of_what_a_record_stored_apart_only_claims_is_published() {
        let mut report = crate::testing::report("apps", "web", vec![drifted("apps"), drifted("flux-system")]);
        assert!(matches!(report.published(), std::borrow::Cow::Borrowed(_)), "a record of its own namespace");
        let vouch = Vouch::HelmRelease { name: "web".into(), service_account: None };
        report.stored_apart = Some(StoredApart { namespace: "flux-system".into(), vouch });
        let published = report.published();
        let text = format!("{:?}", published.objects[0]);
        assert!(!text.contains("s3cret") && text.contains("password"), "the value hidden, the path said: {text}");
        assert!(format!("{:?}", published.objects[1]).contains("s3cret"), "its own namespace's object");
        report.stored_apart.as_mut().unwrap().vouch = Vouch::Trusted;
        assert!(format!("{:?}", report.published().objects[0]).contains("s3cret"), "a trusted namespace's");
    }
}

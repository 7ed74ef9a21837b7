//! Which write a value under Helm's name was (the read-only engine): the apply of the deployed
//! revision, as admission left it (a registry mirror rewriting an image: not drift), or a later
//! write that only claims Helm's name (`kubectl patch --field-manager=helm`: drift). A field
//! manager is whatever the client says, so the name decides nothing; what the cluster recorded
//! about the write does, as far as it tells:
//!
//! - the operation: Helm 4 applies server-side (`Apply`), Helm 3 and client-side Helm 4 write
//!   `Update`s; the other operation under Helm's name is not Helm's apply;
//! - the object's resourceVersion is no evidence: a controller's status write moves it, and a
//!   verdict must not change with whether one has landed (one state, one verdict);
//! - the time on the write's managedFields entry is whatever the writing client sent (a
//!   `kubectl replace` puts old entries back): it explains a verdict, never proves Helm's apply;
//! - for the kinds whose `generation` the server resets on create and raises on every change
//!   outside `metadata`: generation 1 on an object created before the revision was recorded
//!   means nothing outside `metadata` changed since Helm created it.
//!
//! In the second the revision was recorded, without the generation's word, the cluster cannot
//! tell: the difference stays drift and the report says why.

use crate::model::{Attribution, FieldPath, HelmWrite, Provenance};
use jiff::Timestamp;
use serde_json::Value;

/// What the storage recorded of the deployed revision's apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Deployed {
    pub(crate) revision: u32,
    /// When Helm began it (the record's `info.last_deployed`, Helm's clock).
    pub(crate) began: Option<Timestamp>,
    /// When the storage last wrote the record's content (the server's clock, to the second).
    pub(crate) recorded: Option<Timestamp>,
    /// How the release's Helm applies.
    pub(crate) apply: crate::model::Apply,
}

/// What the judge of one object knows: the kind, the live object and the revision.
pub(crate) struct JudgedObject<'a> {
    pub(crate) group: &'a str,
    pub(crate) kind: &'a str,
    pub(crate) live: &'a Value,
    pub(crate) deployed: &'a Deployed,
}

/// Which write `by` of the field at `path` was: the deployed revision's apply, a later one, or
/// unknown (no evidence either way).
pub(crate) fn of(w: &JudgedObject<'_>, path: &FieldPath, by: &Attribution) -> Provenance {
    let d = w.deployed;
    let rev = d.revision;
    let helm_op = d.apply.operation();
    if by.subresource.is_some() || by.operation != helm_op {
        let how = format!("{} ({})", d.apply, d.apply.operation());
        let through = by.subresource.as_ref().map_or(String::new(), |s| format!(" through /{s}"));
        return later(format!(
            "written by an {}{through} under Helm's name; Helm applies this release {how}",
            by.operation
        ));
    }
    let at = by.time.as_deref().and_then(|t| t.parse::<Timestamp>().ok());
    if let Some(found) = created_as_recorded(w, path) {
        return found;
    }
    let Some(recorded) = d.recorded else {
        return undecided(format!("the storage does not say when revision {rev} was recorded"));
    };
    let recorded_s = recorded.as_second();
    if !resent_by_each_apply(w) {
        return undecided(format!(
            "Helm 3 does not send a custom resource's unchanged values again: what revision {rev}'s apply left as it was may be anyone's"
        ));
    }
    let Some(at) = at else {
        return undecided("the write has no time".to_string());
    };
    if at.as_second() > recorded_s {
        return later(format!("written at {at}, after revision {rev} was recorded at {recorded}"));
    }
    undecided(format!(
        "written at {at} by its entry, not after revision {rev} was recorded at {recorded}; an entry's time is what the writing client sends, not proof of Helm's apply"
    ))
}

/// Why the value at `path` is the deployed revision's apply as the server left it, from what
/// only a change of the object's content moves (never a controller's status write): a field
/// outside `metadata` of a kind whose `generation` the server keeps, nothing changed since it was
/// created before the record.
pub(crate) fn created_as_recorded(w: &JudgedObject<'_>, path: &FieldPath) -> Option<Provenance> {
    let (rev, recorded) = (w.deployed.revision, w.deployed.recorded?);
    let created = unchanged_since_created(w, path).filter(|c| c.as_second() <= recorded.as_second())?;
    Some(admitted(format!(
        "unchanged outside metadata since it was created at {created} (generation 1), when revision {rev} was recorded at {recorded}"
    )))
}

/// Whether the apply of the deployed revision sent every value again whatever it was: a
/// server-side apply sends every field, Helm 3's three-way patch every field that differs from
/// live; only its two-way patch of a custom resource leaves a value it did not change as it
/// was, so what that resource holds may be anyone's.
fn resent_by_each_apply(w: &JudgedObject<'_>) -> bool {
    w.deployed.apply.is_server_side() || crate::compare::defaults::is_built_in(w.group)
}

/// When the object was created, if its kind's `generation` says nothing outside `metadata`
/// changed since (the field at `path` is outside it).
fn unchanged_since_created(w: &JudgedObject<'_>, path: &FieldPath) -> Option<Timestamp> {
    if !tracks_generation(w.group, w.kind) || path.pointer().starts_with("/metadata") {
        return None;
    }
    let meta = w.live.get("metadata")?;
    if meta.get("generation").and_then(Value::as_i64) != Some(1) {
        return None;
    }
    meta.get("creationTimestamp")?.as_str()?.parse().ok()
}

/// The kinds whose generation the API server sets to 1 on create and raises on every change
/// outside `metadata` (and `status`), on every version of the supported window (read from each by
/// `tests/integration/server.rs`). Others keep what the client sent (a ConfigMap, a Role) or
/// have none (a Service); a HorizontalPodAutoscaler tracks it from Kubernetes 1.37 only, so it
/// is not taken as evidence (a client's `generation: 1` on 1.36 would pass for proof).
pub(crate) fn tracks_generation(group: &str, kind: &str) -> bool {
    if !crate::compare::defaults::is_built_in(group) {
        return true;
    }
    matches!(
        (group, kind),
        ("", "Pod" | "ReplicationController")
            | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
            | ("batch", "Job" | "CronJob")
            | ("policy", "PodDisruptionBudget")
            | ("networking.k8s.io", "Ingress" | "NetworkPolicy")
            | ("apiextensions.k8s.io", "CustomResourceDefinition")
            | (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" | "ValidatingAdmissionPolicy"
            )
    )
}

fn admitted(evidence: String) -> Provenance {
    Provenance { write: HelmWrite::Apply, evidence }
}

fn later(evidence: String) -> Provenance {
    Provenance { write: HelmWrite::Later, evidence }
}

fn undecided(evidence: String) -> Provenance {
    Provenance { write: HelmWrite::Unknown, evidence }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Apply;
    use serde_json::json;

    fn at(t: &str) -> Option<Timestamp> {
        Some(t.parse().unwrap())
    }

    fn by(operation: &str, time: &str) -> Attribution {
        Attribution {
            manager: "helm".into(),
            operation: operation.into(),
            subresource: None,
            time: Some(time.into()),
            person: false,
            audit: None,
        }
    }

    fn deployed(apply: Apply) -> Deployed {
        Deployed { revision: 1, began: at("2026-12-02T12:00:09.5Z"), recorded: at("2026-12-02T12:00:10Z"), apply }
    }

    fn deployment(generation: i64, created: &str) -> Value {
        json!({"metadata": {"generation": generation, "creationTimestamp": created}})
    }

    const IMAGE: &str = "/spec/template/spec/containers/0/image";

    fn judge(kind: (&str, &str), live: &Value, d: &Deployed, pointer: &str, w: &Attribution) -> Provenance {
        of(&JudgedObject { group: kind.0, kind: kind.1, live, deployed: d }, &crate::testing::path(pointer), w)
    }

    #[test]
    fn an_image_rewritten_at_helms_create_is_helms_apply_even_in_the_second_it_was_recorded() {
        let live = deployment(1, "2026-12-02T12:00:10Z");
        for apply in [Apply::ClientSide, Apply::ServerSide] {
            let p = judge(
                ("apps", "Deployment"),
                &live,
                &deployed(apply),
                IMAGE,
                &by(apply.operation(), "2026-12-02T12:00:10Z"),
            );
            assert!(p.admitted() && p.decided(), "{p:?}");
            assert!(p.evidence.contains("generation 1"), "{}", p.evidence);
        }
    }

    #[test]
    fn an_entry_time_before_the_record_is_not_proof() {
        // `kubectl replace` with the old managedFields: the entry's time is from before the
        // record, the object's resourceVersion from after it.
        let mut live = deployment(4, "2026-11-01T00:00:00Z");
        live["metadata"]["resourceVersion"] = json!("150");
        for (apply, op) in [(Apply::ServerSide, "Apply"), (Apply::ClientSide, "Update")] {
            let p = judge(("apps", "Deployment"), &live, &deployed(apply), IMAGE, &by(op, "2026-11-01T00:00:00Z"));
            assert!(!p.admitted() && !p.decided(), "{p:?}");
            assert!(p.evidence.contains("not proof of Helm's apply"), "{}", p.evidence);
        }
    }

    #[test]
    fn a_later_write_under_helms_name_is_drift() {
        let cm = json!({"metadata": {"creationTimestamp": "2026-12-02T12:00:10Z"}});
        let p = judge(
            ("", "ConfigMap"),
            &cm,
            &deployed(Apply::ClientSide),
            "/data/a",
            &by("Update", "2026-12-02T12:00:11Z"),
        );
        assert!(!p.admitted() && p.decided(), "{p:?}");
        assert!(p.evidence.contains("after revision 1 was recorded"), "{}", p.evidence);
        // A spec edit raised the generation: the creation no longer speaks for it.
        let live = deployment(2, "2026-12-02T12:00:10Z");
        let p = judge(
            ("apps", "Deployment"),
            &live,
            &deployed(Apply::ServerSide),
            IMAGE,
            &by("Apply", "2026-12-02T12:00:30Z"),
        );
        assert!(!p.admitted() && p.decided(), "{p:?}");
    }

    #[test]
    fn the_other_operation_under_helms_name_is_never_helms_apply() {
        let live = deployment(1, "2026-12-02T12:00:10Z");
        // kubectl patch --field-manager=helm on a Helm 4 release; kubectl apply --server-side
        // --field-manager=helm on a Helm 3 one: even before the revision was recorded.
        let p = judge(
            ("apps", "Deployment"),
            &live,
            &deployed(Apply::ServerSide),
            IMAGE,
            &by("Update", "2026-12-02T12:00:01Z"),
        );
        assert!(!p.admitted() && p.decided() && p.evidence.contains("server-side (Apply)"), "{p:?}");
        let p = judge(
            ("apps", "Deployment"),
            &live,
            &deployed(Apply::ClientSide),
            IMAGE,
            &by("Apply", "2026-12-02T12:00:01Z"),
        );
        assert!(!p.admitted() && p.decided() && p.evidence.contains("client-side (Update)"), "{p:?}");
        let mut scaled = by("Update", "2026-12-02T12:00:01Z");
        scaled.subresource = Some("scale".into());
        let p = judge(("apps", "Deployment"), &live, &deployed(Apply::ClientSide), "/spec/replicas", &scaled);
        assert!(!p.admitted() && p.evidence.contains("/scale"), "{p:?}");
    }

    #[test]
    fn what_the_cluster_cannot_tell_leans_to_drift_and_says_so() {
        // A ConfigMap has no generation the server keeps (a client may send generation 1).
        let cm = json!({"metadata": {"generation": 1, "creationTimestamp": "2026-12-02T12:00:10Z"}});
        let p = judge(
            ("", "ConfigMap"),
            &cm,
            &deployed(Apply::ClientSide),
            "/data/a",
            &by("Update", "2026-12-02T12:00:10Z"),
        );
        assert!(!p.admitted() && !p.decided() && p.evidence.contains("not proof"), "{p:?}");
        // A label is metadata: the generation does not see it.
        let live = deployment(1, "2026-12-02T12:00:10Z");
        let p = judge(
            ("apps", "Deployment"),
            &live,
            &deployed(Apply::ServerSide),
            "/metadata/labels/a",
            &by("Apply", "2026-12-02T12:00:10Z"),
        );
        assert!(!p.decided(), "{p:?}");
        // Helm 3 leaves a custom resource's unchanged values alone: a write before the apply
        // began is anyone's.
        let widget = |cr: &Value, apply, operation| {
            judge(("example.com", "Widget"), cr, &deployed(apply), "/spec/a", &by(operation, "2026-11-01T00:00:00Z"))
        };
        for cr in
            [json!({"metadata": {"generation": 3}}), json!({"metadata": {"generation": 3, "resourceVersion": "90"}})]
        {
            let p = widget(&cr, Apply::ClientSide, "Update");
            assert!(!p.decided() && p.evidence.contains("custom resource"), "{p:?}");
        }
        // Nor is a resourceVersion from before the record: a status write would move it.
        let cr = json!({"metadata": {"generation": 3, "resourceVersion": "90"}});
        let p = widget(&cr, Apply::ServerSide, "Apply");
        assert!(!p.admitted() && !p.decided(), "{p:?}");
        // No time for the revision (an old record, a storage that keeps none), or the write.
        let none = Deployed { recorded: None, ..deployed(Apply::ClientSide) };
        assert!(!judge(("", "ConfigMap"), &cm, &none, "/data/a", &by("Update", "2026-12-02T12:00:01Z")).decided());
        let untimed = Attribution { time: None, ..by("Update", "") };
        assert!(!judge(("", "ConfigMap"), &cm, &deployed(Apply::ClientSide), "/data/a", &untimed).decided());
    }

    #[test]
    fn generation_is_trusted_only_for_kinds_the_server_keeps_it_for() {
        assert!(tracks_generation("apps", "Deployment") && tracks_generation("example.com", "Widget"));
        assert!(!tracks_generation("", "ConfigMap") && !tracks_generation("", "Service"));
        assert!(!tracks_generation("rbac.authorization.k8s.io", "Role"));
        assert!(!tracks_generation("autoscaling", "HorizontalPodAutoscaler"), "kept what the client sent before 1.37");
    }
}

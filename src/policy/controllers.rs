//! What the built-in controllers of kube-controller-manager write into a chart's objects by
//! design: expected, with the controller named, in both engines; `--strict` counts it.
//!
//! Read from kube-controller-manager's controllers (Kubernetes 1.36), those that write outside
//! `status`:
//! - `clusterrole-aggregation-controller` replaces the `rules` of a ClusterRole that has an
//!   `aggregationRule` (its own field manager): [`set_aside`].
//! - `ttl-after-finished-controller` deletes a finished Job whose `ttlSecondsAfterFinished` is
//!   set, and `token-cleaner` an expired bootstrap token Secret: [`gone_by_design`].
//! - `horizontal-pod-autoscaler` sets `spec.replicas` through `scale`: an ignore rule for each
//!   workload an HPA targets (`engine::judge`).
//! - `serviceaccount-token-controller` fills a token Secret's `data`, `persistentvolume-binder`
//!   a claim's `volumeName` and a volume's `claimRef`, `bootstrap-signer` the `cluster-info`
//!   ConfigMap, the Deployment and Job controllers their annotations: all as the
//!   `kube-controller-manager` field manager, whose additions are never foreign
//!   (`compare::managed`), and `volumeName` is a value the server chooses (`compare::defaults`).
//! - The others (endpoints, endpoint slices, garbage collector, namespace, node, certificates,
//!   quotas, disruption, cronjob, statefulset claims) write status, objects of their own, or
//!   only while an object is deleted.

use crate::model::path::under;
use crate::model::{Expected, FieldDiff, FieldPath, Foreign};
use crate::policy::ignore::ObjectRef;
use serde_json::Value;

/// Why the aggregation controller's rules are expected.
const AGGREGATED: &str = "rules gathered from the ClusterRoles its aggregationRule selects";

/// The fields of `desired` (as the chart sets it) that a controller rewrites by design, as JSON
/// pointers with the reason.
fn rewritten(o: &ObjectRef, desired: &Value) -> Option<(&'static str, &'static str)> {
    let aggregated = desired.get("aggregationRule").is_some_and(|r| !r.is_null());
    (o.group == "rbac.authorization.k8s.io" && o.kind == "ClusterRole" && aggregated).then_some(("/rules", AGGREGATED))
}

/// Takes out of the differences what a controller writes by design into this object.
pub(crate) fn set_aside(
    o: &ObjectRef,
    desired: &Value,
    fields: Vec<FieldDiff>,
    added: Vec<Foreign>,
) -> (Vec<FieldDiff>, Vec<Foreign>, Vec<Expected>) {
    let Some((at, why)) = rewritten(o, desired) else {
        return (fields, added, Vec::new());
    };
    let reason = |by: Option<&str>| format!("{why} ({})", by.unwrap_or("the clusterrole-aggregation-controller"));
    let mut expected = Vec::new();
    let (mut keep_fields, mut keep_added) = (Vec::new(), Vec::new());
    for f in fields {
        match (under(&f.path.pointer(), at), &f.live) {
            (true, live) => expected.push(Expected {
                reason: reason(f.changed_by.as_ref().map(|c| c.manager.as_str())),
                value: live.clone().unwrap_or(Value::Null),
                path: f.path,
                changed_by: f.changed_by,
            }),
            (false, _) => keep_fields.push(f),
        }
    }
    for a in added {
        match under(&a.path.pointer(), at) {
            true => expected.push(Expected {
                reason: reason(Some(&a.manager)),
                path: a.path,
                value: a.value,
                changed_by: a.changed_by,
            }),
            false => keep_added.push(a),
        }
    }
    (keep_fields, keep_added, expected)
}

/// Why an object missing from the cluster is gone by design: a Job deleted after its TTL, an
/// expired bootstrap token.
pub(crate) fn gone_by_design(o: &ObjectRef, desired: &Value) -> Option<Expected> {
    let reason = match (o.group, o.kind) {
        ("batch", "Job") if desired.pointer("/spec/ttlSecondsAfterFinished").is_some_and(Value::is_u64) => {
            "deleted once finished, as its ttlSecondsAfterFinished asks (the TTL-after-finished controller)"
        }
        ("", "Secret")
            if desired.get("type").and_then(Value::as_str) == Some("bootstrap.kubernetes.io/token")
                && ["/stringData/expiration", "/data/expiration"].iter().any(|p| desired.pointer(p).is_some()) =>
        {
            "deleted once expired, as its expiration asks (the token cleaner)"
        }
        _ => return None,
    };
    Some(Expected { path: FieldPath::root(), value: Value::Null, reason: reason.to_string(), changed_by: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Attribution;
    use serde_json::json;

    fn role(kind: &'static str) -> ObjectRef<'static> {
        ObjectRef {
            group: "rbac.authorization.k8s.io",
            version: "v1",
            kind,
            name: "agg",
            namespace: None,
            metadata: None,
        }
    }

    fn by(manager: &str) -> Option<Attribution> {
        Some(Attribution {
            manager: manager.into(),
            operation: "Apply".into(),
            subresource: None,
            time: None,
            person: false,
            audit: None,
        })
    }

    #[test]
    fn an_aggregated_cluster_roles_rules_are_the_controllers() {
        let desired = json!({"aggregationRule": {"clusterRoleSelectors": []}, "rules": []});
        let mut rules =
            FieldDiff::new(crate::testing::path("/rules"), Some(&json!([])), Some(&json!([{"verbs": ["get"]}])));
        rules.changed_by = by("clusterrole-aggregation-controller");
        let selector =
            FieldDiff::new(crate::testing::path("/aggregationRule/clusterRoleSelectors"), Some(&json!([])), None);
        let (fields, _, expected) =
            set_aside(&role("ClusterRole"), &desired, vec![rules.clone(), selector], Vec::new());
        assert_eq!(fields.len(), 1, "the selector is the chart's: {fields:?}");
        assert_eq!(expected[0].path.pointer(), "/rules");
        assert!(expected[0].reason.ends_with("(clusterrole-aggregation-controller)"), "{}", expected[0].reason);
        // Without an aggregationRule, or another kind, rules are the chart's.
        let plain = json!({"rules": []});
        assert_eq!(set_aside(&role("ClusterRole"), &plain, vec![rules.clone()], Vec::new()).0.len(), 1);
        assert_eq!(set_aside(&role("Role"), &desired, vec![rules], Vec::new()).0.len(), 1);
    }

    #[test]
    fn jobs_with_a_ttl_and_expiring_tokens_go_by_design() {
        let job = ObjectRef {
            group: "batch",
            version: "v1",
            kind: "Job",
            name: "once",
            namespace: Some("ns"),
            metadata: None,
        };
        assert!(gone_by_design(&job, &json!({"spec": {"ttlSecondsAfterFinished": 0}})).is_some());
        assert!(gone_by_design(&job, &json!({"spec": {}})).is_none());
        let secret = ObjectRef {
            group: "",
            version: "v1",
            kind: "Secret",
            name: "bootstrap-token-abc",
            namespace: Some("kube-system"),
            metadata: None,
        };
        let token =
            json!({"type": "bootstrap.kubernetes.io/token", "stringData": {"expiration": "2026-01-01T00:00:00Z"}});
        assert!(gone_by_design(&secret, &token).is_some());
        assert!(gone_by_design(&secret, &json!({"type": "Opaque", "stringData": {"expiration": "x"}})).is_none());
    }
}

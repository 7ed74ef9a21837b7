//! The order a repair applies its steps in: Helm's install order of kinds (Namespaces, quotas,
//! ServiceAccounts, Secrets and ConfigMaps, CRDs, RBAC, Services, then workloads; kinds it does
//! not know last), so that what an object needs exists before it. Namespaces and CRDs are the
//! foundation: when one is re-created, the rest of the release is judged again once it is
//! served (objects in that namespace, objects of that kind).

/// Helm's `InstallOrder` (pkg/release/util/kind_sorter.go).
const INSTALL_ORDER: [&str; 38] = [
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// Where a kind comes in Helm's install order (kinds it does not know after every known one).
pub(crate) fn rank(kind: &str) -> usize {
    INSTALL_ORDER.iter().position(|k| *k == kind).unwrap_or(INSTALL_ORDER.len())
}

/// Whether re-creating an object of this kind changes what else can be judged or written: a
/// Namespace (the objects in it), a CustomResourceDefinition (the objects of its kind).
pub(crate) fn is_foundation(kind: &str) -> bool {
    matches!(kind, "Namespace" | "CustomResourceDefinition")
}

/// Whether the API server refused a change because it touches a field that cannot change
/// (only a replacement, deleting and creating the object, can restore it).
pub(crate) fn is_immutable(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("field is immutable") || m.contains("is immutable") || m.contains("cannot be changed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_in_helms_install_order_and_unknown_kinds_last() {
        let mut kinds =
            vec!["Deployment", "Widget", "ServiceAccount", "CustomResourceDefinition", "Namespace", "ConfigMap"];
        kinds.sort_by_key(|k| rank(k));
        assert_eq!(
            kinds,
            ["Namespace", "ServiceAccount", "ConfigMap", "CustomResourceDefinition", "Deployment", "Widget"]
        );
        assert!(
            is_foundation("Namespace") && is_foundation("CustomResourceDefinition") && !is_foundation("Deployment")
        );
        assert!(is_immutable(
            r#"ConfigMap "web-config" is invalid: data: Forbidden: field is immutable when `immutable` is set"#
        ));
        assert!(is_immutable(
            r#"Deployment.apps "web" is invalid: spec.selector: Invalid value: ...: field is immutable"#
        ));
        assert!(!is_immutable("admission webhook denied the request"));
    }
}

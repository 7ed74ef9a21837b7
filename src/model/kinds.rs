//! Kinds as kubectl users write them: the kind, its plural or a built-in short name, in any case.

/// The built-in kinds a chart commonly holds, for matching what users type against them.
pub(crate) const KINDS: [&str; 32] = [
    "ConfigMap",
    "Secret",
    "Service",
    "ServiceAccount",
    "Deployment",
    "DaemonSet",
    "StatefulSet",
    "ReplicaSet",
    "Pod",
    "Job",
    "CronJob",
    "Ingress",
    "IngressClass",
    "NetworkPolicy",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "HorizontalPodAutoscaler",
    "PodDisruptionBudget",
    "CustomResourceDefinition",
    "Namespace",
    "Endpoints",
    "LimitRange",
    "ResourceQuota",
    "PriorityClass",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "StorageClass",
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "APIService",
];

/// kubectl's short names of the built-in kinds (`kubectl api-resources`).
const SHORT_NAMES: [(&str, &str); 22] = [
    ("cm", "ConfigMap"),
    ("svc", "Service"),
    ("sa", "ServiceAccount"),
    ("deploy", "Deployment"),
    ("ds", "DaemonSet"),
    ("sts", "StatefulSet"),
    ("rs", "ReplicaSet"),
    ("po", "Pod"),
    ("cj", "CronJob"),
    ("ing", "Ingress"),
    ("netpol", "NetworkPolicy"),
    ("pvc", "PersistentVolumeClaim"),
    ("pv", "PersistentVolume"),
    ("hpa", "HorizontalPodAutoscaler"),
    ("pdb", "PodDisruptionBudget"),
    ("crd", "CustomResourceDefinition"),
    ("crds", "CustomResourceDefinition"),
    ("ns", "Namespace"),
    ("ep", "Endpoints"),
    ("limits", "LimitRange"),
    ("quota", "ResourceQuota"),
    ("pc", "PriorityClass"),
];

/// Whether `typed` names `kind` as a kubectl user would write it: the kind, its plural or a
/// built-in short name, in any case (`cm`, `configmaps`, `ConfigMap`).
pub(crate) fn names_kind(typed: &str, kind: &str) -> bool {
    let typed = typed.to_ascii_lowercase();
    let lower = kind.to_ascii_lowercase();
    let plural = if lower.ends_with('y') {
        format!("{}ies", &lower[..lower.len() - 1])
    } else if lower.ends_with('s') || lower.ends_with("ch") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    };
    // A group-qualified resource (`deployments.apps`) names its kind too.
    let typed = typed.split_once('.').map_or(typed.as_str(), |(resource, _)| resource).to_string();
    typed == lower
        || typed == plural
        || SHORT_NAMES.iter().any(|(short, k)| *short == typed && k.eq_ignore_ascii_case(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_named_as_kubectl_users_write_them() {
        assert!(names_kind("netpol", "NetworkPolicy") && names_kind("networkpolicies", "NetworkPolicy"));
        assert!(names_kind("ingresses", "Ingress") && names_kind("cm", "ConfigMap"));
        assert!(names_kind("crd", "CustomResourceDefinition") && names_kind("Deployments.apps", "Deployment"));
        assert!(!names_kind("cm", "Secret") && !names_kind("deploy", "DaemonSet"));
    }
}

//! The API server's defaults for built-in kinds, as data: what each kind's defaulting functions
//! fill in, the values the server or a controller chooses (`"@chosen"`), and where a kind holds
//! pod specs (the pod spec's rules are placed at each).

/// How a rule fills a field.
#[derive(Clone, Copy, Debug)]
pub(super) enum Fill {
    /// A JSON value, merged into what is there (`"@chosen"` strings stand for [`CHOSEN`]).
    Json(&'static str),
    /// Chosen by the server when absent; an empty value sent is kept (`storageClassName: ""`
    /// means "no class").
    ChosenWhenAbsent,
    /// A container's `imagePullPolicy`: `Always` for `:latest` or an untagged image, else
    /// `IfNotPresent`.
    PullPolicy,
    /// The value of a sibling field (a port's `targetPort` is its `port`).
    Sibling(&'static str),
}

/// When a rule applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum When {
    /// Whenever the parent exists.
    Always,
    /// Only into a value Helm sent (a probe's defaults, never a probe).
    Present,
}

type DefaultRule = (&'static str, Fill, When);

use Fill::{ChosenWhenAbsent, Json, PullPolicy, Sibling};
use When::{Always, Present};

/// A pod spec's defaults (`P` is the pod spec, `C` each container of any kind).
const POD_SPEC: &[DefaultRule] = &[
    (
        "P",
        Json(
            r#"{"dnsPolicy":"ClusterFirst","restartPolicy":"Always","terminationGracePeriodSeconds":30,"securityContext":{},"schedulerName":"default-scheduler"}"#,
        ),
        Always,
    ),
    ("P/serviceAccount", Sibling("serviceAccountName"), Always),
    (
        "C",
        Json(r#"{"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","resources":{}}"#),
        Always,
    ),
    ("C/imagePullPolicy", PullPolicy, Always),
    ("C/ports/*", Json(r#"{"protocol":"TCP"}"#), Always),
    ("C/livenessProbe", Json(PROBE), Present),
    ("C/readinessProbe", Json(PROBE), Present),
    ("C/startupProbe", Json(PROBE), Present),
    ("C/livenessProbe/grpc", Json(GRPC), Present),
    ("C/readinessProbe/grpc", Json(GRPC), Present),
    ("C/startupProbe/grpc", Json(GRPC), Present),
    ("C/livenessProbe/httpGet", Json(HTTP), Present),
    ("C/readinessProbe/httpGet", Json(HTTP), Present),
    ("C/startupProbe/httpGet", Json(HTTP), Present),
    ("C/lifecycle/postStart/httpGet", Json(HTTP), Present),
    ("C/lifecycle/preStop/httpGet", Json(HTTP), Present),
    ("C/env/*/valueFrom/fieldRef", Json(FIELD_REF), Present),
    ("C/env/*/valueFrom/resourceFieldRef", Json(DIVISOR), Present),
    ("P/volumes/*/configMap", Json(MODE), Present),
    ("P/volumes/*/secret", Json(MODE), Present),
    ("P/volumes/*/projected", Json(MODE), Present),
    ("P/volumes/*/downwardAPI", Json(MODE), Present),
    ("P/volumes/*/downwardAPI/items/*/fieldRef", Json(FIELD_REF), Present),
    ("P/volumes/*/downwardAPI/items/*/resourceFieldRef", Json(DIVISOR), Present),
    ("P/volumes/*/projected/sources/*/serviceAccountToken", Json(r#"{"expirationSeconds":3600}"#), Present),
    ("P/volumes/*/projected/sources/*/downwardAPI/items/*/fieldRef", Json(FIELD_REF), Present),
    ("P/volumes/*/projected/sources/*/downwardAPI/items/*/resourceFieldRef", Json(DIVISOR), Present),
    ("P/volumes/*/hostPath", Json(r#"{"type":""}"#), Present),
    ("P/volumes/*/ephemeral/volumeClaimTemplate", Json(r#"{"metadata":{}}"#), Present),
    ("P/volumes/*/ephemeral/volumeClaimTemplate/spec", Json(r#"{"volumeMode":"Filesystem"}"#), Present),
];
const PROBE: &str = r#"{"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3}"#;
const HTTP: &str = r#"{"scheme":"HTTP"}"#;
const GRPC: &str = r#"{"service":""}"#;
const FIELD_REF: &str = r#"{"apiVersion":"v1"}"#;
const DIVISOR: &str = r#"{"divisor":"0"}"#;
const MODE: &str = r#"{"defaultMode":420}"#;

/// What the API server and the control plane fill in for a Pod itself (admission included: the
/// `default` ServiceAccount, the not-ready and unreachable tolerations). Never "chosen" where a
/// different value gives more power: a Pod re-created with another ServiceAccount or toleration
/// is drift.
const POD: &[DefaultRule] = &[(
    "/spec",
    Json(
        r#"{"enableServiceLinks":true,"nodeName":"@chosen","priority":"@chosen","preemptionPolicy":"@chosen","serviceAccountName":"default","tolerations":[
            {"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},
            {"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]}"#,
    ),
    Always,
)];

const DEPLOYMENT: &[DefaultRule] = &[
    (
        "/spec",
        Json(
            r#"{"replicas":1,"revisionHistoryLimit":10,"progressDeadlineSeconds":600,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}"#,
        ),
        Always,
    ),
    ("/metadata", Json(r#"{"annotations":{"deployment.kubernetes.io/revision":"@chosen"}}"#), Always),
];
const REPLICATION_CONTROLLER: &[DefaultRule] = &[("/spec", Json(r#"{"replicas":1}"#), Always)];
const REPLICA_SET: &[DefaultRule] = &[
    ("/spec", Json(r#"{"replicas":1}"#), Always),
    (
        "/metadata",
        Json(
            r#"{"annotations":{"deployment.kubernetes.io/revision":"@chosen","deployment.kubernetes.io/desired-replicas":"@chosen","deployment.kubernetes.io/max-replicas":"@chosen"}}"#,
        ),
        Always,
    ),
];
const STATEFUL_SET: &[DefaultRule] = &[
    (
        "/spec",
        Json(
            r#"{"replicas":1,"podManagementPolicy":"OrderedReady","revisionHistoryLimit":10,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0,"maxUnavailable":1}},"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"}}"#,
        ),
        Always,
    ),
    (
        "/spec/volumeClaimTemplates/*",
        Json(
            r#"{"apiVersion":"v1","kind":"PersistentVolumeClaim","spec":{"volumeMode":"Filesystem"},"status":{"phase":"Pending"}}"#,
        ),
        Present,
    ),
];
const DAEMON_SET: &[DefaultRule] = &[
    (
        "/spec",
        Json(
            r#"{"revisionHistoryLimit":10,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":0}}}"#,
        ),
        Always,
    ),
    ("/metadata", Json(r#"{"annotations":{"deprecated.daemonset.template.generation":"@chosen"}}"#), Always),
];
const JOB: &[DefaultRule] = &[
    (
        "/spec",
        Json(
            r#"{"parallelism":1,"completions":1,"backoffLimit":6,"completionMode":"NonIndexed","suspend":false,"podReplacementPolicy":"@chosen","selector":"@chosen","manualSelector":"@chosen"}"#,
        ),
        Always,
    ),
    (
        "/spec/template/metadata",
        Json(
            r#"{"labels":{"controller-uid":"@chosen","batch.kubernetes.io/controller-uid":"@chosen","job-name":"@chosen","batch.kubernetes.io/job-name":"@chosen"}}"#,
        ),
        Always,
    ),
];
const CRON_JOB: &[DefaultRule] = &[(
    "/spec",
    Json(r#"{"concurrencyPolicy":"Allow","suspend":false,"successfulJobsHistoryLimit":3,"failedJobsHistoryLimit":1}"#),
    Always,
)];
const SERVICE: &[DefaultRule] = &[
    (
        "/spec",
        Json(
            r#"{"type":"ClusterIP","sessionAffinity":"None","internalTrafficPolicy":"Cluster","externalTrafficPolicy":"Cluster","allocateLoadBalancerNodePorts":true,"clusterIP":"@chosen","clusterIPs":"@chosen","ipFamilies":"@chosen","ipFamilyPolicy":"@chosen","healthCheckNodePort":"@chosen"}"#,
        ),
        Always,
    ),
    ("/spec/ports/*", Json(r#"{"protocol":"TCP","nodePort":"@chosen"}"#), Always),
    ("/spec/ports/*/targetPort", Sibling("port"), Always),
    // Held with `sessionAffinity: ClientIP` only (a prediction the server does not hold is
    // never compared).
    ("/spec", Json(r#"{"sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10800}}}"#), Always),
];
const CLAIM: &[DefaultRule] = &[
    ("/spec", Json(r#"{"volumeMode":"Filesystem","volumeName":"@chosen"}"#), Always),
    ("/spec/storageClassName", ChosenWhenAbsent, Always),
    ("/metadata", Json(r#"{"finalizers":["kubernetes.io/pvc-protection"]}"#), Always),
    ("/metadata/annotations", Json(CLAIM_ANNOTATIONS), Present),
];
const CLAIM_ANNOTATIONS: &str = r#"{"pv.kubernetes.io/bind-completed":"@chosen","pv.kubernetes.io/bound-by-controller":"@chosen","volume.beta.kubernetes.io/storage-provisioner":"@chosen","volume.kubernetes.io/storage-provisioner":"@chosen","volume.kubernetes.io/selected-node":"@chosen"}"#;
const VOLUME: &[DefaultRule] = &[
    ("/spec", Json(r#"{"persistentVolumeReclaimPolicy":"Retain","volumeMode":"Filesystem"}"#), Always),
    ("/metadata", Json(r#"{"finalizers":["kubernetes.io/pv-protection"]}"#), Always),
    ("/spec/hostPath", Json(r#"{"type":""}"#), Present),
];
const NAMESPACE: &[DefaultRule] = &[
    ("/spec", Json(r#"{"finalizers":["kubernetes"]}"#), Always),
    ("/metadata", Json(r#"{"labels":{"kubernetes.io/metadata.name":"@chosen"}}"#), Always),
];
const SECRET: &[DefaultRule] = &[("", Json(r#"{"type":"Opaque"}"#), Always)];
const NETWORK_POLICY: &[DefaultRule] = &[
    ("/spec", Json(r#"{"policyTypes":"@chosen"}"#), Always),
    ("/spec/ingress/*/ports/*", Json(r#"{"protocol":"TCP"}"#), Always),
    ("/spec/egress/*/ports/*", Json(r#"{"protocol":"TCP"}"#), Always),
];
const AUTOSCALER: &[DefaultRule] = &[("/spec", Json(r#"{"minReplicas":1,"metrics":"@chosen"}"#), Always)];
const BINDING: &[DefaultRule] = &[("/subjects/*", Json(r#"{"apiGroup":"@chosen"}"#), Always)];
const WEBHOOKS: &[DefaultRule] = &[
    (
        "/webhooks/*",
        Json(
            r#"{"timeoutSeconds":10,"failurePolicy":"Fail","matchPolicy":"Equivalent","namespaceSelector":{},"objectSelector":{},"reinvocationPolicy":"@chosen"}"#,
        ),
        Always,
    ),
    ("/webhooks/*/clientConfig/service", Json(r#"{"port":443}"#), Present),
    ("/webhooks/*/rules/*", Json(r#"{"scope":"*"}"#), Always),
];
const CRD: &[DefaultRule] = &[("/spec", Json(r#"{"conversion":{"strategy":"None"}}"#), Always)];
const STORAGE_CLASS: &[DefaultRule] =
    &[("", Json(r#"{"reclaimPolicy":"Delete","volumeBindingMode":"Immediate"}"#), Always)];
const PRIORITY_CLASS: &[DefaultRule] = &[("", Json(r#"{"preemptionPolicy":"PreemptLowerPriority"}"#), Always)];
const LIMIT_RANGE: &[DefaultRule] = &[("/spec/limits/*/defaultRequest", Sibling("default"), Always)];
const CSI_DRIVER: &[DefaultRule] = &[(
    "/spec",
    Json(
        r#"{"attachRequired":true,"fsGroupPolicy":"ReadWriteOnceWithFSType","podInfoOnMount":false,"requiresRepublish":false,"seLinuxMount":false,"storageCapacity":false,"volumeLifecycleModes":["Persistent"]}"#,
    ),
    Always,
)];
const PRIORITY_LEVEL: &[DefaultRule] = &[("/spec/limited", Json(r#"{"lendablePercent":0}"#), Present)];
const FLOW_SCHEMA: &[DefaultRule] = &[("/spec", Json(r#"{"matchingPrecedence":1000}"#), Always)];

/// The groups the API server serves itself: their kinds have no CRD schema to read.
const BUILT_IN_GROUPS: [&str; 22] = [
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "apiextensions.k8s.io",
    "admissionregistration.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "node.k8s.io",
    "certificates.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "apiregistration.k8s.io",
    "resource.k8s.io",
    "storagemigration.k8s.io",
    "internal.apiserver.k8s.io",
    "authentication.k8s.io",
];

/// Whether the API server serves this group itself (its kinds are not custom resources).
pub(crate) fn is_built_in(group: &str) -> bool {
    BUILT_IN_GROUPS.contains(&group) || group == "authorization.k8s.io"
}

/// Where a kind holds pod specs.
pub(super) fn pod_specs(group: &str, kind: &str) -> &'static [&'static str] {
    match (group, kind) {
        ("", "Pod") => &["/spec"],
        ("", "PodTemplate") => &["/template/spec"],
        ("", "ReplicationController") | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => {
            &["/spec/template/spec"]
        }
        ("batch", "Job") => &["/spec/template/spec"],
        ("batch", "CronJob") => &["/spec/jobTemplate/spec/template/spec"],
        _ => &[],
    }
}

/// The rules of a kind, with pod-spec rules placed at each of its pod specs.
pub(super) fn rules_for(group: &str, kind: &str) -> Vec<(String, Fill, When)> {
    let own: &[DefaultRule] = match (group, kind) {
        ("", "Pod") => POD,
        ("apps", "Deployment") => DEPLOYMENT,
        ("apps", "ReplicaSet") => REPLICA_SET,
        ("", "ReplicationController") => REPLICATION_CONTROLLER,
        ("apps", "StatefulSet") => STATEFUL_SET,
        ("apps", "DaemonSet") => DAEMON_SET,
        ("batch", "Job") => JOB,
        ("batch", "CronJob") => CRON_JOB,
        ("", "Service") => SERVICE,
        ("", "PersistentVolumeClaim") => CLAIM,
        ("", "PersistentVolume") => VOLUME,
        ("", "Namespace") => NAMESPACE,
        ("", "Secret") => SECRET,
        ("networking.k8s.io", "NetworkPolicy") => NETWORK_POLICY,
        ("autoscaling", "HorizontalPodAutoscaler") => AUTOSCALER,
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => BINDING,
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration") => WEBHOOKS,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => CRD,
        ("storage.k8s.io", "StorageClass") => STORAGE_CLASS,
        ("scheduling.k8s.io", "PriorityClass") => PRIORITY_CLASS,
        ("", "LimitRange") => LIMIT_RANGE,
        ("storage.k8s.io", "CSIDriver") => CSI_DRIVER,
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => PRIORITY_LEVEL,
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => FLOW_SCHEMA,
        _ => &[],
    };
    let mut out: Vec<(String, Fill, When)> =
        own.iter().map(|(at, fill, when)| (at.to_string(), *fill, *when)).collect();
    // Each pod-spec rule once per pod spec (a container's once per list of containers), beside
    // the kind's own rule at the same place (a Pod's own `/spec` rule and the pod spec's merge).
    for spec in pod_specs(group, kind) {
        for (at, fill, when) in POD_SPEC {
            match (at.strip_prefix('C'), at.strip_prefix('P')) {
                (Some(rest), _) => {
                    for container in ["containers", "initContainers", "ephemeralContainers"] {
                        out.push((format!("{spec}/{container}/*{rest}"), *fill, *when));
                    }
                }
                (_, Some(rest)) => out.push((format!("{spec}{rest}"), *fill, *when)),
                _ => out.push((at.to_string(), *fill, *when)),
            }
        }
    }
    out
}

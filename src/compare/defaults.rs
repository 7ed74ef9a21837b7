//! What the server would hold for Helm's object: the defaults the API server fills in for
//! built-in kinds (its defaulting functions, as data in [`rules_for`]), the values it or a
//! controller chooses (a Service's cluster IP, a node port, a Deployment's revision annotation),
//! and a CRD's schema `default`s. A field another manager owns whose live value is one of these
//! is ownership, not an addition; an empty value Helm sent where the server chooses (`clusterIP:
//! ""`, `nodePort: 0`) sets nothing.

use super::subset::scalar_equal;
use crate::model::FieldPath;
use serde_json::Value;

/// Stands for a value the server (or a controller) chooses: any live value is what it holds.
pub const CHOSEN: &str = "\u{1}chosen by the server";

/// How a rule fills a field.
#[derive(Clone, Copy, Debug)]
enum Fill {
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
enum When {
    /// Whenever the parent exists.
    Always,
    /// Only into a value Helm sent (a probe's defaults, never a probe).
    Present,
}

type Rule = (&'static str, Fill, When);

use Fill::{ChosenWhenAbsent, Json, PullPolicy, Sibling};
use When::{Always, Present};

/// A pod spec's defaults (`P` is the pod spec, `C` each container of any kind).
const POD_SPEC: &[Rule] = &[
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
    ("C/livenessProbe/httpGet", Json(HTTP), Present),
    ("C/readinessProbe/httpGet", Json(HTTP), Present),
    ("C/startupProbe/httpGet", Json(HTTP), Present),
    ("C/lifecycle/postStart/httpGet", Json(HTTP), Present),
    ("C/lifecycle/preStop/httpGet", Json(HTTP), Present),
    ("C/env/*/valueFrom/fieldRef", Json(FIELD_REF), Present),
    ("P/volumes/*/configMap", Json(MODE), Present),
    ("P/volumes/*/secret", Json(MODE), Present),
    ("P/volumes/*/projected", Json(MODE), Present),
    ("P/volumes/*/downwardAPI", Json(MODE), Present),
    ("P/volumes/*/downwardAPI/items/*/fieldRef", Json(FIELD_REF), Present),
    ("P/volumes/*/hostPath", Json(r#"{"type":""}"#), Present),
];
const PROBE: &str = r#"{"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3}"#;
const HTTP: &str = r#"{"scheme":"HTTP"}"#;
const FIELD_REF: &str = r#"{"apiVersion":"v1"}"#;
const MODE: &str = r#"{"defaultMode":420}"#;

/// What the API server and the control plane fill in for a Pod itself (admission included: the
/// `default` ServiceAccount, the not-ready and unreachable tolerations). Never "chosen" where a
/// different value gives more power: a Pod re-created with another ServiceAccount or toleration
/// is drift.
const POD: &[Rule] = &[(
    "/spec",
    Json(
        r#"{"enableServiceLinks":true,"nodeName":"@chosen","priority":"@chosen","preemptionPolicy":"@chosen","serviceAccountName":"default","tolerations":[
            {"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},
            {"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]}"#,
    ),
    Always,
)];

const DEPLOYMENT: &[Rule] = &[
    (
        "/spec",
        Json(
            r#"{"replicas":1,"revisionHistoryLimit":10,"progressDeadlineSeconds":600,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}"#,
        ),
        Always,
    ),
    ("/metadata", Json(r#"{"annotations":{"deployment.kubernetes.io/revision":"@chosen"}}"#), Always),
];
const REPLICA_SET: &[Rule] = &[
    ("/spec", Json(r#"{"replicas":1}"#), Always),
    (
        "/metadata",
        Json(
            r#"{"annotations":{"deployment.kubernetes.io/revision":"@chosen","deployment.kubernetes.io/desired-replicas":"@chosen","deployment.kubernetes.io/max-replicas":"@chosen"}}"#,
        ),
        Always,
    ),
];
const STATEFUL_SET: &[Rule] = &[
    (
        "/spec",
        Json(
            r#"{"replicas":1,"podManagementPolicy":"OrderedReady","revisionHistoryLimit":10,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}},"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"}}"#,
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
const DAEMON_SET: &[Rule] = &[
    (
        "/spec",
        Json(
            r#"{"revisionHistoryLimit":10,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":0}}}"#,
        ),
        Always,
    ),
    ("/metadata", Json(r#"{"annotations":{"deprecated.daemonset.template.generation":"@chosen"}}"#), Always),
];
const JOB: &[Rule] = &[
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
const CRON_JOB: &[Rule] = &[(
    "/spec",
    Json(r#"{"concurrencyPolicy":"Allow","suspend":false,"successfulJobsHistoryLimit":3,"failedJobsHistoryLimit":1}"#),
    Always,
)];
const SERVICE: &[Rule] = &[
    (
        "/spec",
        Json(
            r#"{"type":"ClusterIP","sessionAffinity":"None","internalTrafficPolicy":"Cluster","externalTrafficPolicy":"Cluster","allocateLoadBalancerNodePorts":true,"clusterIP":"@chosen","clusterIPs":"@chosen","ipFamilies":"@chosen","ipFamilyPolicy":"@chosen","healthCheckNodePort":"@chosen"}"#,
        ),
        Always,
    ),
    ("/spec/ports/*", Json(r#"{"protocol":"TCP","nodePort":"@chosen"}"#), Always),
    ("/spec/ports/*/targetPort", Sibling("port"), Always),
    ("/spec/sessionAffinityConfig/clientIP", Json(r#"{"timeoutSeconds":10800}"#), Present),
];
const CLAIM: &[Rule] = &[
    ("/spec", Json(r#"{"volumeMode":"Filesystem","volumeName":"@chosen"}"#), Always),
    ("/spec/storageClassName", ChosenWhenAbsent, Always),
    ("/metadata", Json(r#"{"finalizers":["kubernetes.io/pvc-protection"]}"#), Always),
    ("/metadata/annotations", Json(CLAIM_ANNOTATIONS), Present),
];
const CLAIM_ANNOTATIONS: &str = r#"{"pv.kubernetes.io/bind-completed":"@chosen","pv.kubernetes.io/bound-by-controller":"@chosen","volume.beta.kubernetes.io/storage-provisioner":"@chosen","volume.kubernetes.io/storage-provisioner":"@chosen","volume.kubernetes.io/selected-node":"@chosen"}"#;
const VOLUME: &[Rule] = &[
    ("/spec", Json(r#"{"persistentVolumeReclaimPolicy":"Retain","volumeMode":"Filesystem"}"#), Always),
    ("/metadata", Json(r#"{"finalizers":["kubernetes.io/pv-protection"]}"#), Always),
];
const NAMESPACE: &[Rule] = &[
    ("/spec", Json(r#"{"finalizers":["kubernetes"]}"#), Always),
    ("/metadata", Json(r#"{"labels":{"kubernetes.io/metadata.name":"@chosen"}}"#), Always),
];
const SECRET: &[Rule] = &[("", Json(r#"{"type":"Opaque"}"#), Always)];
const NETWORK_POLICY: &[Rule] = &[
    ("/spec", Json(r#"{"policyTypes":"@chosen"}"#), Always),
    ("/spec/ingress/*/ports/*", Json(r#"{"protocol":"TCP"}"#), Always),
    ("/spec/egress/*/ports/*", Json(r#"{"protocol":"TCP"}"#), Always),
];
const AUTOSCALER: &[Rule] = &[("/spec", Json(r#"{"minReplicas":1,"metrics":"@chosen"}"#), Always)];
const BINDING: &[Rule] = &[("/subjects/*", Json(r#"{"apiGroup":"@chosen"}"#), Always)];
const WEBHOOKS: &[Rule] = &[
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
const CRD: &[Rule] = &[("/spec", Json(r#"{"conversion":{"strategy":"None"}}"#), Always)];
const STORAGE_CLASS: &[Rule] = &[("", Json(r#"{"reclaimPolicy":"Delete","volumeBindingMode":"Immediate"}"#), Always)];
const PRIORITY_CLASS: &[Rule] = &[("", Json(r#"{"preemptionPolicy":"PreemptLowerPriority"}"#), Always)];

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
pub fn is_built_in(group: &str) -> bool {
    BUILT_IN_GROUPS.contains(&group) || group == "authorization.k8s.io"
}

/// Where a kind holds pod specs.
fn pod_specs(group: &str, kind: &str) -> &'static [&'static str] {
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

/// A rule placed for a kind: its path as tokens.
type Placed = (Vec<String>, Fill, When);

/// The rules of a kind, placed once per process.
fn placed(group: &str, kind: &str) -> &'static [Placed] {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    type ByKind = HashMap<(String, String), &'static [Placed]>;
    static PLACED: LazyLock<Mutex<ByKind>> = LazyLock::new(Default::default);
    let mut all = PLACED.lock().expect("defaults lock");
    all.entry((group.to_string(), kind.to_string())).or_insert_with(|| {
        let rules: Vec<Placed> =
            rules_for(group, kind).into_iter().map(|(at, fill, when)| (tokens(&at), fill, when)).collect();
        Box::leak(rules.into_boxed_slice())
    })
}

/// The rules of a kind, with pod-spec rules placed at each of its pod specs.
fn rules_for(group: &str, kind: &str) -> Vec<(String, Fill, When)> {
    let own: &[Rule] = match (group, kind) {
        ("", "Pod") => POD,
        ("apps", "Deployment") => DEPLOYMENT,
        ("apps", "ReplicaSet") => REPLICA_SET,
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
        _ => &[],
    };
    let mut out: Vec<(String, Fill, When)> =
        own.iter().map(|(at, fill, when)| (at.to_string(), *fill, *when)).collect();
    for spec in pod_specs(group, kind) {
        for (at, fill, when) in POD_SPEC {
            for container in ["containers", "initContainers", "ephemeralContainers"] {
                let placed = match (at.strip_prefix('C'), at.strip_prefix('P')) {
                    (Some(rest), _) => format!("{spec}/{container}/*{rest}"),
                    (_, Some(rest)) => format!("{spec}{rest}"),
                    _ => at.to_string(),
                };
                if !out.iter().any(|(o, _, _)| *o == placed) {
                    out.push((placed, *fill, *when));
                }
            }
        }
    }
    out
}

/// How [`fill`] treats what it finds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Everything the server would hold: absent fields filled, chosen ones as [`CHOSEN`].
    Held,
    /// Only empty values Helm sent where the server chooses: replaced by the default, or by
    /// `null` ("sets nothing") where the server picks the value.
    Empties,
}

/// `desired` as the server would hold it: built-in defaults, then the CRD `schema`'s
/// (`openAPIV3Schema` of the served version) for a custom resource. Chosen values are
/// [`CHOSEN`].
pub fn held(group: &str, kind: &str, desired: &Value, schema: Option<&Value>) -> Value {
    let mut out = desired.clone();
    for (at, rule, when) in placed(group, kind) {
        apply(&mut out, at, *rule, *when, Mode::Held);
    }
    if let Some(schema) = schema {
        schema_defaults(&mut out, schema);
    }
    out
}

/// `desired` with the empty values that mean "let the server choose" (`clusterIP: ""`,
/// `nodePort: 0`, `imagePullPolicy: ""`...) as `null`: they set nothing, like a `null` in a
/// chart. Borrowed when there is none.
pub fn without_empty_choices<'a>(group: &str, kind: &str, desired: &'a Value) -> std::borrow::Cow<'a, Value> {
    fn has_empty(v: &Value) -> bool {
        match v {
            Value::String(s) => s.is_empty(),
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::Object(o) => o.values().any(has_empty),
            Value::Array(a) => a.iter().any(has_empty),
            _ => false,
        }
    }
    if !has_empty(desired) {
        return std::borrow::Cow::Borrowed(desired);
    }
    let mut out = desired.clone();
    for (at, rule, when) in placed(group, kind) {
        apply(&mut out, at, *rule, *when, Mode::Empties);
    }
    if out == *desired { std::borrow::Cow::Borrowed(desired) } else { std::borrow::Cow::Owned(out) }
}

fn tokens(at: &str) -> Vec<String> {
    at.split('/').filter(|t| !t.is_empty()).map(str::to_string).collect()
}

/// Applies one rule at `path` below `v` (`*` every item of a list).
fn apply(v: &mut Value, path: &[String], fill: Fill, when: When, mode: Mode) {
    match path {
        [] => merge_rule(v, fill, mode, None),
        [last] if last != "*" => {
            let Value::Object(parent) = v else { return };
            let sibling = match fill {
                Sibling(name) => parent.get(name).cloned(),
                PullPolicy => Some(pull_policy(parent.get("image"))),
                _ => None,
            };
            match parent.get_mut(last.as_str()) {
                Some(child) if !child.is_null() => merge_rule(child, fill, mode, sibling),
                _ if when == Present || mode == Mode::Empties => {}
                _ => {
                    if let Some(value) = rule_value(fill, sibling) {
                        parent.insert(last.clone(), value);
                    }
                }
            }
        }
        [first, rest @ ..] if first == "*" => {
            if let Value::Array(items) = v {
                items.iter_mut().for_each(|item| apply(item, rest, fill, when, mode));
            }
        }
        [first, rest @ ..] => {
            if let Some(child) = v.get_mut(first.as_str()) {
                apply(child, rest, fill, when, mode);
            }
        }
    }
}

/// The value a rule fills in, `sibling` the value it copies.
fn rule_value(fill: Fill, sibling: Option<Value>) -> Option<Value> {
    match fill {
        Json(text) => Some(parse(text).clone()),
        ChosenWhenAbsent => Some(Value::String(CHOSEN.into())),
        PullPolicy | Sibling(_) => sibling.filter(|s| !is_unset(s)),
    }
}

/// A rule's JSON with `"@chosen"` as [`CHOSEN`], parsed once per process (the rules are a
/// fixed set of constants).
fn parse(text: &'static str) -> &'static Value {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    static PARSED: LazyLock<Mutex<HashMap<usize, &'static Value>>> = LazyLock::new(Default::default);
    fn chosen(v: &mut Value) {
        match v {
            Value::String(s) if s == "@chosen" => *s = CHOSEN.into(),
            Value::Object(o) => o.values_mut().for_each(chosen),
            Value::Array(a) => a.iter_mut().for_each(chosen),
            _ => {}
        }
    }
    let mut parsed = PARSED.lock().expect("defaults lock");
    parsed.entry(text.as_ptr() as usize).or_insert_with(|| {
        let mut v: Value = serde_json::from_str(text).expect("built-in defaults are JSON");
        chosen(&mut v);
        Box::leak(Box::new(v))
    })
}

/// Merges a rule's value into a value Helm sent.
fn merge_rule(v: &mut Value, fill: Fill, mode: Mode, sibling: Option<Value>) {
    match fill {
        ChosenWhenAbsent => {}
        Json(text) => merge(v, parse(text), mode),
        PullPolicy | Sibling(_) if mode == Mode::Empties => {
            if is_unset(v) {
                *v = Value::Null;
            }
        }
        PullPolicy | Sibling(_) => {
            if is_unset(v)
                && let Some(s) = rule_value(fill, sibling)
            {
                *v = s;
            }
        }
    }
}

/// An empty value where the server fills one in: `""`, or `0` for a number it chooses.
fn is_unset(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

/// Fills `default` into `v`: absent fields (with [`Mode::Held`]) and empty strings, and zero
/// numbers where the server chooses.
fn merge(v: &mut Value, default: &Value, mode: Mode) {
    let (Value::Object(have), Value::Object(defaults)) = (&mut *v, default) else { return };
    for (k, d) in defaults {
        let chosen = d.as_str() == Some(CHOSEN);
        match have.get_mut(k) {
            None | Some(Value::Null) if mode == Mode::Held => {
                have.insert(k.clone(), d.clone());
            }
            None | Some(Value::Null) => {}
            // An empty value sent sets nothing: the server fills in its default, which may
            // depend on more than this field (`externalTrafficPolicy` only for node ports).
            Some(Value::String(s)) if s.is_empty() && !d.is_object() && !d.is_array() => {
                have.insert(k.clone(), if mode == Mode::Empties { Value::Null } else { d.clone() });
            }
            Some(Value::Number(n)) if chosen && n.as_f64() == Some(0.0) => {
                have.insert(k.clone(), if mode == Mode::Empties { Value::Null } else { d.clone() });
            }
            Some(child @ Value::Object(_)) => merge(child, d, mode),
            Some(_) => {}
        }
    }
}

/// The `imagePullPolicy` the server gives a container running `image`.
fn pull_policy(image: Option<&Value>) -> Value {
    let image = image.and_then(Value::as_str).unwrap_or("");
    let name = image.rsplit('/').next().unwrap_or(image);
    let latest = !image.contains('@') && name.split_once(':').is_none_or(|(_, tag)| tag == "latest");
    Value::String(if latest { "Always" } else { "IfNotPresent" }.into())
}

/// A CRD schema's `default`s filled into absent (or `null`) fields, as the API server defaults
/// a custom resource (structural defaulting: outside in, into lists and maps).
fn schema_defaults(v: &mut Value, schema: &Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (k, s) in props {
                    if o.get(k).is_none_or(Value::is_null)
                        && let Some(d) = s.get("default")
                    {
                        o.insert(k.clone(), d.clone());
                    }
                    if let Some(child) = o.get_mut(k) {
                        schema_defaults(child, s);
                    }
                }
            } else if let Some(s) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                o.values_mut().for_each(|child| schema_defaults(child, s));
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                items.iter_mut().for_each(|item| schema_defaults(item, s));
            }
        }
        _ => {}
    }
}

/// `held` without the values the server chooses: what holds for a field whose owner did not
/// create the object (a node port owned by `kubectl edit` was changed by it, not chosen).
pub fn without_chosen(held: &Value) -> Value {
    match held {
        Value::Object(o) => Value::Object(
            o.iter().filter(|(_, v)| v.as_str() != Some(CHOSEN)).map(|(k, v)| (k.clone(), without_chosen(v))).collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_chosen).collect()),
        v => v.clone(),
    }
}

/// Whether `live` is what the server holds where it would hold `held` (a value of [`held`]):
/// every field of `live` as held, [`CHOSEN`] matching anything.
pub fn holds(live: &Value, held: &Value) -> bool {
    if held.as_str() == Some(CHOSEN) {
        return true;
    }
    match (live, held) {
        (Value::Object(l), Value::Object(h)) => l.iter().all(|(k, lv)| h.get(k).is_some_and(|hv| holds(lv, hv))),
        (Value::Array(l), Value::Array(h)) => l.len() == h.len() && l.iter().zip(h).all(|(lv, hv)| holds(lv, hv)),
        _ => scalar_equal(held, live, &FieldPath::root()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 2, "strategy": {"type": "RollingUpdate"}, "template": {"spec": {
                "serviceAccountName": "sa",
                "containers": [{"name": "web", "image": "registry.example/web:1.0",
                    "ports": [{"containerPort": 8080}],
                    "livenessProbe": {"httpGet": {"path": "/", "port": 8080}}}]}}}})
    }

    #[test]
    fn a_deployment_is_held_with_the_servers_defaults_and_chosen_values() {
        let h = held("apps", "Deployment", &deployment(), None);
        assert_eq!(h["spec"]["replicas"], 2, "what Helm sent stays");
        assert_eq!(h["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(
            h["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
        );
        let pod = &h["spec"]["template"]["spec"];
        assert_eq!((pod["dnsPolicy"].as_str(), pod["serviceAccount"].as_str()), (Some("ClusterFirst"), Some("sa")));
        let c = &pod["containers"][0];
        assert_eq!(c["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c["ports"][0]["protocol"], "TCP");
        assert_eq!(c["livenessProbe"]["periodSeconds"], 10);
        assert_eq!(c["livenessProbe"]["httpGet"]["scheme"], "HTTP");
        assert!(c.get("readinessProbe").is_none(), "no probe is made up");
        assert_eq!(h["metadata"]["annotations"]["deployment.kubernetes.io/revision"], CHOSEN);
        assert!(holds(&json!("7"), &h["metadata"]["annotations"]["deployment.kubernetes.io/revision"]));
    }

    #[test]
    fn the_pull_policy_follows_the_image_tag() {
        assert_eq!(pull_policy(Some(&json!("nginx"))), "Always");
        assert_eq!(pull_policy(Some(&json!("nginx:latest"))), "Always");
        assert_eq!(pull_policy(Some(&json!("localhost:5000/nginx"))), "Always");
        assert_eq!(pull_policy(Some(&json!("localhost:5000/nginx:1.2"))), "IfNotPresent");
        assert_eq!(pull_policy(Some(&json!("nginx@sha256:abc"))), "IfNotPresent");
    }

    #[test]
    fn a_live_value_is_held_only_when_it_is_the_default() {
        let h = held("apps", "Deployment", &deployment(), None);
        assert!(holds(&json!({"maxSurge": "25%", "maxUnavailable": "25%"}), &h["spec"]["strategy"]["rollingUpdate"]));
        assert!(!holds(&json!({"maxSurge": "50%", "maxUnavailable": "25%"}), &h["spec"]["strategy"]["rollingUpdate"]));
        assert!(!holds(&json!({"maxSurge": "25%", "extra": 1}), &h["spec"]["strategy"]["rollingUpdate"]));
        let c = &h["spec"]["template"]["spec"]["containers"][0];
        assert!(!holds(&json!("Always"), &c["imagePullPolicy"]));
    }

    #[test]
    fn empty_values_that_let_the_server_choose_set_nothing() {
        let svc = json!({"spec": {"type": "NodePort", "clusterIP": "", "sessionAffinity": "",
            "ports": [{"port": 80, "nodePort": 0, "targetPort": 0, "protocol": ""}]}});
        let got = without_empty_choices("", "Service", &svc).into_owned();
        assert_eq!(
            got,
            json!({"spec": {"type": "NodePort", "clusterIP": null, "sessionAffinity": null,
                "ports": [{"port": 80, "nodePort": null, "targetPort": null, "protocol": null}]}})
        );
        let cluster_ip = json!({"spec": {"type": "ClusterIP", "externalTrafficPolicy": ""}});
        assert_eq!(
            without_empty_choices("", "Service", &cluster_ip).into_owned(),
            json!({"spec": {"type": "ClusterIP", "externalTrafficPolicy": null}}),
            "not the default of node-port Services"
        );
        let held = held("", "Service", &got, None);
        assert_eq!(
            (held["spec"]["sessionAffinity"].as_str(), held["spec"]["ports"][0]["targetPort"].as_i64()),
            (Some("None"), Some(80))
        );
        let pvc = json!({"spec": {"volumeName": "", "storageClassName": ""}});
        assert_eq!(
            without_empty_choices("", "PersistentVolumeClaim", &pvc).into_owned(),
            json!({"spec": {"volumeName": null, "storageClassName": ""}}),
            "an empty storage class means no class and stays"
        );
        let same = json!({"spec": {"replicas": 0}});
        assert!(
            matches!(without_empty_choices("apps", "Deployment", &same), std::borrow::Cow::Borrowed(_)),
            "0 replicas is a choice"
        );
    }

    #[test]
    fn a_crd_schema_defaults_absent_fields_outside_in() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer"}, "color": {"type": "string", "default": "blue"},
            "limits": {"type": "object", "default": {}, "properties": {"cpu": {"type": "string", "default": "1"}}},
            "items": {"type": "array", "items": {"type": "object", "properties": {"weight": {"type": "integer", "default": 1}}}}}}}});
        let cr = json!({"spec": {"size": 3, "items": [{}, {"weight": 5}]}});
        let h = held("test.helm-drift.io", "Widget", &cr, Some(&schema));
        assert_eq!(
            h["spec"],
            json!({"size": 3, "color": "blue", "limits": {"cpu": "1"}, "items": [{"weight": 1}, {"weight": 5}]})
        );
        assert_eq!(held("test.helm-drift.io", "Widget", &cr, None), cr);
        assert!(is_built_in("apps") && !is_built_in("test.helm-drift.io"));
    }

    #[test]
    fn a_pod_holds_the_default_service_account_never_any() {
        let pod = json!({"spec": {"containers": [{"name": "c", "image": "busybox:1"}]}});
        let h = held("", "Pod", &pod, None);
        assert_eq!(
            (h["spec"]["serviceAccountName"].as_str(), h["spec"]["serviceAccount"].as_str()),
            (Some("default"), Some("default"))
        );
        assert!(!holds(&json!("admin"), &h["spec"]["serviceAccountName"]));
        assert_eq!(h["spec"]["tolerations"].as_array().map(Vec::len), Some(2));
        assert_eq!(without_chosen(&h)["spec"].get("nodeName"), None, "a chosen value only for the object's creator");
    }
}

//! What the engines assume the API server does, read from the real one of the version under test
//! (`scripts/test.sh --kubernetes VERSION`): which kinds set `generation` to 1 on create
//! (`compare::provenance::tracks_generation`) and the defaults each built-in kind gets
//! (`compare::defaults`). A new minor that changes either fails here, naming the kind and the
//! version, instead of a user's gate. What the controllers write by design is `controllers.rs`.

use crate::support::Env;
use serde_json::{Value, json};

/// A pod template as charts write one: ports, probes, downward-API variables and volumes (field
/// and resource references, nested in a projected volume too), a projected service-account token.
fn pod_spec() -> Value {
    let cpu = json!({"resourceFieldRef": {"containerName": "app", "resource": "limits.cpu"}});
    json!({"containers": [{"name": "app", "image": "registry.invalid/app:1.0",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}},
        "livenessProbe": {"tcpSocket": {"port": 8080}},
        "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}],
        "volumeMounts": [{"name": "config", "mountPath": "/config"}],
        "startupProbe": {"exec": {"command": ["true"]}},
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}}}],
        "initContainers": [{"name": "proxy", "image": "registry.invalid/proxy:1", "restartPolicy": "Always",
            "readinessProbe": {"grpc": {"port": 9090}}}],
        "volumes": [{"name": "config", "configMap": {"name": "app"}}, {"name": "creds", "secret": {"secretName": "app"}},
            {"name": "info", "downwardAPI": {"items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
                {"path": "cpu", "resourceFieldRef": cpu["resourceFieldRef"]}]}},
            {"name": "bundle", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token", "audience": "vault"}},
                {"configMap": {"name": "app"}},
                {"downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}, {"path": "cpu", "resourceFieldRef": cpu["resourceFieldRef"]}]}}]}},
            {"name": "scratch", "emptyDir": {}},
            {"name": "cache", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "none"}}}}]})
}

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}}, "spec": pod_spec()})
}

/// One object of each built-in kind the tables speak of, as a chart would send it.
fn objects() -> Vec<(&'static str, &'static str, Value)> {
    let selector = json!({"matchLabels": {"app": "web"}});
    let rule = json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]);
    let subject = json!([{"kind": "ServiceAccount", "name": "app"}]);
    let role_ref = json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "app"});
    let crd = json!({"group": "tables.helm-drift.io", "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}]});
    vec![
        ("", "Pod", json!({"spec": pod_spec()})),
        ("", "ReplicationController", json!({"spec": {"selector": {"app": "web"}, "template": template()}})),
        ("apps", "Deployment", json!({"spec": {"selector": selector, "template": template()}})),
        ("apps", "ReplicaSet", json!({"spec": {"selector": selector, "template": template()}})),
        ("apps", "StatefulSet", json!({"spec": {"selector": selector, "serviceName": "web", "template": template()}})),
        ("apps", "DaemonSet", json!({"spec": {"selector": selector, "template": template()}})),
        (
            "batch",
            "Job",
            json!({"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "once", "image": "registry.invalid/once:1"}]}}}}),
        ),
        (
            "batch",
            "CronJob",
            json!({"spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "nightly", "image": "registry.invalid/nightly:1"}]}}}}}}),
        ),
        ("policy", "PodDisruptionBudget", json!({"spec": {"minAvailable": 1, "selector": selector}})),
        (
            "networking.k8s.io",
            "Ingress",
            json!({"spec": {"rules": [{"host": "web.invalid", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}),
        ),
        (
            "networking.k8s.io",
            "NetworkPolicy",
            json!({"spec": {"podSelector": selector, "ingress": [{"ports": [{"port": 8080}]}]}}),
        ),
        ("", "Service", json!({"spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "name": "http"}]}})),
        (
            "",
            "Service",
            json!({"spec": {"type": "LoadBalancer", "selector": {"app": "web"}, "sessionAffinity": "ClientIP",
                "ports": [{"port": 443, "name": "https", "targetPort": "https"}]}}),
        ),
        ("", "ConfigMap", json!({"data": {"greeting": "hello"}})),
        ("", "Secret", json!({"data": {"password": "cA=="}})),
        ("", "ServiceAccount", json!({})),
        (
            "",
            "PersistentVolumeClaim",
            json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "none"}}),
        ),
        ("rbac.authorization.k8s.io", "Role", json!({"rules": rule})),
        ("rbac.authorization.k8s.io", "RoleBinding", json!({"subjects": subject, "roleRef": role_ref})),
        (
            "autoscaling",
            "HorizontalPodAutoscaler",
            json!({"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}}),
        ),
        ("apiextensions.k8s.io", "CustomResourceDefinition", json!({"spec": crd})),
        ("networking.k8s.io", "IngressClass", json!({"spec": {"controller": "example.invalid/ingress"}})),
        ("storage.k8s.io", "StorageClass", json!({"provisioner": "example.invalid/disk"})),
        ("scheduling.k8s.io", "PriorityClass", json!({"value": 1000})),
        ("rbac.authorization.k8s.io", "ClusterRole", json!({"rules": rule})),
        (
            "rbac.authorization.k8s.io",
            "ClusterRoleBinding",
            json!({"subjects": [{"kind": "ServiceAccount", "name": "app", "namespace": "default"}],
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "app"}}),
        ),
        // Written by a dry run only: never stored, so never called.
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
            json!({"webhooks": [{"name": "check.tables.helm-drift.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                "clientConfig": {"url": "https://127.0.0.1:1/check"},
                "rules": [{"apiGroups": ["tables.helm-drift.io"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["gadgets"]}]}]}),
        ),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
            json!({"webhooks": [{"name": "fill.tables.helm-drift.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                "clientConfig": {"url": "https://127.0.0.1:1/fill"},
                "rules": [{"apiGroups": ["tables.helm-drift.io"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["gadgets"]}]}]}),
        ),
        ("", "LimitRange", json!({"spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}}]}})),
        ("", "ResourceQuota", json!({"spec": {"hard": {"pods": "10"}}})),
        ("", "Namespace", json!({})),
        (
            "",
            "PersistentVolume",
            json!({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/tables"}}}),
        ),
        ("node.k8s.io", "RuntimeClass", json!({"handler": "runc"})),
        ("storage.k8s.io", "CSIDriver", json!({"spec": {}})),
        (
            "flowcontrol.apiserver.k8s.io",
            "PriorityLevelConfiguration",
            json!({"spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "limitResponse": {"type": "Reject"}}}}),
        ),
        (
            "flowcontrol.apiserver.k8s.io",
            "FlowSchema",
            json!({"spec": {"priorityLevelConfiguration": {"name": "workload-low"}, "rules": [{"subjects": [{"kind": "Group", "group": {"name": "tables"}}],
                "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "namespaces": ["*"]}]}]}}),
        ),
    ]
}

fn api_version(group: &str, kind: &str) -> String {
    let version = match kind {
        "HorizontalPodAutoscaler" => "v2",
        _ => "v1",
    };
    if group.is_empty() { version.to_string() } else { format!("{group}/{version}") }
}

/// The object as the server would create it (`--dry-run=server`: defaulted and admitted, not
/// stored).
fn created(env: &Env, group: &str, kind: &str, mut body: Value) -> (Value, Value) {
    let name =
        if kind == "CustomResourceDefinition" { "gadgets.tables.helm-drift.io".to_string() } else { "web".to_string() };
    body["apiVersion"] = json!(api_version(group, kind));
    body["kind"] = json!(kind);
    body["metadata"] = json!({"name": name, "generation": 5});
    let file = env.home().join(format!("{kind}.json"));
    std::fs::write(&file, body.to_string()).unwrap();
    let out = env.kubectl(&["create", "--dry-run=server", "-o", "json", "-f", file.to_str().unwrap()]).success();
    (body, serde_json::from_str(&out.stdout()).unwrap())
}

fn server_version(env: &Env) -> String {
    let out = env.kubectl(&["version", "-o", "json"]).success().stdout();
    let v: Value = serde_json::from_str(&out).unwrap();
    v["serverVersion"]["gitVersion"].as_str().unwrap_or("?").to_string()
}

/// What the server holds that the defaults table leaves out on purpose, kind by kind: the
/// engines never compare these (set on create by admission or the server, outside what a chart
/// decides, and owned by the creator's field manager). Anything else the server holds that the
/// table does not predict, or a prediction the server no longer holds, fails the test.
const NOT_PREDICTED: &[(&str, &str, &str)] = &[
    // A bare Pod (a chart's test hook): the ServiceAccount admission plugin's token volume.
    ("Pod", "~/spec/containers/0/volumeMounts", "the service account token's volume mount"),
    ("Pod", "~/spec/volumes", "the service account token's volume"),
    ("Pod", "+/spec/initContainers/0/volumeMounts", "the service account token's volume mount"),
    ("CronJob", "+/spec/jobTemplate/metadata", "an empty object: no field"),
    ("CronJob", "+/spec/jobTemplate/spec/template/metadata", "an empty object: no field"),
    ("CustomResourceDefinition", "+/spec/names/listKind", "KIND + List"),
    // Predicted for every Service, held only by NodePort and LoadBalancer ones: a prediction
    // the server does not hold is never compared.
    ("Service", "-/spec/allocateLoadBalancerNodePorts", "NodePort and LoadBalancer only"),
    ("Service", "-/spec/externalTrafficPolicy", "NodePort and LoadBalancer only"),
    ("Service", "-/spec/sessionAffinityConfig", "sessionAffinity: ClientIP only"),
    // Held from Kubernetes 1.37 (MaxUnavailableStatefulSet): predicted on every version, a
    // prediction an older server does not hold is never compared.
    ("StatefulSet", "-/spec/updateStrategy/rollingUpdate/maxUnavailable", "from Kubernetes 1.37"),
];

/// Kinds whose generation the server sets to 1 on create on some versions of the window only:
/// the table leaves them untracked, which only forgoes evidence (a kind the table tracks must
/// set it on every version, or a client's `generation: 1` would pass for proof).
const GENERATION_FROM: &[(&str, &str)] = &[
    ("HorizontalPodAutoscaler", "Kubernetes 1.37"),
    // Set to 1 on create, but not shown raised on every change of every version (PriorityClass
    // never raises it): untracked, which only forgoes evidence.
    ("PriorityClass", "never raised"),
    ("IngressClass", "not shown raised"),
    ("PriorityLevelConfiguration", "not shown raised"),
    ("FlowSchema", "not shown raised"),
];

/// Both tables, kind by kind; every kind that disagrees is named at once, with the version.
#[test]
fn the_engines_tables_hold_on_this_api_server() {
    let env = Env::new("server-tables");
    let version = server_version(&env);
    let mut wrong = Vec::new();
    for (group, kind, body) in objects() {
        let (sent, live) = created(&env, group, kind, body);
        let generation = live["metadata"]["generation"].as_i64();
        let tracked = helm_drift::tables::tracks_generation(group, kind);
        let later = GENERATION_FROM.iter().any(|(k, _)| *k == kind);
        // A kind the server tracks only from a later version may be untracked in the table.
        if tracked != (generation == Some(1)) && (tracked || !later) {
            wrong.push(format!(
                "{kind}: generation {generation:?} on create (5 sent); the table says tracked: {tracked}"
            ));
        }
        let known = |d: &String| NOT_PREDICTED.iter().any(|(k, at, _)| *k == kind && at == d);
        let unknown: Vec<String> = helm_drift::tables::defaults_disagree(group, kind, &sent, &live)
            .into_iter()
            .filter(|d| !known(d))
            .collect();
        if !unknown.is_empty() {
            wrong.push(format!(
                "{kind}: the server and the defaults table disagree at {unknown:?}; the server holds {live}"
            ));
        }
    }
    assert!(wrong.is_empty(), "on Kubernetes {version}:\n{}", wrong.join("\n"));
}

/// The install page's table of supported versions says what `scripts/versions.env` pins.
#[test]
fn the_readme_gives_the_window_the_tests_run() {
    let root = crate::support::repo_root();
    let env = std::fs::read_to_string(root.join("scripts/versions.env")).unwrap();
    let value = |key: &str| {
        let line =
            env.lines().find(|l| l.starts_with(&format!("{key}="))).unwrap_or_else(|| panic!("{key} in versions.env"));
        line[key.len() + 1..].trim_matches('"').to_string()
    };
    let window: Vec<String> = value("KUBERNETES_VERSIONS").split_whitespace().map(str::to_string).collect();
    let readme = std::fs::read_to_string(root.join("docs/src/install.md")).unwrap();
    let table = &readme[readme.find("<!-- versions:").unwrap()..readme.find("<!-- /versions -->").unwrap()];
    let row =
        format!("| Kubernetes | {} | {} | {} |", window[0], value("KUBERNETES_VERSION"), window[window.len() - 1]);
    assert!(table.contains(&row), "{row}\n{table}");
    let helm3 = format!("| {} |", value("HELM3_VERSION"));
    let oldest = value("HELM3_OLDER_VERSIONS").split_whitespace().next().unwrap().to_string();
    assert!(table.contains(&format!("| Helm 3 | {oldest} ")) && table.contains(&helm3), "{table}");
    assert!(table.contains(&format!("| Helm 4 | {0} | {0} | {0} |", value("HELM4_VERSION"))), "{table}");
}

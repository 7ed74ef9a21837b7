//! What the engines assume the API server does, read from the real one of the version under test
//! (`scripts/test.sh --kubernetes VERSION`): which kinds set `generation` to 1 on create
//! (`compare::provenance::tracks_generation`) and the defaults each built-in kind gets
//! (`compare::defaults`). A new minor that changes either fails here, naming the kind and the
//! version, instead of a user's gate. What the controllers write by design is `controllers.rs`.

use crate::support::Env;
use serde_json::{Value, json};

/// A pod template as charts write one: ports, probes, a downward-API variable, volumes.
fn pod_spec() -> Value {
    json!({"containers": [{"name": "app", "image": "registry.invalid/app:1.0",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}},
        "livenessProbe": {"tcpSocket": {"port": 8080}},
        "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "volumeMounts": [{"name": "config", "mountPath": "/config"}]}],
        "volumes": [{"name": "config", "configMap": {"name": "app"}}, {"name": "creds", "secret": {"secretName": "app"}}]})
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
    ("CronJob", "+/spec/jobTemplate/metadata", "an empty object: no field"),
    ("CronJob", "+/spec/jobTemplate/spec/template/metadata", "an empty object: no field"),
    ("CustomResourceDefinition", "+/spec/names/listKind", "KIND + List"),
    // Predicted for every Service, held only by NodePort and LoadBalancer ones: a prediction
    // the server does not hold is never compared.
    ("Service", "-/spec/allocateLoadBalancerNodePorts", "NodePort and LoadBalancer only"),
    ("Service", "-/spec/externalTrafficPolicy", "NodePort and LoadBalancer only"),
    // Held from Kubernetes 1.37 (MaxUnavailableStatefulSet): predicted on every version, a
    // prediction an older server does not hold is never compared.
    ("StatefulSet", "-/spec/updateStrategy/rollingUpdate/maxUnavailable", "from Kubernetes 1.37"),
];

/// Kinds whose generation the server sets to 1 on create on some versions of the window only:
/// the table leaves them untracked, which only forgoes evidence (a kind the table tracks must
/// set it on every version, or a client's `generation: 1` would pass for proof).
const GENERATION_FROM: &[(&str, &str)] = &[("HorizontalPodAutoscaler", "Kubernetes 1.37")];

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

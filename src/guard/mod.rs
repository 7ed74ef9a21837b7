//! The admission guard (`helm drift guard`): a ValidatingAdmissionPolicy and its binding that
//! tell whoever changes or deletes an object Helm manages, at the prompt, that it will drift
//! from its release (Warn + Audit), only record it (Audit), or refuse it (Deny + Audit). CEL in
//! the API server, no webhook. Pure: what to write, and what a written guard says.

use serde_json::{Value, json};

/// Label on every object the guard writes.
pub const LABEL: &str = "helm-drift.io/guard";
/// The field manager of the guard's writes.
pub const MANAGER: &str = "helm-drift";

/// How a drifting write is met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A warning to the writer, and an audit annotation.
    Warn,
    /// An audit annotation only.
    Audit,
    /// Changes refused, and an audit annotation. Deletions pass: `helm uninstall` deletes as
    /// its user does, which admission cannot tell from `kubectl delete`.
    Deny,
}

impl Mode {
    pub fn word(self) -> &'static str {
        match self {
            Mode::Warn => "warn",
            Mode::Audit => "audit",
            Mode::Deny => "deny",
        }
    }

    pub fn parse(word: &str) -> Option<Mode> {
        [Mode::Warn, Mode::Audit, Mode::Deny].into_iter().find(|m| m.word() == word)
    }

    fn actions(self) -> Vec<&'static str> {
        match self {
            Mode::Warn => vec!["Warn", "Audit"],
            Mode::Audit => vec!["Audit"],
            Mode::Deny => vec!["Deny", "Audit"],
        }
    }
}

/// What a guard covers and who may write without a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardSpec {
    /// The namespace it covers (`None`: every namespace).
    pub namespace: Option<String>,
    /// The releases it covers (empty: every release in its namespaces).
    pub releases: Vec<String>,
    /// `(group, resource)` of the kinds the releases contain.
    pub resources: Vec<(String, String)>,
    pub mode: Mode,
    /// Field managers whose writes are the release's own or expected (Helm, repairs, rollout
    /// restarts, listed controllers).
    pub managers: Vec<String>,
    /// Users and groups that may write without a word.
    pub users: Vec<String>,
    pub groups: Vec<String>,
}

/// Field managers that write as the release wants: Helm (3 and 4; helm drift repair writes as
/// Helm), `kubectl rollout restart` (an expected change).
pub const DEFAULT_MANAGERS: [&str; 2] = ["helm", "kubectl-rollout"];

/// Kinds whose `scale` subresource a person uses (`kubectl scale`).
const SCALABLE: [(&str, &str); 4] =
    [("apps", "deployments"), ("apps", "statefulsets"), ("apps", "replicasets"), ("", "replicationcontrollers")];

impl GuardSpec {
    /// The name of its policy and binding.
    pub fn name(&self) -> String {
        name(self.namespace.as_deref())
    }

    /// The ValidatingAdmissionPolicy.
    pub fn policy(&self) -> Value {
        let mut by_group: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for (group, resource) in &self.resources {
            let list = by_group.entry(group.as_str()).or_default();
            list.push(resource.clone());
            if SCALABLE.contains(&(group.as_str(), resource.as_str())) {
                list.push(format!("{resource}/scale"));
            }
        }
        let rules: Vec<Value> = by_group
            .into_iter()
            .map(|(group, mut resources)| {
                resources.sort();
                resources.dedup();
                json!({"apiGroups": [group], "apiVersions": ["*"], "operations": ["UPDATE", "DELETE"], "resources": resources, "scope": "*"})
            })
            .collect();
        let mut conditions = vec![
            // The control plane's own writers: controllers (status, scale by an HPA, garbage
            // collection, namespace deletion) and the API server.
            json!({"name": "not-the-control-plane", "expression": "!request.userInfo.username.startsWith('system:')"}),
            // An object Helm manages (a scale has no labels of its own: its name is matched).
            json!({"name": "managed-by-helm", "expression": "request.?subResource.orValue('') == 'scale' || oldObject.metadata.?labels[?'app.kubernetes.io/managed-by'].orValue('') == 'Helm'"}),
        ];
        if !self.releases.is_empty() {
            conditions.push(json!({"name": "a-guarded-release", "expression": format!(
                "request.?subResource.orValue('') == 'scale' || oldObject.metadata.?annotations[?'meta.helm.sh/release-name'].orValue('') in {}",
                cel_list(&self.releases)
            )}));
        }
        if !self.users.is_empty() || !self.groups.is_empty() {
            conditions.push(json!({"name": "not-an-allowed-writer", "expression": format!(
                "!(request.userInfo.username in {}) && !request.userInfo.groups.exists(g, g in {})",
                cel_list(&self.users),
                cel_list(&self.groups)
            )}));
        }
        let release = "oldObject.metadata.?annotations[?'meta.helm.sh/release-name'].orValue('')";
        let what = format!(
            "(request.?subResource.orValue('') == 'scale' ? 'the scale of ' + request.name + ', managed by Helm' : 'managed by Helm release ' + {release})"
        );
        let message = format!(
            "{what} + ' (namespace ' + request.namespace + '): this ' + (request.operation == 'DELETE' ? 'deletion' : 'change') + ' by ' + request.userInfo.username + ' (field manager ' + request.options.?fieldManager.orValue('none') + ') will be reported as drift by helm drift check and undone by helm drift repair; change the release instead (helm upgrade --set ...), or record it as accepted (helm drift accept)' + (request.operation == 'DELETE' ? '; ignore this during helm uninstall' : '')"
        );
        let allowed = format!("request.options.?fieldManager.orValue('') in {}", cel_list(&self.managers));
        // Deletions are never refused (helm uninstall deletes as its user does): warned in warn
        // mode, audited in audit mode, let through in deny mode.
        let check = match self.mode {
            Mode::Deny => format!("request.operation == 'DELETE' || {allowed}"),
            _ => format!("request.operation == 'UPDATE' && {allowed}"),
        };
        let validations = vec![json!({"expression": check, "messageExpression": message, "reason": "Forbidden"})];
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": self.name(), "labels": self.labels(), "annotations": self.annotations()},
            "spec": {
                "failurePolicy": "Ignore",
                "matchConstraints": {"resourceRules": rules},
                "matchConditions": conditions,
                "validations": validations,
                "auditAnnotations": [
                    {"key": "release", "valueExpression": format!("request.namespace + '/' + {release}")},
                    {"key": "writer", "valueExpression": "request.userInfo.username + ' (' + request.options.?fieldManager.orValue('none') + ')'"},
                ],
            },
        })
    }

    /// The binding: the mode's actions, in its namespace (or every namespace).
    pub fn binding(&self) -> Value {
        let mut spec = json!({"policyName": self.name(), "validationActions": self.mode.actions()});
        if let Some(ns) = &self.namespace {
            spec["matchResources"] = json!({"namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [ns]}
            ]}});
        }
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": self.name(), "labels": self.labels(), "annotations": self.annotations()},
            "spec": spec,
        })
    }

    fn labels(&self) -> Value {
        json!({"app.kubernetes.io/managed-by": "helm-drift", LABEL: "true"})
    }

    /// What `guard status` reads back.
    fn annotations(&self) -> Value {
        json!({
            "helm-drift.io/guard-mode": self.mode.word(),
            "helm-drift.io/guard-namespace": self.namespace.as_deref().unwrap_or("*"),
            "helm-drift.io/guard-releases": if self.releases.is_empty() { "*".to_string() } else { self.releases.join(",") },
        })
    }
}

/// The name of the guard's policy and binding: one guard per namespace (`None`: the guard of
/// every namespace).
pub fn name(namespace: Option<&str>) -> String {
    format!("helm-drift-guard-{}", namespace.unwrap_or("all-namespaces"))
}

/// A written guard as `status` shows it, from its annotations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuardInfo {
    pub name: String,
    pub mode: String,
    pub namespace: String,
    pub releases: String,
    pub kinds: usize,
}

impl GuardInfo {
    /// Whether it covers release `name` in `namespace`.
    pub fn covers(&self, namespace: &str, name: &str) -> bool {
        (self.namespace == "*" || self.namespace == namespace)
            && (self.releases == "*" || self.releases.split(',').any(|r| r == name))
    }

    pub fn of(policy: &Value) -> GuardInfo {
        let a = &policy["metadata"]["annotations"];
        let word = |k: &str| a[k].as_str().unwrap_or("?").to_string();
        let kinds = policy["spec"]["matchConstraints"]["resourceRules"]
            .as_array()
            .map_or(0, |rules| rules.iter().map(|r| r["resources"].as_array().map_or(0, Vec::len)).sum());
        GuardInfo {
            name: policy["metadata"]["name"].as_str().unwrap_or("?").to_string(),
            mode: word("helm-drift.io/guard-mode"),
            namespace: word("helm-drift.io/guard-namespace"),
            releases: word("helm-drift.io/guard-releases"),
            kinds,
        }
    }
}

/// A CEL list of strings.
fn cel_list(items: &[String]) -> String {
    let quoted: Vec<String> =
        items.iter().map(|i| format!("'{}'", i.replace('\\', "\\\\").replace('\'', "\\'"))).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests;

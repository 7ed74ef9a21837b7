//! The admission guard (`helm drift guard`): a ValidatingAdmissionPolicy and its binding that
//! tell whoever changes or deletes an object Helm manages, at the prompt, that it will drift
//! from its release (Warn + Audit), only record it (Audit), or refuse it (Deny + Audit). CEL in
//! the API server, no webhook. Pure: what to write, and what a written guard says.

use serde_json::{Value, json};

/// Label on every object the guard writes.
pub(crate) const LABEL: &str = "helm-drift.io/guard";
/// The field manager of the guard's writes.
pub(crate) const MANAGER: &str = "helm-drift";

/// How a drifting write is met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GuardMode {
    /// A warning to the writer, and an audit annotation.
    Warn,
    /// An audit annotation only.
    Audit,
    /// Changes refused, and an audit annotation. Deletions pass: `helm uninstall` deletes as
    /// its user does, which admission cannot tell from `kubectl delete`.
    Deny,
}

impl GuardMode {
    pub(crate) fn word(self) -> &'static str {
        match self {
            GuardMode::Warn => "warn",
            GuardMode::Audit => "audit",
            GuardMode::Deny => "deny",
        }
    }

    pub(crate) fn parse(word: &str) -> Option<GuardMode> {
        [GuardMode::Warn, GuardMode::Audit, GuardMode::Deny].into_iter().find(|m| m.word() == word)
    }

    fn actions(self) -> Vec<&'static str> {
        match self {
            GuardMode::Warn => vec!["Warn", "Audit"],
            GuardMode::Audit => vec!["Audit"],
            GuardMode::Deny => vec!["Deny", "Audit"],
        }
    }
}

/// What a guard covers and who may write without a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GuardSpec {
    /// The namespace it covers (`None`: every namespace).
    pub(crate) namespace: Option<String>,
    /// The releases it covers (empty: every release in its namespaces).
    pub(crate) releases: Vec<String>,
    /// `(group, resource)` of the kinds the releases contain (empty: every kind, and the
    /// `scale` of every kind, so that kinds a later upgrade adds are covered too).
    pub(crate) resources: Vec<(String, String)>,
    pub(crate) mode: GuardMode,
    /// Field managers whose writes are the release's own or expected (Helm, repairs, rollout
    /// restarts, listed controllers).
    pub(crate) managers: Vec<String>,
    /// Users and groups that may write without a word.
    pub(crate) users: Vec<String>,
    pub(crate) groups: Vec<String>,
    /// Judge the writes of service accounts outside kube-system as a person's (by default they
    /// are controllers, operators and pipelines, and are let through like the control plane).
    pub(crate) service_accounts: bool,
    /// `namespace/name` of the releases' objects with a `scale` (a Scale carries no labels of
    /// its own: these names say which scales are Helm's). Unused with every kind, where every
    /// scale in the namespaces is matched.
    pub(crate) scaled: Vec<String>,
}

/// Field managers that write as the release wants: Helm (3 and 4; helm drift repair writes as
/// Helm), Flux's helm-controller (Helm's library names its writes after the program), and
/// `kubectl rollout restart` (an expected change).
pub(crate) const DEFAULT_MANAGERS: [&str; 3] = ["helm", "helm-controller", "kubectl-rollout"];

/// The namespace of the release an object belongs to: Helm's annotation, else the request's
/// (a scale has no annotations; a cluster-scoped request has no namespace).
const RELEASE_NAMESPACE: &str =
    "oldObject.metadata.?annotations[?'meta.helm.sh/release-namespace'].orValue(request.?namespace.orValue(''))";

/// Kinds whose `scale` subresource a person uses (`kubectl scale`).
const SCALABLE: [(&str, &str); 4] =
    [("apps", "deployments"), ("apps", "statefulsets"), ("apps", "replicasets"), ("", "replicationcontrollers")];

/// Whether a person scales objects of this resource (`kubectl scale`).
pub(crate) fn scalable(group: &str, plural: &str) -> bool {
    SCALABLE.contains(&(group, plural))
}

/// CEL: whether the request is to a scale subresource.
const SCALE: &str = "request.?subResource.orValue('') == 'scale'";
/// CEL: the Helm release an object belongs to (its ownership annotation), or empty.
const RELEASE_NAME: &str = "oldObject.metadata.?annotations[?'meta.helm.sh/release-name'].orValue('')";

impl GuardSpec {
    /// The name of its policy and binding.
    pub(crate) fn name(&self) -> String {
        name(self.namespace.as_deref())
    }

    /// The ValidatingAdmissionPolicy.
    pub(crate) fn policy(&self) -> Value {
        json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": self.name(), "labels": self.labels(), "annotations": self.annotations()},
            "spec": {
                "failurePolicy": "Ignore",
                "matchConstraints": {"resourceRules": self.resource_rules()},
                "matchConditions": self.match_conditions(),
                "validations": [self.validation()],
                "auditAnnotations": [
                    {"key": "release", "valueExpression": format!("{RELEASE_NAMESPACE} + '/' + {RELEASE_NAME}")},
                    {"key": "writer", "valueExpression": "request.userInfo.username + ' (' + request.options.?fieldManager.orValue('none') + ')'"},
                ],
            },
        })
    }

    /// The kinds it judges, by group (with their scale subresource where they have one).
    fn resource_rules(&self) -> Vec<Value> {
        let mut by_group: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for (group, resource) in &self.resources {
            let list = by_group.entry(group.as_str()).or_default();
            list.push(resource.clone());
            if scalable(group, resource) {
                list.push(format!("{resource}/scale"));
            }
        }
        if by_group.is_empty() {
            by_group.insert("*", vec!["*".into(), "*/scale".into()]);
        }
        by_group
            .into_iter()
            .map(|(group, mut resources)| {
                resources.sort();
                resources.dedup();
                json!({"apiGroups": [group], "apiVersions": ["*"], "operations": ["UPDATE", "DELETE"], "resources": resources, "scope": "*"})
            })
            .collect()
    }

    /// Which requests it judges: people's, to objects of the guarded releases, not being deleted.
    fn match_conditions(&self) -> Vec<Value> {
        // The control plane's own writers (controllers writing status, an HPA's scale, garbage
        // collection, namespace deletion; nodes; the API server) are `system:` users; so are
        // service accounts, which are let through too unless asked (then only kube-system's).
        // `system:admin` is a person: the admin of k3s, RKE2 and OpenShift.
        let user = "request.userInfo.username";
        let not_system = if self.service_accounts {
            format!(
                "!{user}.startsWith('system:') || {user} == 'system:admin' || ({user}.startsWith('system:serviceaccount:') && !{user}.startsWith('system:serviceaccount:kube-system:'))"
            )
        } else {
            format!("!{user}.startsWith('system:') || {user} == 'system:admin'")
        };
        let (scale, release) = (SCALE, RELEASE_NAME);
        // A scale of the releases' objects (by name; with every kind, any scale).
        let helms_scale = if self.resources.is_empty() {
            scale.to_string()
        } else {
            format!("({scale} && request.namespace + '/' + request.name in {})", cel_list(&self.scaled))
        };
        let mut conditions = vec![
            json!({"name": "not-the-control-plane", "expression": not_system}),
            // An object Helm manages: its label, or Helm's ownership annotation.
            json!({"name": "managed-by-helm", "expression": format!("{helms_scale} || oldObject.metadata.?labels[?'app.kubernetes.io/managed-by'].orValue('') == 'Helm' || {release} != ''")}),
            // An object being deleted is going away: its finalizers are let go by their owners.
            json!({"name": "not-being-deleted", "expression": "!has(oldObject.metadata.deletionTimestamp)"}),
        ];
        // A namespace's guard: its releases' objects, cluster-scoped ones included (a binding's
        // namespace selector never skips a cluster-scoped object: without this, every release's
        // ClusterRoles would be judged by every namespace's guard).
        if let Some(ns) = &self.namespace {
            conditions.push(json!({"name": "a-release-of-the-namespace", "expression": format!("{RELEASE_NAMESPACE} in {}", cel_list(std::slice::from_ref(ns)))}));
        }
        if !self.releases.is_empty() {
            conditions.push(json!({"name": "a-guarded-release", "expression": format!(
                "{scale} || {release} in {}",
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
        conditions
    }

    /// What it allows: the expected field managers (and deletions in deny mode), with the
    /// message a refused writer reads.
    fn validation(&self) -> Value {
        let (scale, release, release_ns) = (SCALE, RELEASE_NAME, RELEASE_NAMESPACE);
        let what = format!(
            "({scale} ? 'the scale of ' + request.name + ', managed by Helm' : 'managed by Helm release ' + {release})"
        );
        let message = format!(
            "{what} + ' (namespace ' + {release_ns} + '): this ' + (request.operation == 'DELETE' ? 'deletion' : 'change') + ' by ' + request.userInfo.username + ' (field manager ' + request.options.?fieldManager.orValue('none') + ') will be reported as drift by helm drift check and undone by helm drift repair; change the release instead (helm drift check ' + ({scale} ? '--all' : {release}) + ' -n ' + {release_ns} + ' --explain names the helm upgrade --set line), or record it as accepted (helm drift accept)' + (request.operation == 'DELETE' ? '; ignore this during helm uninstall' : '')"
        );
        let allowed = format!("request.options.?fieldManager.orValue('') in {}", cel_list(&self.managers));
        // Deletions are never refused (helm uninstall deletes as its user does): warned in warn
        // mode, audited in audit mode, let through in deny mode.
        let check = match self.mode {
            GuardMode::Deny => format!("request.operation == 'DELETE' || {allowed}"),
            _ => format!("request.operation == 'UPDATE' && {allowed}"),
        };
        json!({"expression": check, "messageExpression": message, "reason": "Forbidden"})
    }

    /// The binding: the mode's actions, in its namespace (or every namespace).
    pub(crate) fn binding(&self) -> Value {
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

/// The policy and binding as YAML documents (`guard install --dry-run`).
pub(crate) fn documents(spec: &GuardSpec) -> String {
    let yaml = |v: &Value| serde_yaml::to_string(v).expect("JSON values serialize");
    format!("---\n{}---\n{}", yaml(&spec.policy()), yaml(&spec.binding()))
}

/// The name of the guard's policy and binding: one guard per namespace (`None`: the guard of
/// every namespace).
pub(crate) fn name(namespace: Option<&str>) -> String {
    format!("helm-drift-guard-{}", namespace.unwrap_or("all-namespaces"))
}

/// A written guard as `status` shows it, from its annotations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GuardInfo {
    pub(crate) name: String,
    pub(crate) mode: String,
    pub(crate) namespace: String,
    pub(crate) releases: String,
    /// How many kinds (and subresources) it covers; `None`: every kind.
    pub(crate) kinds: Option<usize>,
}

impl GuardInfo {
    /// Whether it covers release `name` in `namespace`.
    pub(crate) fn covers(&self, namespace: &str, name: &str) -> bool {
        (self.namespace == "*" || self.namespace.split(',').any(|n| n == namespace))
            && (self.releases == "*" || self.releases.split(',').any(|r| r == name))
    }

    /// The guards these policies are.
    pub(crate) fn all(policies: &[Value]) -> Vec<GuardInfo> {
        policies.iter().map(GuardInfo::of).collect()
    }

    pub(crate) fn of(policy: &Value) -> GuardInfo {
        let a = &policy["metadata"]["annotations"];
        let word = |k: &str| a[k].as_str().unwrap_or("?").to_string();
        let rules = policy["spec"]["matchConstraints"]["resourceRules"].as_array().cloned().unwrap_or_default();
        let resources = || rules.iter().flat_map(|r| r["resources"].as_array().cloned().unwrap_or_default());
        let kinds = (!resources().any(|r| r == "*")).then(|| resources().count());
        GuardInfo {
            name: policy["metadata"]["name"].as_str().unwrap_or("?").to_string(),
            // A mode word that is not one of ours (a policy labelled by hand) is not repeated.
            mode: GuardMode::parse(&word("helm-drift.io/guard-mode")).map_or("unknown", GuardMode::word).to_string(),
            namespace: word("helm-drift.io/guard-namespace"),
            releases: word("helm-drift.io/guard-releases"),
            kinds,
        }
    }
}

/// The mode of the strongest guard covering release `name` in `namespace` (deny, then warn,
/// then audit), if any.
pub(crate) fn covering(guards: &[GuardInfo], namespace: &str, name: &str) -> Option<String> {
    let strength = |mode: &str| ["audit", "warn", "deny"].iter().position(|m| *m == mode);
    guards.iter().filter(|g| g.covers(namespace, name)).max_by_key(|g| strength(&g.mode)).map(|g| g.mode.clone())
}

/// The field managers the config file names as expected writers, to let through too: Argo CD's
/// `managedFieldsManagers` and the managers of expected-change rules, when a rule names one
/// manager (a regex matching many is not a name, and is said so in the notes).
pub(crate) fn config_managers(
    rules: &[crate::policy::ignore::IgnoreRule],
    expected: &[crate::policy::expected::ExpectedRule],
) -> (Vec<String>, Vec<String>) {
    let mut names: Vec<String> = rules.iter().flat_map(|r| r.managers.iter().cloned()).collect();
    let mut notes = Vec::new();
    for rule in expected.iter().filter(|r| !r.built_in()) {
        let Some(pattern) = rule.manager_pattern() else {
            notes.push(format!(
                "expected-change rule {} names no manager: the guard lets no writer through for it (--allow-manager)",
                rule.name
            ));
            continue;
        };
        if pattern.chars().all(|c| c.is_ascii_alphanumeric() || "-_:".contains(c)) {
            names.push(pattern.to_string());
        } else {
            notes.push(format!(
                "expected-change rule {}: manager {pattern:?} is a pattern, not a name: the guard does not let it through (--allow-manager NAME)",
                rule.name
            ));
        }
    }
    names.sort();
    names.dedup();
    (names, notes)
}

/// A CEL list of strings, written as JSON (a JSON string is a CEL string: the same escapes),
/// as the chart's template writes it with `toJson`.
fn cel_list(items: &[String]) -> String {
    serde_json::to_string(items).expect("strings serialize")
}

#[cfg(test)]
mod tests;

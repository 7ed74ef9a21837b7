//! What admission may have added to an object, as far as a reader can tell from admission's
//! configuration ([`crate::live::mutators`]): the built-in plugins' values (the default
//! IngressClass's name, the default StorageClass's), and the mutating webhooks and policies whose
//! rules and selectors cover the object. A reader cannot tell what they added from an edit that
//! cleared the object's managedFields; the exact engine asks the server instead.

use crate::live::mutators::{Admission, Mutator};
use serde_json::{Map, Value};

/// The object admission is asked about.
pub(crate) struct AdmittedObject<'a> {
    pub(crate) group: &'a str,
    pub(crate) version: &'a str,
    /// Its resource (`deployments`).
    pub(crate) plural: &'a str,
    /// Its namespace (`None`: cluster-scoped).
    pub(crate) namespace: Option<&'a str>,
    /// Its namespace's labels, when read (`None`: unknown, a namespace selector may match).
    pub(crate) namespace_labels: Option<&'a Map<String, Value>>,
    pub(crate) labels: &'a Map<String, Value>,
}

/// What a built-in admission plugin sets at `pointer` to `value`, given what the reader read:
/// the default IngressClass (`DefaultIngressClass`) and StorageClass (`DefaultStorageClass`).
pub(crate) fn built_in(admission: &Admission, group: &str, kind: &str, pointer: &str, value: &Value) -> Option<String> {
    let name = value.as_str()?;
    let (classes, plugin) = match (group, kind, pointer) {
        ("networking.k8s.io", "Ingress", "/spec/ingressClassName") => {
            (&admission.default_ingress_classes, "IngressClass")
        }
        ("", "PersistentVolumeClaim", "/spec/storageClassName") => (&admission.default_storage_classes, "StorageClass"),
        _ => return None,
    };
    classes.iter().any(|c| c == name).then(|| {
        format!("the default {plugin} {name}, set at admission (the Default{plugin} plugin) when none is given")
    })
}

/// The mutating webhooks and policies that cover `target` at create or update.
pub(crate) fn matching<'a>(admission: &'a Admission, target: &AdmittedObject<'_>) -> Vec<&'a Mutator> {
    admission
        .mutators
        .iter()
        .filter(|m| m.rules.iter().any(|r| rule_covers(r, target)))
        .filter(|m| target.namespace.is_none() || selects(m.namespace_selector.as_ref(), target.namespace_labels))
        .filter(|m| selects(m.object_selector.as_ref(), Some(target.labels)))
        .collect()
}

/// Whether a rule (`apiGroups`, `apiVersions`, `resources`, `operations`, `scope`) covers the
/// target's create or update.
fn rule_covers(rule: &Value, t: &AdmittedObject<'_>) -> bool {
    let any = |key: &str, want: &[&str]| {
        rule.get(key)
            .and_then(Value::as_array)
            .is_some_and(|items| items.iter().filter_map(Value::as_str).any(|i| i == "*" || want.contains(&i)))
    };
    let resource = any("resources", &[t.plural, "*/*"]);
    let scope = match rule.get("scope").and_then(Value::as_str).unwrap_or("*") {
        "Namespaced" => t.namespace.is_some(),
        "Cluster" => t.namespace.is_none(),
        _ => true,
    };
    any("apiGroups", &[t.group])
        && any("apiVersions", &[t.version])
        && resource
        && scope
        && any("operations", &["CREATE", "UPDATE"])
}

/// Whether a label selector (`matchLabels`, `matchExpressions`; absent: everything) selects
/// `labels` (`None`: unknown, so it may).
pub(crate) fn selects(selector: Option<&Value>, labels: Option<&Map<String, Value>>) -> bool {
    let (Some(selector), Some(labels)) = (selector.filter(|s| !s.is_null()), labels) else { return true };
    let value = |k: &str| labels.get(k).and_then(Value::as_str);
    let matched = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .is_none_or(|m| m.iter().all(|(k, v)| value(k) == v.as_str()));
    let expressions = selector.get("matchExpressions").and_then(Value::as_array).into_iter().flatten();
    matched
        && expressions.into_iter().all(|e| {
            let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
            let values: Vec<&str> =
                e.get("values").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            match e.get("operator").and_then(Value::as_str).unwrap_or_default() {
                "In" => value(key).is_some_and(|v| values.contains(&v)),
                "NotIn" => value(key).is_none_or(|v| !values.contains(&v)),
                "Exists" => value(key).is_some(),
                "DoesNotExist" => value(key).is_none(),
                // An operator the API server would not take: a reader cannot say it does not.
                _ => true,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mutator(rules: Value, namespaces: Value, objects: Value) -> Mutator {
        Mutator {
            name: "mutating webhook label (configuration policy)".into(),
            rules: rules.as_array().cloned().unwrap(),
            namespace_selector: Some(namespaces),
            object_selector: Some(objects),
            conditional: false,
        }
    }

    #[test]
    fn a_webhook_covers_what_its_rules_and_selectors_name() {
        let rules = json!([{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]);
        let admission = Admission {
            mutators: vec![mutator(rules, json!({"matchLabels": {"mesh": "on"}}), json!({}))],
            ..Default::default()
        };
        let ns: Map<String, Value> = json!({"mesh": "on"}).as_object().cloned().unwrap();
        let other: Map<String, Value> = json!({"mesh": "off"}).as_object().cloned().unwrap();
        let labels = Map::new();
        let target = |plural, namespace_labels| AdmittedObject {
            group: "apps",
            version: "v1",
            plural,
            namespace: Some("apps"),
            namespace_labels,
            labels: &labels,
        };
        assert_eq!(matching(&admission, &target("deployments", Some(&ns))).len(), 1);
        assert!(matching(&admission, &target("deployments", Some(&other))).is_empty(), "its namespace selector");
        assert!(matching(&admission, &target("statefulsets", Some(&ns))).is_empty(), "its resources");
        assert_eq!(matching(&admission, &target("deployments", None)).len(), 1, "a namespace not read may match");
        // Delete-only, another group, a cluster-scoped rule: nothing added at create or update.
        for rule in [
            json!({"apiGroups": ["apps"], "apiVersions": ["*"], "operations": ["DELETE"], "resources": ["*"]}),
            json!({"apiGroups": [""], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}),
            json!({"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"], "scope": "Cluster"}),
        ] {
            let a = Admission { mutators: vec![mutator(json!([rule]), json!({}), json!({}))], ..Default::default() };
            assert!(matching(&a, &target("deployments", Some(&ns))).is_empty(), "{rule}");
        }
    }

    #[test]
    fn selectors_are_evaluated_as_the_api_server_does() {
        let labels: Map<String, Value> = json!({"team": "a", "tier": "web"}).as_object().cloned().unwrap();
        let s = |v: Value| selects(Some(&v), Some(&labels));
        assert!(
            s(json!({})) && selects(None, Some(&labels)) && selects(Some(&json!({"matchLabels": {"x": "y"}})), None)
        );
        assert!(s(json!({"matchLabels": {"team": "a"}})) && !s(json!({"matchLabels": {"team": "b"}})));
        assert!(s(json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "api"]}]})));
        assert!(!s(json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["web"]}]})));
        assert!(s(json!({"matchExpressions": [{"key": "team", "operator": "Exists"}]})));
        assert!(!s(json!({"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]})));
    }

    #[test]
    fn the_default_classes_are_the_built_in_plugins() {
        let admission = Admission {
            default_ingress_classes: vec!["nginx".into()],
            default_storage_classes: vec!["standard".into()],
            ..Default::default()
        };
        let why = built_in(&admission, "networking.k8s.io", "Ingress", "/spec/ingressClassName", &json!("nginx"));
        assert!(why.unwrap().contains("DefaultIngressClass"));
        assert!(
            built_in(&admission, "networking.k8s.io", "Ingress", "/spec/ingressClassName", &json!("evil")).is_none()
        );
        assert!(
            built_in(&admission, "", "PersistentVolumeClaim", "/spec/storageClassName", &json!("standard")).is_some()
        );
        assert!(built_in(&admission, "", "ConfigMap", "/spec/storageClassName", &json!("standard")).is_none());
    }
}

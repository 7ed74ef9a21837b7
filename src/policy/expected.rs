//! Expected changes: routine writes outside Helm that stay visible but are not drift (a
//! `kubectl rollout restart`, a CA bundle injected into a webhook configuration), and Helm's own
//! request changed at admission. Built-in rules are data ([`BUILT_IN`]); the config file adds,
//! replaces (same `name`) or disables them; `--strict` turns them all off.

use crate::model::path::{reaches_below, under_pattern};
use crate::model::{Expected, FieldDiff, Foreign};
use crate::policy::ignore::{IgnoreError, ObjectRef, Selector, TargetSpec, anchored};
use regex::Regex;
use serde::Deserialize;

/// The built-in rules: `(name, kind regex, pointer patterns, manager regex, reason)`.
pub(crate) const BUILT_IN: [(&str, &str, &[&str], &str, &str); 3] = [
    (
        "rollout-restart",
        "Deployment|StatefulSet|DaemonSet",
        &["/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"],
        "kubectl.*",
        "kubectl rollout restart",
    ),
    (
        "ca-bundle",
        "MutatingWebhookConfiguration|ValidatingWebhookConfiguration|APIService|CustomResourceDefinition",
        &["/webhooks/*/clientConfig/caBundle", "/spec/caBundle", "/spec/conversion/webhook/clientConfig/caBundle"],
        ".*",
        "CA bundle injected by a certificate injector",
    ),
    (
        "last-applied",
        ".*",
        &["/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration"],
        "kubectl.*",
        "kubectl apply's record of what it applied",
    ),
];

/// What a rule's reason adds when Helm's own field manager wrote the value the rule covers.
pub(crate) const MUTATED_AT_ADMISSION: &str = "Helm's own request, as mutated at admission";

/// One expected-change rule.
#[derive(Clone, Debug)]
pub(crate) struct ExpectedRule {
    pub(crate) name: String,
    pub(crate) paths: Vec<String>,
    target: Selector,
    manager: Option<Regex>,
    pub(crate) reason: String,
}

impl ExpectedRule {
    /// The manager regex as written (without the anchors added to it).
    pub(crate) fn manager_pattern(&self) -> Option<&str> {
        let m = self.manager.as_ref()?.as_str();
        Some(m.strip_prefix("^(?:").and_then(|m| m.strip_suffix(")$")).unwrap_or(m))
    }

    /// Whether it is a built-in rule as built in (not replaced by the config file).
    pub(crate) fn built_in(&self) -> bool {
        BUILT_IN.iter().any(|b| b.0 == self.name && b.4 == self.reason && Some(b.3) == self.manager_pattern())
    }
}

/// A rule as the config file writes it (`expected:`), the shape of the ignore rules plus the
/// writer and the reason.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExpectedSpec {
    /// Replaces (or, with `disabled: true`, removes) the built-in rule of that name.
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) paths: Vec<String>,
    #[serde(default)]
    pub(crate) target: TargetSpec,
    /// Only writes by managers matching this regex (anchored); any when absent.
    #[serde(default)]
    pub(crate) manager: Option<String>,
    #[serde(default)]
    pub(crate) reason: Option<String>,
    #[serde(default)]
    pub(crate) disabled: bool,
}

impl ExpectedRule {
    fn matches(&self, o: &ObjectRef, pointer: &str, manager: &str) -> bool {
        self.target.matches(o)
            && self.paths.iter().any(|p| under_pattern(pointer, p))
            && self.manager.as_ref().is_none_or(|m| m.is_match(manager))
    }
}

/// The built-in rules with the config file's applied; `origin` names the file in errors.
pub(crate) fn rules(config: Vec<ExpectedSpec>, origin: &str) -> Result<Vec<ExpectedRule>, IgnoreError> {
    let mut rules: Vec<ExpectedRule> = BUILT_IN
        .iter()
        .map(|(name, kind, paths, manager, reason)| ExpectedRule {
            name: name.to_string(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            target: Selector::from_spec(TargetSpec { kind: Some(kind.to_string()), ..Default::default() })
                .expect("built-in regexes are valid"),
            manager: Some(anchored("manager", manager.to_string()).expect("built-in regexes are valid")),
            reason: reason.to_string(),
        })
        .collect();
    for (i, spec) in config.into_iter().enumerate() {
        let at = format!("{origin} expected[{i}]");
        let err = |why: &str| IgnoreError::Expected { rule: at.clone(), why: why.to_string() };
        let name = spec.name.clone().unwrap_or_else(|| format!("expected[{i}]"));
        rules.retain(|r| r.name != name);
        if spec.disabled {
            continue;
        }
        if spec.paths.is_empty() {
            return Err(err("no paths"));
        }
        if let Some(p) = spec.paths.iter().find(|p| !p.starts_with('/')) {
            return Err(err(&format!("{p:?} is not a JSON pointer")));
        }
        rules.push(ExpectedRule {
            reason: spec.reason.unwrap_or_else(|| format!("expected by rule {name}")),
            name,
            paths: spec.paths,
            target: Selector::from_spec(spec.target)?,
            manager: spec.manager.map(|m| anchored("manager", m)).transpose()?,
        });
    }
    Ok(rules)
}

/// Takes the expected changes out of the differences: fields added outside Helm (or not in the
/// release) that a rule expects from their writer, and changed values a rule of the config file
/// names (its path, kind and writer: a registry mirror rewriting images as Helm's own request is
/// admitted). Whoever wrote it, a value that differs from the record is otherwise drift: a field
/// manager is whatever the client says, so Helm's name alone excuses nothing.
pub(crate) fn set_aside(
    rules: &[ExpectedRule],
    o: &ObjectRef,
    fields: Vec<FieldDiff>,
    added: Vec<Foreign>,
    helm: &str,
) -> (Vec<FieldDiff>, Vec<Foreign>, Vec<Expected>) {
    let mut expected = Vec::new();
    let rule_for = |pointer: &str, manager: &str| rules.iter().find(|r| r.matches(o, pointer, manager));
    let mut keep_added = Vec::new();
    for a in split_for_rules(rules, added) {
        match rule_for(&a.path.pointer(), &a.manager) {
            Some(r) => expected.push(Expected {
                reason: reason(r, &a.manager),
                path: a.path,
                value: a.value,
                changed_by: a.changed_by,
            }),
            None => keep_added.push(a),
        }
    }
    let mut keep_fields = Vec::new();
    for f in fields {
        let writer = f.changed_by.as_ref().map_or("", |c| c.manager.as_str());
        let pointer = f.path.pointer();
        let reason = match (&f.recorded, &f.live) {
            (None, _) => rule_for(&pointer, writer).map(|r| reason(r, writer)),
            // A value the chart sets: only a rule the operator wrote covers it.
            (Some(_), Some(_)) => {
                rules.iter().find(|r| !r.built_in() && r.matches(o, &pointer, writer)).map(|r| match writer == helm {
                    true => format!("{} ({MUTATED_AT_ADMISSION})", reason(r, writer)),
                    false => reason(r, writer),
                })
            }
            (Some(_), None) => None,
        };
        match (reason, &f.live) {
            (Some(reason), Some(value)) => {
                expected.push(Expected { path: f.path.clone(), value: value.clone(), reason, changed_by: f.changed_by })
            }
            _ => keep_fields.push(f),
        }
    }
    (keep_fields, keep_added, expected)
}

/// A field added outside Helm that holds a map some rule looks inside (the pod template's
/// `annotations` map when the chart sets none) is split into its keys, so that the rule sees
/// each one.
fn split_for_rules(rules: &[ExpectedRule], added: Vec<Foreign>) -> Vec<Foreign> {
    let mut out = Vec::new();
    let mut todo = added;
    while let Some(a) = todo.pop() {
        let at = a.path.pointer();
        let deeper = rules.iter().flat_map(|r| &r.paths).any(|p| reaches_below(p, &at));
        match &a.value {
            serde_json::Value::Object(map) if deeper && !map.is_empty() => {
                for (k, v) in map {
                    todo.push(Foreign {
                        path: a.path.field(k),
                        value: v.clone(),
                        manager: a.manager.clone(),
                        changed_by: a.changed_by.clone(),
                    });
                }
            }
            _ => out.push(a),
        }
    }
    out.sort_by_cached_key(|a| a.path.pointer());
    out
}

fn reason(rule: &ExpectedRule, manager: &str) -> String {
    if manager.is_empty() { rule.reason.clone() } else { format!("{} ({manager})", rule.reason) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Attribution;
    use serde_json::json;

    fn deployment() -> ObjectRef<'static> {
        ObjectRef {
            group: "apps",
            version: "v1",
            kind: "Deployment",
            name: "web",
            namespace: Some("ns"),
            metadata: None,
        }
    }

    fn foreign(pointer: &str, manager: &str) -> Foreign {
        Foreign { path: crate::testing::path(pointer), value: json!("x"), manager: manager.into(), changed_by: None }
    }

    fn by(manager: &str) -> Option<Attribution> {
        Some(Attribution {
            manager: manager.into(),
            operation: "Update".into(),
            subresource: None,
            time: None,
            person: false,
            audit: None,
        })
    }

    const RESTART: &str = "/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt";

    #[test]
    fn rollout_restart_is_expected_other_edits_are_not() {
        let rules = rules(Vec::new(), "built-in").unwrap();
        let added = vec![foreign(RESTART, "kubectl-rollout"), foreign("/metadata/labels/x", "kubectl-label")];
        let (_, kept, expected) = set_aside(&rules, &deployment(), Vec::new(), added, "helm");
        assert_eq!(kept.len(), 1);
        assert_eq!(expected[0].reason, "kubectl rollout restart (kubectl-rollout)");
        let (_, kept, _) =
            set_aside(&rules, &deployment(), Vec::new(), vec![foreign(RESTART, "argo-rollouts")], "helm");
        assert_eq!(kept.len(), 1, "another writer than kubectl is not the rule's");
    }

    #[test]
    fn config_adds_replaces_and_disables() {
        let specs: Vec<ExpectedSpec> = serde_yaml::from_str(
            "- {name: rollout-restart, disabled: true}\n- {paths: [/metadata/labels/team], manager: kubectl-label, reason: team labels}\n",
        )
        .unwrap();
        let rules = rules(specs, "cfg").unwrap();
        assert!(!rules.iter().any(|r| r.name == "rollout-restart"));
        let added = vec![foreign(RESTART, "kubectl-rollout"), foreign("/metadata/labels/team", "kubectl-label")];
        let (_, kept, expected) = set_aside(&rules, &deployment(), Vec::new(), added, "helm");
        assert_eq!((kept.len(), expected.len()), (1, 1));
        assert_eq!(expected[0].reason, "team labels (kubectl-label)");
        let bad: Vec<ExpectedSpec> = serde_yaml::from_str("- {paths: [spec]}").unwrap();
        assert!(rules_err(bad).contains("is not a JSON pointer"));
    }

    #[test]
    fn last_applied_is_expected_and_a_built_in_rule_is_replaced_by_name() {
        const LAST: &str = "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration";
        let built_in = rules(Vec::new(), "built-in").unwrap();
        let (_, kept, expected) =
            set_aside(&built_in, &deployment(), Vec::new(), vec![foreign(LAST, "kubectl-client-side-apply")], "helm");
        assert!(kept.is_empty(), "kubectl apply's record is expected");
        assert_eq!(expected[0].reason, "kubectl apply's record of what it applied (kubectl-client-side-apply)");
        // A rule named like a built-in one replaces it: here, only for ConfigMaps.
        let specs: Vec<ExpectedSpec> = serde_yaml::from_str(&format!(
            "- {{name: last-applied, paths: [\"{LAST}\"], target: {{kind: ConfigMap}}, reason: mine}}\n"
        ))
        .unwrap();
        let replaced = rules(specs, "cfg").unwrap();
        assert_eq!(replaced.iter().filter(|r| r.name == "last-applied").count(), 1);
        let (_, kept, _) =
            set_aside(&replaced, &deployment(), Vec::new(), vec![foreign(LAST, "kubectl-client-side-apply")], "helm");
        assert_eq!(kept.len(), 1, "the replaced rule no longer covers Deployments");
    }

    fn rules_err(specs: Vec<ExpectedSpec>) -> String {
        rules(specs, "cfg").unwrap_err().to_string()
    }

    #[test]
    fn a_changed_value_is_drift_whoever_wrote_it_unless_a_config_rule_names_it() {
        let mut image =
            FieldDiff::new(crate::testing::path("/spec/image"), Some(&json!("web:1")), Some(&json!("mirror/web:1")));
        image.changed_by = by("helm");
        let mut edited = image.clone();
        edited.changed_by = by("kubectl-edit");
        let built_in = rules(Vec::new(), "test").unwrap();
        let (kept, _, expected) =
            set_aside(&built_in, &deployment(), vec![image.clone(), edited.clone()], Vec::new(), "helm");
        assert_eq!((kept.len(), expected.len()), (2, 0), "Helm's name excuses nothing");
        let mirror = ExpectedSpec {
            paths: vec!["/spec/image".into()],
            manager: Some("helm".into()),
            reason: Some("the registry mirror".into()),
            ..Default::default()
        };
        let with_rule = rules(vec![mirror], "test").unwrap();
        let (kept, _, expected) = set_aside(&with_rule, &deployment(), vec![image, edited.clone()], Vec::new(), "helm");
        assert_eq!(kept, vec![edited]);
        assert!(expected[0].reason.contains("the registry mirror"), "{}", expected[0].reason);
        assert!(expected[0].reason.contains(MUTATED_AT_ADMISSION), "{}", expected[0].reason);
    }
}

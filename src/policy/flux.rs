//! Flux's drift rules as a HelmRelease states them (`spec.driftDetection.ignore`): each rule's
//! JSON pointers (`""`: the whole object) over the objects its `target` selects, matched as
//! helm-controller matches them (anchored regexes, label and annotation selectors over the
//! object as Helm applied it). Read from a file (`--config`) or from the cluster, within bounds.

use super::ignore::{IgnoreError, IgnoreRule, Selector};
use serde_json::Value;

/// The most rules of one HelmRelease read, and the most paths of one rule.
pub(crate) const MOST_RULES: usize = 64;
pub(crate) const MOST_PATHS: usize = 64;

/// What a HelmRelease's `spec.driftDetection` says.
#[derive(Debug, Default)]
pub(crate) struct DriftRules {
    /// Each rule, or why it cannot be used, in order.
    pub(crate) rules: Vec<Result<IgnoreRule, IgnoreError>>,
    /// What was left out: fields of `spec.driftDetection` helm-drift does not know, rules and
    /// paths past the bounds. (A rule with a field it does not know is not used at all: it
    /// might select less than helm-controller reads it to.)
    pub(crate) left_out: Vec<String>,
}

/// The usable rules of the HelmRelease that installs a release, and how far they reach: the
/// HelmRelease's namespace speaks for its own namespace, for the objects elsewhere that carry
/// its origin labels (given by whoever writes there), and wherever the operator trusts it.
#[derive(Debug, Default)]
pub(crate) struct HelmReleaseRules {
    pub(crate) rules: Vec<IgnoreRule>,
    /// The HelmRelease's namespace and name.
    pub(crate) namespace: String,
    pub(crate) name: String,
    /// `--trust-namespace` names its namespace.
    pub(crate) trusted: bool,
}

impl HelmReleaseRules {
    /// The rules for an object living in `object_ns` (`None`: cluster-scoped), read as `live`
    /// (`None`: not there): none unless its namespace's word reaches it.
    pub(crate) fn for_object(&self, object_ns: Option<&str>, live: Option<&Value>) -> &[IgnoreRule] {
        if self.reaches(object_ns, live) { &self.rules } else { &[] }
    }

    /// Whether a HelmRelease installs the release and its namespace's word reaches the object.
    pub(crate) fn reaches(&self, object_ns: Option<&str>, live: Option<&Value>) -> bool {
        let own = object_ns == Some(self.namespace.as_str());
        let labelled = live.and_then(crate::model::flux_origin) == Some((self.namespace.as_str(), self.name.as_str()));
        !self.namespace.is_empty() && (own || labelled || self.trusted)
    }

    /// Why helm-controller leaves the live object out of its drift correction: Flux's opt-out
    /// annotation on it (helm-controller reads it in the cluster), where the HelmRelease's word
    /// reaches.
    pub(crate) fn left_out(&self, object_ns: Option<&str>, live: &Value) -> Option<FluxOptOut> {
        let annotation = crate::policy::ignore::ANNOTATION_FLUX;
        let pointer = format!("/metadata/annotations/{}", annotation.replace('/', "~1"));
        let disabled = live.pointer(&pointer).and_then(Value::as_str).map(str::trim) == Some("disabled");
        (disabled && self.reaches(object_ns, Some(live))).then(|| {
            FluxOptOut(format!(
                "HelmRelease {}/{}'s helm-controller leaves it out of drift correction ({annotation}: disabled on the live object); helm-drift reports it and leaves it as it is (--trust-live-annotations excludes it)",
                self.namespace, self.name
            ))
        })
    }
}

/// Why helm-controller leaves a live object out of its drift correction, in words.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FluxOptOut(pub(crate) String);

/// The rules of `drift` (a HelmRelease's `spec.driftDetection`); `at` names the HelmRelease in
/// each rule's origin (`HelmRelease apps/web`).
pub(crate) fn drift_rules(drift: &Value, at: &str) -> DriftRules {
    // `mode` (`enabled`, `warn`, `disabled`: helm-controller's default) says what helm-controller
    // does about drift, not what there is: it changes nothing here, from the cluster or a file.
    let mut out = DriftRules::default();
    out.left_out.extend(unknown(drift, &["mode", "ignore"], "spec.driftDetection"));
    let rules = drift.get("ignore").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if rules.len() > MOST_RULES {
        out.left_out.push(format!("spec.driftDetection.ignore past its first {MOST_RULES} rules"));
    }
    for (i, rule) in rules.iter().take(MOST_RULES).enumerate() {
        let prefix = format!("spec.driftDetection.ignore[{i}]");
        let origin = format!("{at} {prefix}");
        let target = rule.get("target").cloned().unwrap_or(Value::Null);
        let fields = ["group", "version", "kind", "name", "namespace", "labelSelector", "annotationSelector"];
        let mut strange = unknown(rule, &["paths", "target"], &prefix);
        strange.extend(unknown(&target, &fields, &format!("{prefix}.target")));
        out.rules.push(match strange.is_empty() {
            true => one_rule(rule, &target, &origin, &mut out.left_out),
            false => Err(IgnoreError::Rule {
                rule: origin,
                why: format!(
                    "{} not known to helm-drift: the rule could select less than helm-controller reads it to",
                    strange.join(", ")
                ),
            }),
        });
    }
    out
}

/// One rule: its paths (JSON pointers, `""` the whole object) and its target.
fn one_rule(rule: &Value, target: &Value, origin: &str, left_out: &mut Vec<String>) -> Result<IgnoreRule, IgnoreError> {
    let invalid = |why: String| IgnoreError::Rule { rule: origin.to_string(), why };
    let listed = rule.get("paths").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if listed.len() > MOST_PATHS {
        left_out.push(format!("{origin}.paths past its first {MOST_PATHS}"));
    }
    let mut paths = Vec::new();
    for p in listed.iter().take(MOST_PATHS) {
        let p = p.as_str().ok_or_else(|| invalid(format!("path {p} is not a string")))?;
        if !p.is_empty() && !p.starts_with('/') {
            return Err(invalid(format!("{p:?} is not a JSON pointer")));
        }
        paths.push(p.to_string());
    }
    if paths.is_empty() {
        return Err(invalid("no paths".into()));
    }
    Ok(IgnoreRule::new(paths, Selector::flux(target)?, origin))
}

/// Keys of `map` other than `known`, as `prefix.key` names.
pub(crate) fn unknown(map: &Value, known: &[&str], prefix: &str) -> Vec<String> {
    map.as_object()
        .map(|m| m.keys().filter(|k| !known.contains(&k.as_str())).map(|k| format!("{prefix}.{k}")).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ignore::{ObjectRef, paths_for};
    use serde_json::json;

    fn object<'a>(kind: &'a str, meta: &'a Value) -> ObjectRef<'a> {
        ObjectRef { group: "apps", version: "v1", kind, name: "web", namespace: Some("apps"), metadata: Some(meta) }
    }

    fn rules(drift: Value) -> Vec<IgnoreRule> {
        drift_rules(&drift, "HelmRelease apps/web").rules.into_iter().map(Result::unwrap).collect()
    }

    #[test]
    fn targets_match_as_helm_controller_matches_them() {
        let meta = json!({"labels": {"app": "web", "app.kubernetes.io/managed-by": "Helm"},
            "annotations": {"meta.helm.sh/release-name": "web"}});
        let hidden = |target: Value| {
            let r = rules(json!({"ignore": [{"paths": ["/spec/replicas"], "target": target}]}));
            !paths_for(&r, &object("Deployment", &meta), "web", &json!({})).is_empty()
        };
        assert!(hidden(json!(null)), "no target: every object");
        assert!(hidden(json!({"kind": "Deployment", "group": "apps", "version": "v1", "namespace": "apps"})));
        assert!(hidden(json!({"kind": "Deploy.*", "name": "w.b"})), "anchored regexes");
        assert!(!hidden(json!({"kind": "deployment"})), "case-sensitive, as Go's regexp");
        assert!(!hidden(json!({"kind": "Deploy"})), "anchored");
        assert!(hidden(json!({"labelSelector": "app=web,app.kubernetes.io/managed-by=Helm"})));
        assert!(!hidden(json!({"labelSelector": "app in (api)"})));
        assert!(hidden(json!({"annotationSelector": "meta.helm.sh/release-name=web"})));
        assert!(!hidden(json!({"annotationSelector": "team"})));
        assert!(hidden(json!({"kind": "", "name": ""})), "an empty field selects any");
    }

    #[test]
    fn a_helmreleases_rules_reach_its_namespace_its_labelled_objects_and_trust() {
        let rules = HelmReleaseRules {
            rules: rules(json!({"ignore": [{"paths": ["/a"]}]})),
            namespace: "apps".into(),
            name: "web".into(),
            trusted: false,
        };
        assert_eq!(rules.for_object(Some("apps"), None).len(), 1);
        let labelled = json!({"metadata": {"labels": {"helm.toolkit.fluxcd.io/name": "web", "helm.toolkit.fluxcd.io/namespace": "apps"}}});
        assert_eq!(rules.for_object(Some("other"), Some(&labelled)).len(), 1);
        assert_eq!(rules.for_object(None, Some(&labelled)).len(), 1);
        assert!(rules.for_object(Some("other"), Some(&json!({}))).is_empty());
        assert!(rules.for_object(Some("other"), None).is_empty());
        let someone_elses = json!({"metadata": {"labels": {"helm.toolkit.fluxcd.io/name": "web", "helm.toolkit.fluxcd.io/namespace": "other"}}});
        assert!(rules.for_object(Some("other"), Some(&someone_elses)).is_empty());
        let trusted = HelmReleaseRules { trusted: true, ..rules };
        assert_eq!(trusted.for_object(Some("other"), None).len(), 1);
    }

    #[test]
    fn flux_s_live_opt_out_counts_where_the_helmrelease_reaches() {
        let hr = HelmReleaseRules { namespace: "apps".into(), name: "web".into(), ..Default::default() };
        let off = json!({"metadata": {"annotations": {"helm.toolkit.fluxcd.io/driftDetection": "disabled"}}});
        assert!(
            hr.left_out(Some("apps"), &off).unwrap().0.contains("HelmRelease apps/web's helm-controller leaves it out")
        );
        assert_eq!(hr.left_out(Some("other"), &off), None, "beyond its namespace's word");
        let on = json!({"metadata": {"annotations": {"helm.toolkit.fluxcd.io/driftDetection": "enabled"}}});
        assert_eq!(hr.left_out(Some("apps"), &on), None);
        assert_eq!(HelmReleaseRules::default().left_out(Some("apps"), &off), None, "no HelmRelease installs it");
    }

    #[test]
    fn the_whole_object_bad_rules_and_bounds() {
        let r = rules(json!({"mode": "disabled", "ignore": [{"paths": [""]}]}));
        let meta = json!({});
        assert_eq!(paths_for(&r, &object("Service", &meta), "web", &json!({}))[0].0, "");
        let read = drift_rules(
            &json!({"ignore": [{"paths": ["spec"]}, {"paths": []}, {"paths": ["/a"], "target": {"name": "("}},
                {"paths": ["/a"], "target": {"labelSelector": "a in b"}}, {"paths": ["/a"], "target": {"color": "x"}}],
                "extra": 1}),
            "HelmRelease apps/web",
        );
        let errors: Vec<String> = read.rules.iter().filter_map(|r| r.as_ref().err()).map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert!(
            errors[0].contains("HelmRelease apps/web spec.driftDetection.ignore[0]")
                && errors[0].contains("\"spec\" is not a JSON pointer")
        );
        assert!(errors[3].contains("labelSelector"), "{errors:?}");
        assert!(errors[4].contains("spec.driftDetection.ignore[4].target.color not known"), "{errors:?}");
        assert_eq!(read.left_out, ["spec.driftDetection.extra"]);
        let many = json!({"ignore": vec![json!({"paths": vec!["/a"; 100]}); 100]});
        let read = drift_rules(&many, "HelmRelease apps/web");
        assert_eq!(read.rules.len(), MOST_RULES);
        assert_eq!(read.rules[0].as_ref().unwrap().paths.len(), MOST_PATHS);
        assert_eq!(read.left_out.len(), 1 + MOST_RULES);
    }
}

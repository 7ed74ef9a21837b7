//! Ignore rules: JSON pointers to leave out of the verdict, from `--ignore`, a config file and
//! per-object annotations, in the spirit of Flux's `driftDetection.ignore`.

use super::labels::LabelSelector;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

/// The most memory one rule's regex may compile to.
const REGEX_BYTES: usize = 1 << 20;

/// Annotation listing pointers to ignore on this object (comma- or newline-separated).
pub(crate) const ANNOTATION_IGNORE: &str = "helm-drift.io/ignore";
/// Annotation `"true"` opting this object out of drift detection.
pub(crate) const ANNOTATION_DISABLED: &str = "helm-drift.io/disabled";
/// Flux's opt-out, honoured too: `helm.toolkit.fluxcd.io/driftDetection: disabled`.
pub(crate) const ANNOTATION_FLUX: &str = "helm.toolkit.fluxcd.io/driftDetection";

#[derive(Debug, thiserror::Error)]
pub(crate) enum IgnoreError {
    #[error("ignore rule {rule:?}: {why}")]
    Rule { rule: String, why: String },
    #[error("expected-change rule {rule}: {why}")]
    Expected { rule: String, why: String },
    #[error("ignore rule target field {field}: invalid regex {pattern:?}: {why}")]
    Regex { field: String, pattern: String, why: String },
    #[error("ignore rule target field {field}: {source}")]
    Selector { field: String, source: super::labels::SelectorTextError },
}

/// Which objects a rule applies to; every set field must match (anchored regexes).
#[derive(Clone, Debug, Default)]
pub(crate) struct Selector {
    group: Option<Regex>,
    version: Option<Regex>,
    kind: Option<Regex>,
    name: Option<Regex>,
    namespace: Option<Regex>,
    /// Flux's `labelSelector` and `annotationSelector`, over the object as Helm applied it.
    labels: Option<LabelSelector>,
    annotations: Option<LabelSelector>,
}

/// Pointers to ignore on the objects a target selects.
#[derive(Clone, Debug)]
pub(crate) struct IgnoreRule {
    pub(crate) paths: Vec<String>,
    target: Selector,
    /// Where the rule came from, shown as the reason.
    pub(crate) origin: String,
    /// Only for this release (rules of a Flux HelmRelease or an Argo CD Application).
    pub(crate) release: Option<String>,
    /// jq path expressions (Argo CD's `jqPathExpressions`), evaluated on the live object.
    pub(crate) jq: Vec<std::sync::Arc<crate::policy::jq::PathQuery>>,
    /// Differences last written by these managers are ignored (Argo CD's
    /// `managedFieldsManagers`).
    pub(crate) managers: Vec<String>,
}

/// The identity of an object, as rules see it.
pub(crate) struct ObjectRef<'a> {
    pub(crate) group: &'a str,
    pub(crate) version: &'a str,
    pub(crate) kind: &'a str,
    pub(crate) name: &'a str,
    pub(crate) namespace: Option<&'a str>,
    /// The object's metadata as Helm applied it (its labels and annotations), for selectors
    /// that read them; `None`: unknown, and such a selector selects nothing.
    pub(crate) metadata: Option<&'a Value>,
}

/// The rule file format (also the `ignore:` list of the config file).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IgnoreSpec {
    pub(crate) paths: Vec<String>,
    #[serde(default)]
    pub(crate) target: TargetSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TargetSpec {
    pub(crate) group: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) namespace: Option<String>,
}

impl IgnoreRule {
    /// Parses `--ignore [key=regex,...:]/pointer[,/pointer...]`, e.g.
    /// `kind=Deployment,name=web-.*:/spec/replicas`.
    pub(crate) fn parse_flag(text: &str) -> Result<IgnoreRule, IgnoreError> {
        let err = |why: &str| IgnoreError::Rule { rule: text.to_string(), why: why.to_string() };
        let (selector, pointers) = match text.find(":/") {
            Some(i) => (&text[..i], &text[i + 1..]),
            None if text.starts_with('/') => ("", text),
            None => return Err(err("expected [key=regex,...:]/json/pointer")),
        };
        let mut spec = IgnoreSpec { paths: pointers.split(',').map(str::to_string).collect(), ..Default::default() };
        for pair in selector.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').ok_or_else(|| err("selector entries are key=regex"))?;
            let slot = match k.trim() {
                "group" => &mut spec.target.group,
                "version" => &mut spec.target.version,
                "kind" => &mut spec.target.kind,
                "name" => &mut spec.target.name,
                "namespace" => &mut spec.target.namespace,
                other => {
                    return Err(err(&format!(
                        "unknown selector key {other:?} (group, version, kind, name, namespace)"
                    )));
                }
            };
            *slot = Some(v.trim().to_string());
        }
        IgnoreRule::from_spec(spec, &format!("--ignore {text}"))
    }

    /// Builds a rule from its file form, checking pointers and regexes.
    pub(crate) fn from_spec(spec: IgnoreSpec, origin: &str) -> Result<IgnoreRule, IgnoreError> {
        if spec.paths.is_empty() {
            return Err(IgnoreError::Rule { rule: origin.into(), why: "no paths".into() });
        }
        for p in &spec.paths {
            if !p.starts_with('/') {
                return Err(IgnoreError::Rule { rule: origin.into(), why: format!("{p:?} is not a JSON pointer") });
            }
        }
        Ok(IgnoreRule::new(spec.paths, Selector::from_spec(spec.target)?, origin))
    }

    /// A rule for every release, with only pointers.
    pub(crate) fn new(paths: Vec<String>, target: Selector, origin: &str) -> IgnoreRule {
        IgnoreRule { paths, target, origin: origin.to_string(), release: None, jq: Vec::new(), managers: Vec::new() }
    }

    /// Whether the rule applies to this object of this release.
    pub(crate) fn matches(&self, o: &ObjectRef) -> bool {
        self.target.matches(o)
    }

    fn applies(&self, o: &ObjectRef, release: &str) -> bool {
        self.release.as_deref().is_none_or(|r| r == release) && self.matches(o)
    }
}

impl Selector {
    /// A selector of exact values (Argo CD's `group`, `kind`, `name`, `namespace`).
    pub(crate) fn exact(
        group: Option<&str>,
        kind: Option<&str>,
        name: Option<&str>,
        namespace: Option<&str>,
    ) -> Selector {
        let re =
            |v: Option<&str>| v.map(|v| Regex::new(&format!("^{}$", regex::escape(v))).expect("an escaped literal"));
        Selector {
            group: re(group),
            version: None,
            kind: re(kind),
            name: re(name),
            namespace: re(namespace),
            labels: None,
            annotations: None,
        }
    }

    /// A selector from its file form (anchored regexes).
    pub(crate) fn from_spec(t: TargetSpec) -> Result<Selector, IgnoreError> {
        let re = |field: &str, v: Option<String>| v.map(|pattern| anchored(field, pattern)).transpose();
        Ok(Selector {
            group: re("group", t.group)?,
            version: re("version", t.version)?,
            // Kinds as kubectl users write them: any case, and a plain word may be a plural or
            // a short name (`deploy`, `cm`).
            kind: t.kind.map(|k| kind_pattern(&k)).map(|k| anchored("kind", k)).transpose()?,
            name: re("name", t.name)?,
            namespace: re("namespace", t.namespace)?,
            labels: None,
            annotations: None,
        })
    }

    /// A Flux ignore rule's `target` as helm-controller reads it: anchored, case-sensitive
    /// regexes for group, version, kind, name and namespace (an empty one: any), label and
    /// annotation selector text over the object as Helm applied it.
    pub(crate) fn flux(target: &Value) -> Result<Selector, IgnoreError> {
        let text = |k: &str| target.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        let re = |k: &str| text(k).map(|pattern| anchored(k, pattern)).transpose();
        let selector = |k: &str| {
            text(k)
                .map(|t| LabelSelector::parse(&t).map_err(|source| IgnoreError::Selector { field: k.into(), source }))
                .transpose()
        };
        Ok(Selector {
            group: re("group")?,
            version: re("version")?,
            kind: re("kind")?,
            name: re("name")?,
            namespace: re("namespace")?,
            labels: selector("labelSelector")?,
            annotations: selector("annotationSelector")?,
        })
    }

    /// Whether every set field matches the object.
    pub(crate) fn matches(&self, o: &ObjectRef) -> bool {
        let ok = |re: &Option<Regex>, v: &str| re.as_ref().is_none_or(|r| r.is_match(v));
        ok(&self.group, o.group)
            && ok(&self.version, o.version)
            && ok(&self.kind, o.kind)
            && ok(&self.name, o.name)
            && ok(&self.namespace, o.namespace.unwrap_or(""))
            && self.meta_matches(&self.labels, o, "labels")
            && self.meta_matches(&self.annotations, o, "annotations")
    }

    fn meta_matches(&self, selector: &Option<LabelSelector>, o: &ObjectRef, key: &str) -> bool {
        let Some(selector) = selector else { return true };
        let Some(meta) = o.metadata else { return false };
        selector.matches(meta.get(key).and_then(Value::as_object))
    }
}

/// A kind selector's pattern, case-insensitive; a plain word also matches the kind it names as
/// kubectl users write it (its plural, a built-in short name).
fn kind_pattern(pattern: &str) -> String {
    let word = !pattern.is_empty() && pattern.chars().all(|c| c.is_ascii_alphanumeric() || c == '.');
    if !word {
        return format!("(?i:{pattern})");
    }
    let kinds: Vec<String> = crate::model::KINDS
        .iter()
        .filter(|k| crate::model::names_kind(pattern, k))
        .map(|k| regex::escape(k))
        .chain(std::iter::once(regex::escape(pattern.split('.').next().unwrap_or(pattern))))
        .collect();
    format!("(?i:{})", kinds.join("|"))
}

/// An anchored regex (`^(?:pattern)$`); `field` names it in the error.
pub(crate) fn anchored(field: &str, pattern: String) -> Result<Regex, IgnoreError> {
    // A rule read from the cluster is its writer's text: compiled within a bound.
    let built = regex::RegexBuilder::new(&format!("^(?:{pattern})$")).size_limit(REGEX_BYTES).build();
    built.map_err(|e| IgnoreError::Regex {
        field: field.into(),
        // The regex crate draws the error under the pattern: keep its last line.
        why: e.to_string().lines().last().unwrap_or_default().trim().trim_start_matches("error: ").to_string(),
        pattern,
    })
}

/// `(pointer, reason)` for every rule that selects `o`.
pub(crate) fn paths_for(rules: &[IgnoreRule], o: &ObjectRef, release: &str, live: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for r in rules.iter().filter(|r| r.applies(o, release)) {
        out.extend(r.paths.iter().map(|p| (p.clone(), r.origin.clone())));
        for q in &r.jq {
            out.extend(q.pointers(live).into_iter().map(|p| (p, r.origin.clone())));
        }
    }
    out
}

/// `(manager, reason)` for every rule that ignores what a manager writes to `o`.
pub(crate) fn managers_for(rules: &[IgnoreRule], o: &ObjectRef, release: &str) -> Vec<(String, String)> {
    rules
        .iter()
        .filter(|r| r.applies(o, release))
        .flat_map(|r| r.managers.iter().map(move |m| (m.clone(), r.origin.clone())))
        .collect()
}

/// What an object's own annotations (in the chart or added live) say: an opt-out reason, and
/// pointers to ignore.
pub(crate) fn from_annotations(objects: &[&Value], live_trusted: bool) -> (Option<String>, Vec<(String, String)>) {
    let mut disabled = None;
    let mut paths = Vec::new();
    for obj in objects {
        let Some(ann) = obj.pointer("/metadata/annotations").and_then(Value::as_object) else { continue };
        let get = |k: &str| ann.get(k).and_then(Value::as_str).map(str::trim);
        if get(ANNOTATION_DISABLED) == Some("true") {
            disabled.get_or_insert_with(|| format!("annotation {ANNOTATION_DISABLED}: \"true\""));
        }
        if get(ANNOTATION_FLUX) == Some("disabled") {
            disabled.get_or_insert_with(|| format!("annotation {ANNOTATION_FLUX}: disabled"));
        }
        if let Some(list) = get(ANNOTATION_IGNORE) {
            for p in list.split([',', '\n']).map(str::trim).filter(|p| p.starts_with('/')) {
                paths.push((p.to_string(), format!("annotation {ANNOTATION_IGNORE}")));
            }
        }
    }
    // Trusted live annotations may have been added by hand: then they are not drift themselves.
    if live_trusted {
        for a in [ANNOTATION_IGNORE, ANNOTATION_DISABLED, ANNOTATION_FLUX] {
            let own = format!("/metadata/annotations/{}", a.replace('/', "~1"));
            paths.push((own, "opt-out annotation (--trust-live-annotations)".into()));
        }
    }
    (disabled, paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj<'a>(kind: &'a str, name: &'a str) -> ObjectRef<'a> {
        ObjectRef { group: "apps", version: "v1", kind, name, namespace: Some("prod"), metadata: None }
    }

    #[test]
    fn flag_rules_with_and_without_selector() {
        let r = IgnoreRule::parse_flag("/spec/replicas").unwrap();
        assert!(r.matches(&obj("Deployment", "web")));
        let r = IgnoreRule::parse_flag("kind=Deployment,name=web-.*:/spec/replicas,/metadata/labels").unwrap();
        assert_eq!(r.paths, ["/spec/replicas", "/metadata/labels"]);
        assert!(r.matches(&obj("Deployment", "web-1")));
        assert!(!r.matches(&obj("Deployment", "web")), "regexes are anchored");
        assert!(!r.matches(&obj("StatefulSet", "web-1")));
    }

    #[test]
    fn target_selectors_by_group_version_and_namespace() {
        let sel = |spec: &str| IgnoreRule::parse_flag(&format!("{spec}:/spec/replicas")).unwrap();
        let web = obj("Deployment", "web");
        assert!(sel("group=apps").matches(&web));
        assert!(!sel("group=batch").matches(&web));
        assert!(!sel("group=app").matches(&web), "anchored");
        assert!(sel("version=v1").matches(&web));
        assert!(!sel("version=v1beta1").matches(&web));
        assert!(sel("namespace=pro.*").matches(&web));
        assert!(!sel("namespace=staging").matches(&web));
        let cluster_scoped = ObjectRef { namespace: None, ..obj("ClusterRole", "r") };
        assert!(!sel("namespace=.+").matches(&cluster_scoped), "a cluster-scoped object has no namespace to match");
        assert!(sel("group=apps,version=v1,kind=Deployment,name=web,namespace=prod").matches(&web));
        // Kinds as kubectl users write them: any case, plurals, short names; a regex still works.
        for kind in ["deployment", "Deployments", "deploy", "deployments.apps", "Deploy.*", "(?:Deployment|Service)"] {
            assert!(sel(&format!("kind={kind}")).matches(&web), "{kind}");
        }
        assert!(!sel("kind=ds").matches(&web) && !sel("kind=service").matches(&web));
    }

    #[test]
    fn bad_rules_are_clear_errors() {
        assert!(IgnoreRule::parse_flag("spec/replicas").unwrap_err().to_string().contains("expected [key=regex"));
        assert!(
            IgnoreRule::parse_flag("color=red:/x").unwrap_err().to_string().contains("unknown selector key \"color\"")
        );
        let e = IgnoreRule::parse_flag("name=(:/x").unwrap_err().to_string();
        assert_eq!(e, "ignore rule target field name: invalid regex \"(\": unclosed group");
    }

    #[test]
    fn annotations_opt_out_and_ignore() {
        let d = json!({"metadata": {"annotations": {"helm-drift.io/ignore": "/spec/replicas, /data/x"}}});
        let l = json!({"metadata": {"annotations": {"helm.toolkit.fluxcd.io/driftDetection": "disabled"}}});
        let (disabled, paths) = from_annotations(&[&d, &l], true);
        assert!(disabled.unwrap().contains("fluxcd"));
        let p: Vec<_> = paths.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(p[..2], ["/spec/replicas", "/data/x"]);
        assert!(p.contains(&"/metadata/annotations/helm.toolkit.fluxcd.io~1driftDetection"), "{p:?}");
        // Untrusted: the chart's alone count, and the annotations themselves stay visible.
        let (disabled, paths) = from_annotations(&[&d], false);
        assert_eq!(disabled, None);
        assert_eq!(paths.len(), 2);
    }

    #[test]
    fn the_disabled_annotation_in_the_chart_excludes_the_object() {
        let chart = json!({"metadata": {"annotations": {"helm-drift.io/disabled": "true"}}});
        let (disabled, _) = from_annotations(&[&chart], false);
        assert_eq!(disabled.as_deref(), Some("annotation helm-drift.io/disabled: \"true\""));
        let off = json!({"metadata": {"annotations": {"helm-drift.io/disabled": "false"}}});
        assert_eq!(from_annotations(&[&off], false).0, None, "only \"true\" disables");
    }
}

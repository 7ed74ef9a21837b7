//! A HelmRelease's values as helm-controller composes them (fluxcd/pkg `chartutil`): each
//! `valuesFrom` reference in order, read from a ConfigMap or Secret of the HelmRelease's
//! namespace, is merged in, or set at its `targetPath` by Helm's own `--set` parser after
//! `spec.values` is merged in; an `optional` one that is absent (or lacks its key) is skipped;
//! `spec.values` is merged in last. The HelmRelease and the objects it names are read through
//! this module's doors.

use crate::api::ApiError;
use crate::explain::merge_values;
use crate::helm::HelmBinary;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

/// At most this many `valuesFrom` references are read (each is a request).
const MOST: usize = 64;

/// Why a HelmRelease's values cannot be composed, naming the reference or object at fault.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ValuesError {
    #[error("spec.valuesFrom is not a list")]
    NotAList,
    #[error("spec.valuesFrom lists {0} references, more than {MOST}")]
    TooMany(usize),
    #[error("spec.valuesFrom[{0}]: kind {1:?} is neither ConfigMap nor Secret")]
    Kind(usize, String),
    #[error("spec.valuesFrom[{0}] names no object")]
    Unnamed(usize),
    #[error("{object}: {source}")]
    Unreadable { object: String, source: ApiError },
    #[error("{0} (valuesFrom) does not exist")]
    Absent(String),
    #[error("{object} (valuesFrom) has no key {key}")]
    NoKey { object: String, key: String },
    #[error("{object} key {key}: {why}")]
    Unparsable { object: String, key: String, why: String },
    #[error("{object} key {key} at targetPath {path}: {why}")]
    TargetPath { object: String, key: String, path: String, why: String },
}

/// One `valuesFrom` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Reference {
    pub(crate) kind: String,
    pub(crate) name: String,
    /// `valuesKey`, `values.yaml` when not given.
    pub(crate) key: String,
    pub(crate) target_path: Option<String>,
    pub(crate) optional: bool,
    /// `literal`: the value is set as it is, never parsed by `--set`.
    pub(crate) literal: bool,
}

impl Reference {
    /// The references of a HelmRelease (JSON), or why they cannot be read.
    pub(crate) fn all(hr: &Value) -> Result<Vec<Reference>, ValuesError> {
        let Some(list) = hr.pointer("/spec/valuesFrom").filter(|v| !v.is_null()) else { return Ok(Vec::new()) };
        let list = list.as_array().ok_or(ValuesError::NotAList)?;
        if list.len() > MOST {
            return Err(ValuesError::TooMany(list.len()));
        }
        list.iter()
            .enumerate()
            .map(|(i, r)| {
                let text = |k: &str| r.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(String::from);
                let kind = text("kind").unwrap_or_default();
                if kind != "ConfigMap" && kind != "Secret" {
                    return Err(ValuesError::Kind(i, kind));
                }
                let name = text("name").ok_or(ValuesError::Unnamed(i))?;
                let flag = |k: &str| r.get(k).and_then(Value::as_bool).unwrap_or(false);
                Ok(Reference {
                    kind,
                    name,
                    key: text("valuesKey").unwrap_or_else(|| "values.yaml".into()),
                    target_path: text("targetPath"),
                    optional: flag("optional"),
                    literal: flag("literal"),
                })
            })
            .collect()
    }
}

/// The composed values, and what each reference gave (for the plan's notes).
pub(crate) struct Composed {
    pub(crate) values: Value,
    pub(crate) said: Vec<String>,
}

/// Composes the values of a HelmRelease of `namespace` as helm-controller does.
pub(crate) async fn compose(
    client: &kube::Client,
    helm: &HelmBinary,
    namespace: &str,
    spec_values: &Value,
    references: &[Reference],
) -> Result<Composed, ValuesError> {
    let spec = if spec_values.is_object() { spec_values.clone() } else { Value::Object(Map::new()) };
    let mut result = Value::Object(Map::new());
    let mut said = Vec::new();
    let mut read: HashMap<(String, String), Option<Data>> = HashMap::new();
    for r in references {
        let object = format!("{} {namespace}/{}", r.kind, r.name);
        let slot = (r.kind.clone(), r.name.clone());
        if !read.contains_key(&slot) {
            let data = values_source(client, namespace, &r.kind, &r.name)
                .await
                .map_err(|source| ValuesError::Unreadable { object: object.clone(), source })?;
            read.insert(slot.clone(), data);
        }
        let bytes = match read.get(&slot).and_then(Option::as_ref) {
            None if r.optional => {
                said.push(format!("{object}: absent, optional, skipped"));
                continue;
            }
            None => return Err(ValuesError::Absent(object)),
            Some(data) => match data.get(&r.key) {
                Some(bytes) => bytes,
                None if r.optional => {
                    said.push(format!("{object}: no key {}, optional, skipped", r.key));
                    continue;
                }
                None => return Err(ValuesError::NoKey { object, key: r.key.clone() }),
            },
        };
        let text = String::from_utf8_lossy(bytes);
        if let Some(path) = &r.target_path {
            merge_values(&mut result, &spec);
            let (assignment, string) = assignment(path, &text, r.literal);
            let set = helm.set_path(&result, &assignment, string).await;
            let set = set.map_err(|e| ValuesError::TargetPath {
                object: object.clone(),
                key: r.key.clone(),
                path: path.clone(),
                why: format!("{e:#}"),
            })?;
            result = if set.is_object() { set } else { Value::Object(Map::new()) };
            said.push(format!("{object} key {} at {path}", r.key));
            continue;
        }
        let mut budget = crate::yaml::Budget::for_manifest(text.len());
        let unparsable = |why: String| ValuesError::Unparsable { object: object.clone(), key: r.key.clone(), why };
        let values = crate::yaml::to_json_within(&text, &mut budget).map_err(|e| unparsable(e.to_string()))?;
        match values {
            Value::Object(_) => merge_values(&mut result, &values),
            Value::Null => {}
            _ => return Err(unparsable("not a map of values".into())),
        }
        said.push(format!("{object} key {}", r.key));
    }
    merge_values(&mut result, &spec);
    Ok(Composed { values: result, said })
}

/// The `--set` (or `--set-string`, when `true`) assignment helm-controller makes of `value` at
/// `path`: a quoted value is a string without its quotes; a literal one is escaped whole.
fn assignment(path: &str, value: &str, literal: bool) -> (String, bool) {
    if literal {
        let mut escaped = String::with_capacity(value.len());
        for c in value.chars() {
            if matches!(c, '\\' | ',' | '[' | ']' | '{' | '}') {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        return (format!("{path}={escaped}"), true);
    }
    let quoted = |q: char| value.starts_with(q) && value.ends_with(q);
    if quoted('\'') || quoted('"') {
        return (format!("{path}={}", value.trim_matches(['\'', '"'])), true);
    }
    (format!("{path}={value}"), false)
}

/// The HelmRelease `name` of `namespace` (helm.toolkit.fluxcd.io/v2), as JSON.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn helm_release(client: &kube::Client, namespace: &str, name: &str) -> Result<Value, ApiError> {
    let gvk = GroupVersionKind::gvk("helm.toolkit.fluxcd.io", "v2", "HelmRelease");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "helmreleases");
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    let hr = api.get(name).await.map_err(|e| ApiError::from_kube(&e, "get", "helmreleases"))?;
    serde_json::to_value(hr).map_err(|e| ApiError::Other { message: e.to_string() })
}

/// An object's data by key.
type Data = BTreeMap<String, Vec<u8>>;

/// The data of ConfigMap or Secret `name` of `namespace` (a ConfigMap's `data`, a Secret's
/// decoded), `None` when it does not exist.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn values_source(
    client: &kube::Client,
    namespace: &str,
    kind: &str,
    name: &str,
) -> Result<Option<Data>, ApiError> {
    if kind == "Secret" {
        let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        let found = api.get_opt(name).await.map_err(|e| ApiError::from_kube(&e, "get", "secrets"))?;
        return Ok(found.map(|s| s.data.unwrap_or_default().into_iter().map(|(k, v)| (k, v.0)).collect()));
    }
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let found = api.get_opt(name).await.map_err(|e| ApiError::from_kube(&e, "get", "configmaps"))?;
    Ok(found.map(|c| c.data.unwrap_or_default().into_iter().map(|(k, v)| (k, v.into_bytes())).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_merge_key_by_key_and_anything_else_replaces() {
        let a = json!({"a": {"x": 1, "y": 2}, "b": [1], "c": {"z": 1}});
        let b = json!({"a": {"y": 3}, "b": [2], "c": "flat", "d": null});
        let mut merged = a;
        merge_values(&mut merged, &b);
        assert_eq!(merged, json!({"a": {"x": 1, "y": 3}, "b": [2], "c": "flat", "d": null}));
    }

    #[test]
    fn a_target_path_is_set_as_helm_controller_sets_it() {
        assert_eq!(assignment("replicas", "3", false), ("replicas=3".into(), false));
        assert_eq!(assignment("tag", "\"1.0\"", false), ("tag=1.0".into(), true));
        assert_eq!(assignment("tag", "'v2'", false), ("tag=v2".into(), true));
        assert_eq!(assignment("conf", "a,b[0]{c}\\", true), ("conf=a\\,b\\[0\\]\\{c\\}\\\\".into(), true));
    }

    #[test]
    fn references_are_read_with_their_defaults_and_bounded() {
        let hr = json!({"spec": {"valuesFrom": [
            {"kind": "ConfigMap", "name": "a"},
            {"kind": "Secret", "name": "b", "valuesKey": "k", "targetPath": "x.y", "optional": true}
        ]}});
        let refs = Reference::all(&hr).unwrap();
        assert_eq!((refs[0].key.as_str(), refs[0].optional), ("values.yaml", false));
        assert_eq!((refs[1].target_path.as_deref(), refs[1].optional), (Some("x.y"), true));
        let bad = json!({"spec": {"valuesFrom": [{"kind": "Pod", "name": "a"}]}});
        assert!(Reference::all(&bad).unwrap_err().to_string().contains("neither ConfigMap nor Secret"));
        let many: Vec<Value> = (0..=MOST).map(|i| json!({"kind": "ConfigMap", "name": format!("c{i}")})).collect();
        let flood = json!({"spec": {"valuesFrom": many}});
        assert!(Reference::all(&flood).unwrap_err().to_string().contains("more than 64"));
    }
}

//! [`DesiredObject`]: one manifest document parsed, with its identity and source template.

use super::manifest;

/// A manifest document that could not be turned into an object.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DesiredError {
    #[error("{at}: invalid YAML: {source}")]
    Yaml { at: String, source: crate::yaml::YamlError },
    #[error("{at}: not a Kubernetes object (missing {field})")]
    NotAnObject { at: String, field: &'static str },
}

/// One object as Helm sent it to the API server.
#[derive(Clone, Debug)]
pub(crate) struct DesiredObject {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) name: String,
    /// As written in the manifest; the release namespace is filled in by discovery later.
    pub(crate) namespace: Option<String>,
    /// The template path from `# Source:`.
    pub(crate) source: Option<String>,
    pub(crate) object: serde_json::Value,
    /// A hook object (`--hooks`): which hook, and which run made it.
    pub(crate) hook: Option<Box<crate::model::HookOrigin>>,
}

impl DesiredObject {
    /// API group (empty for the core group).
    pub(crate) fn group(&self) -> &str {
        self.api_version.rsplit_once('/').map_or("", |(g, _)| g)
    }

    pub(crate) fn version(&self) -> &str {
        self.api_version.rsplit_once('/').map_or(self.api_version.as_str(), |(_, v)| v)
    }

    /// Its identity in reports.
    pub(crate) fn id(&self) -> crate::model::ObjectId {
        crate::model::ObjectId::new(&self.api_version, &self.kind, self.namespace.as_deref(), &self.name)
    }
}

/// Parses every document of a manifest; `kind: List` documents are expanded into their items.
/// Fails on the first document that is not an object.
pub(crate) fn from_manifest(manifest: &str) -> Result<Vec<DesiredObject>, DesiredError> {
    parse_manifest(manifest).into_iter().collect()
}

/// Like [`from_manifest`], but one result per object or broken document, so that one bad
/// document does not stop the others from being checked.
pub(crate) fn parse_manifest(manifest: &str) -> Vec<Result<DesiredObject, DesiredError>> {
    // One budget for the whole record: hundreds of documents each under a per-document limit
    // would otherwise add up without bound.
    parse_within(manifest, &mut crate::yaml::Budget::for_manifest(manifest.len()))
}

/// [`parse_manifest`] within a budget shared with other manifests (a record's hooks).
pub(crate) fn parse_within(
    manifest: &str,
    budget: &mut crate::yaml::Budget,
) -> Vec<Result<DesiredObject, DesiredError>> {
    let mut out = Vec::new();
    for (index, doc) in manifest::split(manifest).into_iter().enumerate() {
        let at = doc.source.map_or_else(|| format!("manifest document {}", index + 1), |s| s.to_string());
        let value = match crate::yaml::to_json_within(doc.body, budget) {
            Ok(v) => v,
            Err(source) => {
                out.push(Err(DesiredError::Yaml { at, source }));
                continue;
            }
        };
        if value.is_null() {
            continue;
        }
        let is_list = value.get("kind").and_then(|k| k.as_str()) == Some("List");
        if is_list && let Some(items) = value.get("items").and_then(|i| i.as_array()) {
            for item in items {
                out.push(object(item.clone(), doc.source, &at));
            }
            continue;
        }
        out.push(object(value, doc.source, &at));
    }
    out
}

impl DesiredError {
    /// The document at fault (template path or position).
    pub(crate) fn at(&self) -> &str {
        match self {
            DesiredError::Yaml { at, .. } | DesiredError::NotAnObject { at, .. } => at,
        }
    }
}

/// The CRDs of the chart's `crds/` folder (stored in the chart's files, not in the manifest),
/// as Helm creates them: without release metadata.
pub(crate) fn crds(chart: &crate::release::Chart) -> Result<Vec<DesiredObject>, DesiredError> {
    let mut out = Vec::new();
    let is_crd_file =
        |name: &str| name.starts_with("crds/") && [".yaml", ".yml", ".json"].iter().any(|ext| name.ends_with(ext));
    let files = chart.files(is_crd_file).map_err(|_| DesiredError::NotAnObject {
        at: format!("{}/crds", chart.metadata.name),
        field: "a list of chart files",
    })?;
    for file in files {
        let at = format!("{}/{}", chart.metadata.name, file.name);
        let bytes =
            file.bytes().ok_or_else(|| DesiredError::NotAnObject { at: at.clone(), field: "valid base64 data" })?;
        let text = String::from_utf8_lossy(&bytes);
        for mut o in from_manifest(&text).map_err(|e| match e {
            DesiredError::Yaml { source, .. } => DesiredError::Yaml { at: at.clone(), source },
            DesiredError::NotAnObject { field, .. } => DesiredError::NotAnObject { at: at.clone(), field },
        })? {
            o.source = Some(at.clone());
            out.push(o);
        }
    }
    Ok(out)
}

fn object(value: serde_json::Value, source: Option<&str>, at: &str) -> Result<DesiredObject, DesiredError> {
    let text = |ptr: &str| value.pointer(ptr).and_then(|v| v.as_str()).map(str::to_string);
    let missing = |field| DesiredError::NotAnObject { at: at.to_string(), field };
    Ok(DesiredObject {
        api_version: text("/apiVersion").ok_or_else(|| missing("apiVersion"))?,
        kind: text("/kind").ok_or_else(|| missing("kind"))?,
        name: text("/metadata/name").ok_or_else(|| missing("metadata.name"))?,
        namespace: text("/metadata/namespace").filter(|n| !n.is_empty()),
        source: source.map(str::to_string),
        object: value,
        hook: None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn many_small_documents_share_one_node_budget() {
        // Each document is far below the limit; together they are above it.
        let doc = format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata: [{}]\n", "1,".repeat(20_000));
        let manifest = format!("---\n{doc}").repeat(60);
        let parsed = super::parse_manifest(&manifest);
        assert_eq!(parsed.len(), 60);
        let too_large = parsed.iter().filter(|p| p.as_ref().is_err_and(|e| e.to_string().contains("nodes"))).count();
        assert!(too_large > 0 && parsed[0].is_ok(), "{too_large}");
    }

    use super::*;

    #[test]
    fn parses_objects_with_identity() {
        let m = "---\n# Source: c/templates/d.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: other\n";
        let objs = from_manifest(m).unwrap();
        assert_eq!(objs.len(), 1);
        let o = &objs[0];
        assert_eq!((o.group(), o.version(), o.kind.as_str()), ("apps", "v1", "Deployment"));
        assert_eq!((o.name.as_str(), o.namespace.as_deref()), ("web", Some("other")));
        assert_eq!(o.source.as_deref(), Some("c/templates/d.yaml"));
    }

    #[test]
    fn a_5000_object_manifest_parses() {
        let doc = |i: usize| {
            format!(
                "---\n# Source: big/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  k: v{i}\n"
            )
        };
        let manifest: String = (0..5000).map(doc).collect();
        let objects = from_manifest(&manifest).unwrap();
        assert_eq!(objects.len(), 5000);
        assert_eq!(objects[4999].name, "cm-4999");
    }

    #[test]
    fn expands_lists() {
        let m = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n";
        let names: Vec<_> = from_manifest(m).unwrap().into_iter().map(|o| o.name).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn errors_name_the_template() {
        let m = "---\n# Source: c/templates/bad.yaml\napiVersion: v1\nmetadata:\n  name: x\n";
        let err = from_manifest(m).unwrap_err().to_string();
        assert_eq!(err, "c/templates/bad.yaml: not a Kubernetes object (missing kind)");
        let m = "---\n# Source: c/templates/broken.yaml\nkind: [\n";
        assert!(from_manifest(m).unwrap_err().to_string().starts_with("c/templates/broken.yaml: invalid YAML"));
    }
}

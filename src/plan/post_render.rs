//! What helm-controller does to a chart's manifest after Helm renders it and before it is
//! applied and recorded: its Kustomize post-renderers (`spec.postRenderers`, in order), then its
//! `spec.commonMetadata` labels and annotations, then its origin labels
//! (`helm.toolkit.fluxcd.io/name` and `/namespace`, which win a collision), set on every
//! object's `metadata` as Kustomize's label and annotation transformers set them (created when
//! absent, a value there replaced).

use serde_json::Value;
use std::collections::BTreeMap;

/// The labels and annotations set on every object of the manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PostRender {
    /// The Kustomizations of its `postRenderers`, run first.
    pub(crate) kustomize: Vec<Value>,
    pub(crate) labels: BTreeMap<String, String>,
    pub(crate) annotations: BTreeMap<String, String>,
}

/// A manifest that cannot be post-rendered (a document that is not YAML).
#[derive(Debug, thiserror::Error)]
#[error("the rendered manifest cannot be post-rendered as helm-controller does: {0}")]
pub(crate) struct PostRenderError(String);

impl PostRender {
    /// helm-controller's for HelmRelease `namespace/name` with `spec.commonMetadata` `common`
    /// and the Kustomizations of its `spec.postRenderers`.
    pub(crate) fn flux(namespace: &str, name: &str, common: Option<&Value>, kustomize: Vec<Value>) -> PostRender {
        let map = |key: &str| -> BTreeMap<String, String> {
            let entries = common.and_then(|c| c.get(key)).and_then(Value::as_object).into_iter().flatten();
            entries.filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect()
        };
        let mut labels = map("labels");
        labels.insert(crate::model::FLUX_NAME_LABEL.into(), name.into());
        labels.insert(crate::model::FLUX_NAMESPACE_LABEL.into(), namespace.into());
        PostRender { kustomize, labels, annotations: map("annotations") }
    }

    /// `manifest` as helm-controller post-renders it: its Kustomizations, then the labels and
    /// annotations.
    pub(crate) async fn render(&self, manifest: &str) -> anyhow::Result<String> {
        let kustomized = super::kustomize::run(&self.kustomize, manifest.to_string()).await?;
        Ok(self.apply(&kustomized)?)
    }

    /// `manifest` with every object's labels and annotations set.
    pub(crate) fn apply(&self, manifest: &str) -> Result<String, PostRenderError> {
        let mut out = String::new();
        for doc in crate::desired::split(manifest) {
            let mut budget = crate::yaml::Budget::for_manifest(doc.body.len());
            let mut object =
                crate::yaml::to_json_within(doc.body, &mut budget).map_err(|e| PostRenderError(e.to_string()))?;
            if let Some(source) = doc.source {
                out.push_str(&format!("---\n# Source: {source}\n"));
            } else {
                out.push_str("---\n");
            }
            if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                for (key, set) in [("labels", &self.labels), ("annotations", &self.annotations)] {
                    if set.is_empty() {
                        continue;
                    }
                    let slot = meta.entry(key).or_insert_with(|| Value::Object(Default::default()));
                    if !slot.is_object() {
                        *slot = Value::Object(Default::default());
                    }
                    let map = slot.as_object_mut().expect("an object");
                    map.extend(set.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))));
                }
            }
            out.push_str(&serde_yaml::to_string(&object).map_err(|e| PostRenderError(e.to_string()))?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_object_gets_the_origin_labels_which_win_over_common_metadata() {
        let common =
            json!({"labels": {"team": "a", "helm.toolkit.fluxcd.io/name": "forged"}, "annotations": {"owner": "a"}});
        let post = PostRender::flux("apps", "web", Some(&common), Vec::new());
        let manifest = "---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {a: b}\n---\n# Source: c/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: y\n  labels: {app: web}\n";
        let out = post.apply(manifest).unwrap();
        let docs = crate::desired::split(&out);
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].source, Some("c/templates/cm.yaml"));
        let mut budget = crate::yaml::Budget::for_manifest(out.len());
        let svc = crate::yaml::to_json_within(docs[1].body, &mut budget).unwrap();
        assert_eq!(
            svc["metadata"]["labels"],
            json!({"app": "web", "team": "a", "helm.toolkit.fluxcd.io/name": "web", "helm.toolkit.fluxcd.io/namespace": "apps"})
        );
        assert_eq!(svc["metadata"]["annotations"], json!({"owner": "a"}));
        assert!(post.apply("a: [").is_err());
    }
}

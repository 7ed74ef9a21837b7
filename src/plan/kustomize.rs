//! helm-controller's Kustomize post-renderers (`spec.postRenderers[].kustomize`: `patches` and
//! `images`), run as helm-controller runs them: the rendered manifest the one resource of a
//! Kustomization holding them, built by Kustomize itself (`kustomize build`, or `kubectl
//! kustomize`), one post-renderer after the other.

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// The most text a HelmRelease's post-renderers may hold (what a tenant writes, Kustomize reads).
const MOST_TEXT: usize = 256 << 10;
/// The most post-renderers read of one HelmRelease (their patches and images are bounded by
/// [`MOST_TEXT`]).
const MOST_ITEMS: usize = 64;
/// The Kustomize binary to run (a `kustomize` or a `kubectl`), when not found on `PATH`.
const KUSTOMIZE_ENV: &str = "HELM_DRIFT_KUSTOMIZE";

/// A post-renderer of a HelmRelease that plan cannot run as helm-controller runs it.
#[derive(Debug, thiserror::Error)]
#[error("postRenderers[{index}]: {why}")]
pub(crate) struct Unplannable {
    index: usize,
    why: String,
}

/// The Kustomizations of a HelmRelease's `spec.postRenderers`, in order (empty: none). Only
/// what helm-controller's API takes is taken (`kustomize` with `patches` of an inline `patch`
/// and a `target`, and `images`), so that Kustomize never reads a file or a URL.
pub(crate) fn kustomizations(post_renderers: Option<&Value>) -> Result<Vec<Value>, Unplannable> {
    let Some(list) = post_renderers.filter(|v| !v.is_null()) else { return Ok(Vec::new()) };
    let whole = |why: &str| Unplannable { index: 0, why: why.to_string() };
    let list = list.as_array().ok_or_else(|| whole("not a list"))?;
    if list.len() > MOST_ITEMS || list.iter().map(|v| v.to_string().len()).sum::<usize>() > MOST_TEXT {
        return Err(whole(&format!("more than {MOST_ITEMS} post-renderers or {} KiB", MOST_TEXT >> 10)));
    }
    let mut out = Vec::new();
    for (index, renderer) in list.iter().enumerate() {
        let bad = |why: String| Unplannable { index, why };
        let only = |v: &Value, keys: &[&str], what: &str| -> Result<(), Unplannable> {
            let map = v.as_object().ok_or_else(|| bad(format!("{what} is not an object")))?;
            match map.keys().find(|k| !keys.contains(&k.as_str())) {
                Some(k) => Err(bad(format!("{what} has {k:?}, which helm-controller's API does not take"))),
                None => Ok(()),
            }
        };
        only(renderer, &["kustomize"], "the post-renderer")?;
        let Some(k) = renderer.get("kustomize") else { continue };
        only(k, &["patches", "images"], "kustomize")?;
        let mut kustomization = Map::new();
        kustomization.insert("apiVersion".into(), "kustomize.config.k8s.io/v1beta1".into());
        kustomization.insert("kind".into(), "Kustomization".into());
        kustomization.insert("resources".into(), json!([INPUT]));
        for (key, allowed) in
            [("patches", &["patch", "target"][..]), ("images", &["name", "newName", "newTag", "digest"])]
        {
            let items = k.get(key).filter(|v| !v.is_null()).map(Value::as_array);
            let items = match items {
                None => continue,
                Some(None) => return Err(bad(format!("kustomize.{key} is not a list"))),
                Some(Some(items)) => items,
            };
            for item in items {
                only(item, allowed, &format!("an item of kustomize.{key}"))?;
            }
            if key == "patches" && items.iter().any(|p| !p.get("patch").is_some_and(Value::is_string)) {
                return Err(bad("a patch without its text (patch)".into()));
            }
            kustomization.insert(key.into(), Value::Array(items.clone()));
        }
        out.push(Value::Object(kustomization));
    }
    Ok(out)
}

/// The file the rendered manifest is written to, the Kustomization's one resource.
const INPUT: &str = "helm-output.yaml";

/// `manifest` after each Kustomization in turn, as Kustomize builds it.
pub(crate) async fn run(kustomizations: &[Value], mut manifest: String) -> Result<String> {
    for k in kustomizations {
        let dir = tempfile::Builder::new().prefix("helm-drift-kustomize-").tempdir()?;
        std::fs::write(dir.path().join(INPUT), &manifest)?;
        std::fs::write(dir.path().join("kustomization.yaml"), serde_json::to_string(k)?)?;
        let (bin, mut cmd) = command()?;
        cmd.arg(dir.path());
        manifest = crate::helm::bounded_output(cmd, "kustomize")
            .await
            .with_context(|| format!("{} could not post-render the manifest as helm-controller does", bin.display()))?;
    }
    Ok(manifest)
}

/// The Kustomize to run: `$HELM_DRIFT_KUSTOMIZE`, else `kustomize` on `PATH` (`kustomize
/// build`), else `kubectl` on `PATH` (`kubectl kustomize`, which embeds it).
fn command() -> Result<(PathBuf, std::process::Command)> {
    let given = std::env::var_os(KUSTOMIZE_ENV).filter(|v| !v.is_empty()).map(PathBuf::from);
    let found = given.or_else(|| on_path("kustomize")).or_else(|| on_path("kubectl")).with_context(|| {
        format!("a HelmRelease's postRenderers are run by Kustomize: put kustomize or kubectl on PATH, or name one in ${KUSTOMIZE_ENV}")
    })?;
    let mut cmd = std::process::Command::new(&found);
    let kubectl = found.file_name().is_some_and(|n| n.to_string_lossy().starts_with("kubectl"));
    cmd.arg(if kubectl { "kustomize" } else { "build" });
    Ok((found, cmd))
}

/// `name` in a directory of `PATH`, when there.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_helm_controllers_api_takes_is_run() {
        let hr = json!([{"kustomize": {
            "patches": [{"patch": "- op: add\n  path: /data/x\n  value: y\n", "target": {"kind": "ConfigMap"}}],
            "images": [{"name": "web", "newTag": "2"}]}}]);
        let k = kustomizations(Some(&hr)).unwrap();
        assert_eq!(k.len(), 1);
        assert_eq!(k[0]["resources"], json!([INPUT]));
        assert_eq!(k[0]["patches"][0]["target"]["kind"], "ConfigMap");
        assert_eq!(k[0]["images"][0]["newTag"], "2");
        assert!(kustomizations(None).unwrap().is_empty());
        for bad in [
            json!([{"kustomize": {"resources": ["https://example.com/x.yaml"]}}]),
            json!([{"kustomize": {"patches": [{"path": "/etc/passwd"}]}}]),
            json!([{"kustomize": {"patches": [{"patch": "x", "options": {}}]}}]),
            json!([{"exec": {}}]),
            json!("x"),
        ] {
            let e = kustomizations(Some(&bad)).unwrap_err().to_string();
            assert!(e.starts_with("postRenderers["), "{bad}: {e}");
        }
        let many = Value::Array(vec![json!({"kustomize": {}}); MOST_ITEMS + 1]);
        assert!(kustomizations(Some(&many)).is_err());
    }
}

//! The management cluster's objects a HelmChartProxy plan reads, each through its door: the
//! proxy, the Clusters it selects, the objects a Cluster refers to (its control plane and
//! infrastructure, for the values template), and the HelmReleaseProxies CAAPH made from it.

use super::proxy::{INSTALLED, NAME_GENERATED, PROXY_LABEL};
use crate::api::ApiError;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use serde_json::Value;

/// The most Clusters one plan reads (each is kept whole for its values template).
pub(crate) const MAX_CLUSTERS: usize = 1000;

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

fn json(object: DynamicObject) -> Result<Value, ApiError> {
    serde_json::to_value(object).map_err(|e| ApiError::Other { message: e.to_string() })
}

/// The HelmChartProxy `name` of `namespace`, as JSON.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn chart_proxy(client: &kube::Client, namespace: &str, name: &str) -> Result<Value, ApiError> {
    let r = resource("addons.cluster.x-k8s.io", "v1alpha1", "HelmChartProxy", "helmchartproxies");
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &r);
    json(api.get(name).await.map_err(|e| ApiError::from_kube(&e, "get", "helmchartproxies"))?)
}

/// The Clusters (`cluster.x-k8s.io/v1beta2`) of `namespace` that `selector` selects, by name;
/// more than [`MAX_CLUSTERS`] is refused.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn clusters(client: &kube::Client, namespace: &str, selector: &str) -> Result<Vec<Value>, ApiError> {
    let r = resource("cluster.x-k8s.io", "v1beta2", "Cluster", "clusters");
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &r);
    let params = ListParams::default().labels(selector).limit(MAX_CLUSTERS as u32 + 1);
    let list = crate::api::retry(|| api.list(&params))
        .await
        .map_err(|e| ApiError::from_kube(&e, "list", "clusters.cluster.x-k8s.io"))?;
    if list.items.len() > MAX_CLUSTERS || list.metadata.continue_.as_deref().is_some_and(|c| !c.is_empty()) {
        return Err(ApiError::Other {
            message: format!(
                "the selector selects more than {MAX_CLUSTERS} Clusters in {namespace}: plan a narrower one"
            ),
        });
    }
    let mut out = list.items.into_iter().map(json).collect::<Result<Vec<_>, _>>()?;
    out.sort_by(|a, b| {
        a.pointer("/metadata/name").map(Value::to_string).cmp(&b.pointer("/metadata/name").map(Value::to_string))
    });
    Ok(out)
}

/// The object a Cluster's `reference` names (`controlPlaneRef`, `infrastructureRef`): a
/// `v1beta2` reference by API group (at its preferred version) or a `v1beta1` one by
/// apiVersion, in the Cluster's namespace.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn referenced(client: &kube::Client, namespace: &str, reference: &Value) -> Result<Value, ApiError> {
    let text = |k: &str| reference.get(k).and_then(Value::as_str).unwrap_or_default();
    let (kind, name) = (text("kind"), text("name"));
    let what = format!("{kind} {namespace}/{name}");
    let not_served = |e: kube::Error| ApiError::Other { message: format!("{what} is not served: {e}") };
    let r = match text("apiVersion") {
        "" => {
            let group = kube::discovery::group(client, text("apiGroup")).await.map_err(not_served)?;
            group.recommended_kind(kind).map(|(r, _)| r)
        }
        api_version => {
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            let gvk = GroupVersionKind::gvk(group, version, kind);
            Some(kube::discovery::pinned_kind(client, &gvk).await.map_err(not_served)?.0)
        }
    };
    let Some(r) = r else { return Err(ApiError::Other { message: format!("{what} is not served") }) };
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &r);
    json(api.get(name).await.map_err(|e| ApiError::from_kube(&e, "get", &what))?)
}

/// A HelmReleaseProxy CAAPH made from the HelmChartProxy: its cluster and release.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReleaseProxy {
    pub(crate) name: String,
    /// `namespace/name` of its Cluster.
    pub(crate) cluster: String,
    pub(crate) release_name: String,
    pub(crate) release_namespace: String,
    pub(crate) chart_name: String,
    pub(crate) repo_url: String,
    /// Helm generated its release name.
    pub(crate) generated_name: bool,
    /// Its release installed once (what `InstallOnce` waits for).
    pub(crate) installed: bool,
}

/// The HelmReleaseProxies of `namespace` labelled with HelmChartProxy `proxy`'s name (none
/// when CAAPH's CRDs are not served); at most [`MAX_CLUSTERS`].
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn release_proxies(
    client: &kube::Client,
    namespace: &str,
    proxy: &str,
) -> Result<Vec<ReleaseProxy>, ApiError> {
    let r = resource("addons.cluster.x-k8s.io", "v1alpha1", "HelmReleaseProxy", "helmreleaseproxies");
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &r);
    let params = ListParams::default().labels(&format!("{PROXY_LABEL}={proxy}")).limit(MAX_CLUSTERS as u32);
    let list = match crate::api::retry(|| api.list(&params)).await {
        Ok(list) => list,
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Vec::new()),
        Err(e) => return Err(ApiError::from_kube(&e, "list", "helmreleaseproxies.addons.cluster.x-k8s.io")),
    };
    Ok(list.items.iter().filter_map(release_proxy).collect())
}

/// A HelmReleaseProxy as the plan reads it, when it speaks for a Cluster of its own namespace
/// (CAAPH makes it there; one naming another namespace's Cluster was written by someone else,
/// whose word does not reach that namespace's kubeconfig Secret).
fn release_proxy(o: &DynamicObject) -> Option<ReleaseProxy> {
    let text = |p: &str| o.data.pointer(p).and_then(Value::as_str).unwrap_or_default().to_string();
    let annotation = |k: &str| o.metadata.annotations.as_ref().and_then(|a| a.get(k)).map(String::as_str);
    let own = o.metadata.namespace.clone().unwrap_or_default();
    let named = text("/spec/clusterRef/namespace");
    if !named.is_empty() && named != own {
        return None;
    }
    Some(ReleaseProxy {
        name: o.metadata.name.clone().unwrap_or_default(),
        cluster: format!("{own}/{}", text("/spec/clusterRef/name")),
        release_name: text("/spec/releaseName"),
        release_namespace: text("/spec/namespace"),
        chart_name: text("/spec/chartName"),
        repo_url: text("/spec/repoURL"),
        generated_name: annotation(NAME_GENERATED) == Some("true"),
        installed: annotation(INSTALLED).is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_release_proxy_speaks_only_for_a_cluster_of_its_own_namespace() {
        let proxy = |cluster_ref: Value| {
            let mut o = DynamicObject::new(
                "p",
                &resource("addons.cluster.x-k8s.io", "v1alpha1", "HelmReleaseProxy", "helmreleaseproxies"),
            );
            o.metadata.namespace = Some("fleet".into());
            o.data = json!({"spec": {"clusterRef": cluster_ref, "releaseName": "cni"}});
            o
        };
        assert_eq!(release_proxy(&proxy(json!({"name": "eu"}))).unwrap().cluster, "fleet/eu");
        assert_eq!(release_proxy(&proxy(json!({"name": "eu", "namespace": "fleet"}))).unwrap().cluster, "fleet/eu");
        assert!(release_proxy(&proxy(json!({"name": "eu", "namespace": "kube-system"}))).is_none());
    }
}

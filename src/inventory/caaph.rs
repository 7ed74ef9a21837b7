//! Cluster API's Helm add-on provider (CAAPH): each `HelmReleaseProxy` names a release CAAPH
//! installed on a workload cluster (`spec.clusterRef`, `spec.releaseName`, `spec.namespace`)
//! and the revision it recorded (`status.revision`). The platform team's say on correcting its
//! drift is read from annotations on it or on the `HelmChartProxy` it was made from
//! (`helm-drift.io/repair`, `helm-drift.io/repair-interval`). No CAAPH in the management
//! cluster (its CRDs not served) is no proxy.

use super::entry::{Inventory, Proxy};
use crate::api::ApiError;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use serde_json::Value;
use std::collections::BTreeMap;

/// The annotation that opts a proxy's release in to self-healing (`"true"`) or out (`"false"`).
pub(crate) const REPAIR: &str = "helm-drift.io/repair";
/// The annotation with the least time between two repairs of a proxy's release (`10m`).
pub(crate) const REPAIR_INTERVAL: &str = "helm-drift.io/repair-interval";
/// The label CAAPH puts on a HelmReleaseProxy: its HelmChartProxy.
const CHART_PROXY_LABEL: &str = "helmreleaseproxy.addons.cluster.x-k8s.io/helmchartproxy-name";

pub(super) fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "addons.cluster.x-k8s.io".into(),
        version: "v1alpha1".into(),
        api_version: "addons.cluster.x-k8s.io/v1alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// What `keep` takes of each `plural` in `namespace` (else everywhere), as its page is read;
/// none when the kind is not served.
async fn list<T>(
    client: &kube::Client,
    namespace: Option<&str>,
    (kind, plural): (&str, &str),
    keep: impl FnMut(DynamicObject) -> Option<T>,
) -> Result<Vec<T>, ApiError> {
    let r = resource(kind, plural);
    let api: Api<DynamicObject> = match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &r),
        None => Api::all_with(client.clone(), &r),
    };
    // In pages (the namespace's writers may make it long): one page of response held at a time.
    match crate::api::list_kept(client, &api, &ListParams::default(), keep).await {
        Ok(list) => Ok(list),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Vec::new()),
        Err(e) => Err(ApiError::from_kube(&e, "list", &format!("{plural}.addons.cluster.x-k8s.io"))),
    }
}

/// The HelmReleaseProxies taken for one cluster at most (CAAPH makes one per HelmChartProxy
/// selecting it: a few dozen add-ons is a big cluster).
pub(crate) const MAX_PROXIES_PER_MEMBER: usize = 256;

/// Gives each member of a Cluster API inventory the proxies that name its Cluster.
pub(super) async fn attach(
    client: &kube::Client,
    namespace: Option<&str>,
    inventory: &mut Inventory,
) -> Result<(), ApiError> {
    // Chart proxies kept as the annotations a release proxy may take from them; release proxies as
    // the proxies they amount to.
    let charts: BTreeMap<(String, String), BTreeMap<String, String>> =
        list(client, namespace, ("HelmChartProxy", "helmchartproxies"), chart_says).await?.into_iter().collect();
    let releases = list(client, namespace, ("HelmReleaseProxy", "helmreleaseproxies"), |o| proxy(&o, &charts)).await?;
    give(inventory, releases);
    Ok(())
}

/// A HelmChartProxy kept as what a release proxy may take from it: its repair annotations.
pub(super) fn chart_says(c: DynamicObject) -> Option<((String, String), BTreeMap<String, String>)> {
    let key = (c.metadata.namespace.clone()?, c.metadata.name.clone()?);
    let mut said = c.metadata.annotations.unwrap_or_default();
    said.retain(|k, _| k == REPAIR || k == REPAIR_INTERVAL);
    Some((key, said))
}

/// Each proxy to the member it names. Each is a release watched and its series: a cluster's
/// share is bounded, and the proxies past it are named (CAAPH makes one per HelmChartProxy
/// selecting the cluster).
pub(super) fn give(inventory: &mut Inventory, releases: Vec<(String, Proxy)>) {
    for (cluster, proxy) in releases {
        let Some(member) = inventory.members.iter_mut().find(|m| m.name == cluster) else { continue };
        if member.proxies.len() < MAX_PROXIES_PER_MEMBER {
            member.proxies.push(proxy);
        } else {
            member.proxies_past_cap.push(format!("{}/{}", proxy.namespace, proxy.name));
        }
    }
}

/// A HelmReleaseProxy as a [`Proxy`], with the member (`namespace/name`) it is about; none
/// until CAAPH has named its release.
pub(super) fn proxy(
    object: &DynamicObject,
    charts: &BTreeMap<(String, String), BTreeMap<String, String>>,
) -> Option<(String, Proxy)> {
    let namespace = object.metadata.namespace.clone()?;
    let name = object.metadata.name.clone()?;
    let spec = object.data.get("spec")?;
    let text = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let cluster_name = text(spec, "/clusterRef/name")?;
    // CAAPH makes a proxy in its Cluster's namespace: one naming a Cluster of another namespace
    // was written by someone else, to steer what they have no say over.
    if text(spec, "/clusterRef/namespace").is_some_and(|ns| ns != namespace) {
        return None;
    }
    let cluster_namespace = namespace.clone();
    let release = text(spec, "/releaseName")?;
    let release_namespace = text(spec, "/namespace").unwrap_or_else(|| "default".into());
    let revision = object.data.pointer("/status/revision").and_then(Value::as_u64).and_then(|r| u32::try_from(r).ok());
    let chart_proxy = object.metadata.labels.as_ref().and_then(|l| l.get(CHART_PROXY_LABEL)).cloned();
    let own = object.metadata.annotations.clone().unwrap_or_default();
    let empty = BTreeMap::new();
    let chart = chart_proxy.as_ref().and_then(|c| charts.get(&(namespace.clone(), c.clone()))).unwrap_or(&empty);
    // The proxy's own annotation, else its chart proxy's: one cluster can be set apart.
    let said = |key: &str| own.get(key).or_else(|| chart.get(key)).map(|v| v.trim().to_string());
    let repair = said(REPAIR).is_some_and(|v| v == "true");
    let written = said(REPAIR_INTERVAL);
    let interval = written.as_deref().and_then(|v| crate::model::parse_duration(v).ok());
    let interval_unread = written.filter(|_| interval.is_none());
    let proxy = Proxy {
        namespace,
        name,
        uid: object.metadata.uid.clone(),
        chart_proxy,
        release_namespace,
        release,
        revision,
        repair,
        interval,
        interval_unread,
    };
    Some((format!("{cluster_namespace}/{cluster_name}"), proxy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> DynamicObject {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_proxy_names_its_cluster_release_and_revision_and_the_platform_teams_say() {
        let hrp = object(json!({
            "apiVersion": "addons.cluster.x-k8s.io/v1alpha1", "kind": "HelmReleaseProxy",
            "metadata": {"name": "cni-eu-x1", "namespace": "fleet", "uid": "u1",
                "labels": {CHART_PROXY_LABEL: "cni"}},
            "spec": {"clusterRef": {"name": "eu"}, "releaseName": "cilium", "namespace": "kube-system",
                "chartName": "cilium", "repoURL": "https://helm.cilium.io"},
            "status": {"revision": 3, "status": "deployed"}
        }));
        let mut charts = BTreeMap::new();
        charts.insert(
            ("fleet".to_string(), "cni".to_string()),
            BTreeMap::from([(REPAIR.to_string(), "true".to_string()), (REPAIR_INTERVAL.to_string(), "5m".to_string())]),
        );
        let (cluster, p) = proxy(&hrp, &charts).unwrap();
        assert_eq!(cluster, "fleet/eu");
        assert_eq!((p.release_namespace.as_str(), p.release.as_str(), p.revision), ("kube-system", "cilium", Some(3)));
        assert!(p.repair);
        assert_eq!(p.interval, Some(std::time::Duration::from_secs(300)));
        // Its own annotation wins over its chart proxy's; an unreadable interval is none.
        let mut own = hrp.clone();
        own.metadata.annotations =
            Some(BTreeMap::from([(REPAIR.to_string(), "false".into()), (REPAIR_INTERVAL.to_string(), "soon".into())]));
        let (_, p) = proxy(&own, &charts).unwrap();
        assert!(!p.repair && p.interval.is_none());
        assert_eq!(p.interval_unread.as_deref(), Some("soon"), "said, not swallowed");
        // Without a chart proxy saying anything: not opted in.
        let (_, p) = proxy(&hrp, &BTreeMap::new()).unwrap();
        assert!(!p.repair);
        // Before CAAPH names the release: no proxy.
        let mut unnamed = hrp.clone();
        unnamed.data["spec"]["releaseName"] = json!("");
        assert!(proxy(&unnamed, &charts).is_none());
        // A proxy speaks only for a Cluster of its own namespace.
        let mut beyond = hrp.clone();
        beyond.data["spec"]["clusterRef"]["namespace"] = json!("platform");
        assert!(proxy(&beyond, &charts).is_none(), "a tenant's proxy naming the platform's cluster");
        let mut own_ns = hrp.clone();
        own_ns.data["spec"]["clusterRef"]["namespace"] = json!("fleet");
        assert_eq!(proxy(&own_ns, &charts).unwrap().0, "fleet/eu");
    }

    #[test]
    fn a_clusters_share_of_proxies_is_bounded_and_the_rest_named() {
        let hrp = |n: usize| {
            let o = object(json!({
                "apiVersion": "addons.cluster.x-k8s.io/v1alpha1", "kind": "HelmReleaseProxy",
                "metadata": {"name": format!("p{n:03}"), "namespace": "fleet"},
                "spec": {"clusterRef": {"name": "eu"}, "releaseName": format!("r{n}"), "namespace": "apps"}
            }));
            proxy(&o, &BTreeMap::new()).unwrap()
        };
        let member = |name: &str| super::super::Member {
            name: name.into(),
            kubeconfig: Err(super::super::Unreachable::new("x", super::super::Why::NoSecret)),
            proxies: Vec::new(),
            proxies_past_cap: Vec::new(),
        };
        let mut inventory = Inventory { members: vec![member("fleet/eu"), member("fleet/us")], skipped: Vec::new() };
        give(&mut inventory, (0..MAX_PROXIES_PER_MEMBER + 2).map(hrp).collect());
        let eu = &inventory.members[0];
        assert_eq!(eu.proxies.len(), MAX_PROXIES_PER_MEMBER);
        assert_eq!(eu.proxies_past_cap, ["fleet/p256", "fleet/p257"]);
        assert!(inventory.members[1].proxies.is_empty() && inventory.members[1].proxies_past_cap.is_empty());
    }
}

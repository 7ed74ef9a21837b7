//! Cluster API's Helm add-on provider (CAAPH) seen from the management cluster: its
//! `HelmChartProxy` and `HelmReleaseProxy` CRDs (copied with their licence,
//! `tests/fixtures/cluster-api-addon-provider-helm`; no CAAPH controller: the test writes the
//! proxies and their status as CAAPH would) name a release on each of two workload control
//! planes, installed by Helm 3 and Helm 4. Drift is an Event on its HelmReleaseProxy and
//! carries its name in the metrics; the proxy's annotations, not the workload cluster's record
//! labels, say whether it heals; a revision CAAPH did not record is reported, never trusted.

use crate::inventory::{cluster, serve_cluster_crd};
use crate::support::{Env, Helm, eventually, repo_root};
use crate::watching::{Watching, events};
use std::time::Duration;

pub fn serve_caaph_crds(env: &Env) {
    for kind in ["helmchartproxies", "helmreleaseproxies"] {
        let crd = repo_root()
            .join(format!("tests/fixtures/cluster-api-addon-provider-helm/addons.cluster.x-k8s.io_{kind}.yaml"));
        env.kubectl(&["apply", "--server-side", "--force-conflicts", "-f", crd.to_str().unwrap()]).success();
    }
    eventually("the CAAPH CRDs served", Duration::from_secs(60), || {
        let out = env.kubectl(&["get", "--raw", "/apis/addons.cluster.x-k8s.io/v1alpha1"]).output();
        let text = out.stdout();
        out.out.status.success() && text.contains("helmreleaseproxies") && text.contains("helmchartproxies")
    });
}

/// A HelmReleaseProxy for release `cni` (in `namespace`) of cluster `cluster`, at `revision`, made from the
/// HelmChartProxy `runtime`, with `annotations`.
pub fn release_proxy(mgmt: &Env, cluster: &str, namespace: &str, revision: u32, annotations: &str) {
    let doc = format!(
        "apiVersion: addons.cluster.x-k8s.io/v1alpha1\nkind: HelmReleaseProxy\nmetadata:\n  name: runtime-{cluster}\n  labels: {{helmreleaseproxy.addons.cluster.x-k8s.io/helmchartproxy-name: runtime}}\n  annotations: {{{annotations}}}\nspec:\n  clusterRef: {{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, name: {cluster}}}\n  chartName: basic\n  repoURL: oci://registry.invalid/charts\n  releaseName: cni\n  namespace: {namespace}\n"
    );
    mgmt.apply_yaml(&format!("hrp-{cluster}"), &doc);
    let status = format!(r#"{{"status":{{"revision":{revision},"status":"deployed"}}}}"#);
    mgmt.kubectl(&[
        "patch",
        "helmreleaseproxy.addons.cluster.x-k8s.io",
        &format!("runtime-{cluster}"),
        "--subresource=status",
        "--type=merge",
        "-p",
        &status,
    ])
    .success();
}

/// Events with `reason` on HelmReleaseProxy `name` (in the management cluster).
pub fn on_proxy(mgmt: &Env, reason: &str, name: &str) -> Vec<serde_json::Value> {
    events(mgmt, reason)
        .into_iter()
        .filter(|e| e["involvedObject"]["kind"] == "HelmReleaseProxy" && e["involvedObject"]["name"] == name)
        .collect()
}

#[test]
fn caaph_releases_are_judged_announced_and_healed_as_their_proxies_say() {
    let _serial = crate::restart::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mgmt = Env::new("caaph-mgmt");
    serve_cluster_crd(&mgmt);
    serve_caaph_crds(&mgmt);
    let a = Env::disturbable("caaph-w");
    let b = Env::without_admission_policies("caaph-w");
    a.install(Helm::V3, "cni", "basic", &[]);
    b.install(Helm::V4, "cni", "basic", &[]);
    // A workload tenant labels b's record to opt in: the proxy in the management cluster decides.
    b.kubectl(&["label", "secret", "-l", "owner=helm,name=cni", "helm-drift.io/repair=true"]).success();
    for (name, env) in [("a", &a), ("b", &b)] {
        let kubeconfig = env.kubectl(&["config", "view", "--raw", "--flatten", "--minify"]).success().stdout();
        cluster(&mgmt, name, "fleet: runtime", true, Some(&kubeconfig));
    }
    let chart_proxy = "apiVersion: addons.cluster.x-k8s.io/v1alpha1\nkind: HelmChartProxy\nmetadata:\n  name: runtime\n  annotations: {helm-drift.io/repair: \"true\", helm-drift.io/repair-interval: 1s}\nspec:\n  clusterSelector: {matchLabels: {fleet: runtime}}\n  chartName: basic\n  repoURL: oci://registry.invalid/charts\n";
    mgmt.apply_yaml("hcp", chart_proxy);
    release_proxy(&mgmt, "a", "caaph-w", 1, "");
    release_proxy(&mgmt, "b", "caaph-w", 1, "helm-drift.io/repair: \"false\"");
    let args = [
        "cni",
        "-n",
        "caaph-w",
        "--clusters",
        "capi",
        "--clusters-namespace",
        "caaph-mgmt",
        "--clusters-interval",
        "1s",
        "--lease-namespace",
        "caaph-mgmt",
        "--repair",
        "--trust-namespace",
        "caaph-w",
    ];
    let w = Watching::start(&mgmt, &args).ready();
    let series =
        |metric: &str, c: &str| format!("{metric}{{cluster=\"caaph-mgmt/{c}\",namespace=\"caaph-w\",release=\"cni\"}}");
    w.wait_for(&series("helm_drift_release_drifted", "a"), 0.0);
    w.wait_for(&series("helm_drift_release_drifted", "b"), 0.0);
    w.wait_for(
        "helm_drift_release_proxy{cluster=\"caaph-mgmt/a\",namespace=\"caaph-w\",release=\"cni\",helmreleaseproxy=\"runtime-a\",helmchartproxy=\"runtime\"}",
        1.0,
    );

    // b's proxy opts out: its drift is announced on the proxy, and left as it is.
    b.merge_patch("configmap", "cni-config", r#"{"data":{"greeting":"edited on b"}}"#);
    w.wait_for(&series("helm_drift_release_drifted", "b"), 1.0);
    eventually("DriftDetected on HelmReleaseProxy runtime-b", Duration::from_secs(30), || {
        on_proxy(&mgmt, "DriftDetected", "runtime-b").len() == 1
    });
    let event = &on_proxy(&mgmt, "DriftDetected", "runtime-b")[0];
    let message = event["message"].as_str().unwrap();
    assert!(message.starts_with("cluster caaph-mgmt/b: ConfigMap caaph-w/cni-config drifted"), "{message}");
    assert!(!message.contains("edited on b"), "no value in an Event: {message}");
    assert!(event["involvedObject"]["uid"].as_str().is_some_and(|u| !u.is_empty()), "{event}");

    // a's chart proxy opts in: healed with a's kubeconfig, no new revision, announced on its proxy.
    a.merge_patch("configmap", "cni-config", r#"{"data":{"greeting":"edited on a"}}"#);
    eventually("cni-config healed on cluster a", Duration::from_secs(30), || {
        a.get("configmap", "cni-config", "{.data.greeting}") == "hello"
    });
    eventually("DriftDetected on HelmReleaseProxy runtime-a", Duration::from_secs(30), || {
        on_proxy(&mgmt, "DriftDetected", "runtime-a").len() == 1
    });
    let records = a.kubectl(&["get", "secret", "-l", "owner=helm,name=cni", "-o", "name"]).success().stdout();
    assert_eq!(records.lines().count(), 1, "a repair made a revision: {records}");
    assert_eq!(b.get("configmap", "cni-config", "{.data.greeting}"), "edited on b", "b's proxy opts out");
    let applied = |c: &str| format!("helm_drift_repairs_total{{cluster=\"caaph-mgmt/{c}\",result=\"applied\"}}");
    assert!(w.sample(&applied("a")).unwrap_or(0.0) >= 1.0, "{}", w.metrics());
    assert_eq!(w.sample(&applied("b")), Some(0.0), "{}", w.metrics());

    // Someone upgrades the release on b by hand: CAAPH recorded revision 1, so revision 1 is
    // judged and the revision it did not make is reported on the proxy.
    let chart = crate::support::chart_path("basic");
    let upgrade =
        ["upgrade", "cni", chart.to_str().unwrap(), "--reuse-values", "--set", "replicas=3", "--force-conflicts"];
    b.helm(Helm::V4, &upgrade).success();
    eventually("RevisionNotRecorded on HelmReleaseProxy runtime-b", Duration::from_secs(30), || {
        on_proxy(&mgmt, "RevisionNotRecorded", "runtime-b").len() == 1
    });
    let message = on_proxy(&mgmt, "RevisionNotRecorded", "runtime-b")[0]["message"].as_str().unwrap().to_string();
    assert!(message.contains("at revision 2 on its cluster, CAAPH recorded revision 1"), "{message}");
    assert_eq!(w.sample(&series("helm_drift_release_revision", "b")), Some(1.0), "{}", w.metrics());
    w.stop();
}

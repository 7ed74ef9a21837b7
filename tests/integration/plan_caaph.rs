//! `plan --helmchartproxy`: what Cluster API's Helm add-on provider will do on every workload
//! cluster a HelmChartProxy selects, planned from the management cluster (the real Cluster and
//! CAAPH CRDs, the Clusters' kubeconfig Secrets, no controller: the test writes the
//! HelmReleaseProxies as CAAPH would) and checked against the upgrade the CAAPH stand-in
//! (`manager`, the Helm 3 SDK as CAAPH calls it) then makes with the values CAAPH writes: the
//! objects the plan said would change are those that changed. Two workload control planes; a
//! cluster no longer selected is an uninstall, a paused one is skipped, a template CAAPH cannot
//! execute fails every cluster, and a kubeconfig Secret that would run a command is refused for
//! its cluster alone, its command never run.

use crate::caaph::{release_proxy, serve_caaph_crds};
use crate::inventory::serve_cluster_crd;
use crate::plan::{planned, versions};
use crate::support::{Env, FileServer, Helm, chart_path};

/// A Cluster of the management env with `labels` and `annotations`, its control plane
/// initialized, reached through `kubeconfig` (no control plane or infrastructure object).
fn workload(mgmt: &Env, name: &str, labels: &str, annotations: &str, kubeconfig: &str) {
    let doc = format!(
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: {name}\n  labels: {{{labels}}}\n  annotations: {{{annotations}}}\nspec:\n  clusterNetwork: {{pods: {{cidrBlocks: [10.0.0.0/16]}}}}\n"
    );
    mgmt.apply_yaml(&format!("cluster-{name}"), &doc);
    let status = r#"{"status":{"initialization":{"controlPlaneInitialized":true}}}"#;
    mgmt.kubectl(&["patch", "cluster.cluster.x-k8s.io", name, "--subresource=status", "--type=merge", "-p", status])
        .success();
    let file = mgmt.home().join(format!("{name}-kubeconfig"));
    std::fs::write(&file, kubeconfig).unwrap();
    let from = format!("--from-file=value={}", file.display());
    mgmt.kubectl(&["create", "secret", "generic", &format!("{name}-kubeconfig"), &from]).success();
}

fn kubeconfig(env: &Env) -> String {
    env.kubectl(&["config", "view", "--raw", "--flatten", "--minify"]).success().stdout()
}

const PROXY: &str = "apiVersion: addons.cluster.x-k8s.io/v1alpha1
kind: HelmChartProxy
metadata:
  name: runtime
spec:
  clusterSelector:
    matchLabels: {fleet: runtime}
  chartName: basic
  repoURL: oci://registry.invalid/charts
  releaseName: cni
  namespace: plan-hcp-w
  valuesTemplate: |
    greeting: hello from {{ .Cluster.metadata.name }} ({{ .Cluster.metadata.labels.env }})
    replicas: {{ if eq .Cluster.metadata.labels.env \"prod\" }}3{{ else }}1{{ end }}
";

/// `plan --helmchartproxy-file` of `proxy` with `helm`, as JSON, asserting its exit code.
fn plan(mgmt: &Env, proxy: &str, helm: Helm, code: i32) -> serde_json::Value {
    let file = mgmt.home().join("proxy.yaml");
    std::fs::write(&file, proxy).unwrap();
    let chart = chart_path("basic");
    let args = ["plan", "--helmchartproxy-file", file.to_str().unwrap(), chart.to_str().unwrap(), "-o", "json"];
    let out = mgmt.drift(&args).env("HELM_BIN", mgmt.helm_bin(helm)).code(code);
    serde_json::from_str(&out.stdout()).unwrap_or_else(|e| panic!("{e}: {}", out.dump()))
}

/// The part of the plan about cluster `name` of the management namespace.
fn cluster<'a>(doc: &'a serde_json::Value, mgmt: &Env, name: &str) -> &'a serde_json::Value {
    let id = format!("{}/{name}", mgmt.ns);
    let all = doc["clusters"].as_array().unwrap();
    all.iter().find(|c| c["cluster"] == id.as_str()).unwrap_or_else(|| panic!("no cluster {id}: {doc:#}"))
}

#[test]
fn plan_predicts_what_caaph_does_on_every_cluster_a_helmchartproxy_selects() {
    let mgmt = Env::new("plan-hcp-mgmt");
    serve_cluster_crd(&mgmt);
    serve_caaph_crds(&mgmt);
    let a = Env::new("plan-hcp-w");
    let b = Env::without_admission_policies("plan-hcp-w");
    let c = Env::without_admission_policies("plan-hcp-c");
    let basic = chart_path("basic");
    for env in [&a, &b, &c] {
        env.helm_tool("manager", &["install", "cni", basic.to_str().unwrap()]).success();
    }
    workload(&mgmt, "a", "fleet: runtime, env: prod", "", &kubeconfig(&a));
    workload(&mgmt, "b", "fleet: runtime, env: dev", "", &kubeconfig(&b));
    workload(&mgmt, "c", "fleet: retired", "", &kubeconfig(&c));
    workload(&mgmt, "d", "fleet: runtime, env: dev", "cluster.x-k8s.io/paused: \"\"", &kubeconfig(&b));
    mgmt.apply_yaml("hcp", PROXY);
    for (name, namespace) in [("a", "plan-hcp-w"), ("b", "plan-hcp-w"), ("c", "plan-hcp-c")] {
        release_proxy(&mgmt, name, namespace, 1, "");
    }

    // Helm 4 and Helm 3 render the same plan: a and b upgraded with their own values, c
    // uninstalled (no longer selected), d skipped (paused).
    for helm in [Helm::V4, Helm::V3] {
        let doc = plan(&mgmt, PROXY, helm, 2);
        let (pa, pb) = (cluster(&doc, &mgmt, "a"), cluster(&doc, &mgmt, "b"));
        assert_eq!((pa["outcome"].as_str(), pb["outcome"].as_str()), (Some("upgrade"), Some("upgrade")), "{doc:#}");
        assert_eq!(planned(&pa["plan"]), ["configmap/cni-config", "deployment/cni-web"], "{doc:#}");
        let after = |p: &serde_json::Value, path: &str| {
            let fields = p["plan"]["objects"].as_array().unwrap().iter().flat_map(|o| o["fields"].as_array().unwrap());
            fields.clone().find(|f| f["path"] == path).map(|f| f["after"].clone())
        };
        assert_eq!(after(pa, "/data/greeting"), Some("hello from a (prod)".into()), "{doc:#}");
        assert_eq!(after(pb, "/data/greeting"), Some("hello from b (dev)".into()), "{doc:#}");
        assert_eq!(after(pa, "/spec/replicas"), Some(3.into()), "{doc:#}");
        let pc = cluster(&doc, &mgmt, "c");
        assert_eq!(pc["outcome"], "uninstall", "{doc:#}");
        let deleted = pc["plan"]["objects"].as_array().unwrap().iter().filter(|o| o["change"] == "delete").count();
        assert_eq!(deleted, 4, "every object of c's release: {doc:#}");
        assert_eq!(cluster(&doc, &mgmt, "d")["outcome"], "skipped", "{doc:#}");
        assert_eq!(doc["summary"]["changed"], 3, "{doc:#}");
    }

    // A writer pinned for one member (`--helm-manager MEMBER:NAMESPACE=NAME`) is that member's
    // alone in the plan, as in check and watch (one constructor of a member's settings).
    let file = mgmt.home().join("proxy.yaml");
    let pin = format!("{}/a:plan-hcp-w=manager", mgmt.ns);
    let args = ["plan", "--helmchartproxy-file", file.to_str().unwrap(), basic.to_str().unwrap(), "-o", "json"];
    let out =
        mgmt.drift(&[&args[..], &["--helm-manager", &pin]].concat()).env("HELM_BIN", mgmt.helm_bin(Helm::V4)).code(2);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap_or_else(|e| panic!("{e}: {}", out.dump()));
    let found = |name: &str| cluster(&doc, &mgmt, name)["plan"]["writer"]["found"].clone();
    assert_eq!((found("a"), found("b")), ("given".into(), "learnt".into()), "{doc:#}");

    let text = mgmt
        .drift(&["plan", "--helmchartproxy-file", file.to_str().unwrap(), basic.to_str().unwrap()])
        .env("HELM_BIN", mgmt.helm_bin(Helm::V3))
        .code(2);
    text.says("cluster plan-hcp-mgmt/c: uninstall: the uninstall changes 4 objects")
        .says("  paused (cluster.x-k8s.io/paused): CAAPH does not reconcile it")
        .says("HelmChartProxy plan-hcp-mgmt/runtime (from ")
        .says("): 4 clusters: 3 changed, 1 unchanged");
    // What CAAPH then does on a: the stand-in upgrades with the values CAAPH writes for a.
    let values = a.home().join("caaph-values.yaml");
    std::fs::write(&values, "greeting: hello from a (prod)\nreplicas: 3\n").unwrap();
    let doc = plan(&mgmt, PROXY, Helm::V4, 2);
    let before = versions(&a);
    a.helm_tool("manager", &["upgrade", "cni", basic.to_str().unwrap(), "-f", values.to_str().unwrap()]).success();
    let after = versions(&a);
    let changed: Vec<String> = after.keys().filter(|k| before.get(*k) != after.get(*k)).cloned().collect();
    assert_eq!(planned(&cluster(&doc, &mgmt, "a")["plan"]), changed, "{doc:#}");
    // Its values and chart version are now the record's: CAAPH makes no upgrade there.
    let doc = plan(&mgmt, PROXY, Helm::V4, 2);
    let pa = cluster(&doc, &mgmt, "a");
    assert_eq!(pa["outcome"], "untouched", "{doc:#}");
    assert!(pa["reason"].as_str().unwrap().contains("CAAPH makes no upgrade"), "{doc:#}");

    // A pull request whose template calls a function CAAPH does not have fails every cluster
    // it selects, before any write: exit 3.
    let broken = PROXY.replace("{{ .Cluster.metadata.name }}", "{{ .Cluster.metadata.name | toYaml }}");
    let doc = plan(&mgmt, &broken, Helm::V4, 3);
    for name in ["a", "b"] {
        let p = cluster(&doc, &mgmt, name);
        assert_eq!(p["outcome"], "fails", "{doc:#}");
        assert!(p["reason"].as_str().unwrap().contains("function \"toYaml\" not defined"), "{doc:#}");
    }

    // A missing key prints `<no value>` into the values, as CAAPH prints it (and Helm's engine,
    // CAAPH's too, drops that text from the manifest it renders); a field of a missing one stops
    // Helm's engine where CAAPH's prints `<no value>`: that cluster is not planned, said why.
    let missing = PROXY.replace("({{ .Cluster.metadata.labels.env }})", "({{ .Cluster.metadata.labels.nothing }})");
    let doc = plan(&mgmt, &missing, Helm::V3, 2);
    let greeting = cluster(&doc, &mgmt, "b")["plan"]["objects"].to_string();
    assert!(greeting.contains("\"hello from b ()\""), "{doc:#}");
    let deeper = PROXY.replace("({{ .Cluster.metadata.labels.env }})", "({{ .Cluster.spec.nothing.deeper }})");
    let doc = plan(&mgmt, &deeper, Helm::V3, 1);
    let pb = cluster(&doc, &mgmt, "b");
    assert_eq!(pb["outcome"], "not-planned", "{doc:#}");
    assert!(pb["reason"].as_str().unwrap().contains("CAAPH writes `<no value>` there"), "{doc:#}");

    // No chart given: the proxy's own, from its repository, which the pull request moves: a
    // changed repoURL is a reinstall (every object deleted, then created again).
    let repo = mgmt.home().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    mgmt.helm(Helm::V3, &["package", basic.to_str().unwrap(), "-d", repo.to_str().unwrap()]).success();
    mgmt.helm(Helm::V3, &["repo", "index", repo.to_str().unwrap()]).success();
    let server = FileServer::start(repo);
    let moved = PROXY.replace("oci://registry.invalid/charts", &server.url) + "  version: 0.1.0\n";
    let file = mgmt.home().join("moved.yaml");
    std::fs::write(&file, &moved).unwrap();
    let out = mgmt.drift(&["plan", "--helmchartproxy-file", file.to_str().unwrap(), "-o", "json"]);
    let out = out.env("HELM_BIN", mgmt.helm_bin(Helm::V4)).code(2);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap();
    let pa = cluster(&doc, &mgmt, "a");
    assert_eq!(pa["outcome"], "reinstall", "{doc:#}");
    let objects = pa["plan"]["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 4, "{doc:#}");
    assert!(objects.iter().all(|o| o["change"] == "create" && o["note"].as_str().unwrap().contains("created again")));

    // A tenant of the management namespace writes a kubeconfig that would run a command for a
    // cluster it labels into the fleet: that cluster alone is not planned, the command never runs.
    let marker = mgmt.home().join("ran");
    let hostile = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: x, cluster: {{server: \"https://127.0.0.1:1\"}}}}]\nusers: [{{name: x, user: {{exec: {{apiVersion: client.authentication.k8s.io/v1, command: touch, args: [\"{}\"]}}}}}}]\ncontexts: [{{name: x, context: {{cluster: x, user: x}}}}]\ncurrent-context: x\n",
        marker.display()
    );
    workload(&mgmt, "x", "fleet: runtime, env: dev", "", &hostile);
    let doc = plan(&mgmt, PROXY, Helm::V4, 1);
    let px = cluster(&doc, &mgmt, "x");
    assert_eq!(px["outcome"], "not-planned", "{doc:#}");
    assert!(px["reason"].as_str().unwrap().contains("x-kubeconfig"), "{doc:#}");
    assert_eq!(cluster(&doc, &mgmt, "b")["outcome"], "upgrade", "the others are still planned: {doc:#}");
    assert!(!marker.exists(), "the kubeconfig's command ran");
}

/// A pull request's HelmChartProxy reaches nothing its namespace does not: its values template
/// makes the chart look up a Secret of the workload cluster (and `fail` with it), which a plan
/// from a file never answers; a HelmReleaseProxy naming another namespace's Cluster is no
/// orphan to plan there (that namespace's kubeconfig Secret is never read); a proxy file of
/// another namespace is refused; its chartName is never a path, nor found as one where the plan
/// runs.
#[test]
fn a_pull_requests_helmchartproxy_reaches_nothing_beyond_its_namespace() {
    let mgmt = Env::new("plan-hcp-pr");
    serve_cluster_crd(&mgmt);
    serve_caaph_crds(&mgmt);
    let w = Env::new("plan-hcp-pr-w");
    let vault = format!("{}-vault", w.ns);
    let token = format!("HUNTER2-{}", w.ns);
    w.kubectl(&["create", "namespace", &vault]).success();
    w.kubectl(&["-n", &vault, "create", "secret", "generic", "top-secret", &format!("--from-literal=token={token}")])
        .success();
    let looker = chart_path("looker");
    w.helm_tool("manager", &["install", "spy", looker.to_str().unwrap()]).success();
    workload(&mgmt, "w", "fleet: spy", "", &kubeconfig(&w));
    let proxy = format!(
        "apiVersion: addons.cluster.x-k8s.io/v1alpha1\nkind: HelmChartProxy\nmetadata:\n  name: spy\nspec:\n  clusterSelector:\n    matchLabels: {{fleet: spy}}\n  chartName: looker\n  repoURL: https://127.0.0.1:1/charts\n  releaseName: spy\n  namespace: {}\n  valuesTemplate: |\n    vault: {{namespace: {vault}, name: top-secret}}\n    fail: true\n",
        w.ns
    );
    let file = mgmt.home().join("spy.yaml");
    let run = |text: &str, chart: Option<&std::path::Path>| {
        std::fs::write(&file, text).unwrap();
        let mut args = vec!["plan", "--helmchartproxy-file", file.to_str().unwrap()];
        args.extend(chart.map(|c| c.to_str().unwrap()));
        mgmt.drift(&[&args[..], &["-o", "json"]].concat()).env("HELM_BIN", mgmt.helm_bin(Helm::V4))
    };

    // A HelmReleaseProxy of the proxy naming a Cluster of another namespace, whose kubeconfig
    // Secret is there: not CAAPH's, never followed.
    let other = format!("{}-other", mgmt.ns);
    mgmt.kubectl(&["create", "namespace", &other]).success();
    let config = mgmt.home().join("victim-kubeconfig");
    std::fs::write(&config, kubeconfig(&w)).unwrap();
    let from = format!("--from-file=value={}", config.display());
    mgmt.kubectl(&["-n", &other, "create", "secret", "generic", "victim-kubeconfig", &from]).success();
    let hrp = format!(
        "apiVersion: addons.cluster.x-k8s.io/v1alpha1\nkind: HelmReleaseProxy\nmetadata:\n  name: spy-victim\n  labels: {{helmreleaseproxy.addons.cluster.x-k8s.io/helmchartproxy-name: spy}}\nspec:\n  clusterRef: {{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, name: victim, namespace: {other}}}\n  chartName: looker\n  repoURL: https://127.0.0.1:1/charts\n  releaseName: spy\n  namespace: {}\n",
        w.ns
    );
    mgmt.apply_yaml("hrp-victim", &hrp);

    let out = run(&proxy, Some(&looker)).output();
    assert!(!out.dump().contains(&token), "the pull request's values read the Secret as the planner\n{}", out.dump());
    let doc: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap_or_else(|e| panic!("{e}: {}", out.dump()));
    let planned = cluster(&doc, &mgmt, "w");
    assert!(planned["plan"]["notes"].to_string().contains("never lends them your rights"), "{doc:#}");
    let clusters = doc["clusters"].to_string();
    assert!(!clusters.contains("victim"), "another namespace's Cluster was planned: {doc:#}");

    // A file of another namespace, a path for a chart, a name found where the plan runs.
    let elsewhere = proxy.replace("  name: spy\n", &format!("  name: spy\n  namespace: {other}\n"));
    run(&elsewhere, Some(&looker)).code(1).stderr_has(&format!("is in namespace {other}, not {}", mgmt.ns));
    run(&proxy.replace("chartName: looker", "chartName: ./looker"), None).code(1).stderr_has("is a path");
    let charts = crate::support::repo_root().join("tests/charts");
    let local = run(&proxy, None).current_dir(&charts).code(1);
    assert!(!local.dump().contains(&token) && !local.stdout().contains("looker-"), "{}", local.dump());
    local.stderr_has("127.0.0.1:1");
}

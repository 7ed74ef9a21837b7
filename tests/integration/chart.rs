//! `charts/helm-drift`: lint and template with Helm 3 and Helm 4 (restricted pod security,
//! least-privilege RBAC, the Prometheus Operator's kinds only when served), installed into the
//! test cluster, and `helm-drift watch` run as its ServiceAccount (a TokenRequest token): the
//! RBAC is enough to watch, and repair is refused while the chart leaves it off.

use crate::support::{Env, Helm, eventually, eventually_or, repo_root};
use crate::watching::{Watching, events};
use serde_yaml::Value;
use std::time::Duration;

fn chart() -> String {
    repo_root().join("charts/helm-drift").to_str().unwrap().to_string()
}

/// The rendered documents of `helm template` with these extra arguments.
pub(crate) fn template(env: &Env, helm: Helm, extra: &[&str]) -> Vec<Value> {
    let chart = chart();
    // `helm template` is offline: say which Kubernetes (helm built from source defaults to 1.20).
    let mut args = vec!["template", "drift", chart.as_str(), "--kube-version", "1.36.0"];
    args.extend_from_slice(extra);
    let out = env.helm(helm, &args).success().stdout();
    serde_yaml::Deserializer::from_str(&out).map(|d| Value::deserialize(d).unwrap()).filter(|v| !v.is_null()).collect()
}
use serde::Deserialize;

fn kinds(docs: &[Value]) -> Vec<String> {
    docs.iter().map(|d| d["kind"].as_str().unwrap().to_string()).collect()
}

fn find<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    docs.iter().find(|d| d["kind"] == kind).unwrap_or_else(|| panic!("no {kind} in {:?}", kinds(docs)))
}

/// Every verb the ClusterRole grants, each once, sorted.
fn verbs(docs: &[Value]) -> Vec<String> {
    let role = find(docs, "ClusterRole");
    let rules = role["rules"].as_sequence().unwrap();
    let mut out: Vec<String> = rules
        .iter()
        .flat_map(|r| r["verbs"].as_sequence().unwrap().iter().map(|v| v.as_str().unwrap().to_string()))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The rule of a (Cluster)Role that names this resource.
fn rule<'a>(docs: &'a [Value], kind: &str, resource: &str) -> &'a Value {
    let rules = find(docs, kind)["rules"].as_sequence().unwrap();
    rules
        .iter()
        .find(|r| r["resources"].as_sequence().unwrap().iter().any(|x| x == resource))
        .unwrap_or_else(|| panic!("no rule for {resource} in {kind}"))
}

/// Whether any rule of the (Cluster)Role names resource `*` or a subresource.
fn reaches_subresources(docs: &[Value], kind: &str) -> bool {
    find(docs, kind)["rules"].as_sequence().unwrap().iter().any(|r| {
        let reads = r["verbs"].as_sequence().unwrap().iter().any(|v| v == "get");
        reads
            && r["resources"]
                .as_sequence()
                .unwrap()
                .iter()
                .any(|x| x.as_str().is_some_and(|x| x == "*" || x.contains('/')))
    })
}

helm_matrix! {
    fn chart_lints_and_renders_least_privilege(helm: Helm) {
        let env = Env::new(&format!("chart-template-{}", helm.tag()));
        env.helm(helm, &["lint", "--strict", &chart()]).success();
        env.helm(helm, &["lint", "--strict", &chart(), "--set", "repair.enabled=true,replicaCount=2"]).success();

        let docs = template(&env, helm, &[]);
        assert!(!kinds(&docs).contains(&"ServiceMonitor".into()), "{:?}", kinds(&docs));
        assert!(!kinds(&docs).contains(&"PrometheusRule".into()));
        assert_eq!(verbs(&docs), ["create", "get", "list", "patch", "watch"], "read, and create/patch Events only");
        assert_eq!(rule(&docs, "ClusterRole", "events")["verbs"][3], "patch");
        assert!(!reaches_subresources(&docs, "ClusterRole"), "no subresource is readable");
        assert_eq!(rule(&docs, "ClusterRole", "secrets")["verbs"][0], "get");
        let key = find(&docs, "Secret");
        assert_eq!(key["metadata"]["annotations"]["helm.sh/resource-policy"], "keep");
        assert!(key["data"]["key"].as_str().is_some_and(|k| k.len() >= 64), "{key:?}");
        assert!(!kinds(&docs).contains(&"PodDisruptionBudget".into()));

        // Impersonation: only `impersonate` on ServiceAccounts of that name, no write verb.
        let sa = template(&env, helm, &["--set", "repair.enabled=true,repair.serviceAccount=fixer"]);
        assert_eq!(verbs(&sa), ["create", "get", "impersonate", "list", "patch", "watch"]);
        let impersonate =
            find(&sa, "ClusterRole")["rules"].as_sequence().unwrap().iter().find(|r| r["verbs"][0] == "impersonate");
        assert_eq!(impersonate.unwrap()["resourceNames"][0], "fixer");
        // The accounts Flux HelmReleases name, beside it or alone (no write verb either way).
        let flux = template(&env, helm, &["--set", "repair.enabled=true,repair.helmReleaseServiceAccounts={deployer}"]);
        assert_eq!(verbs(&flux), ["create", "get", "impersonate", "list", "patch", "watch"]);
        let rules = find(&flux, "ClusterRole")["rules"].as_sequence().unwrap().clone();
        let names = rules.iter().find(|r| r["verbs"][0] == "impersonate").unwrap()["resourceNames"].clone();
        assert_eq!(names.as_sequence().unwrap().len(), 1, "{names:?}");
        assert_eq!(names[0], "deployer");
        let c = &find(&sa, "Deployment")["spec"]["template"]["spec"]["containers"][0];
        assert!(c["args"].as_sequence().unwrap().iter().any(|a| a == "--repair-service-account=fixer"));
        // Repair windows per release selector, allow and deny.
        let windows = template(&env, helm, &["--set", "repair.enabled=true", "--set-json", r#"repair.windows=[{"schedule":"Sat 02:00-04:00 Europe/Berlin"},{"schedule":"Mon-Fri 08:00-18:00 UTC","selector":"team=payments","deny":true}]"#]);
        let args = find(&windows, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"].clone();
        let args: Vec<&str> = args.as_sequence().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert!(args.contains(&"--repair-window=Sat 02:00-04:00 Europe/Berlin"), "{args:?}");
        assert!(args.contains(&"--repair-deny-window=Mon-Fri 08:00-18:00 UTC @ team=payments"), "{args:?}");
        // Narrowed read rules, and two replicas: a PodDisruptionBudget and anti-affinity.
        let narrow = template(
            &env,
            helm,
            &[
                "--set",
                "replicaCount=2",
                "--set-json",
                r#"rbac.rules=[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list","watch"]}]"#,
            ],
        );
        assert_eq!(find(&narrow, "ClusterRole")["rules"][0]["resources"][0], "configmaps");
        assert_eq!(find(&narrow, "PodDisruptionBudget")["spec"]["minAvailable"], 1);
        let affinity = &find(&narrow, "Deployment")["spec"]["template"]["spec"]["affinity"];
        assert!(affinity["podAntiAffinity"].is_mapping(), "{affinity:?}");
        // Reading everything is a choice, subresources included; a CRD's kinds are added.
        assert!(reaches_subresources(&template(&env, helm, &["--set", "rbac.readAll=true"]), "ClusterRole"));
        let crd = template(
            &env,
            helm,
            &["--set-json", r#"rbac.extraReadRules=[{"apiGroups":["cert-manager.io"],"resources":["certificates"]}]"#],
        );
        assert_eq!(rule(&crd, "ClusterRole", "certificates")["verbs"][2], "watch");
        // One namespace: a Role and its binding there, nothing cluster-wide; the image by digest.
        let one = template(&env, helm, &["--set", "watch.allNamespaces=false,image.digest=sha256:0123"]);
        assert!(!kinds(&one).iter().any(|k| k.starts_with("Cluster")), "{:?}", kinds(&one));
        assert_eq!(rule(&one, "Role", "secrets")["verbs"][1], "list");
        // Accepted drift kept in a namespace named: the flag, and a Role there to read it.
        let kept = template(&env, helm, &["--set", "watch.allNamespaces=false,watch.baseline=cluster=platform"]);
        let arg = |docs: &[Value], want: &str| {
            let c = &find(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0];
            c["args"].as_sequence().unwrap().iter().any(|a| a == want)
        };
        assert!(arg(&kept, "--baseline=cluster=platform"));
        let roles: Vec<&Value> = kept.iter().filter(|d| d["kind"] == "Role" && d["metadata"]["namespace"] == "platform").collect();
        assert_eq!(roles.len(), 1, "{kept:?}");
        assert_eq!(roles[0]["rules"][0]["resources"][0], "configmaps");
        assert!(!arg(&one, "--baseline=cluster=platform"));
        // The metrics port (and the page) behind a NetworkPolicy by default: this namespace and
        // the namespaces labelled for scraping, not every pod of the cluster.
        let policy = find(&docs, "NetworkPolicy");
        assert_eq!(policy["spec"]["ingress"][0]["ports"][0]["port"], 8080);
        let from = &policy["spec"]["ingress"][0]["from"];
        assert_eq!(from.as_sequence().unwrap().len(), 2, "{from:?}");
        assert_eq!(from[1]["namespaceSelector"]["matchLabels"]["helm-drift.io/scrape"], "true", "{from:?}");
        let c = &find(&one, "Deployment")["spec"]["template"]["spec"]["containers"][0];
        assert!(c["image"].as_str().unwrap().ends_with("@sha256:0123"), "{:?}", c["image"]);
        let pod = &find(&docs, "Deployment")["spec"]["template"]["spec"];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
        let c = &pod["containers"][0];
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
        assert_eq!(c["securityContext"]["capabilities"]["drop"][0], "ALL");
        let args: Vec<&str> = c["args"].as_sequence().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert_eq!(&args[..2], ["watch", "--all-namespaces"]);
        assert!(!args.contains(&"--repair"));
        assert!(args.contains(&"--read-only"), "no patch verb: the read-only engine, not a refused dry-run");
        assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");

        // Repair on and nothing trusted: safe with no other setting. No write verb for the
        // watcher's own identity (it refuses every repair, saying why), the read-only engine.
        let writes_itself = |docs: &[Value]| {
            find(docs, "ClusterRole")["rules"].as_sequence().unwrap().iter().any(|r| {
                r["resources"][0] == "*" && r["verbs"].as_sequence().unwrap().iter().any(|v| v == "patch")
            })
        };
        let arg_list = |docs: &[Value]| -> Vec<String> {
            let c = &find(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0];
            c["args"].as_sequence().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect()
        };
        let repair = template(&env, helm, &["--set", "repair.enabled=true"]);
        assert!(!writes_itself(&repair), "no patch or create without trustNamespaces");
        assert!(arg_list(&repair).contains(&"--repair".to_string()));
        assert!(arg_list(&repair).contains(&"--read-only".to_string()));
        assert!(!arg_list(&repair).iter().any(|a| a.starts_with("--trust-namespace")));
        // Trusted namespaces (and the deprecated repair.trustNamespaces): the watcher writes for
        // their records, patch granted, the exact engine.
        let trusted = template(&env, helm, &["--set", "repair.enabled=true,trustNamespaces={kube-system,infra}"]);
        assert!(writes_itself(&trusted));
        let args = arg_list(&trusted);
        assert!(!args.contains(&"--read-only".to_string()), "patch granted: the exact engine");
        assert!(args.contains(&"--trust-namespace=kube-system".to_string()) && args.contains(&"--trust-namespace=infra".to_string()), "{args:?}");
        let old = template(&env, helm, &["--set", "repair.enabled=true,repair.trustNamespaces={infra}"]);
        assert!(writes_itself(&old) && arg_list(&old).contains(&"--trust-namespace=infra".to_string()));
        // Trust without repair lends only the eyes: no write verb.
        let eyes = template(&env, helm, &["--set", "trustNamespaces={infra}"]);
        assert!(!writes_itself(&eyes) && arg_list(&eyes).contains(&"--trust-namespace=infra".to_string()));

        let operator = template(&env, helm, &["--api-versions", "monitoring.coreos.com/v1"]);
        let rule = find(&operator, "PrometheusRule");
        let expr = rule["spec"]["groups"][0]["rules"][0]["expr"].as_str().unwrap();
        assert!(expr.contains("helm_drift_release_drifted"), "{expr}");
        assert_eq!(find(&operator, "ServiceMonitor")["spec"]["endpoints"][0]["port"], "metrics");
        assert!(expr.contains("by (cluster, namespace, release)"), "one alert per cluster: {expr}");

        // A cluster's name: on notifications (--cluster) and, through the ServiceMonitor, on
        // every series; nothing of it when unset.
        assert!(find(&operator, "ServiceMonitor")["spec"]["endpoints"][0]["relabelings"].is_null());
        let named = template(&env, helm, &["--api-versions", "monitoring.coreos.com/v1", "--set", "cluster=prod-eu"]);
        let c = &find(&named, "Deployment")["spec"]["template"]["spec"]["containers"][0];
        assert!(c["args"].as_sequence().unwrap().iter().any(|a| a == "--cluster=prod-eu"), "{c:?}");
        let relabel = &find(&named, "ServiceMonitor")["spec"]["endpoints"][0]["relabelings"][0];
        assert_eq!((relabel["targetLabel"].as_str(), relabel["replacement"].as_str()), (Some("cluster"), Some("prod-eu")));
    }
}

/// Installs the chart and runs the watcher as its ServiceAccount, against a release that opted
/// in to repair: drift is detected and recorded as an Event, the Lease is taken, and the repair
/// is refused (the chart grants no patch verb while repair is off). With repair on (an upgrade
/// of the chart), the same drift is repaired, and when it comes back its Event is counted up
/// (the chart grants patch on Events; the signature key the chart made is kept across the
/// upgrade, so the signature is the same).
fn installed_chart_rbac_is_enough_to_watch(helm: Helm) {
    let env = Env::new(&format!("chart-{}", helm.tag()));
    let release = format!("drift-{}", helm.tag());
    env.helm(helm, &["install", &release, &chart()]).success();
    let app = format!("rbac-app-{}", helm.tag());
    env.install(helm, &app, "basic", &["--labels", "helm-drift.io/repair=true"]);
    let sa = format!("{release}-helm-drift");
    let token = env.kubectl(&["create", "token", &sa, "--duration", "1h"]).success().stdout().trim().to_string();
    // Every namespace (-A), limited to this test's release by its storage label.
    let key = format!("{sa}-signature-key");
    let args = [
        "-A",
        "-l",
        &format!("name={app}"),
        "--repair",
        "--repair-cooldown",
        "1s",
        "--leader-elect",
        "--lease-name",
        "rbac-test",
        "--signature-key-secret",
        &key,
        // Its own namespace, named, as the chart names it: the key the chart made is read there.
        "--pause-namespace",
        &env.ns,
        // Trusted, so that the repair is tried as the watcher and refused by the API server.
        "--trust-namespace",
        &env.ns,
    ];
    let w = Watching::start_with(&env, &args, &[("HELM_KUBETOKEN", &token)]).ready();
    let drifted = Watching::drifted(&env.ns, &app);
    w.wait_for(&drifted, 0.0);
    let config = format!("{app}-config");
    env.merge_patch("configmap", &config, r#"{"data":{"greeting":"edited"}}"#);
    w.wait_for(&drifted, 1.0);
    eventually("the DriftDetected Event", Duration::from_secs(20), || events(&env, "DriftDetected").len() == 1);
    eventually("the repair refused", Duration::from_secs(30), || {
        w.sample("helm_drift_repairs_total{result=\"refused\"}").is_some_and(|n| n >= 1.0)
    });
    let greeting = || env.get("configmap", &config, "{.data.greeting}");
    assert_eq!(greeting(), "edited");
    let logs = w.logs_text();
    assert!(logs.contains("forbidden") && logs.contains(&format!("system:serviceaccount:{}:{sa}", env.ns)), "{logs}");
    assert!(!logs.contains("no signature key in the cluster"), "the chart's key is used\n{logs}");
    let lease = env.kubectl(&["get", "lease", "rbac-test", "-o", "jsonpath={.spec.holderIdentity}"]).success();
    assert!(!lease.stdout().is_empty());
    w.stop();

    let trust = format!("trustNamespaces={{{}}}", env.ns);
    env.helm(helm, &["upgrade", &release, &chart(), "--set", "repair.enabled=true", "--set", &trust]).success();
    let w = Watching::start_with(&env, &args, &[("HELM_KUBETOKEN", &token)]).ready();
    eventually("the drift repaired", Duration::from_secs(30), || greeting() == "hello");
    eventually("the DriftResolved Event", Duration::from_secs(20), || events(&env, "DriftResolved").len() == 1);
    env.merge_patch("configmap", &config, r#"{"data":{"greeting":"edited"}}"#);
    let counted = || {
        let detected = events(&env, "DriftDetected");
        detected.len() == 1 && detected[0]["count"] == 2
    };
    eventually_or("the recurring drift counted on its Event", Duration::from_secs(30), counted, || {
        format!("{:?}\n{}", events(&env, "DriftDetected"), w.logs_text())
    });
    eventually("repaired again", Duration::from_secs(30), || greeting() == "hello");
    assert!(!w.logs_text().contains("cannot record the Event"), "{}", w.logs_text());
    w.stop();
}

#[test]
fn installed_chart_rbac_is_enough_to_watch_helm3() {
    installed_chart_rbac_is_enough_to_watch(Helm::V3);
}

#[test]
fn installed_chart_rbac_is_enough_to_watch_helm4() {
    installed_chart_rbac_is_enough_to_watch(Helm::V4);
}

helm_matrix! {
    /// The chart in a management cluster (`clusters.source`): it reads only its inventory, in
    /// the inventory's namespace (the Clusters and CAAPH's proxies, the kubeconfig Secrets one
    /// by one, Events on the proxies), nothing of the releases' kinds; Argo CD's cluster Secrets
    /// for `argocd`; every namespace only when asked, as a ClusterRole.
    fn the_chart_in_a_management_cluster_reads_only_its_inventory(helm: Helm) {
        let env = Env::new(&format!("chart-fleet-{}", helm.tag()));
        env.helm(helm, &["lint", "--strict", &chart(), "--set", "clusters.source=capi,clusters.namespace=fleet"]).success();
        let capi = template(&env, helm, &["--set", "clusters.source=capi,clusters.namespace=fleet,replicaCount=2"]);
        assert!(!kinds(&capi).iter().any(|k| k.starts_with("Cluster")), "nothing cluster-wide: {:?}", kinds(&capi));
        let inventory = capi
            .iter()
            .find(|d| d["kind"] == "Role" && d["metadata"]["name"].as_str().unwrap().ends_with("-inventory"))
            .unwrap();
        assert_eq!(inventory["metadata"]["namespace"], "fleet");
        let rules = inventory["rules"].as_sequence().unwrap();
        let resources: Vec<String> = rules
            .iter()
            .flat_map(|r| r["resources"].as_sequence().unwrap().iter().map(|x| x.as_str().unwrap().to_string()))
            .collect();
        assert_eq!(resources, ["clusters", "helmreleaseproxies", "helmchartproxies", "secrets", "events"]);
        let secrets = rules.iter().find(|r| r["resources"][0] == "secrets").unwrap();
        // The kubeconfig Secrets watched (metadata), each read when it changes (issue 92).
        let verbs: Vec<&str> = secrets["verbs"].as_sequence().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(verbs, ["get", "list", "watch"]);
        let c = &find(&capi, "Deployment")["spec"]["template"]["spec"]["containers"][0];
        let args: Vec<&str> = c["args"].as_sequence().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        for arg in ["--clusters=capi", "--clusters-namespace=fleet", "--clusters-interval=30s", "--leader-elect", "--clusters-max=200"] {
            assert!(args.contains(&arg), "{arg}: {args:?}");
        }
        // The memory sized to the fleet (128 MiB and 1 MiB per entry of a replica's share), as
        // the request and the limit alike; against what the bench measured.
        fleet_memory_follows_the_bench(&env, helm);
        // Argo CD's cluster Secrets are read where Argo CD reads them, by default.
        let argocd = template(&env, helm, &["--set", "clusters.source=argocd"]);
        let role = argocd
            .iter()
            .find(|d| d["kind"] == "Role" && d["metadata"]["name"].as_str().unwrap().ends_with("-inventory"))
            .unwrap();
        assert_eq!(role["metadata"]["namespace"], "argocd");
        assert_eq!(role["rules"][0]["resources"][0], "secrets");
        assert_eq!(role["rules"].as_sequence().unwrap().len(), 1, "{role:?}");
        let c = &find(&argocd, "Deployment")["spec"]["template"]["spec"]["containers"][0];
        assert!(c["args"].as_sequence().unwrap().iter().any(|a| a == "--clusters-namespace=argocd"), "{c:?}");
        assert!(!kinds(&argocd).contains(&"ClusterRole".to_string()), "never every Secret by default");
        // Cluster API's namespace must be named; every namespace only when asked.
        let chart = chart();
        let unnamed =
            env.helm(helm, &["template", "drift", &chart, "--kube-version", "1.36.0", "--set", "clusters.source=capi"]).code(1);
        unnamed.stderr_has("clusters.namespace: name the namespace of the Cluster API Clusters");
        let wide = template(&env, helm, &["--set", "clusters.source=capi,clusters.namespace=*"]);
        assert!(kinds(&wide).contains(&"ClusterRole".to_string()), "every namespace: a ClusterRole, asked for");
    }
}

/// The chart installed in a management cluster: its fleet RBAC is enough for `watch --clusters
/// capi` as its ServiceAccount (the inventory read, the cluster watched through its own
/// kubeconfig, the drift Event recorded on the HelmReleaseProxy), and nothing is forbidden.
#[test]
fn installed_fleet_chart_rbac_is_enough_to_watch_a_fleet() {
    let env = Env::new("chart-fleet");
    crate::inventory::serve_cluster_crd(&env);
    crate::caaph::serve_caaph_crds(&env);
    let ns = env.ns.clone();
    env.helm(
        Helm::V4,
        &[
            "install",
            "mgmt",
            &chart(),
            "--set",
            &format!("clusters.source=capi,clusters.namespace={ns},repair.enabled=true"),
        ],
    )
    .success();
    env.install(Helm::V4, "cni", "basic", &["--labels", "helm-drift.io/repair=true"]);
    let kubeconfig = env.kubectl(&["config", "view", "--raw", "--flatten", "--minify"]).success().stdout();
    crate::inventory::cluster(&env, "self", "fleet: runtime", true, Some(&kubeconfig));
    crate::caaph::release_proxy(&env, "self", &ns, 1, r#"helm-drift.io/repair: "true""#);
    let sa = "mgmt-helm-drift";
    let token = env.kubectl(&["create", "token", sa, "--duration", "1h"]).success().stdout().trim().to_string();
    let args = [
        "cni",
        "--clusters",
        "capi",
        "--clusters-namespace",
        &ns,
        "--clusters-interval",
        "1s",
        "--leader-elect",
        "--lease-name",
        "mgmt-helm-drift",
        "--lease-namespace",
        &ns,
        "--signature-key-secret",
        "mgmt-helm-drift-signature-key",
        "--repair",
        "--trust-namespace",
        &ns,
    ];
    let w = Watching::start_with(&env, &args, &[("HELM_KUBETOKEN", &token)]).ready();
    let drifted = format!("helm_drift_release_drifted{{cluster=\"{ns}/self\",namespace=\"{ns}\",release=\"cni\"}}");
    w.wait_for(&drifted, 0.0);
    // Paused for the fleet in the chart's namespace: the chart's Role lets the watcher read it.
    env.drift(&["pause", "cni", "--cluster", "self", "--for", "1h", "--reason", "INC-1", "--pause-namespace", &ns])
        .success();
    env.merge_patch("configmap", "cni-config", r#"{"data":{"greeting":"edited"}}"#);
    w.wait_for(&drifted, 1.0);
    let paused = format!("helm_drift_release_paused{{cluster=\"{ns}/self\",namespace=\"{ns}\",release=\"cni\"}}");
    eventually("the release paused on cluster self", Duration::from_secs(30), || w.sample(&paused).is_some());
    assert_eq!(env.get("configmap", "cni-config", "{.data.greeting}"), "edited", "held by the pause");
    eventually("DriftDetected on the HelmReleaseProxy", Duration::from_secs(30), || {
        !crate::caaph::on_proxy(&env, "DriftDetected", "runtime-self").is_empty()
    });
    let logs = w.logs_text();
    assert!(!logs.contains("forbidden") && !logs.contains("cannot read the pauses"), "{logs}");
    assert!(!logs.contains("no signature key"), "the chart's key is used\n{logs}");
    w.stop();
}

/// The chart's memory for a fleet of 20, 1,000 and 5,000 entries (as the book's install lines
/// set them) against bench/RESULTS.md: at least 1.5 times the peak measured there for that many
/// entries per replica (F6 at 1,000 entries on one replica; F6light's 5,000 in 4 replicas, one
/// of which died), request and limit equal, and not more than 4 times the peak.
fn fleet_memory_follows_the_bench(env: &Env, helm: Helm) {
    let results = std::fs::read_to_string(crate::support::repo_root().join("bench/RESULTS.md")).unwrap();
    let f6 = section(&results, "## F6: ");
    let row = f6.lines().find(|l| l.starts_with("| 1000 |")).expect("F6's row at 1,000 entries");
    let peak_1000 = mib_in_parentheses(row.split('|').nth(8).unwrap());
    let light = section(&results, "## F6light: ");
    let after_kill =
        light.lines().find(|l| l.starts_with("shares ") && l.contains("peaks")).expect("F6light's peaks after a kill");
    let peak_5000 = after_kill
        .split("peaks ")
        .nth(1)
        .unwrap()
        .split(", ")
        .map(|p| p.trim_end_matches('.').trim_end_matches(" MiB").parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    for (sets, measured) in
        [("clusters.max=20", 75.0), ("clusters.max=1000", peak_1000), ("clusters.max=5000,replicaCount=4", peak_5000)]
    {
        let docs = template(env, helm, &["--set", &format!("clusters.source=capi,clusters.namespace=fleet,{sets}")]);
        let resources = &find(&docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["resources"];
        let limit = resources["limits"]["memory"].as_str().unwrap();
        assert_eq!(resources["requests"]["memory"].as_str(), Some(limit), "{sets}: request and limit alike");
        let limit: f64 = limit.trim_end_matches("Mi").parse().unwrap();
        assert!(
            limit >= 1.5 * measured && limit <= 4.0 * measured,
            "{sets}: {limit} MiB against a measured peak of {measured} MiB"
        );
    }
}

/// A section of bench/RESULTS.md: from its heading to the next.
fn section<'a>(results: &'a str, heading: &str) -> &'a str {
    let from = results.find(heading).unwrap_or_else(|| panic!("bench/RESULTS.md has {heading}"));
    let rest = &results[from + heading.len()..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// `453.3 MiB (582.2 MiB)`: 582.2.
fn mib_in_parentheses(cell: &str) -> f64 {
    let inside = &cell[cell.find('(').unwrap() + 1..cell.find(')').unwrap()];
    inside.trim_end_matches(" MiB").parse().unwrap()
}

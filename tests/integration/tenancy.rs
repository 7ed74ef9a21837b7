//! A release record speaks only for its own namespace: whoever may write a Secret in a namespace
//! `T` gains neither the watcher's eyes nor its hands. The watcher runs as the chart's
//! ServiceAccount (the RBAC it renders, a TokenRequest token), with Helm 3 and Helm 4 writing
//! the real releases; the tenant's records are written by hand, as a tenant would.

use crate::support::{Env, Helm, eventually, repo_root};
use crate::watching::{Watching, events};
use std::time::Duration;

/// A Secret in `env`'s namespace shaped as Helm's record of revision `revision` of `release`
/// (its labels and name as Helm writes them), holding `json` as the record.
fn plant(env: &Env, release: &str, revision: u32, json: serde_json::Value, labels: &str) {
    plant_as(env, None, release, revision, json, labels);
}

/// [`plant`], written by `user` (impersonated) when one is named.
pub(crate) fn plant_as(
    env: &Env,
    user: Option<&str>,
    release: &str,
    revision: u32,
    json: serde_json::Value,
    labels: &str,
) {
    use base64::Engine;
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(json.to_string().as_bytes()).unwrap();
    let helm_text = base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap());
    let data = base64::engine::general_purpose::STANDARD.encode(helm_text);
    let secret = format!(
        "apiVersion: v1\nkind: Secret\ntype: helm.sh/release.v1\nmetadata:\n  name: sh.helm.release.v1.{release}.v{revision}\n  labels: {{owner: helm, name: {release}, status: deployed, version: \"{revision}\", {labels}}}\ndata:\n  release: \"{data}\"\n"
    );
    let file = env.home().join(format!("planted-{release}-{revision}.yaml"));
    std::fs::write(&file, secret).unwrap();
    let apply = ["apply", "-f", file.to_str().unwrap()];
    match user {
        Some(user) => env.kubectl(&[&apply[..], &["--as", user]].concat()).success(),
        None => env.kubectl(&apply).success(),
    };
}

pub(crate) fn record(name: &str, namespace: &str, revision: u32, manifest: &str) -> serde_json::Value {
    serde_json::json!({"name": name, "namespace": namespace, "version": revision,
        "info": {"status": "deployed"}, "chart": {"metadata": {"name": name, "version": "1.0.0"}},
        "manifest": manifest})
}

fn exists(env: &Env, args: &[&str]) -> bool {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    env.kubectl(&all).output().out.status.success()
}

/// The series of `metrics` about one release, its name replaced by `RELEASE`, timings left out.
fn series_of(metrics: &str, release: &str) -> Vec<String> {
    let mut lines: Vec<String> = metrics
        .lines()
        .filter(|l| l.contains(&format!("release=\"{release}\"")) && !l.contains("seconds") && !l.contains("timestamp"))
        .map(|l| l.replace(release, "RELEASE"))
        .collect();
    lines.sort();
    lines
}

helm_matrix! {
    /// The four ways a tenant's record reached past its namespace, each refused: a record that
    /// claims another namespace is rejected (no Event there, no second release in check -A); a
    /// forged release that opts in to repair writes nothing with the watcher's identity (a quota
    /// raised, a RoleBinding to the watcher's own ClusterRole); a record naming another
    /// namespace's Secret learns nothing of it (a right and a wrong guess read the same, and
    /// nothing is read); a value written under Helm's field manager is drift. Then the operator
    /// trusts the platform's namespace, and only its release heals as the watcher.
    fn a_record_speaks_only_for_its_own_namespace(helm: Helm) {
        let tag = helm.tag();
        let (p, t) = (Env::new(&format!("ten-p-{tag}")), Env::new(&format!("ten-t-{tag}")));
        let w = Env::new(&format!("ten-w-{tag}"));
        let select = format!("tenancy={tag}");
        let labels = format!("tenancy: {tag}, helm-drift.io/repair: \"true\"");
        p.install(helm, "web", "basic", &["--labels", &format!("{select},helm-drift.io/repair=true")]);
        p.kubectl(&["create", "secret", "generic", "db", "--from-literal=password=right"]).success();

        // 1. A record in T that claims to be revision 7 of P/web.
        let forged_web = "---\n# Source: basic/templates/configmap.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  greeting: forged\n";
        plant(&t, "web", 7, record("web", &p.ns, 7, forged_web), &labels);
        // 2. A forged platform release in T: a quota of 1000 pods and a RoleBinding that gives
        // T's default ServiceAccount the watcher's ClusterRole.
        let chart_release = format!("drift-ten-{tag}");
        let role = format!("{chart_release}-helm-drift");
        let hands = format!(
            "---\n# Source: q/templates/quota.yaml\napiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: pods\nspec:\n  hard:\n    pods: \"1000\"\n---\n# Source: q/templates/rb.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: borrowed\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {role}\nsubjects:\n  - kind: ServiceAccount\n    name: default\n    namespace: {}\n",
            t.ns
        );
        // With --hooks, kept hooks of the same record: a ClusterRoleBinding and a ConfigMap in P.
        let mut quota = record("quota", &t.ns, 2, &hands);
        let hook = |kind: &str, name: &str, manifest: String| serde_json::json!({"name": name, "kind": kind,
            "path": "q/templates/hook.yaml", "manifest": manifest, "events": ["post-install"],
            "last_run": {"phase": "Succeeded"}, "delete_policies": ["before-hook-creation"]});
        quota["hooks"] = serde_json::json!([
            hook("ClusterRoleBinding", "borrowed-hook", format!("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: borrowed-hook-{tag}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {role}\nsubjects:\n  - kind: ServiceAccount\n    name: default\n    namespace: {}\n", t.ns)),
            hook("ConfigMap", "web-config", format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: {}\ndata:\n  greeting: hooked\n", p.ns)),
        ]);
        plant(&t, "quota", 2, quota, &labels);
        // 3. Two records naming P's Secret with a guessed password, one right, one wrong.
        for (name, guess) in [("guess-right", "right"), ("guess-wrong", "wrong")] {
            let eyes = format!(
                "---\n# Source: g/templates/s.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: {}\nstringData:\n  password: {guess}\n",
                p.ns
            );
            plant(&t, name, 1, record(name, &t.ns, 1, &eyes), &labels);
        }

        // The chart with repair on and nothing trusted: the watcher may not write for itself.
        let chart = repo_root().join("charts/helm-drift");
        w.helm(helm, &["install", &chart_release, chart.to_str().unwrap(), "--set", "repair.enabled=true"]).success();
        let sa = format!("system:serviceaccount:{}:{role}", w.ns);
        let can = |verb: &str, what: &str, ns: &str| {
            w.kubectl(&["auth", "can-i", verb, what, "-n", ns, "--as", &sa]).output().stdout().trim() == "yes"
        };
        assert!(!can("patch", "configmaps", &p.ns) && !can("create", "resourcequotas", &t.ns), "no write verb");
        let token = w.kubectl(&["create", "token", &role, "--duration", "1h"]).success().stdout().trim().to_string();
        let key = format!("{role}-signature-key");
        let base = [
            "-A", "-l", &select, "--hooks", "--repair", "--repair-cooldown", "1s", "--resync", "2s",
            "--signature-key-secret", &key, "--pause-namespace", &w.ns,
        ];
        let mut args = base.to_vec();
        args.push("--read-only"); // as the chart runs it without a write verb
        let watcher = Watching::start_with(&w, &args, &[("HELM_KUBETOKEN", &token)]).ready();

        eventually("the forged record rejected", Duration::from_secs(30), || {
            watcher.sample("helm_drift_rejected_inputs_total{input=\"record\"}").is_some_and(|n| n >= 1.0)
        });
        eventually("the forged repairs refused", Duration::from_secs(30), || {
            events(&t, "DriftRepairRefused")
                .iter()
                .any(|e| e["message"].as_str().is_some_and(|m| m.contains("is not trusted")))
        });
        eventually("the guesses compared", Duration::from_secs(30), || {
            watcher.sample(&Watching::drifted(&t.ns, "guess-wrong")).is_some()
                && watcher.sample(&Watching::drifted(&t.ns, "guess-right")).is_some()
        });
        let before = watcher.checks();
        eventually("two more checks", Duration::from_secs(30), || watcher.checks() >= before + 8.0);
        let logs = watcher.logs_text();
        // 1. Nothing said about P/web on the word of T's record.
        assert!(events(&p, "DriftDetected").is_empty(), "an Event in P\n{logs}");
        assert_eq!(p.get("configmap", "web-config", "{.data.greeting}"), "hello");
        assert_eq!(watcher.sample(&Watching::drifted(&t.ns, "web")), None, "the forged record is not a release");
        assert!(logs.contains("release record rejected") && logs.contains("the record says namespace"), "{logs}");
        assert_eq!(logs.matches("release record rejected").count(), 1, "said once\n{logs}");
        // 2. Nothing written for the forged platform release.
        assert!(!exists(&t, &["resourcequota", "pods"]), "the quota was written\n{logs}");
        assert!(!exists(&t, &["rolebinding", "borrowed"]), "the RoleBinding was written\n{logs}");
        assert!(watcher.sample("helm_drift_repairs_total{result=\"refused\"}").is_some_and(|n| n >= 1.0));
        // 3. The right guess and the wrong one read the same, and say "not compared".
        let metrics = watcher.metrics();
        assert_eq!(series_of(&metrics, "guess-right"), series_of(&metrics, "guess-wrong"), "{metrics}");
        assert_eq!(watcher.sample(&Watching::drifted(&t.ns, "guess-right")), Some(0.0));
        assert!(events(&t, "DriftDetected").iter().all(|e| e["involvedObject"]["name"] != "db"));
        // 6. A value changed under Helm's field manager is drift, for the read-only engine too.
        p.kubectl(&["patch", "configmap", "web-config", "--type", "merge", "-p", r#"{"data":{"greeting":"mine"}}"#, "--field-manager", "helm"]).success();
        watcher.wait_for(&Watching::drifted(&p.ns, "web"), 1.0);
        eventually("P's own repair refused too (nothing trusted)", Duration::from_secs(30), || {
            events(&p, "DriftRepairRefused").iter().any(|e| e["message"].as_str().is_some_and(|m| m.contains("is not trusted")))
        });
        assert_eq!(p.get("configmap", "web-config", "{.data.greeting}"), "mine");
        watcher.stop();

        // check -A, as a person: P/web once, T's forged one refused naming its record (not in
        // the exit code: P's drift decides it).
        let out = p.drift(&["check", "-A", "-l", &select, "-o", "json"]).code(2);
        let doc: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap();
        let text = doc.to_string();
        let releases = doc["releases"].as_array().unwrap();
        let at = |ns: &str| releases.iter().filter(|r| r["name"] == "web" && r["namespace"] == ns).count();
        assert_eq!((at(&p.ns), at(&t.ns)), (1, 1), "P/web once, T's record for itself\n{text}");
        let forged = releases.iter().find(|r| r["name"] == "web" && r["namespace"] == t.ns.as_str()).unwrap();
        assert_eq!(forged["verdict"], "refused", "{text}");
        let error = forged["error"].as_str().unwrap();
        assert!(error.contains(&format!("Secret {}/sh.helm.release.v1.web.v7", t.ns)), "{error}");
        assert!(error.contains("the record says namespace"), "{error}");

        // The operator trusts P: patch is granted and P's release heals as the watcher; T's
        // forged release is still refused.
        let trusted = format!("trustNamespaces={{{}}}", p.ns);
        w.helm(helm, &["upgrade", &chart_release, chart.to_str().unwrap(), "--set", "repair.enabled=true", "--set", &trusted]).success();
        eventually("patch granted", Duration::from_secs(20), || can("patch", "configmaps", &p.ns));
        let mut args = base.to_vec();
        args.extend(["--trust-namespace", p.ns.as_str()]);
        let watcher = Watching::start_with(&w, &args, &[("HELM_KUBETOKEN", &token)]).ready();
        eventually("P's release healed", Duration::from_secs(30), || p.get("configmap", "web-config", "{.data.greeting}") == "hello");
        let before = watcher.checks();
        eventually("more checks", Duration::from_secs(30), || watcher.checks() >= before + 8.0);
        assert!(!exists(&t, &["resourcequota", "pods"]), "the quota was written\n{}", watcher.logs_text());
        assert!(!exists(&t, &["rolebinding", "borrowed"]), "the RoleBinding was written");
        // The forged hooks: nothing written outside T, P's ConfigMap as P's release says.
        assert!(!exists(&t, &["clusterrolebinding", &format!("borrowed-hook-{tag}")]), "the hook was written");
        assert_eq!(p.get("configmap", "web-config", "{.data.greeting}"), "hello");
        watcher.stop();
    }
}

/// A 20 KB record whose manifest repeats a 4 MB string through YAML aliases: an error naming the
/// record's document, not gigabytes of memory and an abort; a record whose values are 4 million
/// zeros is compared as any other (its values are never a tree).
#[test]
fn small_records_that_expand_are_bounded_errors() {
    let env = Env::new("ten-expand");
    let big = "x".repeat(4 * 1024 * 1024);
    let aliases: String = (0..64).map(|i| format!("  k{i}: *s\n")).collect();
    let manifest = format!(
        "---\n# Source: bomb/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  s: &s \"{big}\"\n{aliases}"
    );
    plant(&env, "bomb", 1, record("bomb", &env.ns, 1, &manifest), "scan: \"yes\"");
    let mut zeros = record(
        "zeros",
        &env.ns,
        1,
        "---\n# Source: z/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: zeros\ndata:\n  a: b\n",
    );
    zeros["config"] = serde_json::json!({"zeros": vec![0; 4_000_000]});
    plant(&env, "zeros", 1, zeros, "scan: \"yes\"");
    let out = env.drift(&["check", "bomb"]).output();
    let code = out.out.status.code();
    assert!(matches!(code, Some(1) | Some(2)), "a clean exit, not an abort: {code:?}\n{}", out.dump());
    assert!(
        out.stdout().contains("bomb/templates/cm.yaml") && out.stdout().contains("expands to more than"),
        "{}",
        out.dump()
    );
    env.drift(&["check", "zeros"]).code(2).stdout_has("zeros: 1 of 1 object drifted");
}

/// A drift with many paths still gets its Event: the message is cut to the API server's 1,024
/// bytes, saying how much was left out (it used to be refused, 422, and the drift had none).
#[test]
fn a_drift_with_many_paths_gets_its_event() {
    let env = Env::new("ten-long-event");
    env.install(Helm::V4, "web", "basic", &[]);
    let w = Watching::start(&env, &["--all"]).ready();
    let keys: serde_json::Map<String, serde_json::Value> =
        (0..120).map(|i| (format!("a-rather-long-key-added-by-hand-number-{i:03}"), "v".into())).collect();
    let patch = serde_json::json!({"data": keys}).to_string();
    env.kubectl(&["patch", "configmap", "web-config", "--type", "merge", "-p", &patch]).success();
    eventually("the DriftDetected Event", Duration::from_secs(30), || !events(&env, "DriftDetected").is_empty());
    let message = events(&env, "DriftDetected")[0]["message"].as_str().unwrap().to_string();
    assert!(message.len() <= 1024 && message.ends_with("more bytes)"), "{message}");
    assert!(!w.logs_text().contains("cannot record the Event"), "{}", w.logs_text());
}

/// Events of helm-drift's reason with 900 KB messages, written by someone else: read 25 at a time
/// whatever the chunk size (the whole kind in one response held them all), each reduced before
/// the next page; the watcher starts and counts every one it did not take.
#[test]
fn a_flood_of_large_events_is_read_a_page_at_a_time() {
    let env = Env::new("ten-events");
    env.install(Helm::V4, "web", "basic", &[]);
    let message = "m".repeat(900 * 1024);
    let items: Vec<serde_json::Value> = (0..30)
        .map(|i| {
            serde_json::json!({"apiVersion": "v1", "kind": "Event",
                "metadata": {"name": format!("flood{i}.drift"), "namespace": env.ns,
                    "annotations": {"helm-drift.io/signature": "ab".repeat(32), "helm-drift.io/release": format!("{}/web", env.ns)}},
                "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "name": format!("x{i}"), "namespace": env.ns},
                "reason": "DriftDetected", "message": message, "type": "Warning",
                "source": {"component": "someone"}, "reportingComponent": "someone"})
        })
        .collect();
    let file = env.home().join("events.json");
    std::fs::write(&file, serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()).unwrap();
    env.kubectl(&["create", "-f", file.to_str().unwrap()]).success();
    let mark = env.audit_mark();
    let w = Watching::start(&env, &["--all", "--chunk-size", "0"]).ready();
    // Of helm-drift's reason, written by another component: not taken, each counted.
    assert_eq!(w.sample("helm_drift_rejected_inputs_total{input=\"event\"}"), Some(30.0), "{}", w.logs_text());
    let lists: Vec<String> = crate::support::by_drift(&env.audit_since(mark), "list")
        .iter()
        .filter_map(|e| e["requestURI"].as_str())
        .filter(|u| u.contains("/events?") && u.contains("DriftDetected"))
        .map(str::to_string)
        .collect();
    assert!(lists.iter().all(|u| u.contains("limit=25")), "{lists:#?}");
    assert!(lists.iter().any(|u| u.contains("continue=")), "read past the first page: {lists:#?}");
    w.stop();
}

/// Thousands of tiny records in one namespace would each bring their series: a namespace gets
/// at most --max-releases-per-namespace releases watched (the first by name), the rest counted
/// and named once.
#[test]
fn a_namespace_gets_at_most_its_share_of_releases() {
    let env = Env::new("ten-share");
    for name in ["ra", "rb", "rc", "rd", "re"] {
        let manifest = format!(
            "---\n# Source: f/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: b\n"
        );
        env.forge_record(name, &manifest, "");
    }
    let w = Watching::start(&env, &["--all", "--max-releases-per-namespace", "2", "--resync", "2s"]).ready();
    let before = w.checks();
    eventually("a resync", Duration::from_secs(30), || w.checks() >= before + 2.0);
    assert_eq!(w.sample("helm_drift_selected_releases"), Some(2.0), "{}", w.metrics());
    assert_eq!(w.sample("helm_drift_rejected_inputs_total{input=\"record\"}"), Some(3.0), "counted once");
    for (name, watched) in [("ra", true), ("rb", true), ("rc", false), ("re", false)] {
        assert_eq!(w.sample(&Watching::drifted(&env.ns, name)).is_some(), watched, "{name}\n{}", w.metrics());
    }
    let logs = w.logs_text();
    assert_eq!(logs.matches("more releases in the namespace").count(), 1, "said once\n{logs}");
    assert!(logs.contains("rc rd re"), "{logs}");
}

/// Many namespaces of releases would each bring their series: a watcher of every namespace keeps
/// at most --max-releases in all, each namespace an even share, so a crowded namespace is cut
/// and a small one keeps its release.
#[test]
fn all_namespaces_together_get_at_most_the_total_each_an_even_share() {
    let crowd = Env::new("ten-total-crowd");
    let small = Env::new("ten-total-small");
    let configmap = |name: &str| {
        format!(
            "---\n# Source: f/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: b\n"
        )
    };
    for name in ["ra", "rb", "rc", "rd", "re"] {
        crowd.forge_record(name, &configmap(name), "share: ten-total");
    }
    small.forge_record("sa", &configmap("sa"), "share: ten-total");
    let args = ["-A", "-l", "share=ten-total", "--max-releases", "3", "--resync", "2s"];
    let w = Watching::start(&crowd, &args).ready();
    let before = w.checks();
    eventually("a resync", Duration::from_secs(30), || w.checks() >= before + 2.0);
    assert_eq!(w.sample("helm_drift_selected_releases"), Some(3.0), "{}", w.metrics());
    let watched = [(&crowd.ns, "ra", true), (&crowd.ns, "rb", true), (&crowd.ns, "rc", false), (&small.ns, "sa", true)];
    for (ns, name, watched) in watched {
        assert_eq!(w.sample(&Watching::drifted(ns, name)).is_some(), watched, "{ns}/{name}\n{}", w.metrics());
    }
    let logs = w.logs_text();
    assert!(logs.contains("rc rd re") && logs.contains(&crowd.ns), "{logs}");
}

/// A receiver's URL with credentials: the watcher's log names its host, never the user, the
/// password or the path.
#[test]
fn receiver_credentials_never_reach_the_log() {
    let env = Env::new("ten-url");
    env.install(Helm::V4, "web", "basic", &[]);
    let url = format!("http://bot:s3cret@{}/T0/hook-token", crate::support::REFUSED);
    let w = Watching::start(&env, &["web", "--notify", &url]).ready();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    eventually("the failed notification logged", Duration::from_secs(60), || w.logs_text().contains("127.0.0.1:1/…"));
    let logs = w.logs_text();
    assert!(!logs.contains("s3cret") && !logs.contains("bot:") && !logs.contains("hook-token"), "{logs}");
}

/// The ClusterRoleBinding a tenant who may write Secrets in `ns` would ask a person to create:
/// `ns`'s default ServiceAccount made cluster-admin.
fn intruder_manifest(ns: &str) -> String {
    format!(
        "---\n# Source: intruder/templates/crb.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: intruder-{ns}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n  - kind: ServiceAccount\n    name: default\n    namespace: {ns}\n---\n# Source: intruder/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: intruder-config\ndata:\n  a: b\n"
    )
}

/// A person's `repair` is not the tenant's hands: a forged record in T that lists a
/// ClusterRoleBinding making T's default ServiceAccount cluster-admin is reported with the
/// objects outside T named (text and JSON), and `repair` (dry run or not, in place or through
/// `helm upgrade` of the chart it stores) refuses it, naming --trust-namespace, and writes
/// nothing; as a ServiceAccount of T, `--only` repairs what lies in T; trusting T lifts the
/// refusal.
#[test]
fn a_persons_repair_does_not_write_outside_the_records_namespace_on_its_word() {
    let env = Env::new("ten-person");
    let ns = env.ns.clone();
    let manifest = intruder_manifest(&ns);
    let crb_template = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: intruder-{{ .Release.Namespace }}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n  - kind: ServiceAccount\n    name: default\n    namespace: {{ .Release.Namespace }}\n";
    let template = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(crb_template)
    };
    let mut json = record("intruder", &ns, 1, &manifest);
    json["chart"] = serde_json::json!({
        "metadata": {"apiVersion": "v2", "name": "intruder", "version": "1.0.0"},
        "templates": [{"name": "templates/crb.yaml", "data": template}],
    });
    env.forge_record_json("intruder", &json, "scan: \"yes\"");
    let crb = format!("clusterrolebinding/intruder-{ns}");

    let out = env.drift(&["check", "intruder"]).code(2);
    out.stdout_has(&format!("outside the release's namespace: ClusterRoleBinding intruder-{ns} (cluster-scoped)"));
    out.stdout_has(&format!("--trust-namespace {ns}"));
    let json = env.drift(&["check", "intruder", "-o", "json"]).code(2).stdout();
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let objects = doc["releases"][0]["objects"].as_array().unwrap();
    let outside = |kind: &str| objects.iter().find(|o| o["kind"] == kind).unwrap()["outsideReleaseNamespace"].clone();
    assert_eq!(outside("ClusterRoleBinding"), true, "{json}");
    assert_eq!(outside("ConfigMap"), false, "{json}");

    for args in [vec!["repair", "intruder", "--dry-run"], vec!["repair", "intruder"]] {
        let out = env.drift_untrusted(&args).code(1);
        out.stdout_has(&format!("namespace {ns} is not trusted")).stdout_has(&format!("--trust-namespace {ns}"));
    }
    assert!(!exists(&env, &[&crb]), "the binding was created on the record's word");
    assert!(!exists(&env, &["configmap", "intruder-config"]), "a refused repair applies nothing");

    let bin = env.helm_bin(Helm::V4);
    let upgrade = |args: &[&str]| env.drift_untrusted(args).env("HELM_BIN", &bin).code(1);
    let out = upgrade(&["repair", "intruder", "--upgrade", "--dry-run"]);
    out.stderr_has("not repaired through helm upgrade").stderr_has("nothing was run");
    let out = upgrade(&["repair", "intruder", "--upgrade"]);
    out.stderr_has(&format!("--trust-namespace {ns}"));
    assert!(!exists(&env, &[&crb]), "the upgrade ran the record's chart");

    // As a ServiceAccount of the record's namespace, the rest of the release is repaired; the
    // binding is refused (outside the namespace), still drift, and the exit code says so.
    env.kubectl(&["create", "serviceaccount", "fixer"]).success();
    let subject = format!("--serviceaccount={ns}:fixer");
    env.kubectl(&["create", "rolebinding", "fixer-edit", "--clusterrole=edit", &subject]).success();
    env.wait_until_allowed(&format!("system:serviceaccount:{ns}:fixer"), "create", "configmaps", false);
    let as_fixer = ["repair", "intruder", "--repair-service-account", "fixer"];
    env.drift_untrusted(&as_fixer).code(1).stdout_has("is a cluster-scoped object");
    assert!(!exists(&env, &["configmap", "intruder-config"]), "a refused repair applies nothing");
    let only = [&as_fixer[..], &["--only", "ConfigMap/intruder-config"]].concat();
    env.drift_untrusted(&only).code(2).stdout_has("applied");
    assert!(exists(&env, &["configmap", "intruder-config"]));
    assert!(!exists(&env, &[&crb]));

    // Trusted, the refusal is lifted (validated by the server, not applied: a dry run).
    let out = env.drift_untrusted(&["repair", "intruder", "--dry-run", "--trust-namespace", &ns]).code(2);
    assert!(!out.stdout().contains("is cluster-scoped"), "{}", out.dump());
    let out = env.drift(&["check", "intruder", "--trust-namespace", &ns]).code(2);
    assert!(!out.stdout().contains("outside the release's namespace"), "{}", out.dump());
    assert!(!exists(&env, &[&crb]));
}

helm_matrix! {
    /// A real release's cluster-scoped objects: a person's repair of a deleted ClusterRole is
    /// refused with the flag named, and nothing else is applied; with --trust-namespace it
    /// repairs both, and the release is in sync.
    fn a_persons_repair_of_cluster_scoped_objects_needs_trust(helm: Helm) {
        let env = Env::new(&format!("ten-own-{}", helm.tag()));
        let ns = env.ns.clone();
        env.install(helm, "app", "repairable", &[]);
        let role = format!("clusterrole/{ns}-app-reader");
        env.kubectl(&["delete", &role]).success();
        env.kubectl(&["delete", "configmap", "app-config"]).success();
        env.drift(&["check", "app"]).code(2).stdout_has(&format!("ClusterRole {ns}-app-reader (cluster-scoped)"));
        env.drift_untrusted(&["repair", "app"]).code(1).stdout_has(&format!("--trust-namespace {ns}"));
        assert!(!exists(&env, &["configmap", "app-config"]), "nothing is applied when a step is refused");
        env.drift_untrusted(&["repair", "app", "--trust-namespace", &ns]).success();
        assert!(exists(&env, &[&role]) && exists(&env, &["configmap", "app-config"]));
        env.drift(&["check", "app"]).success();
    }
}

/// An Event in `default` (where anyone who may create Events there writes) about a
/// cluster-scoped object of a release in another namespace, shaped as helm-drift's: it seeds
/// nothing, so the watcher never announces that drift as resolved (it did: a `DriftResolved`
/// Event and a notification about a drift nobody reported).
#[test]
fn an_event_in_default_speaks_for_no_release_of_another_namespace() {
    let env = Env::new("ten-forged-event");
    let ns = env.ns.clone();
    env.install(Helm::V4, "app", "repairable", &["--labels", "forged-event=yes"]);
    let role = format!("{ns}-app-reader");
    let forged = serde_json::json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{role}.drift-{}", "ab".repeat(8)), "namespace": "default",
            "annotations": {"helm-drift.io/signature": "ab".repeat(32), "helm-drift.io/release": format!("{ns}/app")}},
        "involvedObject": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": role},
        "reason": "DriftDetected", "message": "forged", "type": "Warning",
        "source": {"component": "helm-drift"}, "reportingComponent": "helm-drift"});
    let file = env.home().join("forged-event.json");
    std::fs::write(&file, forged.to_string()).unwrap();
    env.kubectl(&["apply", "-n", "default", "-f", file.to_str().unwrap()]).success();
    let hook = crate::watching::Receiver::start();
    // Every namespace: the Events of `default` are read at start.
    let w = Watching::start(&env, &["-A", "-l", "forged-event=yes", "--notify", &hook.url]).ready();
    // A real drift after it: notifications go out in order, so a resolution sent at the first
    // check would have arrived before this one.
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"edited"}}"#);
    eventually("the real drift notified", Duration::from_secs(30), || hook.count("DriftDetected") == 1);
    assert_eq!(hook.count("DriftResolved"), 0, "{:?}", hook.bodies());
    let resolved =
        env.kubectl(&["get", "events", "-n", "default", "--field-selector", "reason=DriftResolved", "-o", "name"]);
    assert!(!resolved.success().stdout().contains(&role), "a DriftResolved Event for the forged drift");
    w.stop();
}

//! One trust decision for every command (issue 91): a person's repair never lends the person's
//! rights to whoever wrote the record, a labels-only decoy does not silence a trusted record, a
//! claim on another namespace learns nothing of what exists there, and wiped evidence is a
//! finding. Each reproduction runs as the tenant would (`--as`), against releases the real Helm
//! 3 and 4 installed.

use crate::support::{Env, Helm};
use crate::tenancy::plant_as;
use serde_json::Value;

/// The JSON of revision `revision` of `release`'s record in `env`'s namespace, decoded as a
/// tenant who may read Secrets there would.
pub(crate) fn read_record(env: &Env, release: &str, revision: u32) -> Value {
    use base64::Engine;
    use std::io::Read;
    let secret = format!("secret/sh.helm.release.v1.{release}.v{revision}");
    let data = env.kubectl(&["get", &secret, "-o", "jsonpath={.data.release}"]).success().stdout();
    let b64 = base64::engine::general_purpose::STANDARD;
    let helm_text = b64.decode(data.trim()).unwrap();
    let gz = b64.decode(helm_text).unwrap();
    let mut json = String::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut json).unwrap();
    serde_json::from_str(&json).unwrap()
}

/// A user who holds the built-in `edit` role in `env`'s namespace and nothing else.
fn tenant(env: &Env, name: &str) -> String {
    let user = format!("{name}-{}", env.ns);
    env.kubectl(&["create", "rolebinding", &format!("{name}-edit"), "--clusterrole=edit", "--user", &user]).success();
    env.wait_until_allowed(&user, "create", "secrets", false);
    user
}

fn exists(env: &Env, what: &str) -> bool {
    env.kubectl(&["get", what]).output().out.status.success()
}

helm_matrix! {
    /// Issue 91, case 1: the operator's release `base` (a ConfigMap and a ResourceQuota) in T;
    /// the tenant, who may edit T but not create a RoleBinding or raise a quota, writes revision
    /// 2 of its record: the quota raised and a RoleBinding making it admin of T. A person's
    /// repair, with no trust, writes nothing (in place, dry run, `--only`), and says on whose
    /// rights it would write; as a ServiceAccount of T (`--repair-service-account`) the API
    /// server refuses what T's own identity may not do, and nothing is applied. Trusting T
    /// (`HELM_DRIFT_TRUST_NAMESPACE`) is the operator's word, and repairs.
    fn a_persons_repair_lends_no_rights_to_the_records_writer(helm: Helm) {
        let env = Env::new(&format!("trust-lend-{}", helm.tag()));
        let ns = env.ns.clone();
        env.install(helm, "base", "fenced", &[]);
        env.drift_untrusted(&["check", "base"]).success();
        let user = tenant(&env, "tenant");
        let forbidden = env.kubectl(&["create", "rolebinding", "mine", "--clusterrole=admin", "--user", &user, "--as", &user]);
        assert!(!forbidden.output().out.status.success(), "the tenant may not bind admin itself");

        // The tenant's revision 2: what it may not write itself, asked of whoever repairs.
        let mut forged = read_record(&env, "base", 1);
        let binding = format!(
            "\n---\n# Source: fenced/templates/rb.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: tenant-admin\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: admin\nsubjects:\n  - kind: User\n    name: {user}\n    apiGroup: rbac.authorization.k8s.io\n"
        );
        let manifest = forged["manifest"].as_str().unwrap().replace("pods: \"10\"", "pods: \"1000\"") + &binding;
        assert!(manifest.contains("pods: \"1000\""), "{manifest}");
        forged["manifest"] = Value::String(manifest);
        forged["version"] = serde_json::json!(2);
        plant_as(&env, Some(&user), "base", 2, forged, "forged: \"yes\"");
        env.drift_untrusted(&["check", "base"]).code(2).stdout_has("revision 2");

        let untouched = |env: &Env| {
            assert!(!exists(env, "rolebinding/tenant-admin"), "the tenant's RoleBinding was created");
            assert_eq!(env.get("resourcequota", "base-pods", "{.spec.hard.pods}"), "10", "the quota was raised");
        };
        for args in [vec!["repair", "base"], vec!["repair", "base", "--dry-run"], vec!["repair", "base", "--only", "RoleBinding/tenant-admin"]] {
            let out = env.drift_untrusted(&args).code(1);
            out.stdout_has(&format!("namespace {ns} is not trusted")).stdout_has(&format!("--trust-namespace {ns}"));
            out.stdout_has("writes with nobody's rights: nothing is written");
            untouched(&env);
        }
        let json = env.drift_untrusted(&["repair", "base", "-o", "json"]).code(1).stdout();
        let doc: Value = serde_json::from_str(&json).unwrap();
        let steps = doc["repair"]["steps"].as_array().cloned().unwrap_or_default();
        assert!(!steps.is_empty() && steps.iter().all(|s| s["status"] == "refused"), "{json}");
        assert!(steps.iter().all(|s| s["writes_with"].as_str().unwrap().starts_with("nobody's rights")), "{json}");

        // As T's own identity: the server decides, and it may do no more than the tenant.
        env.kubectl(&["create", "serviceaccount", "deployer"]).success();
        let subject = format!("--serviceaccount={ns}:deployer");
        env.kubectl(&["create", "rolebinding", "deployer-edit", "--clusterrole=edit", &subject]).success();
        env.wait_until_allowed(&format!("system:serviceaccount:{ns}:deployer"), "create", "configmaps", false);
        let out = env.drift_untrusted(&["repair", "base", "--repair-service-account", "deployer"]).code(1);
        out.stdout_has(&format!("writes with the rights of ServiceAccount {ns}/deployer (impersonated)"));
        out.stdout_has("refused by the server dry-run");
        untouched(&env);

        // The operator's own release, repaired on the operator's own word once trusted.
        env.kubectl(&["delete", "secret", "sh.helm.release.v1.base.v2"]).success();
        env.kubectl(&["delete", "configmap", "base-settings"]).success();
        env.drift_untrusted(&["repair", "base"]).code(1);
        assert!(!exists(&env, "configmap/base-settings"));
        let out = env.drift_untrusted(&["repair", "base"]).env(crate::support::TRUST_ENV, &ns).success();
        out.stdout_has("writes with your own rights");
        assert!(exists(&env, "configmap/base-settings"));
        env.drift_untrusted(&["check", "base"]).success();
    }
}

helm_matrix! {
    /// Issue 91, case 2: the platform's HelmRelease in S installs `g` into V (its record in S,
    /// trusted: `--trust-namespace S`), and `g`'s Deployment is scaled by hand. The tenant, who
    /// may write in V only, cannot silence that: neither a Secret carrying only Helm's labels
    /// (no record in it) nor a decodable record of `g` of its own in V vetoes the trusted
    /// record; the drift is reported and counted. Untrusted (the HelmRelease's word only), V's
    /// own record wins, and the conflict is loud: an error of the scan, named.
    fn a_decoy_does_not_silence_a_trusted_record_stored_apart(helm: Helm) {
        use crate::flux_layout::{helm_release, move_record, origin_values};
        let env = Env::new(&format!("trust-decoy-{}", helm.tag()));
        let (v, s) = (env.ns.clone(), format!("{}-flux", env.ns));
        env.kubectl(&["create", "namespace", &s]).success();
        let select = format!("decoy={}", helm.tag());
        env.install(helm, "g", "origin", &["-f", &origin_values(&env, &s, "g"), "--labels", &select]);
        move_record(&env, "sh.helm.release.v1.g.v1", &s);
        helm_release(&env, &s, "g", "g", &v, false);
        env.kubectl(&["scale", "deployment", "g-web", "--replicas=3"]).success();
        let user = tenant(&env, "tenant");
        let scan = |trust: bool, code: i32| {
            let mut args = vec!["check", "-A", "-l", select.as_str()];
            if trust {
                args.extend(["--trust-namespace", s.as_str()]);
            }
            env.drift_untrusted(&args).code(code)
        };
        let drift = format!("changed      Deployment {v}/g-web");
        scan(true, 2).stdout_has(&drift);

        // A Secret with Helm's labels and nothing in it.
        let decoy = format!(
            "apiVersion: v1\nkind: Secret\ntype: helm.sh/release.v1\nmetadata:\n  name: decoy\n  labels: {{owner: helm, name: g, status: deployed, version: \"1\", decoy: {}}}\n",
            helm.tag()
        );
        let file = env.home().join("decoy.yaml");
        std::fs::write(&file, decoy).unwrap();
        env.kubectl(&["apply", "-f", file.to_str().unwrap(), "--as", &user]).success();
        scan(true, 2).stdout_has(&drift).stdout_has(&format!("g: refused [namespace {v}]"));
        env.kubectl(&["delete", "secret", "decoy"]).success();

        // A record of g of V's own that decodes: what the tenant puts in it is in sync.
        let own = crate::tenancy::record("g", &v, 1, "");
        plant_as(&env, Some(&user), "g", 1, own, &format!("decoy: {}", helm.tag()));
        let out = scan(true, 2);
        out.stdout_has(&drift);
        assert!(!out.stdout().contains("conflicting claim"), "a trusted record is never vetoed\n{}", out.dump());
        // Untrusted, the HelmRelease's word yields to V's own record, loudly.
        scan(false, 1).stdout_has(&format!("g: error: a conflicting claim [namespace {s}]")).stderr_has("a conflicting claim");
    }
}

helm_matrix! {
    /// Issue 91, case 3: a tenant with `edit` in P writes a suspended HelmRelease installing `r`
    /// into W and a record of `r` listing ConfigMaps `present` and `absent` of W. The watcher
    /// (`watch -A`) tells P nothing of either: no Event, no drifted object in its metrics; the
    /// tenant's own check says the same of both. What exists outside the claim is not told.
    fn a_claim_on_another_namespace_is_no_existence_oracle(helm: Helm) {
        use crate::flux_layout::{FLUX_EDIT, forge_as, helm_release_as};
        use crate::watching::{Watching, events};
        let tag = helm.tag();
        let (p, w) = (Env::new(&format!("trust-oracle-p-{tag}")), Env::new(&format!("trust-oracle-w-{tag}")));
        w.kubectl(&["create", "configmap", "present", "--from-literal=a=b"]).success();
        // A release of W's own, so that a watch of W's objects is running.
        w.install(helm, "own", "basic", &["--labels", &format!("oracle={tag}")]);
        p.serve_crd("helmrelease-crd", &crate::flux_layout::helm_release_crd());
        p.apply_yaml("flux-edit", FLUX_EDIT);
        let user = tenant(&p, "tenant");
        p.wait_until_allowed(&user, "patch", "helmreleases.helm.toolkit.fluxcd.io", false);
        let cm = |name: &str| format!("---\n# Source: r/templates/{name}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {}\ndata:\n  a: c\n", w.ns);
        let manifest = cm("present") + &cm("absent");
        forge_as(&p, &user, "r", 1, &w.ns, &manifest, &format!("oracle: {tag}"));
        helm_release_as(&p, &user, "r", "r", &w.ns);

        let select = format!("oracle={tag}");
        let watching = Watching::start(&p, &["-A", "-l", &select, "--resync", "2s"]).ready();
        let series = Watching::drifted(&p.ns, "r");
        crate::support::eventually_or(
            "r judged",
            std::time::Duration::from_secs(30),
            || watching.sample(&series).is_some(),
            || watching.logs_text(),
        );
        let before = watching.checks();
        crate::support::eventually("two more checks", std::time::Duration::from_secs(30), || watching.checks() >= before + 2.0);
        assert_eq!(watching.sample(&series), Some(0.0), "{}", watching.metrics());
        for env in [&p, &w] {
            assert!(events(env, "DriftDetected").is_empty(), "an Event told of W's objects");
        }
        watching.stop();
        // The tenant's own check of it: the same words for both.
        let out = p.drift_untrusted(&["check", "r"]).env("HELM_KUBEASUSER", &user).output().stdout();
        let line = |name: &str| out.lines().find(|l| l.contains(&format!("ConfigMap {}/{name}", w.ns))).map(|l| l.replace(name, "X"));
        assert_eq!(line("present"), line("absent"), "{out}");
    }
}

helm_matrix! {
    /// Issue 91, item 6: a chart that keeps its password through `lookup` (else `randAlphaNum`)
    /// rendered for a record of an untrusted namespace, without `lookup`: the Secret it renders
    /// is not predictable, said as such, and no drift (exit 0 on an untouched release); trusted,
    /// `lookup` answers and it renders as recorded.
    fn a_render_without_lookup_is_no_prediction(helm: Helm) {
        let env = Env::new(&format!("trust-lookup-{}", helm.tag()));
        let ns = env.ns.clone();
        env.install(helm, "k", "kept", &[]);
        let bin = env.helm_bin(helm);
        let out = env.drift_untrusted(&["check", "k", "--rerender"]).env("HELM_BIN", &bin).code(0);
        out.stdout_has("not predictable without the namespace's trust: kept/templates/password.yaml");
        out.stdout_has("a helm upgrade with the same values would change nothing");
        let json = env.drift_untrusted(&["check", "k", "--rerender", "-o", "json"]).env("HELM_BIN", &bin).code(0).stdout();
        let doc: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["releases"][0]["rerender"]["unpredictable"], serde_json::json!(["kept/templates/password.yaml"]), "{json}");
        let trusted = env.drift_untrusted(&["check", "k", "--rerender", "--trust-namespace", &ns]).env("HELM_BIN", &bin).code(0);
        assert!(!trusted.stdout().contains("not predictable"), "{}", trusted.dump());
        // The same for `plan` of the stored values (not trusted: lookup answers nothing there).
        let chart = crate::support::chart_path("kept");
        let plan = |more: &[&str]| {
            let args = [&["plan", "k", chart.to_str().unwrap(), "--reuse-values"][..], more].concat();
            env.drift_untrusted(&args).env("HELM_BIN", &bin).code(0)
        };
        plan(&[]).stdout_has("not predictable: rendered by a template that calls lookup").stdout_has("changes nothing");
        let json = plan(&["-o", "json"]).stdout();
        let doc: Value = serde_json::from_str(&json).unwrap();
        let secret = doc["objects"].as_array().unwrap().iter().find(|o| o["kind"] == "Secret").cloned().unwrap();
        assert_eq!((&secret["change"], &secret["unpredictable"]), (&"update".into(), &true.into()), "{json}");
        let trusted = plan(&["--trust-namespace", &ns]);
        assert!(!trusted.stdout().contains("not predictable"), "{}", trusted.dump());
        // A change the chart would make is still one: the ConfigMap edited by hand.
        env.merge_patch("configmap", "k-settings", r#"{"data":{"greeting":"edited"}}"#);
        env.drift_untrusted(&["check", "k", "--rerender"]).env("HELM_BIN", &bin).code(2).stdout_has("ConfigMap");
    }
}

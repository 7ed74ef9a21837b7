//! Flux's layout: a HelmRelease in one namespace (`flux-system`, a team's config namespace)
//! installing into another (`spec.targetNamespace`) leaves the record in its own namespace, the
//! record's `namespace` naming the target. Such a record is taken when the operator trusts where
//! it is stored, or when a HelmRelease there installs it (its spec; its status is its editors'
//! word too, so it proves nothing); in the target it judges and writes only the objects that
//! carry that HelmRelease's origin labels (helm-controller's, which only the target's writers
//! can put there), creates nothing there without trust, and never speaks over the target's own
//! record of the release. A record that no one vouches for is refused, and a scan that did not
//! name it is not an error for it.

use crate::support::{Env, Helm, eventually_or};
use crate::watching::{Watching, events};
use std::time::Duration;

/// Moves Secret `name` of the env's namespace to `to`, as Flux stores a HelmRelease's record in
/// the HelmRelease's namespace.
pub(crate) fn move_record(env: &Env, name: &str, to: &str) {
    let json = env.kubectl(&["get", "secret", name, "-o", "json"]).success().stdout();
    let mut secret: serde_json::Value = serde_json::from_str(&json).unwrap();
    let meta = secret["metadata"].as_object_mut().unwrap();
    for server in ["resourceVersion", "uid", "creationTimestamp", "managedFields"] {
        meta.remove(server);
    }
    meta.insert("namespace".into(), to.into());
    let file = env.home().join(format!("{name}.json"));
    std::fs::write(&file, secret.to_string()).unwrap();
    env.kubectl(&["-n", to, "create", "-f", file.to_str().unwrap()]).success();
    env.kubectl(&["delete", "secret", name]).success();
}

/// A Flux kind, as far as helm-drift reads it (served with a status subresource, any content).
pub(crate) fn flux_crd(group: &str, version: &str, kind: &str, plural: &str) -> String {
    let singular = kind.to_lowercase();
    format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
spec:
  group: {group}
  names: {{kind: {kind}, listKind: {kind}List, plural: {plural}, singular: {singular}}}
  scope: Namespaced
  versions:
    - name: {version}
      served: true
      storage: true
      subresources: {{status: {{}}}}
      schema:
        openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
"
    )
}

/// Flux's HelmRelease kind ([`flux_crd`]).
pub(crate) fn helm_release_crd() -> String {
    flux_crd("helm.toolkit.fluxcd.io", "v2", "HelmRelease", "helmreleases")
}

/// A HelmRelease `name` in `ns` installing release `release` into `target`; with `reconciled`,
/// the status helm-controller writes (through the status subresource).
pub(crate) fn helm_release(env: &Env, ns: &str, name: &str, release: &str, target: &str, reconciled: bool) {
    env.serve_crd("helmrelease-crd", &helm_release_crd());
    let hr = format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  releaseName: {release}\n  targetNamespace: {target}\n  chart: {{spec: {{chart: basic}}}}\n"
    );
    let file = env.home().join(format!("hr-{ns}-{name}.yaml"));
    std::fs::write(&file, hr).unwrap();
    env.kubectl(&["-n", ns, "apply", "-f", file.to_str().unwrap()]).success();
    if reconciled {
        let status = serde_json::json!({"status": {"storageNamespace": ns,
            "history": [{"name": release, "namespace": target, "version": 1, "status": "deployed"}]}});
        env.kubectl(&[
            "-n",
            ns,
            "patch",
            "helmrelease",
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            &status.to_string(),
        ])
        .success();
    }
}

/// A values file giving every object of the `origin` chart the origin labels of HelmRelease
/// `ns/name`, as helm-controller's post-renderer sets them.
pub(crate) fn origin_values(env: &Env, ns: &str, name: &str) -> String {
    let file = env.home().join(format!("origin-{ns}-{name}.yaml"));
    let values = format!("origin:\n  helm.toolkit.fluxcd.io/name: {name}\n  helm.toolkit.fluxcd.io/namespace: {ns}\n");
    std::fs::write(&file, values).unwrap();
    file.to_str().unwrap().to_string()
}

helm_matrix! {
    /// A release installed into T whose record is stored in S (Flux's default layout), its
    /// objects labelled as helm-controller labels them: refused until someone vouches for it
    /// (named in a check of it, not counted in a scan of S), taken with --trust-namespace S or
    /// once a HelmRelease of S installs it there (its spec alone: a status adds nothing). In T it
    /// judges and repairs, with the person's rights, what carries the HelmRelease's origin
    /// labels; an object there without them is named, never judged or written; what T does not
    /// hold is reported, and created again only with --trust-namespace S.
    fn a_record_stored_with_its_helmrelease_speaks_for_what_its_origin_labels_mark(helm: Helm) {
        let env = Env::new(&format!("flux-layout-{}", helm.tag()));
        let (t, s) = (env.ns.clone(), format!("{}-flux", env.ns));
        env.kubectl(&["create", "namespace", &s]).success();
        env.install(helm, "web", "origin", &["-f", &origin_values(&env, &s, "web")]);
        move_record(&env, "sh.helm.release.v1.web.v1", &s);
        let in_s = |args: &[&str], code: i32| env.drift(args).env("HELM_NAMESPACE", &s).code(code);

        // No one vouches: refused, with what would take it.
        in_s(&["check", "web"], 1)
            .stderr_has(&format!("the record says namespace \"{t}\", but its storage object says \"{s}\""))
            .stderr_has(&format!("--trust-namespace {s} trusts its writers"));
        in_s(&["check", "--all"], 0)
            .stdout_has(&format!("web: refused [namespace {s}] (see stderr)"))
            .stderr_has("Refused (not counted in the exit code)");
        let json = in_s(&["check", "--all", "-o", "json"], 0).stdout();
        assert!(json.contains("\"verdict\": \"refused\""), "{json}");
        // A reader who may read the records but not list HelmReleases is told so.
        env.kubectl(&["-n", &s, "create", "role", "records", "--verb=get,list", "--resource=secrets"]).success();
        env.kubectl(&["-n", &s, "create", "rolebinding", "records", "--role=records", "--user=records-reader"]).success();
        crate::support::eventually("the reader's RBAC", Duration::from_secs(30), || {
            let can = ["-n", &s, "auth", "can-i", "list", "secrets", "--as", "records-reader"];
            env.kubectl(&can).output().stdout().trim() == "yes"
        });
        env.drift(&["check", "web"])
            .env("HELM_NAMESPACE", &s)
            .env("HELM_KUBEASUSER", "records-reader")
            .code(1)
            .stderr_has(&format!("the HelmReleases of namespace {s}, which could say so, could not be read"));

        // Trusted, or named by a HelmRelease of S whose spec installs it there.
        in_s(&["check", "web", "--trust-namespace", &s], 0)
            .stdout_has(&format!("web: in sync (3 objects) [namespace {t}, stored in {s}: --trust-namespace {s}"));
        helm_release(&env, &s, "web", "web", &t, false);
        in_s(&["check", "web"], 0).stdout_has(&format!("[namespace {t}, stored in {s}: HelmRelease {s}/web installs it"));
        let json = in_s(&["check", "web", "-o", "json"], 0).stdout();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["releases"][0]["storageNamespace"], s.as_str(), "{json}");
        assert!(!json.contains("excluded"), "every object carries the origin labels: {json}");

        // Drift in T is found. A person's repair writes nothing with the person's rights on the
        // word of S, which they do not trust; as a ServiceAccount of S (which T let write there)
        // it repairs what T labelled.
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
        in_s(&["check", "web"], 2).stdout_has(&format!("changed      ConfigMap {t}/web-config"));
        env.drift_untrusted(&["repair", "web"]).env("HELM_NAMESPACE", &s).code(1).stdout_has(&format!("namespace {s} is not trusted"));
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "edited", "written on S's word");
        env.kubectl(&["-n", &s, "create", "serviceaccount", "repairer"]).success();
        let repairer = format!("--serviceaccount={s}:repairer");
        env.kubectl(&["create", "rolebinding", "repairer-edit", "--clusterrole=edit", &repairer]).success();
        env.wait_until_allowed(&format!("system:serviceaccount:{s}:repairer"), "patch", "configmaps", false);
        let repair_as = |code: i32| {
            env.drift_untrusted(&["repair", "web", "--repair-service-account", "repairer"]).env("HELM_NAMESPACE", &s).code(code)
        };
        repair_as(0).stdout_has(&format!("writes with the rights of ServiceAccount {s}/repairer"));
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "hello");

        // T takes the object back (its origin label removed): named, not judged, not written.
        env.kubectl(&["label", "configmap", "web-config", "helm.toolkit.fluxcd.io/name-"]).success();
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"mine"}}"#);
        in_s(&["check", "web"], 0)
            .stdout_has("web: in sync (2 objects), 1 outside the claim (not judged)")
            .stdout_has(&format!("ConfigMap {t}/web-config"))
            .stdout_has("outside the claim")
            .stdout_has(&format!("HelmRelease {s}/web"));
        repair_as(0);
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "mine", "written outside the claim");
        in_s(&["check", "web", "--trust-namespace", &s], 2).stdout_has(&format!("ConfigMap {t}/web-config"));

        // What T does not hold is reported; created again only on the operator's trust (the
        // rest is repaired all the same).
        env.kubectl(&["delete", "service", "web-web"]).success();
        env.kubectl(&["set", "image", "deployment/web-web", "web=registry.example/web:hand"]).success();
        in_s(&["check", "web"], 2).stdout_has(&format!("Service {t}/web-web"));
        repair_as(2)
            .stdout_has(&format!("skipped Service {t}/web-web: not repaired"))
            .stdout_has(&format!("--trust-namespace {s} creates it"));
        assert!(!env.kubectl(&["get", "service", "web-web"]).output().out.status.success(), "created untrusted");
        let image = env.get("deployment", "web-web", "{.spec.template.spec.containers[0].image}");
        assert_eq!(image, "registry.example/web:1.0", "the rest repaired");
        env.drift_untrusted(&["repair", "web", "--trust-namespace", &s]).env("HELM_NAMESPACE", &s).code(0);
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "hello");
        in_s(&["check", "web"], 0);

        // A status that names another release or target adds nothing and takes nothing away.
        let forged = serde_json::json!({"status": {"storageNamespace": "elsewhere",
            "history": [{"name": "other", "namespace": "kube-system", "version": 9}]}});
        env.kubectl(&["-n", &s, "patch", "helmrelease", "web", "--subresource=status", "--type=merge", "-p", &forged.to_string()])
            .success();
        in_s(&["check", "web"], 0).stdout_has(&format!("HelmRelease {s}/web installs it"));

        // The HelmRelease names a ServiceAccount: the person's repair writes as it (as Flux's
        // lockdown does), only where it may.
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
        env.kubectl(&["-n", &s, "create", "serviceaccount", "flux-writer"]).success();
        let sa = r#"{"spec":{"serviceAccountName":"flux-writer"}}"#;
        env.kubectl(&["-n", &s, "patch", "helmrelease", "web", "--type=merge", "-p", sa]).success();
        let untrusted = |code: i32| env.drift_untrusted(&["repair", "web"]).env("HELM_NAMESPACE", &s).code(code);
        untrusted(1).stdout_has(&format!("system:serviceaccount:{s}:flux-writer"));
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "edited", "written beyond the account");
        let subject = format!("--serviceaccount={s}:flux-writer");
        env.kubectl(&["create", "rolebinding", "flux-writer-edit", "--clusterrole=edit", &subject]).success();
        untrusted(0).stdout_has(&format!("writes with the rights of ServiceAccount {s}/flux-writer"));
        assert_ne!(env.get("configmap", "web-config", "{.data.greeting}"), "edited");
    }
}

/// Flux's `flux-edit` role as Flux installs it (aggregated into `edit` and `admin`): `*` on
/// helm.toolkit.fluxcd.io, the status subresource included.
pub(crate) const FLUX_EDIT: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: helm-drift-test-flux-edit
  labels:
    rbac.authorization.k8s.io/aggregate-to-edit: \"true\"
    rbac.authorization.k8s.io/aggregate-to-admin: \"true\"
rules:
  - apiGroups: [helm.toolkit.fluxcd.io]
    resources: [\"*\"]
    verbs: [create, delete, deletecollection, get, list, patch, update, watch]
";

/// Helm's record of revision `revision` of `release` claiming namespace `claimed`, written into
/// `t` by `user` (labels: Helm's and `labels`).
pub(crate) fn forge_as(t: &Env, user: &str, release: &str, revision: u32, claimed: &str, manifest: &str, labels: &str) {
    let json = crate::tenancy::record(release, claimed, revision, manifest);
    crate::tenancy::plant_as(t, Some(user), release, revision, json, labels);
}

/// A suspended HelmRelease `name` in `t` installing `release` into `target`, with a status naming
/// it there as the newest release, all written by `user` (who holds `edit` in `t` only).
pub(crate) fn helm_release_as(t: &Env, user: &str, name: &str, release: &str, target: &str) {
    t.apply_yaml("helmrelease-crd", &helm_release_crd());
    t.kubectl(&["wait", "--for", "condition=established", "crd/helmreleases.helm.toolkit.fluxcd.io"]).success();
    let hr = format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: {name}, namespace: {}}}\nspec:\n  suspend: true\n  releaseName: {release}\n  targetNamespace: {target}\n  chart: {{spec: {{chart: basic}}}}\n",
        t.ns
    );
    let file = t.home().join(format!("hr-{name}.yaml"));
    std::fs::write(&file, hr).unwrap();
    t.kubectl(&["apply", "-f", file.to_str().unwrap(), "--as", user]).success();
    let status = serde_json::json!({"status": {"storageNamespace": t.ns,
        "history": [{"name": release, "namespace": target, "version": 7, "status": "deployed"}]}});
    let patch = ["patch", "helmrelease", name, "--subresource=status", "--type=merge", "-p", &status.to_string()];
    t.kubectl(&[&patch[..], &["--as", user]].concat()).success();
}

helm_matrix! {
    /// The tenant of issue 81: `edit` in T only, it writes a record of `web` claiming V (an
    /// image of its own), a suspended HelmRelease installing `web` into V and a status naming it
    /// there. V holds its own record of `web`, which wins: the watcher (healing, as V's `healer`
    /// account by the advice of the security page) writes nothing, `check -A` names the
    /// conflicting claim and counts it as an error, and a check of the claim says why it is
    /// refused. A claim on
    /// a release V does not record (`web2`, its manifest naming V's Deployment) is taken on the
    /// HelmRelease's word and judges nothing: V's objects do not carry its origin labels.
    fn a_tenants_helmrelease_and_its_status_give_it_nothing_in_another_namespace(helm: Helm) {
        let tag = helm.tag();
        let (v, t) = (Env::new(&format!("flux-victim-{tag}")), Env::new(&format!("flux-tenant-{tag}")));
        let select = format!("fluxten={tag}");
        v.install(helm, "web", "basic", &["--labels", &select]);
        v.kubectl(&["create", "serviceaccount", "healer"]).success();
        let healer = format!("--serviceaccount={}:healer", v.ns);
        v.kubectl(&["create", "rolebinding", "healer-edit", "--clusterrole=edit", &healer]).success();
        let tenant = format!("tenant-{tag}");
        t.apply_yaml("helmrelease-crd", &helm_release_crd());
        t.kubectl(&["wait", "--for", "condition=established", "crd/helmreleases.helm.toolkit.fluxcd.io"]).success();
        t.apply_yaml("flux-edit", FLUX_EDIT);
        t.kubectl(&["create", "rolebinding", "tenant-edit", "--clusterrole=edit", &format!("--user={tenant}")]).success();
        t.wait_until_allowed(&tenant, "patch", "helmreleases.helm.toolkit.fluxcd.io", false);

        let evil = format!(
            "---\n# Source: basic/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-web\n  namespace: {}\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web-web\n  template:\n    metadata:\n      labels:\n        app: web-web\n    spec:\n      containers:\n        - name: web\n          image: evil.example/miner:1\n",
            v.ns
        );
        let labels = format!("fluxten: {tag}, helm-drift.io/repair: \"true\"");
        forge_as(&t, &tenant, "web", 7, &v.ns, &evil, &labels);
        helm_release_as(&t, &tenant, "web", "web", &v.ns);
        let image = || v.get("deployment", "web-web", "{.spec.template.spec.containers[0].image}");

        // The watcher, healing as V's healer: the claim is refused, nothing is written.
        // Its own namespace (the operator's: V here) is where the conflict is said.
        let args = [
            "-A", "-l", &select, "--repair", "--repair-service-account", "healer", "--repair-cooldown", "1s",
            "--resync", "2s", "--pause-namespace", &v.ns,
        ];
        let w = Watching::start(&v, &args).ready();
        eventually_or(
            "the claim refused",
            Duration::from_secs(30),
            || w.logs_text().contains("a conflicting claim"),
            || w.logs_text(),
        );
        eventually_or(
            "the conflict said where the operator looks",
            Duration::from_secs(30),
            || !events(&v, "ReleaseClaimConflict").is_empty(),
            || w.logs_text(),
        );
        let said = events(&v, "ReleaseClaimConflict");
        assert_eq!(said.len(), 1, "once per revision: {said:?}");
        assert_eq!(said[0]["involvedObject"]["kind"], "Pod", "{said:?}");
        assert!(said[0]["message"].as_str().unwrap().contains(&format!("release {}/web, revision 7", t.ns)), "{said:?}");
        assert!(events(&t, "ReleaseClaimConflict").is_empty(), "the claimant is told nothing");
        let before = w.checks();
        eventually_or("two more checks", Duration::from_secs(30), || w.checks() >= before + 2.0, || w.logs_text());
        assert_eq!(image(), "registry.example/web:1.0", "{}", w.logs_text());
        assert!(events(&t, "DriftDetected").is_empty() && events(&v, "DriftDetected").is_empty());
        w.stop();

        // The operator's gate names the claim and counts it (a conflict is loud: issue 91); a
        // check of it says why.
        v.drift(&["check", "-A", "-l", &select])
            .code(1)
            .stdout_has("web: in sync")
            .stdout_has(&format!("web: error: a conflicting claim [namespace {}]", t.ns))
            .stderr_has("a conflicting claim")
            .stderr_has(&format!("namespace \"{}\" holds its own record of the release", v.ns));
        t.drift(&["check", "web"]).code(1).stderr_has("a conflicting claim");
        t.drift_untrusted(&["repair", "web"]).code(1).stderr_has("a conflicting claim");
        assert_eq!(image(), "registry.example/web:1.0");

        // A release V does not record: taken on the HelmRelease's word, judging nothing of V's.
        forge_as(&t, &tenant, "web2", 7, &v.ns, &evil, &labels);
        helm_release_as(&t, &tenant, "web2", "web2", &v.ns);
        t.drift(&["check", "web2"])
            .code(0)
            .stdout_has(&format!("Deployment {}/web-web", v.ns))
            .stdout_has("outside the claim");
        t.drift_untrusted(&["repair", "web2"]).code(0);
        let w = Watching::start(&v, &args).ready();
        let series = Watching::drifted(&t.ns, "web2");
        eventually_or("web2 judged", Duration::from_secs(30), || w.sample(&series).is_some(), || w.logs_text());
        let before = w.checks();
        eventually_or("two more checks", Duration::from_secs(30), || w.checks() >= before + 2.0, || w.logs_text());
        assert_eq!(w.sample(&series), Some(0.0), "{}", w.metrics());
        assert_eq!(image(), "registry.example/web:1.0", "{}", w.logs_text());
        w.stop();
    }
}

/// The watcher heals a release whose record its HelmRelease stores apart, keyed where the record
/// is, and only as an identity of the storage namespace: refused while no one trusts it and
/// nothing names an account there (`--repair-service-account` is an account of S, never of T);
/// then as the ServiceAccount the HelmRelease names (as Flux's lockdown writes): refused whole
/// while that account may not make every step, healed once it may; an object T took back (its
/// origin labels removed) is never written, and what T does not hold is not created.
#[test]
fn the_watcher_heals_a_record_stored_apart_as_its_helmrelease_writes() {
    let env = Env::new("flux-layout-watch");
    let (t, s) = (env.ns.clone(), format!("{}-flux", env.ns));
    env.kubectl(&["create", "namespace", &s]).success();
    let origin = origin_values(&env, &s, "web");
    env.install(Helm::V3, "web", "origin", &["--labels", "helm-drift.io/repair=true", "-f", &origin]);
    move_record(&env, "sh.helm.release.v1.web.v1", &s);
    helm_release(&env, &s, "web", "web", &t, true);
    let greeting = || env.get("configmap", "web-config", "{.data.greeting}");
    let watch = |extra: &[&str]| {
        let args = [&["--all", "--repair", "--repair-cooldown", "1s", "--resync", "2s"][..], extra].concat();
        Watching::start_with(&env, &args, &[("HELM_NAMESPACE", s.as_str())]).ready()
    };
    let refused_as = |w: &Watching, who: &str| {
        w.log_lines().iter().any(|l| {
            l["msg"] == "repair" && l["result"] == "refused" && l["reason"].as_str().is_some_and(|r| r.contains(who))
        })
    };

    // Vouched for, not trusted, no ServiceAccount: found, not written.
    let w = watch(&[]);
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    // Its Events go on its record in S, and carry nothing of T's values.
    let in_s = || {
        let out = env.kubectl(&["-n", &s, "get", "events", "-o", "json"]).success().stdout();
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["items"].as_array().cloned().unwrap_or_default()
    };
    let refused = || {
        in_s().iter().any(|e| {
            e["reason"] == "DriftRepairRefused"
                && e["involvedObject"]["name"] == "sh.helm.release.v1.web.v1"
                && e["message"].as_str().unwrap_or("").contains(&s)
        })
    };
    eventually_or("the repair refused, on the record in S", Duration::from_secs(30), refused, || w.logs_text());
    assert!(events(&env, "DriftDetected").is_empty() && events(&env, "DriftRepairRefused").is_empty(), "in T");
    let said = in_s().iter().map(|e| e["message"].to_string()).collect::<Vec<_>>().join("\n");
    assert!(said.contains("web-config") && !said.contains("edited"), "T's value published in S: {said}");
    assert_eq!(greeting(), "edited");
    w.stop();

    // --repair-service-account names an account of S, never T's (T's `healer` may edit T).
    env.kubectl(&["create", "serviceaccount", "healer"]).success();
    let t_healer = format!("--serviceaccount={t}:healer");
    env.kubectl(&["create", "rolebinding", "healer-edit", "--clusterrole=edit", &t_healer]).success();
    let w = watch(&["--repair-service-account", "healer"]);
    let as_s = format!("system:serviceaccount:{s}:healer");
    eventually_or("refused as S's healer", Duration::from_secs(30), || refused_as(&w, &as_s), || w.logs_text());
    assert_eq!(greeting(), "edited", "written as T's account");
    w.stop();

    // The HelmRelease names a ServiceAccount of its namespace that may write ConfigMaps in the
    // target, nothing else: the repair (which changes the Deployment too) is refused as that
    // account, whole, nothing half-changed.
    env.kubectl(&["-n", &s, "create", "serviceaccount", "flux-writer"]).success();
    let sa = r#"{"spec":{"serviceAccountName":"flux-writer"}}"#;
    env.kubectl(&["-n", &s, "patch", "helmrelease", "web", "--type=merge", "-p", sa]).success();
    env.kubectl(&[
        "create",
        "role",
        "configmaps",
        "--verb=get,list,watch,patch,update,create",
        "--resource=configmaps",
    ])
    .success();
    let subject = format!("--serviceaccount={s}:flux-writer");
    env.kubectl(&["create", "rolebinding", "flux-writer", "--role=configmaps", &subject]).success();
    env.kubectl(&["set", "image", "deployment/web-web", "web=registry.example/web:hand"]).success();
    let w = watch(&[]);
    let as_writer = format!("system:serviceaccount:{s}:flux-writer");
    eventually_or(
        "refused to the ServiceAccount",
        Duration::from_secs(30),
        || refused_as(&w, &as_writer),
        || w.logs_text(),
    );
    assert_eq!(greeting(), "edited", "half a repair was made");
    w.stop();

    // Once the account may edit the target namespace, the release heals as it; then what T
    // does not hold is not created.
    env.kubectl(&["create", "rolebinding", "flux-writer-edit", "--clusterrole=edit", &subject]).success();
    let w = watch(&[]);
    eventually_or(
        "healed as the HelmRelease's ServiceAccount",
        Duration::from_secs(30),
        || greeting() == "hello",
        || w.logs_text(),
    );
    env.kubectl(&["delete", "service", "web-web"]).success();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"again"}}"#);
    // The missing Service carries no origin labels: to the watcher it is outside the claim, as
    // it would be if it existed (nothing it publishes tells which), so it is not created.
    eventually_or("the rest healed all the same", Duration::from_secs(30), || greeting() == "hello", || w.logs_text());
    assert!(!env.kubectl(&["get", "service", "web-web"]).output().out.status.success(), "created untrusted");
    // Its Events are on the record in S, not in T (the healed ConfigMap's too).
    assert!(events(&env, "DriftRepaired").is_empty(), "an Event written into T");
    w.stop();
}

/// The Flux stand-in storing the record apart itself (Helm 4's SDK, the storage namespace given
/// to its action configuration apart from the release's, and helm-controller's origin labels on
/// every object, as helm-controller does for `spec.targetNamespace`): the record is in S and
/// names T; vouched for by its HelmRelease, with no trust flag, a check of S judges the objects
/// in T, a hand edit there is repaired with the person's rights once they trust S, healed by a watcher writing
/// as an account of S, and the controller's next upgrade, stored apart again, lands after each.
#[test]
fn a_record_the_flux_sdk_stores_apart_is_judged_repaired_watched_and_upgraded_again() {
    let env = Env::new("flux-layout-sdk");
    let (t, s) = (env.ns.clone(), format!("{}-flux", env.ns));
    env.kubectl(&["create", "namespace", &s]).success();
    let chart = crate::support::chart_path("basic");
    let flux = |verb: &str, values: &str| {
        let file = env.home().join(format!("{verb}-values.yaml"));
        std::fs::write(&file, values).unwrap();
        let apart =
            ["--storage-namespace", &s, "--namespace", &t, "--origin", "web", verb, "web", chart.to_str().unwrap()];
        env.helm_tool("helm-controller", &[&apart[..], &["-f", file.to_str().unwrap()]].concat()).success();
    };
    flux("install", "greeting: first\n");
    let record = |ns: &str| env.kubectl(&["-n", ns, "get", "secrets", "-l", "owner=helm,name=web", "-o", "name"]);
    assert_eq!(record(&s).success().stdout().trim(), "secret/sh.helm.release.v1.web.v1", "stored in S");
    assert_eq!(record(&t).success().stdout().trim(), "", "nothing stored in T");
    assert_eq!(env.get("configmap", "web-config", "{.metadata.labels.helm\\.toolkit\\.fluxcd\\.io/namespace}"), s);
    let in_s = |args: &[&str], code: i32| env.drift(args).env("HELM_NAMESPACE", &s).code(code);
    in_s(&["check", "web"], 1).stderr_has(&format!("the record says namespace \"{t}\""));
    helm_release(&env, &s, "web", "web", &t, true);
    in_s(&["check", "web"], 0)
        .stdout_has(&format!("[namespace {t}, stored in {s}: HelmRelease {s}/web installs it"))
        .stdout_has("in sync");
    let writer = in_s(&["check", "web", "-o", "json"], 0).stdout();
    assert!(writer.contains("\"manager\": \"helm-controller\""), "{writer}");

    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    env.kubectl(&["scale", "deployment", "web-web", "--replicas=5"]).success();
    in_s(&["check", "web"], 2).stdout_has(&format!("changed      ConfigMap {t}/web-config"));
    // A person repairs it with their own rights once they trust S, where the records are.
    in_s(&["repair", "web"], 1).stdout_has(&format!("namespace {s} is not trusted"));
    in_s(&["repair", "web", "--trust-namespace", &s], 0);
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "first");
    in_s(&["check", "web"], 0);
    flux("upgrade", "greeting: second\n");
    assert_eq!(record(&s).success().stdout().lines().count(), 2, "revision 2 stored in S");
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "second");
    in_s(&["check", "web"], 0).stdout_has("revision 2 deployed");

    // Watched and healed with no trust flag, as S's own account (which may edit T).
    env.kubectl(&["-n", &s, "label", "secret", "sh.helm.release.v1.web.v2", "helm-drift.io/repair=true"]).success();
    env.kubectl(&["-n", &s, "create", "serviceaccount", "healer"]).success();
    let healer = format!("--serviceaccount={s}:healer");
    env.kubectl(&["create", "rolebinding", "s-healer-edit", "--clusterrole=edit", &healer]).success();
    let args = ["--all", "--repair", "--repair-service-account", "healer", "--repair-cooldown", "1s", "--resync", "2s"];
    let w = Watching::start_with(&env, &args, &[("HELM_NAMESPACE", s.as_str())]).ready();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    let greeting = || env.get("configmap", "web-config", "{.data.greeting}");
    eventually_or("healed as S's healer", Duration::from_secs(30), || greeting() == "second", || w.logs_text());
    w.stop();
    flux("upgrade", "greeting: third\n");
    assert_eq!(greeting(), "third");
    in_s(&["check", "web"], 0).stdout_has("revision 3 deployed");
}

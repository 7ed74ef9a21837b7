//! Flux's layout: a HelmRelease in one namespace (`flux-system`, a team's config namespace)
//! installing into another (`spec.targetNamespace`) leaves the record in its own namespace, the
//! record's `namespace` naming the target. Such a record is taken when the operator trusts where
//! it is stored, or when a HelmRelease there, reconciled by helm-controller (its status names
//! the release), installs it; repair writes on its word only where it is trusted. A record that
//! no one vouches for is refused, and a scan that did not name it is not an error for it.

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

/// Flux's HelmRelease kind, as far as helm-drift reads it (served with a status subresource).
pub(crate) const HELMRELEASE_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: helmreleases.helm.toolkit.fluxcd.io
spec:
  group: helm.toolkit.fluxcd.io
  names: {kind: HelmRelease, listKind: HelmReleaseList, plural: helmreleases, singular: helmrelease}
  scope: Namespaced
  versions:
    - name: v2
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
";

/// A HelmRelease `name` in `ns` installing release `release` into `target`; with `reconciled`,
/// the status helm-controller writes (through the status subresource).
pub(crate) fn helm_release(env: &Env, ns: &str, name: &str, release: &str, target: &str, reconciled: bool) {
    env.apply_yaml("helmrelease-crd", HELMRELEASE_CRD);
    env.kubectl(&["wait", "--for", "condition=established", "crd/helmreleases.helm.toolkit.fluxcd.io"]).success();
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

helm_matrix! {
    /// A release installed into T whose record is stored in S (Flux's default layout): refused
    /// until someone vouches for it (named in a check of it, not counted in a scan of S), taken
    /// with --trust-namespace S or once a reconciled HelmRelease of S installs it there; its
    /// drift in T is found; repair writes in T only when S is trusted, and then puts it back.
    fn a_record_stored_with_its_helmrelease_speaks_for_the_target_namespace(helm: Helm) {
        let env = Env::new(&format!("flux-layout-{}", helm.tag()));
        let (t, s) = (env.ns.clone(), format!("{}-flux", env.ns));
        env.kubectl(&["create", "namespace", &s]).success();
        env.install(helm, "web", "basic", &[]);
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

        // Trusted, or vouched for by a reconciled HelmRelease of S (its spec alone is not enough).
        in_s(&["check", "web", "--trust-namespace", &s], 0)
            .stdout_has(&format!("web: in sync (4 objects) [namespace {t}, stored in {s}: --trust-namespace {s}"));
        helm_release(&env, &s, "web", "web", &t, false);
        in_s(&["check", "web"], 1).stderr_has("the record says namespace");
        helm_release(&env, &s, "web", "web", &t, true);
        in_s(&["check", "web"], 0).stdout_has(&format!("[namespace {t}, stored in {s}: HelmRelease {s}/web installs it"));
        let json = in_s(&["check", "web", "-o", "json"], 0).stdout();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["releases"][0]["storageNamespace"], s.as_str(), "{json}");

        // Drift in T is found; repair writes there on the record's word only when S is trusted.
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
        in_s(&["check", "web"], 2).stdout_has(&format!("changed      ConfigMap {t}/web-config"));
        in_s(&["repair", "web"], 1).stdout_has(&format!("--trust-namespace {s}"));
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "edited", "repaired untrusted");
        in_s(&["repair", "web", "--trust-namespace", &s], 0);
        assert_ne!(env.get("configmap", "web-config", "{.data.greeting}"), "edited");
        in_s(&["check", "web"], 0);

        // The HelmRelease names a ServiceAccount: the person's repair writes as it (as Flux's
        // lockdown does), only where it may.
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
        env.kubectl(&["-n", &s, "create", "serviceaccount", "flux-writer"]).success();
        let sa = r#"{"spec":{"serviceAccountName":"flux-writer"}}"#;
        env.kubectl(&["-n", &s, "patch", "helmrelease", "web", "--type=merge", "-p", sa]).success();
        in_s(&["repair", "web"], 1).stdout_has(&format!("system:serviceaccount:{s}:flux-writer"));
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "edited", "written beyond the account");
        let subject = format!("--serviceaccount={s}:flux-writer");
        env.kubectl(&["create", "rolebinding", "flux-writer-edit", "--clusterrole=edit", &subject]).success();
        in_s(&["repair", "web"], 0);
        assert_ne!(env.get("configmap", "web-config", "{.data.greeting}"), "edited");
    }
}

/// A tenant's record in its own namespace claiming another (with a HelmRelease of its own that
/// says so, but that no controller reconciled) is refused: it speaks only for where it is stored.
#[test]
fn a_tenants_record_claiming_another_namespace_is_refused() {
    let env = Env::new("flux-layout-tenant");
    let victim = format!("{}-victim", env.ns);
    env.kubectl(&["create", "namespace", &victim]).success();
    let manifest = format!(
        "---\n# Source: x/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: stolen\n  namespace: {victim}\ndata:\n  a: b\n"
    );
    let json = serde_json::json!({"name": "x", "namespace": victim, "version": 1,
        "info": {"status": "deployed"}, "chart": {"metadata": {"name": "x", "version": "1.0.0"}}, "manifest": manifest});
    env.forge_record_json("x", &json, "");
    helm_release(&env, &env.ns, "x", "x", &victim, false);
    env.drift(&["check", "x"]).code(1).stderr_has(&format!("the record says namespace \"{victim}\""));
    env.drift(&["repair", "x"]).code(1);
    env.drift(&["check", "--all"]).code(0).stdout_has(&format!("x: refused [namespace {}]", env.ns));
    let out = env.kubectl(&["-n", &victim, "get", "configmap", "stolen"]).output();
    assert!(!out.out.status.success(), "the tenant's record wrote in another namespace");
}

/// The watcher heals a release whose record its HelmRelease stores apart, keyed where the record
/// is: refused while no one trusts the storage namespace and the HelmRelease names no
/// ServiceAccount; then written as the ServiceAccount the HelmRelease names (as Flux's lockdown
/// writes): refused whole while that account may not make every step, healed once it may.
#[test]
fn the_watcher_heals_a_record_stored_apart_as_its_helmrelease_writes() {
    let env = Env::new("flux-layout-watch");
    let (t, s) = (env.ns.clone(), format!("{}-flux", env.ns));
    env.kubectl(&["create", "namespace", &s]).success();
    env.install(Helm::V3, "web", "basic", &["--labels", "helm-drift.io/repair=true"]);
    move_record(&env, "sh.helm.release.v1.web.v1", &s);
    helm_release(&env, &s, "web", "web", &t, true);
    let greeting = || env.get("configmap", "web-config", "{.data.greeting}");
    let watch = |extra: &[&str]| {
        let args = [&["--all", "--repair", "--repair-cooldown", "1s", "--resync", "2s"][..], extra].concat();
        Watching::start_with(&env, &args, &[("HELM_NAMESPACE", s.as_str())]).ready()
    };

    // Vouched for, not trusted, no ServiceAccount: found, not written.
    let w = watch(&[]);
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    let refused =
        || events(&env, "DriftRepairRefused").iter().any(|e| e["message"].as_str().unwrap_or("").contains(&s));
    eventually_or("the repair refused, naming the storage namespace", Duration::from_secs(30), refused, || {
        w.logs_text()
    });
    assert_eq!(greeting(), "edited");
    w.stop();

    // The HelmRelease names a ServiceAccount of its namespace that may write ConfigMaps in the
    // target, nothing else: the repair (which re-creates the deleted Service too) is refused as
    // that account, whole, nothing half-changed.
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
    env.kubectl(&["delete", "service", "web-web"]).success();
    let w = watch(&[]);
    let forbidden = || {
        w.log_lines().iter().any(|l| {
            l["msg"] == "repair"
                && l["result"] == "refused"
                && l["reason"].as_str().is_some_and(|r| r.contains(&format!("system:serviceaccount:{s}:flux-writer")))
        })
    };
    eventually_or("the repair refused to the ServiceAccount", Duration::from_secs(30), forbidden, || w.logs_text());
    assert_eq!(greeting(), "edited", "half a repair was made");
    w.stop();

    // Once the account may edit the target namespace, the release heals as it.
    env.kubectl(&["create", "rolebinding", "flux-writer-edit", "--clusterrole=edit", &subject]).success();
    let w = watch(&[]);
    eventually_or(
        "healed as the HelmRelease's ServiceAccount",
        Duration::from_secs(30),
        || greeting() == "hello",
        || w.logs_text(),
    );
    eventually_or(
        "the Service re-created",
        Duration::from_secs(30),
        || env.kubectl(&["get", "service", "web-web"]).output().out.status.success(),
        || w.logs_text(),
    );
    w.stop();
}

/// The Flux stand-in storing the record apart itself (Helm 4's SDK, the storage namespace given
/// to its action configuration apart from the release's, as helm-controller does for
/// `spec.targetNamespace`): the record is in S and names T; vouched for by its HelmRelease, a
/// check of S judges the objects in T; a hand edit there is found and repaired (S trusted), and
/// the controller's next upgrade, stored apart again, lands after the repair.
#[test]
fn a_record_the_flux_sdk_stores_apart_is_judged_repaired_and_upgraded_again() {
    let env = Env::new("flux-layout-sdk");
    let (t, s) = (env.ns.clone(), format!("{}-flux", env.ns));
    env.kubectl(&["create", "namespace", &s]).success();
    let chart = crate::support::chart_path("basic");
    let flux = |verb: &str, values: &str| {
        let file = env.home().join(format!("{verb}-values.yaml"));
        std::fs::write(&file, values).unwrap();
        let apart = ["--storage-namespace", &s, "--namespace", &t, verb, "web", chart.to_str().unwrap()];
        env.helm_tool("helm-controller", &[&apart[..], &["-f", file.to_str().unwrap()]].concat()).success();
    };
    flux("install", "greeting: first\n");
    let record = |ns: &str| env.kubectl(&["-n", ns, "get", "secrets", "-l", "owner=helm,name=web", "-o", "name"]);
    assert_eq!(record(&s).success().stdout().trim(), "secret/sh.helm.release.v1.web.v1", "stored in S");
    assert_eq!(record(&t).success().stdout().trim(), "", "nothing stored in T");
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
    in_s(&["repair", "web", "--trust-namespace", &s], 0);
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "first");
    in_s(&["check", "web"], 0);
    flux("upgrade", "greeting: second\n");
    assert_eq!(record(&s).success().stdout().lines().count(), 2, "revision 2 stored in S");
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "second");
    in_s(&["check", "web"], 0).stdout_has("revision 2 deployed");
}

//! Releases installed by controllers built on Helm's SDK, through the stand-ins `scripts/tools.sh`
//! builds (tests/standins): `manager`, Cluster API's Helm add-on provider's Helm 3 SDK
//! install/upgrade (client-side apply), and `helm-controller`, Helm 4's command tree under Flux's
//! field manager (server-side apply as Flux does where the HelmRelease asks for it, and
//! client-side). helm-drift learns each release's writer from its objects, judges its fields as
//! Helm's, repairs and heals under its name, and plans its upgrade, so that the writer's own next
//! upgrade lands; a tenant's objects cannot make it write as the control plane or as itself, and
//! an operator's pin per namespace (`--helm-manager NS=NAME`) outweighs any name they borrow.

use crate::drift_engine::check_release_both;
use crate::plan::{planned, versions};
use crate::support::{Env, Helm, Run, chart_path, eventually};
use crate::watching::Watching;
use std::time::Duration;

/// A controller built on Helm's SDK, as its stand-in runs it.
#[derive(Clone, Copy, Debug)]
enum Writer {
    /// CAAPH: Helm 3 SDK, client-side apply, the field manager `manager`.
    Caaph,
    /// Flux's helm-controller on Helm 4, server-side apply.
    FluxServerSide,
    /// Flux's helm-controller on Helm 4, client-side apply (a HelmRelease that does not ask for
    /// server-side apply).
    FluxClientSide,
}

impl Writer {
    fn manager(self) -> &'static str {
        match self {
            Writer::Caaph => "manager",
            Writer::FluxServerSide | Writer::FluxClientSide => "helm-controller",
        }
    }

    /// The Helm whose SDK the writer is built on (`plan` renders with it).
    fn helm(self) -> Helm {
        match self {
            Writer::Caaph => Helm::V3,
            Writer::FluxServerSide | Writer::FluxClientSide => Helm::V4,
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Writer::Caaph => "caaph",
            Writer::FluxServerSide => "flux-ssa",
            Writer::FluxClientSide => "flux-csa",
        }
    }

    /// The writer's install of tests/charts/basic as `release`.
    fn install(self, env: &Env, release: &str) {
        let chart = chart_path("basic");
        let mut args = vec!["install", release, chart.to_str().unwrap()];
        match self {
            Writer::Caaph => {}
            Writer::FluxServerSide => args.push("--server-side=true"),
            Writer::FluxClientSide => args.push("--server-side=false"),
        }
        env.helm_tool(self.manager(), &args).success();
    }

    /// The writer's upgrade of `release` to tests/charts/basic with `values` (`--set` pairs), as
    /// it runs it: no forcing.
    fn upgrade(self, env: &Env, release: &str, values: &[&str]) -> Run {
        let chart = chart_path("basic");
        let mut args = vec!["upgrade", release, chart.to_str().unwrap()];
        for v in values {
            args.extend(["--set", v]);
        }
        env.helm_tool(self.manager(), &args)
    }
}

/// The writer `check -o json` used for `release`: its manager and how it was found.
fn writer_of(env: &Env, release: &str) -> (String, String) {
    let out = env.drift(&["check", release, "-o", "json"]).output();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap_or_else(|e| panic!("{e}: {}", out.dump()));
    let w = &doc["releases"][0]["writer"];
    (w["manager"].as_str().unwrap_or_default().to_string(), w["found"].as_str().unwrap_or_default().to_string())
}

/// Install by the writer → in sync in both engines, nothing taken over; hand edits → drift,
/// named; repair → in sync; `plan` of the writer's next upgrade → exactly what it then does; the
/// upgrade lands; in sync again.
fn keeps_its_release(writer: Writer) {
    let env = Env::new(&format!("writer-{}", writer.tag()));
    writer.install(&env, "web");
    let out = check_release_both(&env, "web", &[], 0);
    assert!(out.contains("web: in sync (4 objects)"), "{out}");
    assert!(!out.contains("taken over"), "the writer is not someone who took the release from Helm:\n{out}");
    assert_eq!(writer_of(&env, "web"), (writer.manager().to_string(), "learnt".to_string()));
    env.drift(&["check", "web", "-v"])
        .code(0)
        .stdout_has(&format!("writer: {} (owns the recorded fields of 4 of 4 objects)", writer.manager()));

    env.kubectl(&["scale", "deployment", "web-web", "--replicas=5"]).success();
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    let out = check_release_both(&env, "web", &[], 2);
    assert!(out.contains("web-config") && out.contains("data.greeting") && out.contains("spec.replicas"), "{out}");
    env.drift(&["repair", "web"]).code(0);
    check_release_both(&env, "web", &[], 0);
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "hello");
    assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "2");

    // `plan` of the writer's next upgrade, then that upgrade: they agree, and it lands.
    let values = ["greeting=planned", "replicas=3"];
    let chart = chart_path("basic");
    let mut args = vec!["plan", "web", chart.to_str().unwrap(), "-o", "json"];
    for v in &values {
        args.extend(["--set", v]);
    }
    let out = env.drift(&args).env("HELM_BIN", env.helm_bin(writer.helm())).code(2);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout()).expect("a JSON document");
    assert_eq!(doc["wouldFail"], false, "{doc:#}");
    assert_eq!(doc["writer"]["manager"], writer.manager(), "{doc:#}");
    let before = versions(&env);
    writer.upgrade(&env, "web", &values).success();
    let after = versions(&env);
    let changed: Vec<String> = after.keys().filter(|k| before.get(*k) != after.get(*k)).cloned().collect();
    assert_eq!(planned(&doc), changed, "{doc:#}");
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "planned");
    assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "3");
    let out = check_release_both(&env, "web", &[], 0);
    assert!(!out.contains("taken over"), "{out}");
}

#[test]
fn caaph_keeps_its_release() {
    keeps_its_release(Writer::Caaph);
}

#[test]
fn flux_server_side_keeps_its_release() {
    keeps_its_release(Writer::FluxServerSide);
}

#[test]
fn flux_client_side_keeps_its_release() {
    keeps_its_release(Writer::FluxClientSide);
}

/// The watcher heals a writer's release (opted in on its record) under the writer's name, and the
/// writer's next upgrade still lands.
fn healed_and_upgraded(writer: Writer) {
    let env = Env::new(&format!("writer-heal-{}", writer.tag()));
    writer.install(&env, "web");
    // CAAPH and Flux do not label the record: the operator opts the release in on it.
    env.kubectl(&["label", "secret", "-l", "owner=helm,name=web", "helm-drift.io/repair=true"]).success();
    let w =
        Watching::start(&env, &["--all", "--repair", "--repair-cooldown", "1s", "--trust-namespace", env.ns.as_str()])
            .ready();
    w.wait_for(&Watching::drifted(&env.ns, "web"), 0.0);
    env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
    let greeting = || env.get("configmap", "web-config", "{.data.greeting}");
    eventually("the edit undone", Duration::from_secs(30), || greeting() == "hello");
    w.wait_for("helm_drift_repairs_total{result=\"applied\"}", 1.0);
    drop(w);
    writer.upgrade(&env, "web", &["greeting=next"]).success();
    assert_eq!(greeting(), "next");
    env.drift(&["check", "web"]).code(0);
}

#[test]
fn caaph_release_healed_and_upgraded() {
    healed_and_upgraded(Writer::Caaph);
}

#[test]
fn flux_release_healed_and_upgraded() {
    healed_and_upgraded(Writer::FluxServerSide);
}

/// A tenant who may write the objects of its namespace forges their managedFields to name the
/// control plane, helm-drift's own managers or a person's tool as the owner of the recorded
/// fields: none is learnt as Helm's writer (the helm command's name is used, and said), and
/// `--helm-manager` refuses to be any of them.
#[test]
fn a_tenant_cannot_make_helm_drift_write_as_the_control_plane() {
    let env = Env::new("writer-hostile");
    env.install(Helm::V3, "web", "basic", &[]);
    for forged in ["kube-controller-manager", "helm-drift", "kubectl-edit", "system:serviceaccount:kube-system:x"] {
        let objects = [
            ("configmap", "web-config"),
            ("service", "web-web"),
            ("serviceaccount", "web-sa"),
            ("deployment", "web-web"),
        ];
        // The next revision, recorded after the forgery, changes nothing: the forged entries
        // stand as the owners of the recorded fields when it was applied.
        borrow_names(&env, Helm::V3, ("web", "basic"), &objects, forged);
        let (manager, found) = writer_of(&env, "web");
        assert_eq!((manager.as_str(), found.as_str()), ("helm", "default"), "{forged} learnt as Helm's writer");
        let out = env.drift(&["check", "web", "-v"]).output();
        let fields = env
            .kubectl(&["get", "configmap", "web-config", "-o", "jsonpath={.metadata.managedFields}"])
            .success()
            .stdout();
        assert!(
            out.stdout().contains(&format!(
                "writer: helm (the managers that own the recorded fields cannot be Helm's: {forged}"
            )),
            "{}\n{fields}",
            out.dump()
        );
        env.drift(&["check", "web", "--helm-manager", forged]).code(1).stderr_has(forged).stderr_has("--helm-manager");
    }
}

helm_matrix! {
    /// A name anyone who may write the objects can borrow decides nothing once the operator pins
    /// the writer of a namespace: with every recorded field's entry renamed `impostor` the writer
    /// is learnt as `impostor`, but `--helm-manager NAMESPACE=helm` gives it back to `helm` (a pin
    /// for another namespace does not), and a repair under the pin writes as `helm`.
    fn a_writer_pinned_for_a_namespace_is_never_learnt_from_borrowed_names(helm: Helm) {
        let env = Env::new(&format!("writer-pinned-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        let objects = [("configmap", "web-config"), ("service", "web-web"), ("serviceaccount", "web-sa"), ("deployment", "web-web")];
        borrow_names(&env, helm, ("web", "basic"), &objects, "impostor");
        assert_eq!(writer_of(&env, "web"), ("impostor".to_string(), "learnt".to_string()), "the hazard a pin closes");
        let pin = format!("{}=helm", env.ns);
        let pinned = |extra: &[&str]| {
            let out = env.drift(&[&["check", "web", "-o", "json"][..], extra].concat()).output();
            let doc: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap_or_else(|e| panic!("{e}: {}", out.dump()));
            let w = &doc["releases"][0]["writer"];
            (w["manager"].as_str().unwrap().to_string(), w["found"].as_str().unwrap().to_string())
        };
        assert_eq!(pinned(&["--helm-manager", &pin, "--helm-manager", "other=manager"]), ("helm".into(), "given".into()));
        assert_eq!(pinned(&["--helm-manager", "other=helm"]), ("impostor".into(), "learnt".into()));
        assert_eq!(pinned(&["--helm-manager", "manager", "--helm-manager", &pin]), ("helm".into(), "given".into()));
        let control_plane = format!("{}=kube-controller-manager", env.ns);
        env.drift(&["check", "web", "--helm-manager", &control_plane]).code(1).stderr_has(&control_plane);
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited"}}"#);
        env.drift(&["repair", "web", "--helm-manager", &pin]).code(0);
        let fields = env.kubectl(&["get", "configmap", "web-config", "-o", "json", "--show-managed-fields"]).success().stdout();
        let doc: serde_json::Value = serde_json::from_str(&fields).unwrap();
        let owners: Vec<&str> = doc["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["fieldsV1"].to_string().contains("f:greeting"))
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(owners, ["helm"], "the repaired field is written under the pinned name: {fields}");
    }
}

/// Renames every entry of `objects` but their status writes to `borrowed` (what anyone who may
/// write them can do), then lets Helm 3 record its next revision on them (Helm 4's server-side
/// upgrade would conflict, so its revision stays the one before).
fn borrow_names(env: &Env, helm: Helm, (release, chart): (&str, &str), objects: &[(&str, &str)], borrowed: &str) {
    for (kind, name) in objects {
        // Read and replaced again when a controller wrote the object in between (a conflict).
        eventually(&format!("{kind}/{name} replaced"), Duration::from_secs(30), || {
            let json = env.kubectl(&["get", kind, name, "-o", "json", "--show-managed-fields"]).success().stdout();
            let mut obj: serde_json::Value = serde_json::from_str(&json).unwrap();
            for entry in obj["metadata"]["managedFields"].as_array_mut().unwrap() {
                if entry.get("subresource").is_none() {
                    entry["manager"] = borrowed.into();
                }
            }
            let file = env.home().join(format!("{kind}.json"));
            std::fs::write(&file, obj.to_string()).unwrap();
            env.kubectl(&["replace", "-f", file.to_str().unwrap()]).output().out.status.success()
        });
    }
    if matches!(helm, Helm::V3) {
        env.install_again(helm, release, chart);
    }
}

helm_matrix! {
    /// A cluster-scoped object is not written under a writer learnt from names borrowed on the
    /// namespaced objects: with their entries renamed `impostor` (the writer then learnt), a hand
    /// edit of the release's ClusterRole is drift that repair leaves, saying why (exit 2), until
    /// the operator pins the writer.
    fn a_borrowed_name_writes_no_cluster_scoped_object(helm: Helm) {
        let env = Env::new(&format!("writer-scoped-{}", helm.tag()));
        env.install(helm, "app", "repairable", &[]);
        let objects = [("configmap", "app-config"), ("service", "app-web"), ("serviceaccount", "app-sa"), ("deployment", "app-web")];
        borrow_names(&env, helm, ("app", "repairable"), &objects, "impostor");
        assert_eq!(writer_of(&env, "app").0, "impostor");
        let role = format!("{}-app-reader", env.ns);
        let widened = r#"[{"op":"replace","path":"/rules/0/verbs","value":["get","list"]}]"#;
        env.kubectl(&["patch", "clusterrole", &role, "--type=json", "-p", widened]).success();
        // Trusted, so that only the writer stands in the way (a cluster-scoped object is written
        // only for a trusted namespace's record).
        let out = env.drift(&["repair", "app", "--trust-namespace", &env.ns]).code(2);
        assert!(out.dump().contains("pin the writer (--helm-manager)"), "{}", out.dump());
        assert_eq!(env.get("clusterrole", &role, "{.rules[0].verbs}"), r#"["get","list"]"#);
        env.drift(&["repair", "app", "--trust-namespace", &env.ns, "--helm-manager", "helm"]).code(0);
        assert_eq!(env.get("clusterrole", &role, "{.rules[0].verbs}"), r#"["get"]"#);
    }
}

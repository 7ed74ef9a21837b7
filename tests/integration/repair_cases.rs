//! Repair of every drift `check` reports, on Helm 3 (client-side apply) and Helm 4 (server-side
//! apply) releases of the `repairable` chart. Each case: check finds the drift, repair exits 0,
//! check is clean, `helm history` is unchanged, and then a normal `helm upgrade` of a changed
//! chart succeeds and lands: the proof that Helm still owns what it applies.

use crate::messages::clean;
use crate::support::{Env, Helm, chart_path};

/// `kubectl patch --type json` in the test's namespace.
fn json_patch(env: &Env, resource: &str, name: &str, ops: &str) {
    env.kubectl(&["patch", resource, name, "--type", "json", "-p", ops]).success();
}

fn history(env: &Env, helm: Helm) -> String {
    env.helm(helm, &["history", "app", "-o", "json"]).success().stdout()
}

/// Installs the chart, makes the drift, and checks that it is found.
fn drifted(helm: Helm, case: &str, edit: impl FnOnce(&Env)) -> Env {
    let env = Env::new(&format!("rc-{case}-{}", helm.tag()));
    env.install(helm, "app", "repairable", &[]);
    edit(&env);
    clean(&env.drift(&["check", "app"]).code(2));
    env
}

/// check → repair → check → upgrade, as the module says.
fn repaired(helm: Helm, case: &str, edit: impl FnOnce(&Env), repair: &[&str]) -> Env {
    let env = drifted(helm, case, edit);
    let before = history(&env, helm);
    let mut args = vec!["repair", "app"];
    args.extend_from_slice(repair);
    let out = env.drift(&args).code(0);
    clean(&out);
    out.stdout_has("after repair:\napp: in sync");
    assert!(!out.dump().contains("no Event recorded"), "every repaired object gets its Event\n{}", out.dump());
    env.drift(&["check", "app"]).code(0);
    assert_eq!(history(&env, helm), before, "same revision");
    upgrade_lands(&env, helm);
    env.drift(&["check", "app"]).code(0).stdout_has("revision 2 deployed");
    env
}

/// A normal `helm upgrade` with new values succeeds, and its changes are live.
fn upgrade_lands(env: &Env, helm: Helm) {
    let chart = chart_path("repairable");
    let set = ["--reuse-values", "--set", "replicas=3", "--set", "greeting=upgraded"];
    let mut args = vec!["upgrade", "app", chart.to_str().unwrap()];
    args.extend_from_slice(&set);
    let out = env.helm(helm, &args).output();
    assert!(out.out.status.success(), "helm upgrade after repair failed\n{}", out.dump());
    let get = |args: &[&str]| env.kubectl(args).success().stdout();
    assert_eq!(get(&["get", "deployment", "app-web", "-o", "jsonpath={.spec.replicas}"]), "3");
    assert_eq!(get(&["get", "configmap", "app-config", "-o", "jsonpath={.data.greeting}"]), "upgraded");
    let env_var = "jsonpath={.spec.template.spec.containers[0].env[?(@.name==\"GREETING\")].value}";
    assert_eq!(get(&["get", "deployment", "app-web", "-o", env_var]), "upgraded");
}

macro_rules! both_helms {
    ($($name:ident => $body:expr;)*) => {
        mod helm3 {
            use super::*;
            $(#[test] fn $name() { let _ = ($body)(Helm::V3); })*
        }
        mod helm4 {
            use super::*;
            $(#[test] fn $name() { let _ = ($body)(Helm::V4); })*
        }
    };
}

const DEPLOYMENT_PORT: &str =
    r#"[{"op":"replace","path":"/spec/template/spec/containers/0/ports/0/containerPort","value":9090}]"#;

both_helms! {
    changed_container_port => |helm| repaired(helm, "port", |env| json_patch(env, "deployment", "app-web", DEPLOYMENT_PORT), &[]);
    changed_service_port => |helm| repaired(helm, "svcport", |env| {
        json_patch(env, "service", "app-web", r#"[{"op":"replace","path":"/spec/ports/0/port","value":8081}]"#)
    }, &[]);
    renamed_container => |helm| repaired(helm, "rename", |env| {
        json_patch(env, "deployment", "app-web", r#"[{"op":"replace","path":"/spec/template/spec/containers/0/name","value":"web2"}]"#)
    }, &[]);
    renamed_env_var => |helm| repaired(helm, "envname", |env| {
        json_patch(env, "deployment", "app-web", r#"[{"op":"replace","path":"/spec/template/spec/containers/0/env/0/name","value":"SALUTATION"}]"#)
    }, &[]);
    edited_subject_of_an_atomic_list => |helm| {
        let env = repaired(helm, "subject", |env| {
            let binding = format!("{}-app-reader", env.ns);
            json_patch(env, "clusterrolebinding", &binding, r#"[{"op":"replace","path":"/subjects/0/name","value":"intruder"}]"#)
        }, &["--trust-namespace", "*"]);
        // A cluster-scoped object's Event is in `default`, where Kubernetes keeps them.
        let binding = format!("{}-app-reader", env.ns);
        let events = env.kubectl(&["get", "events", "-n", "default", "--field-selector", "reason=DriftRepaired", "-o", "json"]);
        let list: serde_json::Value = serde_json::from_str(&events.success().stdout()).unwrap();
        let names: Vec<&str> = list["items"].as_array().unwrap().iter().filter_map(|e| e["involvedObject"]["name"].as_str()).collect();
        assert!(names.contains(&binding.as_str()), "{names:?}");
    };
    edited_container_args => |helm| repaired(helm, "args", |env| {
        json_patch(env, "deployment", "app-web", r#"[{"op":"replace","path":"/spec/template/spec/containers/0/args/1","value":"--log=debug"}]"#)
    }, &[]);
    recreated_by_hand_without_helm_metadata => |helm| repaired(helm, "recreated", recreate_config_by_hand, &[]);
    several_drifts_in_one_object => |helm| repaired(helm, "several", several_edits, &["--remove-foreign"]);
    several_drifts_keeping_foreign_fields => several_keeping_foreign;
}

/// The ConfigMap deleted and created again with the same data but none of Helm's metadata.
fn recreate_config_by_hand(env: &Env) {
    let json = env.kubectl(&["get", "configmap", "app-config", "-o", "json"]).success().stdout();
    let mut cm: serde_json::Value = serde_json::from_str(&json).unwrap();
    let meta = cm["metadata"].as_object_mut().unwrap();
    for k in ["managedFields", "resourceVersion", "uid", "creationTimestamp", "annotations"] {
        meta.remove(k);
    }
    meta["labels"].as_object_mut().unwrap().remove("app.kubernetes.io/managed-by");
    let file = env.home().join("recreated.json");
    std::fs::write(&file, cm.to_string()).unwrap();
    env.kubectl(&["delete", "configmap", "app-config"]).success();
    env.kubectl(&["create", "-f", file.to_str().unwrap()]).success();
}

/// A changed field, a removed field and a field added outside Helm, in one Deployment.
fn several_edits(env: &Env) {
    env.kubectl(&["set", "image", "deployment/app-web", "web=registry.example/web:2.0"]).success();
    env.kubectl(&["label", "deployment", "app-web", "tier-"]).success();
    env.kubectl(&["set", "env", "deployment/app-web", "EXTRA=1"]).success();
}

/// Without `--remove-foreign`, the field added outside Helm stays and check still reports it;
/// so does repair's exit code (2: drift remains, as its last lines say); everything else is
/// repaired, and the next upgrade still works.
fn several_keeping_foreign(helm: Helm) {
    let env = drifted(helm, "keep", several_edits);
    let before = history(&env, helm);
    let out = env.drift(&["repair", "app"]).code(2);
    clean(&out);
    out.stdout_has("fields added outside Helm are kept (use --remove-foreign to remove them)");
    let after = env.drift(&["check", "app"]).code(2);
    after.stdout_has("fields added Deployment").stdout_has("env[name=EXTRA]");
    assert!(!after.stdout().contains("~ "), "every recorded field is back\n{}", after.dump());
    assert_eq!(history(&env, helm), before);
    upgrade_lands(&env, helm);
}

helm_matrix! {
    /// A repair the server refuses (an immutable field) changes nothing and says which field and
    /// why, in one line.
    fn an_immutable_field_changes_nothing(helm: Helm) {
        let env = drifted(helm, "immutable", |env| {
            env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"x"},"immutable":true}"#);
            json_patch(env, "deployment", "app-web", DEPLOYMENT_PORT);
        });
        // The generation (spec writes only: the Deployment controller keeps writing its status
        // after the edit) and the ConfigMap's resourceVersion (it has no generation).
        let version = |kind: &str, name: &str| {
            let field = if kind == "configmap" { "resourceVersion" } else { "generation" };
            env.kubectl(&["get", kind, name, "-o", &format!("jsonpath={{.metadata.{field}}}")]).success().stdout()
        };
        let before = (version("deployment", "app-web"), version("configmap", "app-config"));
        let out = env.drift(&["repair", "app"]).code(1);
        clean(&out);
        let refused: Vec<String> =
            out.stdout().lines().filter(|l| l.contains("refused by the server dry-run")).map(str::to_string).collect();
        assert_eq!(refused.len(), 1, "{}", out.dump());
        assert!(
            refused[0].contains("ConfigMap") && refused[0].contains("data: Forbidden: field is immutable"),
            "{refused:?}"
        );
        out.stdout_has("nothing was changed")
            .stdout_has("repair Deployment")
            .stdout_has(": not applied (another step was refused)");
        assert_eq!((version("deployment", "app-web"), version("configmap", "app-config")), before, "nothing changed");
    }
}

helm_matrix! {
    /// A value edited by hand and put back by hand: as recorded, but no longer Helm's. On a
    /// server-side applied release only an upgrade that changes the field conflicts: check shows it
    /// as owned elsewhere without counting it as drift (exit 0; 2 with `--strict`), repair gives the
    /// field back, and an upgrade with the same value lands; on a client-side applied one the upgrade
    /// overwrites it, and check says so with `-v` only.
    fn edited_and_reverted_by_hand(helm: Helm) {
        let env = Env::new(&format!("rc-reverted-{}", helm.tag()));
        env.install(helm, "app", "repairable", &[]);
        let edit_and_revert = || {
            env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"x"}}"#);
            env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"hello"}}"#);
        };
        edit_and_revert();
        if helm == Helm::V3 {
            let out = env.drift(&["check", "app", "-v"]).code(0);
            out.stdout_has("= data.greeting ignored (owned by kubectl-patch; the release is applied client-side, so the next helm upgrade overwrites it without a conflict)");
            upgrade_lands(&env, helm);
            return;
        }
        let out = env.drift(&["check", "app"]).code(0);
        clean(&out);
        out.stdout_has("app: in sync (6 objects; 1 object taken over)")
            .stdout_has("taken over   ConfigMap")
            .stdout_has("! data.greeting: owned by kubectl-patch, not by Helm (the value is the release's)")
            .stdout_has("a helm upgrade (server-side apply) that changes these fields will conflict, one that keeps their values will not");
        let out = env.drift(&["check", "app", "--strict"]).code(2);
        out.stdout_has("app: 1 of 6 objects drifted").stdout_has("taken over   ConfigMap");
        let json = env.drift(&["check", "app", "-o", "json"]).code(0).stdout();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["releases"][0]["counts"]["takenOver"], 1, "{json}");
        assert_eq!(doc["releases"][0]["counts"]["drifted"], 0, "{json}");
        assert!(json.contains("\"verdict\": \"taken-over\""), "{json}");
        // What check foretells: an upgrade that changes the field conflicts (and changes nothing).
        let chart = chart_path("repairable");
        let upgrade = ["upgrade", "app", chart.to_str().unwrap(), "--reuse-values", "--set", "greeting=upgraded"];
        let failed = env.helm(helm, &upgrade).output();
        assert!(!failed.out.status.success(), "{}", failed.dump());
        assert!(failed.stderr().contains("conflict with \"kubectl-patch\""), "{}", failed.dump());
        env.drift(&["repair", "app"]).code(0).stdout_has("take ownership back from: kubectl-patch");
        let out = env.drift(&["check", "app"]).code(0);
        assert!(!out.stdout().contains("taken over"), "{}", out.dump());
        // ...and one that keeps the value does not; Helm then shares the field, and an upgrade
        // that changes it still conflicts, so check still says so until repair.
        edit_and_revert();
        env.drift(&["check", "app"]).code(0).stdout_has("1 object taken over");
        env.helm(helm, &["upgrade", "app", chart.to_str().unwrap(), "--reuse-values"]).success();
        env.drift(&["check", "app"])
            .code(0)
            .stdout_has("! data.greeting: shared by Helm with kubectl-patch (the value is the release's)");
        let failed = env.helm(helm, &upgrade).output();
        assert!(failed.stderr().contains("conflict with \"kubectl-patch\""), "{}", failed.dump());
        env.drift(&["repair", "app"]).code(0).stdout_has("take ownership back from: kubectl-patch");
        upgrade_lands(&env, helm);
    }
}

//! Hook objects Helm keeps after their hooks ran (`--hooks`): a kept hook ConfigMap and a
//! `crd-install`-style (pre-install) hook CRD edited or deleted by hand are found in a section of
//! their own and put back by `repair --hooks` without running the hook (no new revision, the
//! objects patched in place); after an upgrade the pre-install CRD, which did not run again, is
//! compared as its install made it. Hooks Helm deletes (hook-succeeded) and tests that never
//! ran are not expected. A forged record of endless hooks is refused by name.

use crate::support::{Env, Helm, chart_path};
use serde_json::Value;

/// The names in a JSON report's `objects` or `hooks` of its first release.
fn names(report: &Value, section: &str) -> Vec<String> {
    let list = report["releases"][0][section].as_array().unwrap_or_else(|| panic!("no {section}: {report}"));
    list.iter().map(|o| o["name"].as_str().unwrap().to_string()).collect()
}

helm_matrix! {
    fn kept_hook_objects_are_checked_and_put_back_without_running_the_hook(helm: Helm) {
        let env = Env::new(&format!("hooks-{}", helm.tag()));
        let release = "web".to_string();
        env.install(helm, &release, "hooked", &[]);
        let (kept, crd) = (format!("{release}-hook"), format!("probes.{release}.{}.drift.test", env.ns));
        let report: Value =
            serde_json::from_str(&env.drift(&["check", &release, "--hooks", "-o", "json"]).success().stdout()).unwrap();
        assert_eq!(names(&report, "objects"), [format!("{release}-config")]);
        let mut hooks = names(&report, "hooks");
        hooks.sort();
        let mut both = [kept.clone(), crd.clone()];
        both.sort();
        assert_eq!(hooks, both, "{report}");
        let notes = report["releases"][0]["notes"].to_string();
        assert!(notes.contains("1 deleted by their delete policy") && notes.contains("1 never ran"), "{notes}");
        let uids = || (env.get("configmap", &kept, "{.metadata.uid}"), env.get("crd", &crd, "{.metadata.uid}"));
        let before = uids();

        env.merge_patch("configmap", &kept, r#"{"data":{"ran":"edited"}}"#);
        env.merge_patch("crd", &crd, r#"{"spec":{"names":{"shortNames":["edited"]}}}"#);
        env.drift(&["check", &release]).success();
        let out = if helm == Helm::V4 {
            crate::support::example("example-hooks-check", &env, &["check", &release, "--hooks"], "apps")
        } else {
            env.drift(&["check", &release, "--hooks"]).code(2)
        };
        let text = out.stdout();
        let heading = text.find("hooks (objects Helm keeps after their hook ran):").expect(&text);
        assert!(text[heading..].contains(&format!("changed      ConfigMap {}/{kept}", env.ns)), "{text}");
        assert!(text[heading..].contains(&format!("changed      CustomResourceDefinition {crd}")), "{text}");
        out.stdout_has("(pre-install hook from hooked/templates/objects.yaml)");
        assert!(!text.contains("crds/"), "a hook is not a CRD of crds/:\n{text}");

        env.drift(&["repair", &release]).success();
        assert_eq!(env.get("configmap", &kept, "{.data.ran}"), "edited", "without --hooks, hooks are left alone");
        // The CRD hook is cluster-scoped: a person's repair writes it on the record's word only
        // when the namespace is trusted, and refuses (all or nothing) otherwise.
        let untrusted = env.drift_untrusted(&["repair", &release, "--hooks"]).code(1);
        untrusted.stdout_has(&format!("--trust-namespace {}", env.ns));
        assert_eq!(env.get("configmap", &kept, "{.data.ran}"), "edited", "nothing applied when a step is refused");
        let out = env.drift_untrusted(&["repair", &release, "--hooks", "--trust-namespace", &env.ns]).success();
        out.stdout_has(&format!("{release}: in sync"));
        assert_eq!(env.get("configmap", &kept, "{.data.ran}"), "yes");
        assert_eq!(env.get("crd", &crd, "{.spec.names.shortNames}"), r#"["pr"]"#);
        assert_eq!(uids(), before, "patched in place: the hook did not run again");
        let records = || env.kubectl(&["get", "secrets", "-l", &format!("owner=helm,name={release}"), "-o", "name"]).success().stdout();
        assert_eq!(records().lines().count(), 1, "no new revision");
        assert!(!env.kubectl(&["get", "configmap", &format!("{release}-once")]).output().out.status.success());

        env.kubectl(&["delete", "configmap", &kept]).success();
        env.drift(&["check", &release, "--hooks"]).code(2).stdout_has(&format!("missing      ConfigMap {}/{kept}", env.ns));
        env.drift(&["repair", &release, "--hooks"]).success(); // trusted once (the harness)
        assert_eq!(env.get("configmap", &kept, "{.data.ran}"), "yes");
        assert!(!env.kubectl(&["get", "configmap", &format!("{release}-once")]).output().out.status.success());
        assert_eq!(records().lines().count(), 1, "still no new revision");
        env.drift(&["check", &release, "--hooks"]).success();

        // Revision 2 runs the post-upgrade hook, not the pre-install CRD: the CRD is compared as
        // the install made it.
        let chart = chart_path("hooked");
        env.helm(helm, &["upgrade", &release, chart.to_str().unwrap()]).success();
        env.drift(&["check", &release, "--hooks"]).success();
        env.merge_patch("crd", &crd, r#"{"spec":{"names":{"shortNames":["again"]}}}"#);
        env.drift(&["check", &release, "--hooks"])
            .code(2)
            .stdout_has(&format!("changed      CustomResourceDefinition {crd}"))
            .stdout_has("pre-install hook, as created at revision 1");
        env.drift(&["repair", &release, "--hooks", "--trust-namespace", &env.ns]).success();
        assert_eq!(env.get("crd", &crd, "{.spec.names.shortNames}"), r#"["pr"]"#);

        // Revision 3 with another value for the hook (it runs again), then a rollback to 1
        // (revision 4): a rollback runs only rollback hooks, so the hook ConfigMap is still what
        // revision 3 made, though revision 4's record copies revision 1's hooks and their runs.
        env.helm(helm, &["upgrade", &release, chart.to_str().unwrap(), "--set", "ran=three"]).success();
        assert_eq!(env.get("configmap", &kept, "{.data.ran}"), "three");
        env.helm(helm, &["rollback", &release, "1"]).success();
        let out = env.drift(&["check", &release, "--hooks", "-o", "json"]).success();
        let report: Value = serde_json::from_str(&out.stdout()).unwrap();
        let hook = report["releases"][0]["hooks"].as_array().unwrap().iter().find(|h| h["name"] == kept.as_str()).cloned();
        assert_eq!(hook.map(|h| h["hook"]["ranAtRevision"].clone()), Some(serde_json::json!(3)), "{report}");
        env.kubectl(&["delete", "crd", &crd]).success();
    }
}

#[test]
fn a_record_of_endless_hooks_is_refused_by_name() {
    let env = Env::new("hooks-endless");
    let hooks: Vec<Value> = (0..20).map(|_| serde_json::json!({})).collect();
    let json = serde_json::json!({"name": "many", "namespace": env.ns, "version": 1,
        "info": {"status": "deployed"}, "manifest": "", "hooks": hooks});
    env.forge_record_json("many", &json, "");
    env.drift(&["check", "many", "--hooks", "--max-objects", "10"]).code(1).stderr_has(&format!(
        "cannot read the hooks of Secret {}/sh.helm.release.v1.many.v1: it holds more than 10 hooks (--max-objects): not checked",
        env.ns
    ));
    let broken = serde_json::json!({"name": "odd", "namespace": env.ns, "version": 1,
        "info": {"status": "deployed"}, "manifest": "", "hooks": {"name": "x"}});
    env.forge_record_json("odd", &broken, "");
    env.drift(&["check", "odd", "--hooks"]).code(1).stderr_has("its hooks are not a list of hooks");
    env.drift(&["check", "odd"]).success();
    // One hook whose document is a List of many objects: the objects count, not the hooks.
    let items: Vec<Value> = (0..20)
        .map(|i| serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c{i}")}}))
        .collect();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    let hook = serde_json::json!({"name": "l", "kind": "List", "path": "l/templates/l.yaml", "manifest": list,
        "events": ["post-install"], "last_run": {"phase": "Succeeded"}});
    let listed = serde_json::json!({"name": "listed", "namespace": env.ns, "version": 1,
        "info": {"status": "deployed"}, "manifest": "", "hooks": [hook]});
    env.forge_record_json("listed", &listed, "");
    env.drift(&["check", "listed", "--hooks", "--max-objects", "10"]).code(1).stderr_has(&format!(
        "Secret {}/sh.helm.release.v1.listed.v1 (its hooks) holds 20 objects, more than --max-objects 10",
        env.ns
    ));
}

/// `watch --hooks --repair` reports kept hook objects that drift (after an upgrade: the
/// pre-install CRD made by revision 1, the post-upgrade ConfigMap of revision 2) and never heals
/// them: nothing in the cluster says a hook object is the release's (Helm adds no ownership
/// metadata to hooks), so only a person's `repair --hooks` puts them back.
#[test]
fn a_watcher_with_hooks_reports_kept_hook_objects_and_leaves_healing_to_a_person() {
    let env = Env::new("hooks-watch");
    env.install(Helm::V4, "hw", "hooked", &["--labels", "helm-drift.io/repair=true"]);
    let chart = chart_path("hooked");
    env.helm(Helm::V4, &["upgrade", "hw", chart.to_str().unwrap(), "--labels", "helm-drift.io/repair=true"]).success();
    let crd = format!("probes.hw.{}.drift.test", env.ns);
    let args = ["hw", "--hooks", "--repair", "--repair-cooldown", "1s", "--trust-namespace", &env.ns];
    let w = crate::watching::Watching::start(&env, &args).ready();
    let drifted = crate::watching::Watching::drifted(&env.ns, "hw");
    w.wait_for(&drifted, 0.0);
    env.merge_patch("crd", &crd, r#"{"spec":{"names":{"shortNames":["edited"]}}}"#);
    env.merge_patch("configmap", "hw-hook", r#"{"data":{"ran":"edited"}}"#);
    w.wait_for(&drifted, 1.0);
    crate::support::eventually("both hook objects reported", std::time::Duration::from_secs(30), || {
        let logs = w.logs_text();
        logs.contains(&format!("CustomResourceDefinition {crd}")) && logs.contains("ConfigMap hooks-watch/hw-hook")
    });
    // Something to heal beside them: the release's own ConfigMap is healed, the hooks are not.
    env.merge_patch("configmap", "hw-config", r#"{"data":{"a":"edited"}}"#);
    crate::support::eventually("the release's own object healed", std::time::Duration::from_secs(30), || {
        env.get("configmap", "hw-config", "{.data.a}") == "b"
    });
    assert_eq!(env.get("crd", &crd, "{.spec.names.shortNames}"), r#"["edited"]"#);
    assert_eq!(env.get("configmap", "hw-hook", "{.data.ran}"), "edited");
    w.stop();
    env.drift(&["repair", "hw", "--hooks", "--trust-namespace", &env.ns]).success();
    assert_eq!(env.get("crd", &crd, "{.spec.names.shortNames}"), r#"["pr"]"#);
    let records = env.kubectl(&["get", "secrets", "-l", "owner=helm,name=hw", "-o", "name"]).success().stdout();
    assert_eq!(records.lines().count(), 2, "no new revision: {records}");
    env.kubectl(&["delete", "crd", &crd]).success();
}

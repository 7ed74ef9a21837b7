//! Bounded by construction: what others write costs helm-drift its bytes, not a tree of them,
//! and objects nobody asked about are not held. Each test provokes it with the hostile input
//! on the real control plane and asserts the peak resident memory of the run, read from the
//! kernel when the process ends (the figures with the release build are in bench/RESULTS.md).

use crate::support::{Env, Helm};

/// Runs helm-drift with `args` in `env`: its exit code, stdout and peak RSS in MiB.
fn measured(env: &Env, args: &[&str]) -> (Option<i32>, String, u64) {
    let mut cmd = env.drift(args).into_command();
    let (out, kib) = testcluster::peak_rss(&mut cmd).expect("run helm-drift");
    eprintln!("helm-drift {}: peak RSS {} MiB", args.join(" "), kib / 1024);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text, kib / 1024)
}

/// A 21 KB record whose chart metadata holds 5.4 million zeros (16 MB of JSON) is checked as any
/// other, its metadata never a tree (it took 363 MiB; the same check without it about 48).
#[test]
fn a_record_of_millions_of_metadata_values_costs_its_bytes() {
    let env = Env::new("bounded-meta");
    let manifest = "---\n# Source: m/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: meta-config\ndata:\n  a: b\n";
    let json = serde_json::json!({"name": "meta", "namespace": env.ns, "version": 1, "info": {"status": "deployed"},
        "chart": {"metadata": {"name": "m", "version": "1.0.0", "zeros": vec![0; 5_400_000]}},
        "manifest": manifest});
    env.forge_record_json("meta", &json, "");
    drop(json);
    let (code, text, mib) = measured(&env, &["check", "meta"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("missing      ConfigMap"), "{text}");
    assert!(text.contains("chart m-1.0.0"), "its name and version are read: {text}");
    assert!(mib < 150, "peak RSS {mib} MiB for a record of 16 MB of metadata");
}

/// Large objects in the release's namespace that no release names (Grafana dashboards, say)
/// are not held by the listing of their kind: 100 unrelated ConfigMaps of 900 KB next to a
/// release whose ConfigMaps are read with one LIST (it held every page whole, twice: about
/// 180 MiB more).
#[test]
fn objects_nobody_names_are_not_held() {
    let env = Env::new("bounded-list");
    env.install(Helm::V4, "dash", "rendered", &[]);
    create_configmaps(&env, "dashboard", 100, 900 * 1024);
    let (code, text, mib) = measured(&env, &["check", "dash"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(mib < 150, "peak RSS {mib} MiB with 90 MB of unrelated ConfigMaps in the namespace");
    // What the release names is still read from the listing, and still judged: an edit is found.
    env.merge_patch("configmap", "dash-static", r#"{"data":{"edited":"yes"}}"#);
    let (code, text, _) = measured(&env, &["check", "dash"]);
    assert_eq!(code, Some(2), "{text}");
}

/// Creates `n` ConfigMaps `PREFIX-000`… holding `bytes` each, ten to a request (created, not
/// applied: no last-applied copy, which would be over the annotations' 256 KiB).
fn create_configmaps(env: &Env, prefix: &str, n: usize, bytes: usize) {
    let blob = "d".repeat(bytes);
    for start in (0..n).step_by(10) {
        let items: Vec<serde_json::Value> = (start..(start + 10).min(n))
            .map(|i| {
                serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("{prefix}-{i:03}")}, "data": {"blob": blob}})
            })
            .collect();
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
        let file = env.home().join(format!("{prefix}-{start}.json"));
        std::fs::write(&file, list.to_string()).unwrap();
        env.kubectl(&["create", "-f", file.to_str().unwrap()]).success();
    }
}

/// A page's cost does not depend on the objects before it: 200 tiny ConfigMaps listed first
/// (`a-000`…) make the next page ask for hundreds of objects, and those are the 150 of 900 KB
/// (`z-000`…). The response is read as it arrives and asked again with fewer objects past
/// 8 MiB (it held every page whole: 301 MiB in this test, 362 MiB with the release build).
#[test]
fn a_page_costs_the_same_whatever_came_before_it() {
    let env = Env::new("bounded-page");
    env.install(Helm::V4, "dash", "rendered", &[]);
    create_configmaps(&env, "a", 200, 16);
    create_configmaps(&env, "z", 150, 900 * 1024);
    let (code, text, mib) = measured(&env, &["check", "dash"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(mib < 150, "peak RSS {mib} MiB with 200 tiny ConfigMaps, then 135 MB of others, in the namespace");
}

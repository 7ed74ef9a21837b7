//! The doors of `src/doors.rs` under the RBAC the chart renders: the watcher runs as the chart's
//! ServiceAccount, and a tenant who may only write ConfigMaps in its own namespace writes what
//! comes through each door it can reach there (pause announcements and pauses, a baseline,
//! listings of large objects). The watcher keeps healing, reads no pause from the tenant, names
//! the baseline it refuses, and writes nothing for the tenant.

use crate::support::{Env, Helm, chart_path, eventually_or, repo_root};
use crate::watching::Watching;
use std::time::Duration;

helm_matrix! {
    fn a_tenant_gains_nothing_through_the_chart_s_watcher(helm: Helm) {
        let c = Env::new(&format!("doors-c-{}", helm.tag()));
        let t = Env::new(&format!("doors-t-{}", helm.tag()));
        let release = format!("drift-{}", helm.tag());
        let chart = repo_root().join("charts/helm-drift");
        let trust = format!("trustNamespaces={{{}}}", t.ns);
        c.helm(helm, &["install", &release, chart.to_str().unwrap(), "--set", "repair.enabled=true", "--set", &trust]).success();
        let app = format!("doors-{}", helm.tag());
        let basic = chart_path("basic");
        t.helm(helm, &["install", &app, basic.to_str().unwrap(), "--labels", "helm-drift.io/repair=true"]).success();
        // The tenant: ConfigMaps of its own namespace, nothing else.
        let tenant = format!("system:serviceaccount:{}:tenant", t.ns);
        t.kubectl(&["create", "serviceaccount", "tenant"]).success();
        let verbs = "--verb=create,get,list,patch,update,delete";
        t.kubectl(&["create", "role", "tenant", verbs, "--resource=configmaps"]).success();
        t.kubectl(&["create", "rolebinding", "tenant", "--role=tenant", &format!("--serviceaccount={}:tenant", t.ns)]).success();
        t.wait_until_allowed(&tenant, "create", "configmaps", false);
        let as_tenant = |name: &str, yaml: &str| {
            let file = t.home().join(format!("{name}.yaml"));
            std::fs::write(&file, yaml).unwrap();
            t.kubectl(&["apply", "--server-side", "-f", file.to_str().unwrap(), "--as", &tenant]).success();
        };
        // 256 announcements of watchers healing every namespace, and a pause of the release.
        let now = jiff::Timestamp::now();
        let announcements: String = (0..256)
            .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: helm-drift-watcher-f{i:03}\n  labels: {{helm-drift.io/watcher: \"true\"}}\ndata: {{namespaces: \"*\", fleet: \"false\", renewed: \"{now}\", everySeconds: \"86400\"}}\n"))
            .collect();
        as_tenant("announcements", &announcements);
        let pause = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: helm-drift-pause-forged\n  labels: {{helm-drift.io/pause: \"true\"}}\ndata: {{namespace: {}, release: {app}, reason: mine, by: tenant, until: \"2999-01-01T00:00:00Z\"}}\n",
            t.ns
        );
        as_tenant("pause", &pause);
        // 24 ConfigMaps of 900 KB that no release names, after the release's own.
        for i in 0..24 {
            let big = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: zz-big-{i:02}\ndata:\n  blob: {}\n", "x".repeat(900_000));
            as_tenant(&format!("big-{i}"), &big);
        }
        let configmaps = || t.kubectl(&["get", "configmaps", "-o", "name"]).success().stdout();
        let before = configmaps();

        let sa = format!("{release}-helm-drift");
        let token = c.kubectl(&["create", "token", &sa, "--duration", "1h"]).success().stdout().trim().to_string();
        let key = format!("{sa}-signature-key");
        let selector = format!("name={app}");
        let args = [
            "-A", "-l", &selector, "--repair", "--repair-cooldown", "1s", "--baseline", "cluster",
            "--signature-key-secret", &key, "--pause-namespace", &c.ns, "--trust-namespace", &t.ns,
        ];
        let w = Watching::start_with(&c, &args, &[("HELM_KUBETOKEN", &token)]).ready();
        let config = format!("{app}-config");
        let greeting = || t.get("configmap", &config, "{.data.greeting}");
        // The forged pause and announcements hold nothing: the edit is healed.
        t.merge_patch("configmap", &config, r#"{"data":{"greeting":"edited"}}"#);
        eventually_or("healed despite the tenant's pause", Duration::from_secs(40), || greeting() == "hello", || w.logs_text());
        // A baseline of aliases (8,000 of a 100 KB string): refused by name, the watcher stays up.
        let mut bomb = format!("apiVersion: helm-drift.io/v1\nkind: Baseline\nx: &a \"{}\"\nentries: [", "x".repeat(100_000));
        bomb.push_str(&vec!["*a"; 8_000].join(","));
        bomb.push_str("]\n");
        let doc = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("helm-drift-baseline.{app}")}, "data": {"baseline.yaml": bomb}});
        as_tenant("baseline", &doc.to_string());
        t.merge_patch("configmap", &config, r#"{"data":{"greeting":"edited again"}}"#);
        let named = format!("baseline ConfigMap {}/helm-drift-baseline.{app}", t.ns);
        eventually_or("the baseline refused by name", Duration::from_secs(40), || {
            let logs = w.logs_text();
            logs.contains(&named) && logs.contains("expands to more than")
        }, || w.logs_text());
        // Nothing the watcher read from the tenant became a write for it.
        t.kubectl(&["delete", "configmap", &format!("helm-drift-baseline.{app}")]).success();
        eventually_or("healed once the baseline is gone", Duration::from_secs(40), || greeting() == "hello", || w.logs_text());
        assert_eq!(configmaps(), before, "the tenant's ConfigMaps only");
        let logs = w.logs_text();
        assert!(!logs.contains("forbidden"), "the chart's RBAC is enough for every door:\n{logs}");
        w.stop();
    }
}

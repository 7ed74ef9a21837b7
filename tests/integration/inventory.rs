//! A fleet from an inventory the cluster already holds (`check --clusters capi`): Cluster API
//! `Cluster` objects (the real CRD, `tests/fixtures/cluster-api`, no controller: the test writes
//! the objects, their status and their `<cluster>-kubeconfig` Secrets as Cluster API would) are
//! read from the management cluster; each ready one is checked through its own kubeconfig; one
//! not ready is left out and said; one whose kubeconfig would run a command or read a local file
//! is an error for that cluster alone, and its command never runs.

use crate::support::{Env, Helm, eventually, repo_root};

/// The Cluster CRD, served once for the whole suite (server-side apply is idempotent).
pub fn serve_cluster_crd(env: &Env) {
    let crd = repo_root().join("tests/fixtures/cluster-api/cluster.x-k8s.io_clusters.yaml");
    env.kubectl(&["apply", "--server-side", "--force-conflicts", "-f", crd.to_str().unwrap()]).success();
    // Served once discovery lists it (a `kubectl wait` right after the create can find no
    // condition yet).
    eventually("the Cluster CRD served", std::time::Duration::from_secs(60), || {
        env.kubectl(&["get", "--raw", "/apis/cluster.x-k8s.io/v1beta2"]).output().out.status.success()
    });
}

/// A Cluster API Cluster in the env's namespace, with `labels`, its control plane initialized
/// or not, and its kubeconfig Secret holding `kubeconfig` (none when `None`).
pub fn cluster(env: &Env, name: &str, labels: &str, ready: bool, kubeconfig: Option<&str>) {
    let doc = format!(
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: {name}\n  labels: {{{labels}}}\nspec:\n  controlPlaneRef: {{apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: {name}}}\n"
    );
    env.apply_yaml(&format!("cluster-{name}"), &doc);
    let status = format!(r#"{{"status":{{"initialization":{{"controlPlaneInitialized":{ready}}}}}}}"#);
    env.kubectl(&["patch", "cluster.cluster.x-k8s.io", name, "--subresource=status", "--type=merge", "-p", &status])
        .success();
    if let Some(kubeconfig) = kubeconfig {
        let file = env.home().join(format!("{name}-kubeconfig"));
        std::fs::write(&file, kubeconfig).unwrap();
        let from = format!("--from-file=value={}", file.display());
        env.kubectl(&["create", "secret", "generic", &format!("{name}-kubeconfig"), &from]).success();
    }
}

helm_matrix! {
    fn a_cluster_api_inventory_is_checked_cluster_by_cluster(helm: Helm) {
        let env = Env::new(&format!("inventory-{}", helm.tag()));
        serve_cluster_crd(&env);
        env.install(helm, "web", "basic", &[]);
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited by hand"}}"#);
        // What Cluster API writes: the kubeconfig with every credential inline.
        let inline = env.kubectl(&["config", "view", "--raw", "--flatten", "--minify"]).success().stdout();
        let marker = env.home().join("exec-ran");
        let exec = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: '{}', insecure-skip-tls-verify: true}}\nusers:\n- name: u\n  user:\n    exec: {{apiVersion: client.authentication.k8s.io/v1, command: touch, args: ['{}'], interactiveMode: Never}}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n",
            env.cp.server(),
            marker.display()
        );
        cluster(&env, "alpha", "fleet: runtime", true, Some(&inline));
        cluster(&env, "beta", "fleet: runtime", true, Some(&inline));
        cluster(&env, "gamma", "fleet: runtime", false, Some(&inline));
        cluster(&env, "delta", "fleet: other", true, Some(&exec));
        cluster(&env, "epsilon", "fleet: other", true, None);
        let ns = env.ns.clone();
        let check = |extra: &[&str]| {
            let mut args = vec!["check", "web", "--clusters", "capi", "--clusters-namespace", &ns, "-o", "json"];
            args.extend_from_slice(extra);
            env.drift(&args)
        };

        // The runtime's clusters: both checked through their own kubeconfig, the one not ready
        // left out and said.
        let done = check(&["--clusters-selector", "fleet=runtime"]).code(2);
        done.stderr_has(&format!("cluster {ns}/gamma is not checked: its control plane is not ready"));
        let doc: serde_json::Value = serde_json::from_str(&done.stdout()).unwrap();
        let clusters: Vec<String> = doc["releases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| format!("{} {}", r["cluster"].as_str().unwrap(), r["verdict"].as_str().unwrap()))
            .collect();
        assert_eq!(clusters, [format!("{ns}/alpha drifted"), format!("{ns}/beta drifted")], "{}", done.stdout());

        // Every cluster: the hostile kubeconfig and the missing one are errors of their own
        // clusters, the others still checked; the command never ran.
        let done = check(&[]).code(1);
        let text = format!("{}{}", done.stdout(), done.stderr());
        for (name, said) in [
            ("delta", format!("Secret {ns}/delta-kubeconfig: the kubeconfig runs a command (exec)")),
            ("epsilon", format!("Secret {ns}/epsilon-kubeconfig not found")),
        ] {
            assert!(text.contains(&said), "{name}: {text}");
        }
        assert!(text.contains(&format!("{ns}/alpha")) && text.contains(&format!("{ns}/beta")), "{text}");
        assert!(!marker.exists(), "a kubeconfig read from the cluster ran its command");
    }
}

/// An Argo CD cluster Secret for `server` with `config` (Argo CD's JSON).
fn argocd_cluster(env: &Env, name: &str, server: &str, config: &serde_json::Value) {
    let doc = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
        "stringData": {"name": name, "server": server, "config": config.to_string()},
    });
    env.apply_yaml(&format!("argocd-{name}"), &doc.to_string());
}

helm_matrix! {
    fn an_argo_cd_inventory_is_checked_with_inline_credentials_only(helm: Helm) {
        let env = Env::new(&format!("argocd-{}", helm.tag()));
        env.install(helm, "web", "basic", &[]);
        env.kubectl(&["delete", "configmap", "web-config"]).success();
        // Argo CD's config from the test's kubeconfig: its client certificate and CA, inline.
        let raw = env.kubectl(&["config", "view", "--raw", "--flatten", "--minify", "-o", "json"]).success().stdout();
        let k: serde_json::Value = serde_json::from_str(&raw).unwrap();
        let tls = serde_json::json!({
            "caData": k["clusters"][0]["cluster"]["certificate-authority-data"],
            "certData": k["users"][0]["user"]["client-certificate-data"],
            "keyData": k["users"][0]["user"]["client-key-data"],
        });
        let server = env.cp.server();
        let marker = env.home().join("exec-ran");
        argocd_cluster(&env, "prod", server, &serde_json::json!({"tlsClientConfig": tls}));
        let exec = serde_json::json!({"execProviderConfig": {"command": "touch", "args": [marker.to_str().unwrap()], "apiVersion": "client.authentication.k8s.io/v1"}, "tlsClientConfig": tls});
        argocd_cluster(&env, "exec", server, &exec);
        // Argo CD's in-cluster entry holds no credential: helm-drift would reach it as itself.
        argocd_cluster(&env, "in-cluster", "https://kubernetes.default.svc", &serde_json::json!({"tlsClientConfig": {"insecure": false}}));
        let ns = env.ns.clone();
        let done = env.drift(&["check", "web", "--clusters", "argocd", "--clusters-namespace", &ns, "-o", "json"]).code(1);
        let doc: serde_json::Value = serde_json::from_str(&done.stdout()).unwrap();
        let verdicts: Vec<String> = doc["releases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| format!("{} {}", r["cluster"].as_str().unwrap(), r["verdict"].as_str().unwrap()))
            .collect();
        assert!(verdicts.contains(&format!("{ns}/prod drifted")), "{verdicts:?}\n{}", done.stdout());
        let text = format!("{}{}", done.stdout(), done.stderr());
        for said in [
            format!("Argo CD cluster Secret {ns}/exec: the entry runs a command (execProviderConfig)"),
            format!("Argo CD cluster Secret {ns}/in-cluster: the entry holds no credential of its own"),
        ] {
            assert!(text.contains(&said), "{said}: {text}");
        }
        assert!(!marker.exists(), "an Argo CD entry ran its command");
        // Without --clusters-namespace, only Argo CD's own namespace is read: a cluster Secret
        // that anyone who may write Secrets here wrote is no member of the fleet.
        let default = env.drift(&["check", "web", "--clusters", "argocd", "-o", "json"]).output();
        let text = format!("{}{}", default.stdout(), default.stderr());
        assert!(!text.contains(&format!("{ns}/prod")), "a tenant's cluster Secret joined the fleet: {text}");
        assert!(text.contains("argocd"), "{}", default.dump());
        assert_ne!(default.out.status.code(), Some(0), "no cluster checked is no pass: {}", default.dump());
    }
}

helm_matrix! {
    /// `repair --clusters capi --cluster NAME` repairs the release in one member of the same
    /// inventory `check --clusters` reads, through the member's own vetted kubeconfig; a name
    /// the inventory lacks is refused with the names it holds, and --clusters alone is refused.
    fn a_release_is_repaired_in_one_cluster_of_the_inventory(helm: Helm) {
        let env = Env::new(&format!("inv-repair-{}", helm.tag()));
        serve_cluster_crd(&env);
        env.install(helm, "web", "basic", &[]);
        env.merge_patch("configmap", "web-config", r#"{"data":{"greeting":"edited by hand"}}"#);
        let inline = env.kubectl(&["config", "view", "--raw", "--flatten", "--minify"]).success().stdout();
        cluster(&env, "alpha", "fleet: runtime", true, Some(&inline));
        let ns = env.ns.clone();
        let inventory = ["--clusters", "capi", "--clusters-namespace", ns.as_str()];
        let with = |args: &[&str]| env.drift(&[args, &inventory[..]].concat());
        with(&["check", "web"]).code(2);
        with(&["repair", "web"]).code(1).stderr_has("--clusters repairs one cluster of the inventory: name it with --cluster NAME");
        with(&["repair", "web", "--cluster", "nosuch"])
            .code(1)
            .stderr_has(&format!("--cluster nosuch: no such cluster in the inventory (it holds {ns}/alpha)"));
        let alpha = format!("{ns}/alpha");
        with(&["repair", "web", "--cluster", &alpha]).code(0).stdout_has(&format!("cluster {alpha}"));
        with(&["check", "web"]).code(0);
        assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "hello");
    }
}

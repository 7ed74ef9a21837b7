//! `plan --helmrelease`: the upgrade Flux's helm-controller will make of a HelmRelease (from the
//! cluster, or a changed one from a file), checked against that upgrade made right after by the
//! Flux stand-in (Helm 4's SDK writing as `helm-controller`) with the values helm-controller
//! composes, written out by hand here: the objects the plan said would change are those that
//! changed. Values someone else wrote never read the cluster with the planner's rights.

use crate::flux_layout::{flux_crd, helm_release_crd};
use crate::plan::{fate, planned, versions};
use crate::support::{Env, chart_path};

/// The Flux stand-in (`helm-controller`), in the env's namespace; an install or upgrade is
/// post-rendered as helm-controller post-renders (its origin labels for the HelmRelease of the
/// release's name in `hr_namespace`).
fn flux(env: &Env, hr_namespace: &str, args: &[&str]) -> crate::support::Run {
    let mut args: Vec<&str> = args.to_vec();
    if matches!(args.first(), Some(&"install" | &"upgrade")) {
        origin_labels_plugin(env);
        let release = args[1];
        args.extend(["--post-renderer", "flux-origin", "--post-renderer-args", release]);
        args.extend(["--post-renderer-args", hr_namespace]);
    }
    env.helm_tool("helm-controller", &args)
}

/// A Helm 4 post-renderer plugin that sets helm-controller's origin labels
/// (`helm.toolkit.fluxcd.io/name` and `/namespace`) on every object's `metadata.labels`, as its
/// Kustomize label transformer does (created when absent): awk over the manifest helm renders.
fn origin_labels_plugin(env: &Env) {
    post_renderer_plugin(env, "flux-origin", "");
}

/// A Helm 4 post-renderer plugin `name` whose script pipes the manifest through `prelude` (a
/// shell pipeline's first stages, ending in `|`; empty: none), then sets the origin labels of
/// the HelmRelease named by its first two arguments (its name and namespace).
fn post_renderer_plugin(env: &Env, name: &str, prelude: &str) {
    let dir = env.home().join(format!("data/plugins/{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = format!(
        "apiVersion: v1\ntype: postrenderer/v1\nname: {name}\nversion: 0.1.0\nruntime: subprocess\nruntimeConfig:\n  platformCommand:\n    - command: \"${{HELM_PLUGIN_DIR}}/run.sh\"\n"
    );
    std::fs::write(dir.join("plugin.yaml"), manifest).unwrap();
    let awk = r#"awk -v name="$1" -v ns="$2" '
function labels() { print "    helm.toolkit.fluxcd.io/name: " name; print "    helm.toolkit.fluxcd.io/namespace: " ns }
/^metadata:[ \t]*$/ { print; inmeta = 1; done = 0; next }
inmeta && /^  labels:[ \t]*$/ { print; labels(); done = 1; next }
inmeta && !/^  / { if (!done) { print "  labels:"; labels() } inmeta = 0 }
{ print }
END { if (inmeta && !done) { print "  labels:"; labels() } }
'
"#;
    let run = dir.join("run.sh");
    std::fs::write(&run, format!("#!/bin/sh\n{prelude}{awk}")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Serves the HelmRelease kind and applies a HelmRelease `name` of the env's namespace with
/// this `spec` (YAML, indented two spaces).
fn helm_release(env: &Env, name: &str, spec: &str) {
    env.serve_crd("helmrelease-crd", &helm_release_crd());
    let hr =
        format!("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\nspec:\n{spec}");
    env.apply_yaml(&format!("hr-{name}"), &hr);
}

/// `plan` with the Flux-mode arguments, as JSON, asserting its exit code.
fn plan_json(env: &Env, args: &[&str], code: i32) -> serde_json::Value {
    plan_json_with(env, args, code, &[])
}

/// [`plan_json`] with these environment variables set too.
fn plan_json_with(env: &Env, args: &[&str], code: i32, vars: &[(&str, &std::path::Path)]) -> serde_json::Value {
    let args = [&["plan"][..], args, &["-o", "json"]].concat();
    let mut run = env.drift(&args).env("HELM_BIN", env.helm_bin(crate::support::Helm::V4));
    for (k, v) in vars {
        run = run.env(k, v);
    }
    serde_json::from_str(&run.code(code).stdout()).expect("a JSON document")
}

const SPEC: &str = "  releaseName: web
  chart: {spec: {chart: basic}}
  values:
    image: registry.example/web:2.0
  valuesFrom:
    - {kind: ConfigMap, name: web-values}
    - {kind: Secret, name: web-replicas, valuesKey: replicas, targetPath: replicas}
    - {kind: ConfigMap, name: absent, optional: true}
";

/// A HelmRelease with values, a ConfigMap of values, a Secret's key set at a targetPath and an
/// optional reference that is absent; the Deployment scaled by hand (helm-controller forces
/// conflicts: the edit is wiped, not a failure). The plan is the upgrade helm-controller makes.
#[test]
fn plan_predicts_helm_controllers_upgrade_of_a_helmrelease() {
    let env = Env::new("plan-flux");
    let ns = env.ns.clone();
    let basic = chart_path("basic");
    let chart = basic.to_str().unwrap();
    flux(&env, &ns, &["install", "web", chart, "--server-side=true"]).success();
    env.kubectl(&["create", "configmap", "web-values", "--from-literal=values.yaml=greeting: from-configmap\n"])
        .success();
    env.kubectl(&["create", "secret", "generic", "web-replicas", "--from-literal=replicas=3"]).success();
    helm_release(&env, "web", SPEC);
    env.kubectl(&["scale", "deployment", "web-web", "--replicas=5"]).success();

    let doc = plan_json(&env, &["--helmrelease", "web", chart, "--trust-namespace", &ns], 2);
    assert_eq!(planned(&doc), ["configmap/web-config", "deployment/web-web"], "{doc:#}");
    assert_eq!(fate(&doc, "spec.replicas"), "wiped", "{doc:#}");
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains(&format!("helm-controller's upgrade of HelmRelease {ns}/web: release web in {ns}")),
        "{notes}"
    );
    assert!(notes.contains("absent, optional, skipped") && notes.contains("at replicas"), "{notes}");

    // What helm-controller then does, with the values it composes (written out by hand).
    let values = env.home().join("flux-values.yaml");
    std::fs::write(&values, "greeting: from-configmap\nreplicas: 3\nimage: registry.example/web:2.0\n").unwrap();
    let before = versions(&env);
    let upgrade = ["upgrade", "web", chart, "-f", values.to_str().unwrap(), "--reset-values"];
    flux(&env, &ns, &[&upgrade[..], &["--server-side=true", "--force-conflicts", "--take-ownership"]].concat())
        .success();
    let labels = env.get("configmap", "web-config", "{.metadata.labels}");
    assert!(
        labels.contains("\"helm.toolkit.fluxcd.io/name\":\"web\""),
        "post-rendered as helm-controller does: {labels}"
    );
    let after = versions(&env);
    let changed: Vec<String> = after.keys().filter(|k| before.get(*k) != after.get(*k)).cloned().collect();
    assert_eq!(planned(&doc), changed, "{doc:#}");
    assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "3");
    assert_eq!(env.get("configmap", "web-config", "{.data.greeting}"), "from-configmap");
    plan_json(&env, &["--helmrelease", "web", chart, "--trust-namespace", &ns], 0);

    // A changed HelmRelease from a file (a pull request): its values win over the cluster's.
    let file = env.home().join("changed.yaml");
    let changed_spec =
        SPEC.replace("image: registry.example/web:2.0", "image: registry.example/web:2.0\n    greeting: from-the-pr");
    std::fs::write(&file, format!("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: {ns}\nspec:\n{changed_spec}")).unwrap();
    let doc = plan_json(&env, &["--helmrelease-file", file.to_str().unwrap(), chart, "--trust-namespace", &ns], 2);
    assert_eq!(planned(&doc), ["configmap/web-config", "deployment/web-web"], "{doc:#}");
    let field = &doc["objects"].as_array().unwrap().iter().find(|o| o["kind"] == "ConfigMap").unwrap()["fields"][0];
    assert_eq!(
        (field["live"].as_str(), field["after"].as_str()),
        (Some("from-configmap"), Some("from-the-pr")),
        "{doc:#}"
    );

    // What helm-controller would refuse, refused by name.
    helm_release(&env, "gone", &SPEC.replace("name: absent, optional: true", "name: gone"));
    let v4 = env.helm_bin(crate::support::Helm::V4);
    env.drift(&["plan", "--helmrelease", "gone", chart])
        .env("HELM_BIN", &v4)
        .code(1)
        .stderr_has(&format!("HelmRelease {ns}/gone: ConfigMap {ns}/gone (valuesFrom) does not exist"));
    // A post-renderer helm-controller's API does not take (Kustomize would read a URL).
    let reads = "  postRenderers:\n    - kustomize: {resources: [\"https://example.com/x.yaml\"]}\n";
    helm_release(&env, "patched", &format!("{SPEC}{reads}"));
    env.drift(&["plan", "--helmrelease", "patched", chart]).env("HELM_BIN", &v4).code(1).stderr_has(&format!(
        "HelmRelease {ns}/patched: postRenderers[0]: kustomize has \"resources\", which helm-controller's API does not take"
    ));
    env.drift(&["plan", "--helmrelease", "web", chart, "--set", "a=b"])
        .code(1)
        .stderr_has("the HelmRelease decides its values");
}

/// The Kustomize post-renderers of a HelmRelease (a strategic-merge patch, a JSON 6902 patch
/// with a target, an image) are planned as helm-controller runs them; the Flux stand-in's
/// upgrade right after, post-rendered by Kustomize (kubectl's) and then the origin labels,
/// changes what the plan said, and the plan after it is empty.
#[test]
fn a_helmrelease_s_kustomize_post_renderers_are_planned() {
    let env = Env::new("plan-flux-kustomize");
    let ns = env.ns.clone();
    let basic = chart_path("basic");
    let chart = basic.to_str().unwrap();
    flux(&env, &ns, &["install", "web", chart, "--server-side=true"]).success();
    let post_renderers = r#"  postRenderers:
    - kustomize:
        patches:
          - patch: |
              apiVersion: apps/v1
              kind: Deployment
              metadata:
                name: web-web
              spec:
                replicas: 4
          - target: {kind: ConfigMap, name: "web-.*"}
            patch: |
              - op: add
                path: /data/patched
                value: by-kustomize
        images:
          - name: registry.example/web
            newTag: "2.1"
"#;
    let spec = "  releaseName: web\n  chart: {spec: {chart: basic}}\n  values:\n    image: registry.example/web:2.0\n";
    helm_release(&env, "web", &format!("{spec}{post_renderers}"));
    let kubectl = env.tool("kubectl");
    let with_kustomize =
        |args: &[&str], code: i32| plan_json_with(&env, args, code, &[("HELM_DRIFT_KUSTOMIZE", &kubectl)]);
    let plan = ["--helmrelease", "web", chart, "--trust-namespace", &ns];
    let doc = with_kustomize(&plan, 2);
    assert_eq!(planned(&doc), ["configmap/web-config", "deployment/web-web"], "{doc:#}");
    let text = doc["objects"].to_string();
    assert!(text.contains("by-kustomize") && text.contains("registry.example/web:2.1"), "{doc:#}");

    // What helm-controller then does: Kustomize over the manifest, then its origin labels.
    let kustomization = env.home().join("kustomization.yaml");
    let patches = post_renderers.replacen("  postRenderers:\n    - kustomize:\n", "", 1);
    let body = format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [helm-output.yaml]\n{}",
        unindent(&patches, 8)
    );
    std::fs::write(&kustomization, body).unwrap();
    let prelude = r#"dir=$(mktemp -d)
cat > "$dir/helm-output.yaml"
cp "$4" "$dir/kustomization.yaml"
"$3" kustomize "$dir" | "#;
    post_renderer_plugin(&env, "flux-kustomize", prelude);
    let values = env.home().join("flux-values.yaml");
    std::fs::write(&values, "image: registry.example/web:2.0\n").unwrap();
    let before = versions(&env);
    let renderer = ["--post-renderer", "flux-kustomize", "--post-renderer-args", "web", "--post-renderer-args", &ns];
    let files =
        ["--post-renderer-args", kubectl.to_str().unwrap(), "--post-renderer-args", kustomization.to_str().unwrap()];
    let upgrade = ["upgrade", "web", chart, "-f", values.to_str().unwrap(), "--reset-values", "--server-side=true"];
    let taking = ["--force-conflicts", "--take-ownership"];
    env.helm_tool("helm-controller", &[&upgrade[..], &taking, &renderer, &files].concat()).success();
    let after = versions(&env);
    let changed: Vec<String> = after.keys().filter(|k| before.get(*k) != after.get(*k)).cloned().collect();
    assert_eq!(planned(&doc), changed, "{doc:#}");
    assert_eq!(env.get("configmap", "web-config", "{.data.patched}"), "by-kustomize");
    assert_eq!(
        env.get("deployment", "web-web", "{.spec.template.spec.containers[0].image}"),
        "registry.example/web:2.1"
    );
    assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "4");
    with_kustomize(&plan, 0);
    // No Kustomize to run: an error naming what is missing, never a plan without the patches.
    env.drift(&["plan", "--helmrelease", "web", chart])
        .env("HELM_BIN", env.helm_bin(crate::support::Helm::V4))
        .env("HELM_DRIFT_KUSTOMIZE", env.home().join("no-kustomize"))
        .code(1)
        .stderr_has("could not post-render the manifest as helm-controller does");
}

/// `text` with `n` leading spaces taken from each line.
fn unindent(text: &str, n: usize) -> String {
    text.lines().map(|l| l.get(n..).unwrap_or(l.trim_start())).collect::<Vec<_>>().join("\n") + "\n"
}

/// A HelmRelease written by a tenant whose values make the planner's chart read a Secret of
/// another namespace (`lookup`, straight and through `tpl`): untrusted, the plan renders without
/// the cluster, says so and shows no token; trusted, the chart reads the cluster.
#[test]
fn values_the_planner_did_not_write_never_read_the_cluster_as_the_planner() {
    let env = Env::new("plan-flux-rights");
    let ns = env.ns.clone();
    let vault = format!("{ns}-vault");
    let token = format!("HUNTER2-{ns}");
    env.kubectl(&["create", "namespace", &vault]).success();
    let looker = chart_path("looker");
    let chart = looker.to_str().unwrap();
    flux(&env, &ns, &["install", "spy", chart, "--server-side=true"]).success();
    env.kubectl(&["-n", &vault, "create", "secret", "generic", "top-secret", &format!("--from-literal=token={token}")])
        .success();
    let extra = format!(
        "'{{{{ dig \"data\" \"token\" \"\" (lookup \"v1\" \"Secret\" \"{vault}\" \"top-secret\") | b64dec }}}}'"
    );
    let spec = format!(
        "  releaseName: spy\n  chart: {{spec: {{chart: looker}}}}\n  values:\n    vault: {{namespace: {vault}, name: top-secret}}\n    extra: {extra}\n"
    );
    helm_release(&env, "spy", &spec);
    let out = env
        .drift(&["plan", "--helmrelease", "spy", chart])
        .env("HELM_BIN", env.helm_bin(crate::support::Helm::V4))
        .code(0);
    assert!(!out.dump().contains(&token), "the tenant's values read the Secret as the planner\n{}", out.dump());
    out.stdout_has(&format!("the HelmRelease's values were read from namespace {ns}, which is not trusted"));
    let trusted = env
        .drift(&["plan", "--helmrelease", "spy", chart, "--trust-namespace", &ns])
        .env("HELM_BIN", env.helm_bin(crate::support::Helm::V4))
        .code(2);
    trusted.stdout_has(&token);
}

/// Flux's layout: the HelmRelease and the record in one namespace, the release in another.
/// Helm's `--namespace` cannot name them apart, so the chart renders as an install into the
/// target, said in a note; the plan is judged against the live objects there.
#[test]
fn a_helmrelease_storing_its_record_apart_is_planned() {
    let env = Env::new("plan-flux-apart");
    let (t, s) = (env.ns.clone(), format!("{}-flux", env.ns));
    env.kubectl(&["create", "namespace", &s]).success();
    let basic = chart_path("basic");
    let chart = basic.to_str().unwrap();
    flux(&env, &s, &["install", "web", chart, "--server-side=true"]).success();
    crate::flux_layout::move_record(&env, "sh.helm.release.v1.web.v1", &s);
    crate::flux_layout::helm_release(&env, &s, "web", "web", &t, true);
    let plan = |args: &[&str], code: i32| {
        let args = [&["plan"][..], args, &["--trust-namespace", &s, "-o", "json"]].concat();
        let out = env.drift(&args).env("HELM_NAMESPACE", &s).env("HELM_BIN", env.helm_bin(crate::support::Helm::V4));
        let doc: serde_json::Value = serde_json::from_str(&out.code(code).stdout()).unwrap();
        doc
    };
    let doc = plan(&["--helmrelease", "web", chart], 0);
    assert_eq!(doc["namespace"], t.as_str(), "{doc:#}");
    assert!(doc["notes"].to_string().contains(&format!("rendered as an install into {t}")), "{doc:#}");
    let file = env.home().join("apart.yaml");
    let hr = format!(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: web, namespace: {s}}}\nspec:\n  releaseName: web\n  targetNamespace: {t}\n  values: {{greeting: moved}}\n"
    );
    std::fs::write(&file, hr).unwrap();
    let doc = plan(&["--helmrelease-file", file.to_str().unwrap(), chart], 2);
    assert_eq!(planned(&doc), ["configmap/web-config", "deployment/web-web"], "{doc:#}");
}

/// A pull request's HelmRelease file: its values (no valuesFrom, so nothing is read from the
/// cluster) make the chart look up a Secret, straight, through `tpl` and in a `fail`. Even with
/// its namespace trusted, a plan from a file renders without the cluster and prints nothing of
/// the Secret; a file naming another namespace is refused (its valuesFrom are never read there).
#[test]
fn a_pull_requests_helmrelease_file_never_reads_the_cluster_as_the_planner() {
    let env = Env::new("plan-flux-pr");
    let ns = env.ns.clone();
    let vault = format!("{ns}-vault");
    let token = format!("HUNTER2-{ns}");
    env.kubectl(&["create", "namespace", &vault]).success();
    env.kubectl(&["-n", &vault, "create", "secret", "generic", "top-secret", &format!("--from-literal=token={token}")])
        .success();
    let looker = chart_path("looker");
    let chart = looker.to_str().unwrap();
    flux(&env, &ns, &["install", "spy", chart, "--server-side=true"]).success();
    let extra = format!(
        "'{{{{ dig \"data\" \"token\" \"\" (lookup \"v1\" \"Secret\" \"{vault}\" \"top-secret\") | b64dec }}}}'"
    );
    let hr = |namespace: &str| {
        format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: spy, namespace: {namespace}}}\nspec:\n  releaseName: spy\n  chart: {{spec: {{chart: looker}}}}\n  values:\n    vault: {{namespace: {vault}, name: top-secret}}\n    fail: true\n    extra: {extra}\n  valuesFrom:\n    - {{kind: Secret, name: top-secret, valuesKey: token, targetPath: stolen, optional: true}}\n"
        )
    };
    let file = env.home().join("spy.yaml");
    std::fs::write(&file, hr(&ns)).unwrap();
    let plan = |extra: &[&str]| {
        let args = [&["plan", "--helmrelease-file", file.to_str().unwrap(), chart][..], extra].concat();
        env.drift(&args).env("HELM_BIN", env.helm_bin(crate::support::Helm::V4))
    };
    let out = plan(&["--trust-namespace", &ns]).output();
    assert!(!out.dump().contains(&token), "the pull request's values read the Secret as the planner\n{}", out.dump());
    out.stdout_has("a plan from a file never lends them your rights");
    assert!(!out.dump().contains("LEAK"), "{}", out.dump());
    std::fs::write(&file, hr(&vault)).unwrap();
    let refused = plan(&["--trust-namespace", &vault]).code(1);
    refused.stderr_has(&format!("is in namespace {vault}, not {ns}"));
    assert!(!refused.dump().contains(&token), "{}", refused.dump());
}

/// A chart repository on loopback serving `basic` 0.1.0 and 0.2.0 (which adds ConfigMap
/// `web-extra`), HelmRepository `charts` of the env's namespace pointing at it and `gone`
/// pointing at a closed port; the server and the repository's directory.
fn chart_repository(env: &Env) -> (crate::support::FileServer, std::path::PathBuf) {
    let repo = env.home().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for (version, extra) in [
        ("0.1.0", ""),
        (
            "0.2.0",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\ndata:\n  added: \"in 0.2.0\"\n",
        ),
    ] {
        let dir = env.home().join(format!("basic-{version}"));
        crate::plan::copy(&chart_path("basic"), &dir);
        let meta = std::fs::read_to_string(dir.join("Chart.yaml"))
            .unwrap()
            .replace("version: 0.1.0", &format!("version: {version}"));
        std::fs::write(dir.join("Chart.yaml"), meta).unwrap();
        if !extra.is_empty() {
            std::fs::write(dir.join("templates/extra.yaml"), extra).unwrap();
        }
        env.helm(crate::support::Helm::V4, &["package", dir.to_str().unwrap(), "-d", repo.to_str().unwrap()]).success();
    }
    let server = crate::support::FileServer::start(repo.clone());
    env.helm(crate::support::Helm::V4, &["repo", "index", repo.to_str().unwrap(), "--url", &server.url]).success();
    env.serve_crd(
        "helmrepository-crd",
        &flux_crd("source.toolkit.fluxcd.io", "v1", "HelmRepository", "helmrepositories"),
    );
    let sources = format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {{name: charts}}\nspec: {{url: '{}'}}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {{name: gone}}\nspec: {{url: 'http://127.0.0.1:9'}}\n",
        server.url
    );
    env.apply_yaml("helmrepositories", &sources);
    (server, repo)
}

/// Without a chart argument, the plan previews the chart the HelmRelease names as its source
/// serves it: the version range of a pull request's HelmRelease resolved against the
/// repository's index (0.2.x: the new version's objects), the version used named; a source that
/// cannot be reached, or one helm-drift cannot fetch as source-controller does (a
/// GitRepository), is refused with the argument that gives the chart, never planned with another.
#[test]
fn a_helmreleases_chart_version_is_fetched_from_its_repository() {
    let env = Env::new("plan-flux-version");
    let ns = env.ns.clone();
    let (_server, repo) = chart_repository(&env);
    let first = repo.join("basic-0.1.0.tgz");
    flux(&env, &ns, &["install", "web", first.to_str().unwrap(), "--server-side=true"]).success();
    let spec = |version: &str, source: &str| {
        format!(
            "  releaseName: web\n  chart:\n    spec:\n      chart: basic\n      version: '{version}'\n      sourceRef: {{kind: {source}}}\n"
        )
    };
    helm_release(&env, "web", &spec("0.1.x", "HelmRepository, name: charts"));
    let doc = plan_json(&env, &["--helmrelease", "web", "--trust-namespace", &ns], 0);
    assert_eq!(doc["chart"], "basic-0.1.0", "{doc:#}");

    // A pull request bumps the version range: the new version's objects, and its version named.
    let file = env.home().join("bumped.yaml");
    let hr = |spec: String| {
        format!("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\nspec:\n{spec}")
    };
    std::fs::write(&file, hr(spec(">=0.2.0 <1.0.0", "HelmRepository, name: charts"))).unwrap();
    let doc = plan_json(&env, &["--helmrelease-file", file.to_str().unwrap()], 2);
    assert_eq!(doc["chart"], "basic-0.2.0", "{doc:#}");
    assert_eq!(planned(&doc), ["configmap/web-extra"], "{doc:#}");
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains(&format!(
            "chart basic 0.2.0 from HelmRepository {ns}/charts (the HelmRelease's version >=0.2.0 <1.0.0)"
        )),
        "{notes}"
    );
    // --version picks another, said so.
    let doc = plan_json(&env, &["--helmrelease-file", file.to_str().unwrap(), "--version", "0.1.0"], 0);
    assert!(doc["notes"].to_string().contains("(--version 0.1.0)"), "{doc:#}");

    // A source that cannot be reached, and one helm-drift does not fetch: refused, by name.
    let v4 = env.helm_bin(crate::support::Helm::V4);
    let refuse = |source: &str, says: &str| {
        std::fs::write(&file, hr(spec("0.2.0", source))).unwrap();
        env.drift(&["plan", "--helmrelease-file", file.to_str().unwrap()])
            .env("HELM_BIN", &v4)
            .code(1)
            .stderr_has(says)
            .stderr_has("give the chart helm-controller will install as the CHART argument");
    };
    refuse("HelmRepository, name: gone", &format!("its chart cannot be fetched from HelmRepository {ns}/gone"));
    refuse(
        "GitRepository, name: repo",
        &format!("its chart comes from GitRepository {ns}/repo, which helm-drift cannot fetch"),
    );
    refuse("HelmRepository, name: absent", &format!("HelmRepository {ns}/absent cannot be read"));
}

//! Rules people already keep in Git, given to `--config` as they are: a Flux HelmRelease and an
//! Argo CD Application change the exit code; what is not understood is a warning.

use crate::support::{Env, Helm};

#[test]
fn a_flux_helm_release_as_config() {
    let env = Env::new("gitops-flux");
    env.install(Helm::V4, "app", "repairable", &[]);
    env.kubectl(&["scale", "deployment", "app-web", "--replicas=4"]).success();
    env.drift(&["check", "app"]).code(2);
    let file = env.home().join("helmrelease.yaml");
    let hr = |drift: &str| {
        format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: app, namespace: flux-system}}\nspec:\n  releaseName: app\n  chart: {{spec: {{chart: repairable}}}}\n  driftDetection:\n{drift}"
        )
    };
    let rule = |target: &str| {
        format!("    mode: enabled\n    ignore:\n      - paths: [/spec/replicas]\n        target: {target}\n")
    };
    let cfg = file.to_str().unwrap();
    // A selector over the object as Helm applied it (its release annotation) selects it.
    std::fs::write(&file, hr(&rule("{kind: Deployment, annotationSelector: meta.helm.sh/release-name=app}"))).unwrap();
    let out = env.drift(&["check", "app", "--config", cfg, "-v"]).code(0);
    out.stdout_has("= spec.replicas ignored (").stdout_has("(HelmRelease app) spec.driftDetection.ignore[0])");
    // One that selects nothing hides nothing (left out, it would hide more than Flux does).
    std::fs::write(&file, hr(&rule("{kind: Deployment, annotationSelector: x=y}"))).unwrap();
    env.drift(&["check", "app", "--config", cfg]).code(2);
    // A field helm-drift does not know makes the rule an error of the file, named.
    std::fs::write(&file, hr(&rule("{kind: Deployment, color: red}"))).unwrap();
    env.drift(&["check", "app", "--config", cfg])
        .code(1)
        .stderr_has("spec.driftDetection.ignore[0].target.color not known to helm-drift");
    std::fs::write(&file, hr(&rule("{kind: Deployment}"))).unwrap();
    // The rules are the HelmRelease's release's only.
    env.install(Helm::V4, "other", "repairable", &[]);
    env.kubectl(&["scale", "deployment", "other-web", "--replicas=4"]).success();
    env.drift(&["check", "other", "--config", cfg]).code(2);
    // mode: disabled (helm-controller's default: it neither detects nor corrects drift) changes
    // nothing here, as when the HelmRelease is read from the cluster (issue 93): drift is drift.
    std::fs::write(&file, hr("    mode: disabled\n")).unwrap();
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"x"}}"#);
    let out = env.drift(&["check", "app", "--config", cfg, "-v"]).code(2);
    out.stdout_has("app-config");
    assert!(!out.stdout().contains("excluded"), "{}", out.dump());
}

#[test]
fn an_argo_cd_application_as_config() {
    let env = Env::new("gitops-argo");
    env.install(Helm::V3, "app", "repairable", &[]);
    env.kubectl(&["label", "deployment", "app-web", "team=ops"]).success();
    env.merge_patch("configmap", "app-config", r#"{"data":{"greeting":"x"}}"#);
    env.drift(&["check", "app"]).code(2);
    let file = env.home().join("application.yaml");
    std::fs::write(
        &file,
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: argocd}\nspec:\n  source: {helm: {releaseName: app}}\n  ignoreDifferences:\n    - group: apps\n      kind: Deployment\n      jqPathExpressions: ['.metadata.labels.team']\n    - kind: ConfigMap\n      managedFieldsManagers: [kubectl-patch]\n",
    )
    .unwrap();
    let cfg = file.to_str().unwrap();
    let out = env.drift(&["check", "app", "--config", cfg, "-v"]).code(0);
    out.stdout_has("= metadata.labels.team ignored (").stdout_has("= data.greeting ignored (");
    assert!(out.stderr().is_empty(), "{}", out.dump());
    // Someone else's edit of the same ConfigMap is still drift.
    env.kubectl(&["annotate", "configmap", "app-config", "owner=me"]).success();
    env.drift(&["check", "app", "--config", cfg]).code(2).stdout_has("metadata.annotations.owner");
    // An Application named unlike the release (no releaseName): applied to nothing, and said.
    let unnamed = env.home().join("unnamed.yaml");
    let text = std::fs::read_to_string(&file).unwrap().replace("  source: {helm: {releaseName: app}}\n", "");
    std::fs::write(&unnamed, text).unwrap();
    let out = env.drift(&["check", "app", "--config", unnamed.to_str().unwrap()]).code(2);
    out.stderr_has(&format!(
        "{} (Application web) describes release \"web\", which this run did not check: its rules apply to nothing",
        unnamed.display()
    ));
}

/// Where the config comes from: `--config`, else `$HELM_DRIFT_CONFIG`, else `./.helm-drift.yaml`
/// in the working directory.
#[test]
fn the_config_file_is_found_as_the_readme_says() {
    let env = Env::new("config-discovery");
    env.install(Helm::V4, "app", "repairable", &[]);
    env.kubectl(&["scale", "deployment", "app-web", "--replicas=4"]).success();
    env.drift(&["check", "app"]).code(2);
    let ignore_replicas = "ignore:\n  - paths: [/spec/replicas]\n    target: {kind: Deployment}\n";
    let nothing = env.home().join("nothing.yaml");
    std::fs::write(&nothing, "ignore: []\n").unwrap();
    let replicas = env.home().join("replicas.yaml");
    std::fs::write(&replicas, ignore_replicas).unwrap();
    // ./.helm-drift.yaml (each test runs in its own directory).
    std::fs::write(env.home().join(".helm-drift.yaml"), ignore_replicas).unwrap();
    env.drift(&["check", "app"]).code(0);
    // $HELM_DRIFT_CONFIG before it.
    env.drift(&["check", "app"]).env("HELM_DRIFT_CONFIG", &nothing).code(2);
    // --config before both.
    env.drift(&["check", "app", "--config", replicas.to_str().unwrap()]).env("HELM_DRIFT_CONFIG", &nothing).code(0);
}

//! A helmfile user's pipeline with `plan`: the README's script, run as written there (helmfile,
//! helm with the plugin installed and jq on the PATH), previews each release with the values
//! helmfile merges, fills the step summary, and fails exactly when the upgrade that
//! `helmfile sync` then runs fails (a Helm 4 conflict with a hand scale); Helm 3 and 4.

use crate::support::{Env, Helm, chart_path, repo_root};
use std::path::Path;

/// The book's helmfile script (the `plan` page): the `bash` block after "**In a helmfile pipeline**".
fn readme_script() -> String {
    let readme = std::fs::read_to_string(repo_root().join("docs/src/commands/plan.md")).unwrap();
    let at = readme.find("**In a helmfile pipeline**").expect("the plan page's helmfile pipeline");
    let block = &readme[at..];
    let start = block.find("```bash\n").expect("its bash block") + "```bash\n".len();
    let end = start + block[start..].find("```").unwrap();
    block[start..end].to_string()
}

/// Runs `args` with helm (the plugin installed), helmfile and jq on the PATH, in `dir`.
fn in_pipeline(env: &Env, helm: Helm, dir: &Path, program: &str, args: &[&str]) -> crate::support::Done {
    let bin = env.home().join("path");
    if !bin.exists() {
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(env.helm_bin(helm), bin.join("helm")).unwrap();
        let helmfile = env.tool("helmfile");
        assert!(helmfile.exists(), "no helmfile in the tools directory: scripts/tools.sh builds it");
        std::os::unix::fs::symlink(helmfile, bin.join("helmfile")).unwrap();
    }
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    // A program of the PATH given is named by its place in the test's home.
    let program = if program.starts_with('/') { Path::new(program).to_path_buf() } else { env.home().join(program) };
    let mut cmd = env.command(&program);
    cmd.current_dir(dir).env("PATH", path).env("GITHUB_STEP_SUMMARY", dir.join("summary.md")).args(args);
    crate::support::Run::new(cmd).output()
}

helm_matrix! {
    fn a_helmfile_pipeline_plans_each_release_and_fails_as_the_upgrade_would(helm: Helm) {
        let env = Env::new(&format!("helmfile-{}", helm.tag()));
        let plugin = env.plugin_dir();
        env.helm(helm, &["plugin", "install", plugin.to_str().unwrap()]).success();
        let dir = env.home().join("deploy");
        crate::plan::copy(&chart_path("basic"), &dir.join("chart"));
        std::fs::write(dir.join("values.yaml"), "replicas: 3\n").unwrap();
        let state = format!(
            "releases:\n  - name: web\n    namespace: {ns}\n    chart: ./chart\n    values: [values.yaml]\n  - name: new\n    namespace: {ns}\n    chart: ./chart\n",
            ns = env.ns
        );
        std::fs::write(dir.join("helmfile.yaml"), state).unwrap();
        env.install(helm, "web", "basic", &[]);
        let script = readme_script();
        // A clean cluster: both plans made (an install and an upgrade), the job green.
        let done = in_pipeline(&env, helm, &dir, "/bin/bash", &["-c", &script]);
        assert!(done.out.status.success(), "{}", done.dump());
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(summary.contains("web") && summary.contains("new"), "{summary}");
        assert!(summary.contains("spec.replicas"), "the values helmfile merges were planned: {summary}");
        // A hand scale: Helm 4's upgrade will conflict on it, and the job fails before it does.
        env.kubectl(&["scale", "deployment/web-web", "--replicas=5"]).success();
        let done = in_pipeline(&env, helm, &dir, "/bin/bash", &["-c", &script]);
        let sync = in_pipeline(&env, helm, &dir, "path/helmfile", &["sync"]);
        let v4 = helm == Helm::V4;
        assert_eq!(done.out.status.success(), !v4, "the pipeline fails exactly when the upgrade will\n{}", done.dump());
        assert_eq!(sync.out.status.success(), !v4, "helmfile sync\n{}", sync.dump());
        if v4 {
            done.says("would fail");
            sync.says("conflict");
        } else {
            assert_eq!(env.get("deployment", "web-web", "{.spec.replicas}"), "3");
        }
    }
}

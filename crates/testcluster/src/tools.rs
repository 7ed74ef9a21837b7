//! Finds the test tools that `scripts/tools.sh` builds (kube-apiserver, etcd, helm3, helm4, the
//! OCI registry, the stand-ins for Helm SDK controllers...).

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

const NEEDED: [&str; 14] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kubectl",
    "helm3",
    "helm4",
    "helm3.12",
    "helm3.18",
    "registry",
    "oras",
    "prometheus",
    "helmfile",
    "manager",
    "helm-controller",
];

/// The directory holding the built tools.
#[derive(Clone, Debug)]
pub struct Tools {
    dir: PathBuf,
}

impl Tools {
    /// `HELM_DRIFT_TOOLS` if set, else the cache directory `scripts/tools.sh --dir` names.
    /// Fails, naming the script to run, when any tool is missing.
    pub fn locate() -> Result<Tools> {
        let dir = match std::env::var_os("HELM_DRIFT_TOOLS") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => {
                let script = repo_root().join("scripts/tools.sh");
                let out = std::process::Command::new("bash")
                    .arg(&script)
                    .arg("--dir")
                    .output()
                    .with_context(|| format!("running {} --dir", script.display()))?;
                PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
            }
        };
        let missing: Vec<_> = NEEDED.iter().filter(|t| !dir.join(t).is_file()).collect();
        if !missing.is_empty() {
            bail!(
                "test tools missing in {}: {missing:?}. Run scripts/tools.sh (or scripts/test.sh, which runs it) to build them",
                dir.display()
            );
        }
        Ok(Tools { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, tool: &str) -> PathBuf {
        self.dir.join(tool)
    }
}

/// The repository root (this crate lives in `crates/testcluster`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

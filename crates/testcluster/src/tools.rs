//! Finds the test tools that `scripts/tools.sh` builds (kube-apiserver, etcd, helm3, helm4, the
//! OCI registry, the stand-ins for Helm SDK controllers...), and the control plane of the
//! Kubernetes version under test: `HELM_DRIFT_CONTROL_PLANE` names the directory of another
//! version's kube-apiserver and kube-controller-manager (`scripts/tools.sh --kubernetes VERSION`),
//! kubectl, etcd and Helm staying the tools directory's.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// What a control plane needs (all a demo's cluster needs of these).
const CONTROL_PLANE: [&str; 4] = ["etcd", "kube-apiserver", "kube-controller-manager", "kubectl"];
/// The binaries of one Kubernetes version, taken from `HELM_DRIFT_CONTROL_PLANE` when set.
const VERSIONED: [&str; 2] = ["kube-apiserver", "kube-controller-manager"];

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
    /// Another Kubernetes version's kube-apiserver and kube-controller-manager.
    control_plane: Option<PathBuf>,
}

impl Tools {
    /// `HELM_DRIFT_TOOLS` if set, else the cache directory `scripts/tools.sh --dir` names.
    /// Fails, naming the script to run, when any tool of the test suite is missing.
    pub fn locate() -> Result<Tools> {
        Tools::locate_with(&NEEDED)
    }

    /// The tools of a control plane only (what `testcluster`, the demo's cluster, runs).
    pub fn locate_control_plane() -> Result<Tools> {
        Tools::locate_with(&CONTROL_PLANE)
    }

    fn locate_with(needed: &[&str]) -> Result<Tools> {
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
        let control_plane = std::env::var_os("HELM_DRIFT_CONTROL_PLANE").filter(|d| !d.is_empty()).map(PathBuf::from);
        let tools = Tools { dir, control_plane };
        let missing: Vec<_> = needed.iter().filter(|t| !tools.path(t).is_file()).collect();
        if !missing.is_empty() {
            bail!(
                "test tools missing in {}{}: {missing:?}. Run scripts/tools.sh (or scripts/test.sh, which runs it) to build them",
                tools.dir.display(),
                tools.control_plane.as_ref().map(|d| format!(" or {}", d.display())).unwrap_or_default()
            );
        }
        Ok(tools)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, tool: &str) -> PathBuf {
        match &self.control_plane {
            Some(other) if VERSIONED.contains(&tool) => other.join(tool),
            _ => self.dir.join(tool),
        }
    }
}

/// The repository root (this crate lives in `crates/testcluster`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

//! Everything that runs the `helm` binary (`$HELM_BIN` when run by Helm) or writes a chart and
//! values from a release record for it: `render` (`helm template`) and `repair --upgrade`
//! (`helm upgrade`).

use crate::release::Release;
use anyhow::{Context, Result, bail};
use std::path::{Component, Path, PathBuf};

mod capture;
mod scratch;

pub(crate) use scratch::bounded_output;

/// The most helm may print for one command (a release's manifest and hooks, as JSON): Helm's
/// own record is at most 1 MiB compressed, so this holds any release Helm could store.
const HELM_STDOUT: usize = 64 << 20;
/// The most of helm's words read (the rest is dropped).
const HELM_STDERR: usize = 1 << 20;
/// The longest one helm command on a chart, values or repository may run (a render, a dry-run
/// upgrade, `helm show chart`): helm is stopped past it. A real `helm upgrade` waits as long as
/// helm's own `--timeout`.
const HELM_SECONDS: u64 = 120;

/// What `helm template` is told of the cluster (`.Capabilities`).
#[derive(Clone, Debug)]
pub(crate) struct Capabilities {
    pub(crate) kube_version: String,
    pub(crate) api_versions: Vec<String>,
}

/// The helm binary to run, and the kubeconfig it reaches the cluster through when not the
/// environment's (a fleet member's, written for it).
#[derive(Clone, Debug)]
pub(crate) struct HelmBinary {
    bin: PathBuf,
    kubeconfig: Option<PathBuf>,
    /// The longest one of its commands may run (but a real upgrade).
    time: std::time::Duration,
    /// Its working directory, when not the caller's (an empty one: a chart named by someone
    /// else is never found as a local path).
    dir: Option<PathBuf>,
}

impl HelmBinary {
    /// `HELM_BIN` when run by Helm, else `helm` from PATH.
    pub(crate) fn from_env() -> HelmBinary {
        let bin =
            std::env::var_os("HELM_BIN").filter(|h| !h.is_empty()).map_or_else(|| PathBuf::from("helm"), PathBuf::from);
        HelmBinary { bin, kubeconfig: None, time: std::time::Duration::from_secs(HELM_SECONDS), dir: None }
    }

    /// This helm, reaching the cluster only through the kubeconfig file `path` (a fleet
    /// member's): the environment's connection (`KUBECONFIG`, `HELM_KUBE*`) is not passed on.
    pub(crate) fn for_cluster(&self, path: &Path) -> HelmBinary {
        HelmBinary { kubeconfig: Some(path.to_path_buf()), ..self.clone() }
    }

    /// This helm, each command stopped after `time` at most (what is left of a larger budget).
    pub(crate) fn within(&self, time: std::time::Duration) -> HelmBinary {
        HelmBinary { time: time.min(self.time), ..self.clone() }
    }

    /// This helm, run in directory `dir` (an empty one, for charts named by someone else).
    pub(crate) fn in_dir(&self, dir: &Path) -> HelmBinary {
        HelmBinary { dir: Some(dir.to_path_buf()), ..self.clone() }
    }

    /// The major version of this helm (`helm version`), `None` when it does not say.
    pub(crate) async fn major(&self) -> Option<u32> {
        let mut cmd = self.command();
        cmd.args(["version", "--template", "{{.Version}}"]);
        let (ok, stdout, _) = self.run(cmd).await.ok()?;
        let major = stdout.trim().strip_prefix('v')?.split('.').next()?;
        ok.then(|| major.parse().ok()).flatten()
    }

    /// `helm template` of the release's chart with its stored values, as the cluster would see
    /// it (its Kubernetes version and served API versions), `--is-upgrade` after revision 1;
    /// `extra` arguments come last (`--set-json key=value`).
    pub(crate) async fn template(
        &self,
        release: &Release,
        files: &ChartFiles,
        cluster: &Capabilities,
        extra: &[String],
    ) -> Result<String> {
        let mut cmd = self.command();
        cmd.arg("template")
            .arg(release.name())
            .arg(&files.chart)
            .args(["--namespace", release.namespace(), "--no-hooks", "--kube-version", &cluster.kube_version])
            .arg("--api-versions")
            .arg(cluster.api_versions.join(","))
            .arg("--values")
            .arg(&files.values);
        // Revision 1 was rendered by an install; later revisions by an upgrade (or rollback).
        if release.revision() > 1 {
            cmd.arg("--is-upgrade");
        }
        cmd.args(extra);
        let (ok, stdout, stderr) = self.run(cmd).await?;
        if !ok {
            bail!("{} template failed: {}", self.bin.display(), stderr.trim());
        }
        Ok(stdout)
    }

    /// `helm upgrade` of the release to its own chart and stored values (a new revision);
    /// `--force-conflicts` for server-side applied releases (take back fields others edited).
    /// Returns what helm printed.
    pub(crate) async fn upgrade(&self, release: &Release, files: &ChartFiles, dry_run: bool) -> Result<String> {
        let mut cmd = self.command();
        cmd.arg("upgrade")
            .arg(release.name())
            .arg(&files.chart)
            .args(["--namespace", release.namespace(), "--reset-values", "--values"])
            .arg(&files.values);
        if dry_run {
            cmd.arg("--dry-run=client");
        }
        if release.apply().is_server_side() {
            cmd.arg("--force-conflicts");
        }
        let time = dry_run.then_some(self.time);
        let (ok, stdout, stderr) = self.run_for(cmd, time).await?;
        let output = format!("{stdout}{stderr}");
        if !ok {
            bail!("{} upgrade failed: {}", self.bin.display(), output.trim());
        }
        Ok(output)
    }

    /// The manifest a `helm upgrade` of the release to its own chart and stored values would
    /// apply now, rendered as `against` says (the server's `lookup` only for a trusted record).
    /// Nothing is changed.
    pub(crate) async fn render_now(&self, release: &Release, files: &ChartFiles, against: DryRun) -> Result<String> {
        let mut cmd = self.command();
        cmd.arg("upgrade")
            .arg(release.name())
            .arg(&files.chart)
            .args(["--namespace", release.namespace(), "--reset-values", "--values"])
            .arg(&files.values)
            .args([against.flag(), "--output", "json"]);
        let (ok, stdout, stderr) = self.run(cmd).await?;
        if !ok {
            return Err(self.dry_run_failed(&stderr, against));
        }
        let (_, doc) = self.printed_release(&stdout)?;
        Ok(doc.get("manifest").and_then(serde_json::Value::as_str).unwrap_or_default().to_string())
    }

    /// What `helm upgrade RELEASE CHART FLAGS` would apply now (`--dry-run=server`: `lookup`,
    /// `.Capabilities` and the values merge are Helm's own): its manifest, the chart, and the
    /// hooks it would run; `Err` with helm's words when helm says the upgrade itself fails
    /// (`UPGRADE FAILED`: an object it may not take, a chart that fails to render). Nothing is
    /// changed.
    pub(crate) async fn preview(
        &self,
        release: &str,
        namespace: &str,
        chart: &str,
        flags: &[String],
        against: DryRun,
    ) -> Result<Previewed> {
        let mut cmd = self.command();
        cmd.args(["upgrade", release, chart, "--namespace", namespace]).args(flags);
        cmd.args([against.flag(), "--output", "json"]);
        let (ok, stdout, stderr) = self.run(cmd).await?;
        // Helm's own refusals of the upgrade (as opposed to a chart or a flag it cannot read).
        let refused = [
            "UPGRADE FAILED: ",
            "INSTALLATION FAILED: ",
            "Error: Unable to continue with ",
            "Error: unable to continue with ",
        ]
        .iter()
        .find_map(|m| Some(stderr.find(m)? + if m.starts_with("Error: ") { "Error: ".len() } else { m.len() }));
        if let (false, Some(at)) = (ok, refused) {
            return Ok(Previewed::Refused(against.said(&stderr[at..])));
        }
        if !ok {
            return Err(self.dry_run_failed(&stderr, against));
        }
        let (json, doc) = self.printed_release(&stdout)?;
        let text =
            |v: Option<&serde_json::Value>| v.and_then(serde_json::Value::as_str).unwrap_or_default().to_string();
        let hooks = doc.get("hooks").and_then(serde_json::Value::as_array).map_or_else(Vec::new, |hooks| {
            hooks
                .iter()
                .map(|h| {
                    let events: Vec<String> = h
                        .get("events")
                        .and_then(serde_json::Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|e| e.as_str().map(str::to_string))
                        .collect();
                    format!("{} {} ({})", text(h.get("kind")), text(h.get("name")), events.join(","))
                })
                .collect()
        });
        let meta = doc.pointer("/chart/metadata");
        let chart = format!("{}-{}", text(meta.and_then(|m| m.get("name"))), text(meta.and_then(|m| m.get("version"))));
        Ok(Previewed::Ready(Preview { manifest: text(doc.get("manifest")), chart, hooks, json }))
    }

    /// The release `upgrade --dry-run=server --output json` printed: its JSON text and tree
    /// (`--install` of a release that does not exist says so on stdout before the JSON).
    fn printed_release(&self, stdout: &str) -> Result<(String, serde_json::Value)> {
        let json = stdout.find('{').map_or("", |at| &stdout[at..]).to_string();
        let doc = serde_json::from_str(&json)
            .with_context(|| format!("{} upgrade --dry-run=server printed no release JSON", self.bin.display()))?;
        Ok((json, doc))
    }

    /// A dry-run upgrade helm could not run, with what it said (cut for an untrusted record).
    fn dry_run_failed(&self, stderr: &str, against: DryRun) -> anyhow::Error {
        anyhow::anyhow!("{} upgrade {} failed: {}", self.bin.display(), against.flag(), against.said(stderr))
    }

    fn command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.bin);
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        if let Some(path) = &self.kubeconfig {
            for (key, _) in std::env::vars_os() {
                let key = key.to_string_lossy();
                if key == "KUBECONFIG" || key.starts_with("HELM_KUBE") {
                    cmd.env_remove(key.as_ref());
                }
            }
            cmd.arg("--kubeconfig").arg(path);
        }
        cmd
    }

    /// Runs helm and reads what it prints within [`HELM_STDOUT`] (a chart can print without
    /// bound: helm is stopped past it) and [`HELM_STDERR`], stopping it past its time.
    async fn run(&self, cmd: std::process::Command) -> Result<(bool, String, String)> {
        self.run_for(cmd, Some(self.time)).await
    }

    /// [`run`](Self::run) within `time` (`None`: a real upgrade, which waits as long as helm's
    /// own `--timeout`).
    async fn run_for(
        &self,
        cmd: std::process::Command,
        time: Option<std::time::Duration>,
    ) -> Result<(bool, String, String)> {
        let limits = capture::CaptureLimits { stdout: HELM_STDOUT, stderr: HELM_STDERR, time };
        let done = capture::capture(cmd, "helm", limits).await?;
        Ok((done.ok, done.stdout, done.stderr))
    }
}

/// How a dry-run upgrade renders the chart, which decides whose rights its templates read the
/// cluster with. A chart, hooks and values stored in a release record are written by whoever may
/// write Secrets in the record's namespace, and a template's `lookup` reads the cluster with the
/// rights of whoever runs helm: a record the operator does not trust is rendered without them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DryRun {
    /// `--dry-run=server`: `lookup` is answered by the cluster with the reader's rights (the
    /// operator's own chart and values, or a record of a trusted namespace).
    Server,
    /// `--dry-run=client`: Helm reads no object for a template (`lookup` answers an empty
    /// map) and runs no hook, and what helm says of a failure is cut to its last `Error:` line;
    /// for what an untrusted record holds.
    Client,
}

/// How much of helm's words about a run of an untrusted record is shown.
const SAID_UNTRUSTED: usize = 400;

impl DryRun {
    /// The dry run for what a record of `namespace` holds: the server's only when the operator
    /// trusts it.
    pub(crate) fn for_record(trust: &crate::settings::Trust, namespace: &str) -> DryRun {
        if trust.trusts(namespace) { DryRun::Server } else { DryRun::Client }
    }

    fn flag(self) -> &'static str {
        match self {
            DryRun::Server => "--dry-run=server",
            DryRun::Client => "--dry-run=client",
        }
    }

    /// Whether templates read the cluster (`lookup`).
    pub(crate) fn reads_the_cluster(self) -> bool {
        self == DryRun::Server
    }

    /// What helm said (stderr), as shown: whole for a trusted run; for an untrusted one only
    /// its last `Error:` line (else its last line), cut at [`SAID_UNTRUSTED`] characters, so that
    /// a template cannot fill the operator's terminal or log with what it computed.
    fn said(self, stderr: &str) -> String {
        let text = stderr.trim();
        if self == DryRun::Server {
            return text.to_string();
        }
        let line = text.lines().rev().find(|l| l.contains("Error:")).or_else(|| text.lines().last()).unwrap_or("");
        let line = line.trim();
        match line.char_indices().nth(SAID_UNTRUSTED) {
            Some((at, _)) => format!("{}… (cut: the record is not trusted)", &line[..at]),
            None => line.to_string(),
        }
    }
}

/// What `helm upgrade --dry-run=server` says: what it would apply, or helm's own refusal of
/// the upgrade (`UPGRADE FAILED: …`, in helm's words): the upgrade would fail.
#[derive(Clone, Debug)]
pub(crate) enum Previewed {
    Ready(Preview),
    Refused(String),
}

/// What `helm upgrade --dry-run=server` would apply.
#[derive(Clone, Debug)]
pub(crate) struct Preview {
    pub(crate) manifest: String,
    /// `name-version` of the chart it upgrades to.
    pub(crate) chart: String,
    /// `Kind name (events)` of each hook it would run.
    pub(crate) hooks: Vec<String>,
    /// The release as helm printed it (JSON).
    pub(crate) json: String,
}

/// A chart directory and a values file for helm, in a temporary directory that lives as long as
/// this value.
pub(crate) struct ChartFiles {
    pub(crate) chart: PathBuf,
    pub(crate) values: PathBuf,
    _dir: tempfile::TempDir,
}

impl ChartFiles {
    /// The release's chart (rebuilt from the record unless `chart` points at its source) and its
    /// user-supplied values. `record` names the storage record in errors.
    pub(crate) fn write(release: &Release, record: &str, chart: Option<&Path>) -> Result<ChartFiles> {
        let dir = tempfile::Builder::new().prefix("helm-drift-").tempdir()?;
        let chart = match chart {
            Some(c) => c.to_path_buf(),
            None => write_chart(release, &dir.path().join("chart"))
                .with_context(|| format!("cannot rebuild the chart from {record}"))?,
        };
        let values = write_values(release, dir.path())?;
        Ok(ChartFiles { chart, values, _dir: dir })
    }
}

/// Writes the stored chart (metadata, values, schema, templates, files) as a chart directory.
/// Charts with subcharts cannot be rebuilt: Helm does not store them with the release.
pub(crate) fn write_chart(release: &Release, dir: &Path) -> Result<PathBuf> {
    let Some(chart) = &release.chart else { bail!("the record holds no chart") };
    if chart.metadata.has_dependencies() {
        bail!(
            "chart {} declares dependencies (subcharts), which Helm does not store with the release: pass --chart PATH with the chart's source",
            chart.metadata.name
        );
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("Chart.yaml"), chart.metadata.chart_yaml())?;
    let values = chart.default_values().context("the chart's values")?;
    std::fs::write(dir.join("values.yaml"), serde_yaml::to_string(&values)?)?;
    if let Some(schema) = &chart.schema {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD.decode(schema).context("values schema: bad base64")?;
        std::fs::write(dir.join("values.schema.json"), bytes)?;
    }
    let templates = chart.templates().context("the chart's templates")?;
    let files = chart.files(|_| true).context("the chart's files")?;
    for file in templates.iter().chain(&files) {
        let rel = Path::new(&file.name);
        if rel.is_absolute() || rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            bail!("chart file {:?}: not a relative path inside the chart", file.name);
        }
        let bytes = file.bytes().with_context(|| format!("chart file {:?}: bad base64", file.name))?;
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    Ok(dir.to_path_buf())
}

/// Writes the release's user-supplied values (`helm install -f/--set`) to `dir/user-values.yaml`.
pub(crate) fn write_values(release: &Release, dir: &Path) -> Result<PathBuf> {
    let values = dir.join("user-values.yaml");
    let user = release.user_values().context("the release's values")?;
    std::fs::write(&values, serde_yaml::to_string(&user)?)?;
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn every_helm_command_but_a_real_upgrade_is_stopped_past_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("helm");
        std::fs::write(&bin, "#!/bin/sh\nsleep 30\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let helm = HelmBinary { bin, kubeconfig: None, time: Duration::from_secs(HELM_SECONDS), dir: None };
        let helm = helm.within(Duration::from_secs(1));
        let started = std::time::Instant::now();
        assert_eq!(helm.major().await, None);
        let e = helm.chart_version("web", &[]).await.unwrap_err().to_string();
        assert!(e.contains("helm took longer than 1s"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        // A larger budget never widens the one it has; a cluster's helm keeps it.
        assert_eq!(helm.within(Duration::from_secs(3600)).time, Duration::from_secs(1));
        assert_eq!(helm.for_cluster(Path::new("/k")).time, Duration::from_secs(1));
        // The proxy's chart is named in an empty directory of its own.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(helm.in_dir(empty.path()).command().get_current_dir(), Some(empty.path()));
    }
}

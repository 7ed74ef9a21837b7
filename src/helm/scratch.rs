//! Helm run for what it knows without a cluster: its own engines on a scratch chart of one
//! template (its `--set` parser for a Flux `valuesFrom` entry's `targetPath`, its Go template
//! engine with Sprig for a Cluster API Helm add-on provider `valuesTemplate`), and what a chart
//! says of itself (`helm show chart`: the version a controller compares before it upgrades).

use super::HelmBinary;
use super::capture::{CaptureLimits, capture};
use anyhow::{Context, Result, bail};
use base64::Engine;
use std::path::Path;
use std::time::Duration;

/// How long one scratch render may take (a template may loop).
const RENDER_TIME: Duration = Duration::from_secs(30);
/// How much a scratch render may print.
const RENDER_BYTES: usize = 8 << 20;

/// The template file of a `valuesTemplate`, as Helm names it in its errors.
const TEMPLATE: &str = "values/templates/_template.tpl";

impl HelmBinary {
    /// `values` with `path=value` set by Helm's own `--set` parser (`strvals`: `--set` infers
    /// the type, `--set-string` keeps a string), as helm-controller sets a `valuesFrom` entry's
    /// `targetPath`: a chart of one template that prints its values renders them back.
    pub(crate) async fn set_path(
        &self,
        values: &serde_json::Value,
        assignment: &str,
        string: bool,
    ) -> Result<serde_json::Value> {
        let dir = scratch_chart("{{ toJson .Values }}\n", None)?;
        std::fs::write(dir.path().join("values.json"), serde_json::to_string(values)?)?;
        let mut cmd = self.template_command(dir.path());
        cmd.arg(if string { "--set-string" } else { "--set" }).arg(assignment);
        let stdout = self.render(cmd).await?;
        let json = stdout.lines().find(|l| l.starts_with('{')).unwrap_or("{}");
        serde_json::from_str(json).context("helm printed no values")
    }

    /// `template` executed over `data` by Go's text/template with Sprig's functions, as the
    /// Cluster API Helm add-on provider executes a `valuesTemplate` (its data the top level:
    /// `.Cluster`, `$`). The text is taken back whole (base64 through Helm, which would
    /// otherwise drop the `<no value>` CAAPH writes for a missing key). Functions only Helm
    /// has (`toYaml`, `lookup`, `include`...) or CAAPH removed (`env`, `getHostByName`) must
    /// be refused before: see `plan::caaph`.
    pub(crate) async fn go_template(&self, template: &str, data: &serde_json::Value) -> Result<String> {
        // A manifest helm can parse (a map), its one value the text.
        let body = format!("text: {{{{ include \"{TEMPLATE}\" .Values.data | b64enc | quote }}}}\n");
        let dir = scratch_chart(&body, Some(template))?;
        std::fs::write(dir.path().join("values.json"), serde_json::to_string(&serde_json::json!({ "data": data }))?)?;
        let stdout = self.render(self.template_command(dir.path())).await.map_err(|e| {
            // Helm's words name the scratch file: say the line and column of the template.
            anyhow::anyhow!("{}", e.to_string().replace(&format!("{TEMPLATE}:"), "line "))
        })?;
        let encoded = stdout.lines().find_map(|l| l.strip_prefix("text: ")).unwrap_or_default();
        let text = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim().trim_matches('"'))
            .context("helm printed no text")?;
        String::from_utf8(text).context("the template printed bytes that are not UTF-8")
    }

    /// The version in `chart`'s Chart.yaml (`helm show chart CHART [--version V] [--repo URL]`:
    /// a path, `repo/name`, `oci://...`).
    pub(crate) async fn chart_version(&self, chart: &str, flags: &[String]) -> Result<String> {
        let mut cmd = self.command();
        cmd.args(["show", "chart", chart]).args(flags);
        let (ok, stdout, stderr) = self.run(cmd).await?;
        if !ok {
            bail!("{} show chart {chart} failed: {}", self.bin.display(), stderr.trim());
        }
        let mut budget = crate::yaml::Budget::for_manifest(stdout.len());
        let meta =
            crate::yaml::to_json_within(&stdout, &mut budget).context("helm show chart printed no Chart.yaml")?;
        meta.get("version")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
            .with_context(|| format!("chart {chart} has no version"))
    }

    fn template_command(&self, dir: &Path) -> std::process::Command {
        let mut cmd = self.command();
        cmd.args(["template", "values"]).arg(dir).arg("--values").arg(dir.join("values.json"));
        cmd
    }

    /// What a scratch render printed, within [`RENDER_TIME`] and [`RENDER_BYTES`]; helm's words
    /// when it fails.
    async fn render(&self, cmd: std::process::Command) -> Result<String> {
        bounded_output(cmd, "helm").await
    }
}

/// What `cmd` (a helper the run starts: helm, kustomize) printed, within [`RENDER_TIME`] and
/// [`RENDER_BYTES`]; its words (2,000 characters at most) when it fails.
pub(crate) async fn bounded_output(cmd: std::process::Command, program: &str) -> Result<String> {
    let limits = CaptureLimits { stdout: RENDER_BYTES, stderr: 64 << 10, time: Some(RENDER_TIME) };
    let done = capture(cmd, program, limits).await?;
    if !done.ok {
        let said = done.stderr.trim().trim_start_matches("Error: ");
        bail!("{}", said.chars().take(2000).collect::<String>());
    }
    Ok(done.stdout)
}

/// A chart named `values` whose one template is `body`, with `partial` as
/// `templates/_template.tpl`, in a directory removed when dropped.
fn scratch_chart(body: &str, partial: Option<&str>) -> Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new().prefix("helm-drift-values-").tempdir()?;
    std::fs::write(dir.path().join("Chart.yaml"), "apiVersion: v2\nname: values\nversion: 0.0.0\n")?;
    std::fs::create_dir(dir.path().join("templates"))?;
    std::fs::write(dir.path().join("templates/values.json"), body)?;
    if let Some(partial) = partial {
        std::fs::write(dir.path().join("templates/_template.tpl"), partial)?;
    }
    Ok(dir)
}

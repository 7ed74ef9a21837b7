//! The release record as Helm 3 and Helm 4 write it (JSON); unknown fields are tolerated.

use serde::Deserialize;

/// One revision of a release, as stored by Helm.
#[derive(Clone, Debug, Deserialize)]
pub struct Release {
    pub name: String,
    pub namespace: String,
    pub version: u32,
    #[serde(default)]
    pub info: Info,
    #[serde(default)]
    pub chart: Option<Chart>,
    /// The user-supplied values (`helm install -f/--set`).
    #[serde(default)]
    pub config: Option<serde_json::Value>,
    #[serde(default)]
    pub manifest: String,
    /// Hooks are counted, never compared (they are not expected to exist).
    #[serde(default)]
    pub hooks: Vec<serde::de::IgnoredAny>,
    /// Helm 4: `ssa`, `csa`, or absent (client-side apply).
    #[serde(default)]
    pub apply_method: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Info {
    #[serde(default)]
    pub status: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Chart {
    pub metadata: ChartMetadata,
    /// Templates (`templates/...`), data base64-encoded.
    #[serde(default)]
    pub templates: Option<Vec<ChartFile>>,
    /// Every other file of the chart (`crds/...`, `files/...`), data base64-encoded.
    #[serde(default)]
    pub files: Option<Vec<ChartFile>>,
    /// The chart's default values.
    #[serde(default)]
    pub values: Option<serde_json::Value>,
    /// `values.schema.json`, base64-encoded.
    #[serde(default)]
    pub schema: Option<String>,
}

/// A file of a stored chart.
#[derive(Clone, Debug, Deserialize)]
pub struct ChartFile {
    pub name: String,
    /// Base64 (Go's `[]byte` in JSON).
    #[serde(default)]
    pub data: Option<String>,
}

impl ChartFile {
    /// The file's bytes; `None` when the base64 is invalid.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.decode(self.data.as_deref().unwrap_or("")).ok()
    }
}

/// `Chart.yaml` as stored (Helm's metadata fields, camelCase in JSON).
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
pub struct ChartMetadata {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
    /// Everything else (apiVersion, appVersion, dependencies...), kept to rebuild Chart.yaml.
    #[serde(flatten)]
    pub rest: serde_json::Map<String, serde_json::Value>,
}

impl ChartMetadata {
    /// Whether the chart declares subcharts (which Helm does not store with the release).
    pub fn has_dependencies(&self) -> bool {
        self.rest.get("dependencies").and_then(|d| d.as_array()).is_some_and(|d| !d.is_empty())
    }
}

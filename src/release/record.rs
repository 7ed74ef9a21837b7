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
    #[serde(default)]
    pub hooks: Vec<Hook>,
    /// Helm 4: `ssa`, `csa`, or absent (client-side apply).
    #[serde(default)]
    pub apply_method: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Info {
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub description: String,
    /// Helm 3 writes zero times as `""`; Helm 4 omits them.
    #[serde(default)]
    pub last_deployed: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Chart {
    pub metadata: ChartMetadata,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct ChartMetadata {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Hook {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub path: String,
}

//! A HelmChartProxy's `valuesTemplate` executed as CAAPH executes it: Go's text/template with
//! Sprig's functions but `env`, `expandenv` and `getHostByName`, over `.Cluster`,
//! `.ControlPlane` and `.InfraCluster`, a missing key printed `<no value>`. Helm's engine runs
//! it (it holds the same Go and Sprig) after the functions Helm adds (`toYaml`, `include`,
//! `lookup`...) and those CAAPH removes are refused as CAAPH refuses them, by name.

use crate::helm::HelmBinary;
use serde_json::Value;

/// Functions Helm's engine has and CAAPH's does not: a template calling one fails in CAAPH
/// (`function "toYaml" not defined`).
const NOT_IN_CAAPH: &[&str] = &[
    "env",
    "expandenv",
    "getHostByName",
    "toToml",
    "mustToToml",
    "fromToml",
    "toYaml",
    "mustToYaml",
    "toYamlPretty",
    "fromYaml",
    "fromYamlArray",
    "fromJson",
    "fromJsonArray",
    "include",
    "tpl",
    "required",
    "lookup",
    "mustToDuration",
    "durationSeconds",
    "durationMilliseconds",
    "durationMicroseconds",
    "durationNanoseconds",
    "durationMinutes",
    "durationHours",
    "durationDays",
    "durationWeeks",
    "durationRoundTo",
    "durationTruncateTo",
];

/// Why a values template gives no values.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TemplateError {
    /// CAAPH fails on it too: its reconcile of the cluster stops there.
    #[error("its valuesTemplate does not execute: {0}")]
    Fails(String),
    /// Helm's engine stops where CAAPH's prints `<no value>`: not planned.
    #[error(
        "its valuesTemplate reads a field of a missing one ({0}): CAAPH writes `<no value>` there, Helm's engine that helm-drift renders with stops; give the field a default (`dig`, `default`) to plan it"
    )]
    MissingField(String),
    /// Helm could not be run.
    #[error("its valuesTemplate could not be rendered: {0}")]
    NotRendered(String),
}

/// The values text CAAPH writes for `template` over `data` (`{Cluster, ControlPlane?,
/// InfraCluster?}`).
pub(crate) async fn execute(helm: &HelmBinary, template: &str, data: &Value) -> Result<String, TemplateError> {
    if let Some(name) = foreign_functions(template).first() {
        return Err(TemplateError::Fails(format!("function {name:?} not defined")));
    }
    if template.is_empty() {
        return Ok(String::new());
    }
    helm.go_template(template, data).await.map_err(|e| {
        let said = e.to_string();
        match said.find("nil pointer evaluating interface {}.") {
            Some(at) if said.contains("executing ") => TemplateError::MissingField(said[at..].to_string()),
            _ if said.contains("cannot run ") => TemplateError::NotRendered(said),
            _ => TemplateError::Fails(said),
        }
    })
}

/// The functions a template calls that CAAPH's engine does not have, in the order they appear:
/// identifiers in actions (`{{ ... }}`) outside strings, comments, fields (`.x`) and variables
/// (`$x`).
fn foreign_functions(template: &str) -> Vec<&'static str> {
    let mut found = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let body = &rest[open + 2..];
        let close = body.find("}}").unwrap_or(body.len());
        for word in calls(&body[..close]) {
            if let Some(name) = NOT_IN_CAAPH.iter().find(|n| **n == word)
                && !found.contains(name)
            {
                found.push(*name);
            }
        }
        rest = &body[close.min(body.len())..];
    }
    found
}

/// The identifiers of one action that name functions.
fn calls(action: &str) -> Vec<&str> {
    let bytes = action.as_bytes();
    let (mut out, mut i) = (Vec::new(), 0);
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'"' | b'\'' => {
                i += 1;
                while i < bytes.len() && bytes[i] != c {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'`' => i += action[i + 1..].find('`').map_or(bytes.len(), |n| n + 2),
            b'/' if action[i..].starts_with("/*") => i += action[i..].find("*/").map_or(bytes.len(), |n| n + 2),
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let before = action[..start].trim_end_matches(|ch: char| ch.is_ascii_alphanumeric() || ch == '_');
                if !before.ends_with(['.', '$']) {
                    out.push(&action[start..i]);
                }
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_caaph_does_not_have_are_found_by_name_outside_strings_and_fields() {
        assert_eq!(foreign_functions("cidr: {{ .Cluster.spec.clusterNetwork.pods.cidrBlocks | toYaml }}"), ["toYaml"]);
        assert_eq!(
            foreign_functions("{{ include \"x\" . }} {{ lookup \"v1\" \"Secret\" \"a\" \"b\" }}"),
            ["include", "lookup"]
        );
        assert_eq!(foreign_functions("{{ env \"HOME\" }}{{ getHostByName \"x\" }}"), ["env", "getHostByName"]);
        let fine = "name: {{ .Cluster.metadata.name | upper | quote }} # toYaml\n{{ $tpl := \"toYaml\" }}{{ .Values.include }}{{/* lookup */}}{{ `tpl` }}";
        assert!(foreign_functions(fine).is_empty(), "{:?}", foreign_functions(fine));
        assert!(foreign_functions("{{ $env := 1 }}{{ $env }}{{ .env }}").is_empty());
        assert!(foreign_functions("{{ \"a\\\"toYaml\" }}").is_empty(), "an escaped quote stays in the string");
        assert!(foreign_functions("no actions: toYaml").is_empty());
        assert_eq!(foreign_functions("{{ toJson .Cluster }}{{ tpl"), ["tpl"], "an unclosed action is read to its end");
    }
}

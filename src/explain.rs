//! `check --explain`: for each modified field, which value of the release produced it. The
//! candidates are the value keys whose stored value equals the recorded field value; the chart
//! rebuilt from the record is rendered again with one candidate changed to a probe value, and the
//! key whose probe changes the field is the one (bounded: a few renders per field).

use crate::desired;
use crate::helm::{Capabilities, ChartFiles, HelmBinary};
use crate::model::{Cause, DriftReport, Explanation};
use crate::release::Release;
use anyhow::Result;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// At most this many candidate keys are tried for one field.
const CANDIDATES_PER_FIELD: usize = 5;

/// Explains the modified fields of a report.
pub async fn explain(
    helm: &HelmBinary,
    release: &Release,
    files: &ChartFiles,
    cluster: &Capabilities,
    report: &DriftReport,
) -> Result<Vec<Explanation>> {
    let values = merged_values(release);
    let mut leaves = Vec::new();
    flatten(&values, "", &mut leaves);
    // One render per probed key, shared by every field it may explain.
    let mut renders: HashMap<String, Vec<desired::DesiredObject>> = HashMap::new();
    let mut out = Vec::new();
    for o in &report.objects {
        for f in &o.fields {
            let (Some(recorded), Some(live), Some(at)) = (&f.recorded, &f.live, f.path.recorded_pointer()) else {
                continue;
            };
            let candidates: Vec<&(String, Value)> = leaves
                .iter()
                .filter(|(_, v)| crate::compare::subset::scalar_equal(v, recorded, &f.path))
                .take(CANDIDATES_PER_FIELD)
                .collect();
            let mut cause = Cause::HardCoded(o.source.clone());
            for (key, value) in candidates {
                if !renders.contains_key(key) {
                    let set = format!("{key}={}", probe(value));
                    let text = helm.template(release, files, cluster, &["--set-json".into(), set]).await?;
                    renders.insert(key.clone(), desired::parse_manifest(&text).into_iter().flatten().collect());
                }
                let rendered = renders[key].iter().find(|d| d.kind == o.id.kind && d.name == o.id.name);
                if rendered.and_then(|d| d.object.pointer(&at)) != Some(recorded) {
                    cause = Cause::Value(key.clone());
                    break;
                }
            }
            out.push(Explanation { object: o.id.clone(), path: f.path.clone(), live: live.clone(), cause });
        }
    }
    Ok(out)
}

/// The chart's default values with the user's on top (what the templates saw).
fn merged_values(release: &Release) -> Value {
    let mut values = release.chart.as_ref().and_then(|c| c.values.clone()).unwrap_or(Value::Null);
    if let Some(user) = &release.config {
        merge(&mut values, user);
    }
    values
}

fn merge(base: &mut Value, top: &Value) {
    match (base, top) {
        (Value::Object(b), Value::Object(t)) => {
            for (k, v) in t {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, t) => *b = t.clone(),
    }
}

/// Every scalar value with its `--set` key (`image.tag`); keys with dots are left out.
fn flatten(v: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => flatten_map(m, prefix, out),
        Value::Array(_) | Value::Null => {}
        scalar => out.push((prefix.to_string(), scalar.clone())),
    }
}

fn flatten_map(m: &Map<String, Value>, prefix: &str, out: &mut Vec<(String, Value)>) {
    for (k, v) in m.iter().filter(|(k, _)| !k.contains('.') && !k.is_empty()) {
        let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        flatten(v, &key, out);
    }
}

/// A value of the same type that no chart would produce by chance.
fn probe(v: &Value) -> Value {
    match v {
        Value::Bool(b) => Value::Bool(!b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i + 7919),
            None => Value::from(n.as_f64().unwrap_or(0.0) + 7919.5),
        },
        Value::String(s) => Value::String(format!("{s}-helm-drift-probe")),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_flatten_to_set_keys() {
        let mut values = json!({"image": {"repo": "web", "tag": "1.0"}, "replicas": 2, "list": [1], "a.b": 1});
        merge(&mut values, &json!({"replicas": 3, "image": {"tag": "2.0"}}));
        let mut leaves = Vec::new();
        flatten(&values, "", &mut leaves);
        assert_eq!(
            leaves,
            vec![
                ("image.repo".into(), json!("web")),
                ("image.tag".into(), json!("2.0")),
                ("replicas".into(), json!(3))
            ]
        );
        assert_eq!(probe(&json!(3)), json!(7922));
        assert_eq!(probe(&json!("x")), json!("x-helm-drift-probe"));
    }
}

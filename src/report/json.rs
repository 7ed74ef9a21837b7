//! `-o json`: one document per run, schema version 1 (documented in the README).

use crate::check::{DriftReport, Outcome, RunReport};
use crate::compare::{Engine, ObjectDrift, Verdict};
use serde_json::{Value, json};

pub const SCHEMA_VERSION: u32 = 1;

pub fn render(run: &RunReport, show_secrets: bool) -> String {
    let releases: Vec<Value> = run
        .outcomes
        .iter()
        .map(|o| match o {
            Outcome::Checked(r) => release(r, show_secrets),
            Outcome::Failed(e) => json!({
                "name": e.release,
                "namespace": e.namespace,
                "verdict": "error",
                "error": e.message,
                "objects": [],
            }),
        })
        .collect();
    let count = |v: &str| releases.iter().filter(|r| r["verdict"] == v).count();
    let doc = json!({
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "helm-drift", "version": env!("CARGO_PKG_VERSION")},
        "summary": {
            "releases": releases.len(),
            "inSync": count("in-sync"),
            "drifted": count("drifted"),
            "errors": count("error"),
            "exitCode": run.exit_code(),
        },
        "releases": releases,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

fn release(r: &DriftReport, show_secrets: bool) -> Value {
    let verdict = if r.errors() > 0 {
        "error"
    } else if r.drifted() > 0 {
        "drifted"
    } else {
        "in-sync"
    };
    json!({
        "name": r.release,
        "namespace": r.namespace,
        "revision": r.revision,
        "status": r.status,
        "chart": r.chart,
        "record": r.record,
        "newestRevision": r.newest.as_ref().map(|(rev, status)| json!({"revision": rev, "status": status})),
        "verdict": verdict,
        "error": Value::Null,
        "engine": engine(&r.engine()),
        "notes": r.notes,
        "counts": {"objects": r.objects.len(), "drifted": r.drifted(), "errors": r.errors()},
        "objects": r.objects.iter().map(|o| object(o, show_secrets)).collect::<Vec<_>>(),
    })
}

fn engine(e: &Engine) -> Value {
    match e {
        Engine::Exact => json!({"name": "exact", "reason": Value::Null}),
        Engine::ReadOnly { reason } => json!({"name": "read-only", "reason": reason}),
    }
}

/// The verdict word used in JSON and JUnit.
pub fn verdict_word(o: &ObjectDrift) -> &'static str {
    match &o.verdict {
        Verdict::InSync => "in-sync",
        Verdict::Missing => "missing",
        Verdict::Modified if o.fields.is_empty() => "changed-outside-helm",
        Verdict::Modified => "modified",
        Verdict::Unknown { .. } => "unknown",
        Verdict::Excluded { .. } => "excluded",
        Verdict::Error { .. } => "error",
    }
}

fn object(o: &ObjectDrift, show_secrets: bool) -> Value {
    let mask = o.kind == "Secret" && o.api_version == "v1" && !show_secrets;
    let value = |path: &str, v: &Option<Value>| v.as_ref().map(|v| masked(mask, path, v));
    let reason = match &o.verdict {
        Verdict::Unknown { reason } | Verdict::Excluded { reason } => Some(reason.clone()),
        Verdict::Error { message } => Some(message.clone()),
        _ => None,
    };
    json!({
        "apiVersion": o.api_version,
        "kind": o.kind,
        "namespace": o.namespace,
        "name": o.name,
        "source": o.source,
        "verdict": verdict_word(o),
        "reason": reason,
        "engine": o.engine.as_ref().map(engine),
        "differences": o.fields.iter().map(|f| json!({
            "path": f.path,
            "recorded": value(&f.path, &f.recorded),
            "live": value(&f.path, &f.live),
        })).collect::<Vec<_>>(),
        "addedOutsideHelm": o.added.iter().map(|a| json!({
            "path": a.path,
            "value": masked(mask, &a.path, &a.value),
            "manager": a.manager,
        })).collect::<Vec<_>>(),
        "ignored": o.ignored.iter().map(|i| json!({"path": i.path, "reason": i.reason})).collect::<Vec<_>>(),
    })
}

/// Secret data values replaced by `"(hidden)"` (whole maps keep their keys).
pub fn masked(mask: bool, path: &str, v: &Value) -> Value {
    let under = |p: &str| path == p || path.starts_with(&format!("{p}/"));
    if !mask || !(under("/data") || under("/stringData")) {
        return v.clone();
    }
    match v {
        Value::Object(m) if path == "/data" || path == "/stringData" => {
            Value::Object(m.keys().map(|k| (k.clone(), Value::String("(hidden)".into()))).collect())
        }
        _ => Value::String("(hidden)".into()),
    }
}

//! Repair: puts drifted objects back to the recorded revision without a new Helm revision. Plans
//! from the same verdicts as `check`, dry-runs every step, applies only if all would succeed,
//! records an Event per repaired object, and checks again.

use crate::check::{self, DriftReport, Evaluated, Session};
use crate::compare::{ObjectDrift, Verdict, path};
use crate::desired::DesiredObject;
use crate::live::{self, Change, Target};
use crate::settings::Settings;
use anyhow::Result;
use serde_json::{Value, json};

/// What a repair asks for.
#[derive(Clone, Debug, Default)]
pub struct RepairRequest {
    pub release: String,
    /// `KIND/NAME` filters (kind case-insensitive); empty means every drifted object.
    pub only: Vec<String>,
    /// Also remove fields other field managers added (changed outside Helm).
    pub remove_foreign: bool,
    /// Plan and validate only; change nothing.
    pub dry_run: bool,
}

/// How far one step got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepStatus {
    Planned,
    /// Its server-side dry-run failed, so nothing was applied.
    Refused(String),
    Applied,
    Failed(String),
    /// Not attempted because an earlier step failed.
    NotApplied,
}

/// One change to one object.
#[derive(Clone, Debug)]
pub struct Step {
    /// `Kind namespace/name`.
    pub object: String,
    /// What the step does, for people: `recreate`, `restore /spec/replicas, ...`.
    pub what: String,
    pub status: StepStatus,
    index: usize,
    change: Change,
    paths: Vec<String>,
}

#[derive(Debug)]
pub struct RepairReport {
    /// The verdicts the plan came from (only the objects selected by `--only`).
    pub before: DriftReport,
    pub steps: Vec<Step>,
    /// Objects that drifted but have no step, and why.
    pub skipped: Vec<(String, String)>,
    /// The check after applying (not on dry runs or failures).
    pub after: Option<DriftReport>,
    pub warnings: Vec<String>,
    pub dry_run: bool,
}

impl RepairReport {
    /// 1 if a step was refused or failed, else (after applying) 2 unless now in sync; a dry run
    /// gives 2 when anything would change.
    pub fn exit_code(&self) -> u8 {
        if self.steps.iter().any(|s| matches!(s.status, StepStatus::Refused(_) | StepStatus::Failed(_))) {
            return 1;
        }
        if self.dry_run {
            return if self.steps.is_empty() && self.skipped.is_empty() { 0 } else { 2 };
        }
        match &self.after {
            Some(r) if r.errors() > 0 => 1,
            Some(r) if r.drifted() > 0 => 2,
            Some(_) => 0,
            None => u8::from(!self.steps.is_empty() || !self.skipped.is_empty()) * 2,
        }
    }
}

/// Plans, validates and (unless a dry run) applies the repair of one release.
pub async fn run(settings: &Settings, request: &RepairRequest) -> Result<RepairReport> {
    let mut session = Session::open(settings).await?;
    let index = session.find(&request.release).await?;
    let evaluated = check::evaluate(&session, settings, &index, None).await?;
    let ssa = evaluated.release.apply_method.as_deref() == Some("ssa");
    let (before, mut steps, skipped) = plan(&evaluated, request, ssa)?;
    let client = &session.cluster.client;
    let mut report = RepairReport {
        before,
        steps: Vec::new(),
        skipped,
        after: None,
        warnings: Vec::new(),
        dry_run: request.dry_run,
    };

    // Every step is validated by the server first; one refusal and nothing is applied.
    let mut refused = false;
    for step in &mut steps {
        let (obj, target) = object(&evaluated, step.index);
        if let Err(e) = live::change(client, target, &obj.name, &step.change, true).await {
            step.status = StepStatus::Refused(e);
            refused = true;
        }
    }
    if refused || request.dry_run {
        report.steps = steps;
        return Ok(report);
    }

    let mut failed = false;
    for step in &mut steps {
        if failed {
            step.status = StepStatus::NotApplied;
            continue;
        }
        let (obj, target) = object(&evaluated, step.index);
        match live::change(client, target, &obj.name, &step.change, false).await {
            Ok(after) => {
                step.status = StepStatus::Applied;
                let ns = target.namespace.clone().unwrap_or_else(|| evaluated.report.namespace.clone());
                let message = format!(
                    "helm-drift restored {} to release {} revision {} ({}): {}",
                    step.object,
                    evaluated.report.release,
                    evaluated.report.revision,
                    step.what,
                    step.paths.join(", ")
                );
                if let Err(e) = live::record_event(client, &ns, &after, "DriftRepaired", &message).await {
                    report.warnings.push(format!("no Event recorded for {}: {e}", step.object));
                }
            }
            Err(e) => {
                step.status = StepStatus::Failed(e);
                failed = true;
            }
        }
    }
    report.steps = steps;
    if !failed {
        session.live = Default::default(); // read the repaired objects afresh
        report.after = Some(check::evaluate(&session, settings, &index, None).await?.report);
    }
    Ok(report)
}

fn object(e: &Evaluated, index: usize) -> (&DesiredObject, &Target) {
    (&e.objects[index], e.targets[index].as_ref().expect("planned objects are served"))
}

/// Whether `--only KIND/NAME` selects this object.
fn selected(only: &[String], o: &ObjectDrift) -> bool {
    only.is_empty()
        || only.iter().any(|f| match f.split_once('/') {
            Some((kind, name)) => kind.eq_ignore_ascii_case(&o.kind) && name == o.name,
            None => f == &o.name,
        })
}

type Plan = (DriftReport, Vec<Step>, Vec<(String, String)>);

/// The steps that undo the drift of the selected objects.
fn plan(e: &Evaluated, request: &RepairRequest, ssa: bool) -> Result<Plan> {
    let mut steps = Vec::new();
    let mut skipped = Vec::new();
    let mut before = DriftReport { objects: Vec::new(), ..clone_header(&e.report) };
    for (index, o) in e.report.objects.iter().enumerate() {
        if !selected(&request.only, o) {
            continue;
        }
        before.objects.push(o.clone());
        let id = crate::report::identity(o);
        let step = |what: String, change: Change, paths: Vec<String>| Step {
            object: id.clone(),
            what,
            status: StepStatus::Planned,
            index,
            change,
            paths,
        };
        match &o.verdict {
            Verdict::Missing => {
                let desired = &e.objects[index];
                let change =
                    if ssa { Change::Apply(desired.object.clone()) } else { Change::Create(desired.object.clone()) };
                steps.push(step("recreate".into(), change, vec!["(whole object)".into()]));
            }
            Verdict::Modified => {
                let desired = &e.objects[index];
                if !o.fields.is_empty() {
                    let paths: Vec<String> = o.fields.iter().map(|f| f.path.clone()).collect();
                    let change = if ssa {
                        Change::Apply(keep_ignored(&desired.object, o))
                    } else {
                        Change::Patch(restore_ops(o))
                    };
                    steps.push(step(format!("restore {} field(s)", paths.len()), change, paths));
                }
                if !o.added.is_empty() {
                    if request.remove_foreign {
                        let paths: Vec<String> = o.added.iter().map(|a| a.path.clone()).collect();
                        steps.push(step(
                            format!("remove {} field(s) added outside Helm", paths.len()),
                            Change::Patch(remove_ops(o)),
                            paths,
                        ));
                    } else {
                        skipped.push((
                            id.clone(),
                            "fields added outside Helm are kept (use --remove-foreign to remove them)".into(),
                        ));
                    }
                }
            }
            Verdict::Unknown { reason } => skipped.push((id, format!("cannot repair: {reason}"))),
            Verdict::Error { message } => skipped.push((id, format!("cannot repair: {message}"))),
            Verdict::InSync | Verdict::Excluded { .. } => {}
        }
    }
    if !request.only.is_empty() && before.objects.is_empty() {
        anyhow::bail!("--only {}: no such object in release {}", request.only.join(", "), e.report.release);
    }
    Ok((before, steps, skipped))
}

fn clone_header(r: &DriftReport) -> DriftReport {
    DriftReport {
        release: r.release.clone(),
        namespace: r.namespace.clone(),
        revision: r.revision,
        status: r.status.clone(),
        chart: r.chart.clone(),
        record: r.record.clone(),
        newest: r.newest.clone(),
        objects: Vec::new(),
        notes: r.notes.clone(),
    }
}

/// The desired object with every ignored path set to its live value (or left out when absent
/// live), so that a server-side apply never touches what the ignore rules protect.
fn keep_ignored(desired: &Value, o: &ObjectDrift) -> Value {
    let mut body = desired.clone();
    let live = o.live.clone().unwrap_or(Value::Null);
    for i in &o.ignored {
        match live.pointer(&i.path) {
            Some(v) => path::set(&mut body, &i.path, v.clone()),
            None => path::remove(&mut body, &i.path),
        }
    }
    body
}

/// JSON patch restoring each differing field, guarded by a test of its live value.
fn restore_ops(o: &ObjectDrift) -> Value {
    let mut ops = Vec::new();
    for f in &o.fields {
        match (&f.recorded, &f.live) {
            (Some(r), Some(l)) => {
                ops.push(json!({"op": "test", "path": f.path, "value": l}));
                ops.push(json!({"op": "replace", "path": f.path, "value": r}));
            }
            (Some(r), None) => ops.push(json!({"op": "add", "path": append_token(&f.path), "value": r})),
            (None, Some(l)) => {
                ops.push(json!({"op": "test", "path": f.path, "value": l}));
                ops.push(json!({"op": "remove", "path": f.path}));
            }
            (None, None) => {}
        }
    }
    Value::Array(ops)
}

/// JSON patch removing fields added outside Helm; list elements from the last index down so
/// earlier removals do not shift later ones.
fn remove_ops(o: &ObjectDrift) -> Value {
    let mut added: Vec<_> = o.added.iter().collect();
    added.sort_by(|a, b| b.path.cmp(&a.path));
    let mut ops = Vec::new();
    for a in added {
        ops.push(json!({"op": "test", "path": a.path, "value": a.value}));
        ops.push(json!({"op": "remove", "path": a.path}));
    }
    Value::Array(ops)
}

/// A `[key]` token (a keyed list element missing live) becomes `-` (append).
fn append_token(p: &str) -> String {
    match p.rsplit_once('/') {
        Some((parent, last)) if last.starts_with('[') => format!("{parent}/-"),
        _ => p.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{FieldDiff, Foreign, Ignored};

    fn modified() -> ObjectDrift {
        ObjectDrift {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("ns".into()),
            name: "web".into(),
            source: None,
            verdict: Verdict::Modified,
            fields: vec![
                FieldDiff::new("/spec/template/spec/containers/0/image", Some(&json!("a:1")), Some(&json!("a:2"))),
                FieldDiff::new("/metadata/labels/app", Some(&json!("web")), None),
                FieldDiff::new("/spec/template/spec/containers/0/env/[A]", Some(&json!({"name": "A"})), None),
            ],
            added: vec![
                Foreign {
                    path: "/spec/template/spec/containers/0/env/1".into(),
                    value: json!({"name": "X"}),
                    manager: "k".into(),
                },
                Foreign {
                    path: "/spec/template/spec/containers/0/env/2".into(),
                    value: json!({"name": "Y"}),
                    manager: "k".into(),
                },
            ],
            ignored: vec![Ignored { path: "/spec/replicas".into(), reason: "HPA".into() }],
            engine: None,
            live: Some(json!({"spec": {"replicas": 7}})),
        }
    }

    #[test]
    fn restore_patch_is_guarded_and_appends_missing_elements() {
        let ops = restore_ops(&modified());
        assert_eq!(
            ops,
            json!([
                {"op": "test", "path": "/spec/template/spec/containers/0/image", "value": "a:2"},
                {"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "a:1"},
                {"op": "add", "path": "/metadata/labels/app", "value": "web"},
                {"op": "add", "path": "/spec/template/spec/containers/0/env/-", "value": {"name": "A"}},
            ])
        );
    }

    #[test]
    fn foreign_fields_are_removed_from_the_end() {
        let ops = remove_ops(&modified());
        let paths: Vec<_> =
            ops.as_array().unwrap().iter().filter(|o| o["op"] == "remove").map(|o| o["path"].clone()).collect();
        assert_eq!(
            paths,
            [json!("/spec/template/spec/containers/0/env/2"), json!("/spec/template/spec/containers/0/env/1")]
        );
    }

    #[test]
    fn applies_keep_ignored_paths_at_their_live_value() {
        let desired = json!({"spec": {"replicas": 2, "paused": false}});
        assert_eq!(keep_ignored(&desired, &modified()), json!({"spec": {"replicas": 7, "paused": false}}));
        let mut o = modified();
        o.live = Some(json!({"spec": {}}));
        assert_eq!(keep_ignored(&desired, &o), json!({"spec": {"paused": false}}));
    }

    #[test]
    fn only_filters_by_kind_and_name() {
        let o = modified();
        assert!(selected(&[], &o));
        assert!(selected(&["deployment/web".into()], &o));
        assert!(!selected(&["Service/web".into()], &o));
    }
}

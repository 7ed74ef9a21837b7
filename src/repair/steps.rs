//! The steps of a repair: one per drifted object, with the changes that make it, and the drifted objects
//! that are skipped and why.

use super::patch::{keep_ignored, repair_ops};
use crate::engine::Evaluated;
use crate::live::{Change, Location};
use crate::model::{Action, DriftReport, FieldPath, ObjectId, RepairStep, Skip, StepStatus, Verdict};

/// A step with the changes that make it, in order. The first is validated by a server dry-run
/// together with every other step's before anything is applied; the others only take ownership
/// (their content is the same).
pub(crate) struct DraftStep {
    pub(crate) step: RepairStep,
    /// Which object of the evaluation it changes.
    pub(crate) index: usize,
    pub(crate) changes: Vec<Change>,
    /// After the changes, take the chart's fields away from other managers (server-side apply).
    pub(crate) reclaim: bool,
}

pub(crate) struct Steps {
    /// The verdicts of the selected objects.
    pub(crate) before: DriftReport,
    pub(crate) steps: Vec<DraftStep>,
    pub(crate) skipped: Vec<(ObjectId, Skip)>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum StepsError {
    #[error("--only {only}: no such object in release {release} (its objects: {objects})")]
    NoSuchObject { only: String, release: String, objects: String },
    #[error(transparent)]
    Ambiguous(#[from] crate::model::selector::Ambiguous),
}

impl DraftStep {
    /// The object's name and where it lives (planned objects are always served).
    pub(crate) fn target<'a>(&self, e: &'a Evaluated) -> Option<(&'a str, &'a Location)> {
        Some((e.objects[self.index].name.as_str(), e.locations[self.index].as_ref()?))
    }
}

/// Why a cluster-scoped object is not written under the release's writer: its recorded fields
/// are owned by another name, and the writer was learnt (not pinned) from the release's other
/// objects, whose managedFields anyone who may write them can rename. Such a borrowed name must
/// not decide whose name an object they cannot touch is written under.
fn borrowed_writer(e: &Evaluated, id: &ObjectId) -> Option<Skip> {
    let crate::model::WriterFound::Learnt { others, .. } = &e.writer.found else { return None };
    if id.namespace.is_some() {
        return None;
    }
    let (_, owner) = others.iter().find(|(o, _)| o == id)?;
    Some(Skip::Cannot(format!(
        "a cluster-scoped object whose recorded fields {owner} owns is not written under {}, a writer learnt from the release's other objects; pin the writer (--helm-manager) to repair it",
        e.writer.manager
    )))
}

/// Why a drifted object is left as it is: the Flux HelmRelease that installs it leaves it out of
/// drift correction, a writer's name it may not borrow, or (a missing object) nothing says it is
/// the record's.
fn withheld(e: &Evaluated, o: &crate::model::ObjectDrift, trusted: bool) -> Option<Skip> {
    if let Some(why) = &o.flux_left_out {
        return Some(Skip::Cannot(why.clone()));
    }
    let missing = matches!(o.verdict, Verdict::Missing);
    borrowed_writer(e, &o.id).or_else(|| unclaimed(e, &o.id, trusted).filter(|_| missing).map(Skip::Withheld))
}

/// Why a missing object is not created again: outside the namespace of a record stored apart
/// that the operator does not trust, nothing says it is the record's (what the target holds
/// carrying the HelmRelease's origin labels is; a missing object carries nothing).
fn unclaimed(e: &Evaluated, id: &ObjectId, trusted: bool) -> Option<crate::model::Refusal> {
    let home = e.release.home();
    let helm_release = home.helm_release.filter(|_| !trusted && id.namespace.as_deref() != Some(home.stored))?;
    Some(crate::model::Refusal::NotCreated {
        object: id.clone(),
        namespace: id.namespace.clone(),
        stored: home.stored.to_string(),
        helm_release: helm_release.to_string(),
    })
}

/// The steps that undo the drift of the objects `only` selects (`NAMESPACE/KIND/NAME`,
/// `KIND/NAME` or `NAME`, each fitting one namespace; all when empty). Fields added outside Helm are removed only with `remove_foreign`, except list items
/// that took the place of a recorded item (a changed key: a renamed container, a changed port).
/// Unless the record is `trusted`, a missing object that a record stored apart only claims is
/// skipped (nothing says it is the record's), and the rest repaired all the same.
pub(crate) fn draft(e: &Evaluated, only: &[String], remove_foreign: bool, trusted: bool) -> Result<Steps, StepsError> {
    crate::model::selector::one_namespace_each(e.report.objects.iter().map(|o| &o.id), only, &e.report.release)?;
    let ssa = e.release.apply().is_server_side();
    let mut steps = Vec::new();
    let mut skipped = Vec::new();
    let mut selected_objects = Vec::new();
    for (index, o) in e.report.objects.iter().enumerate() {
        if !o.selected_by(only) {
            continue;
        }
        selected_objects.push(o.clone());
        let changes = !matches!(o.verdict, Verdict::InSync | Verdict::Excluded { .. });
        if let (Some(skip), true) = (withheld(e, o, trusted), changes) {
            skipped.push((o.id.clone(), skip));
            continue;
        }
        let desired = &e.objects[index].object;
        let step = |action, changes, reclaim| DraftStep {
            step: RepairStep { object: o.id.clone(), action, status: StepStatus::Planned },
            index,
            changes,
            reclaim,
        };
        match &o.verdict {
            Verdict::Missing if o.is_hook_that_runs() => {
                let why = format!("creating hook {} again runs it (helm upgrade runs hooks)", o.id.kind);
                skipped.push((o.id.clone(), Skip::Cannot(why)));
            }
            Verdict::Missing => {
                let change = if ssa { Change::Apply(desired.clone()) } else { Change::Create(desired.clone()) };
                steps.push(step(Action::Recreate, vec![change], false));
            }
            // Fields owned elsewhere with the release's values are not drift by default, but
            // repair still gives them back to Helm (what the report tells the user to run).
            Verdict::InSync if o.disowned.is_empty() => {}
            Verdict::Modified | Verdict::InSync => {
                let restore: Vec<FieldPath> =
                    o.fields.iter().filter(|f| f.recorded.is_some()).map(|f| f.path.clone()).collect();
                let mut remove: Vec<FieldPath> =
                    o.fields.iter().filter(|f| f.recorded.is_none()).map(|f| f.path.clone()).collect();
                let replacing: Vec<&FieldPath> = o.replaced_items().into_iter().map(|(_, took)| took).collect();
                let kept = o.added.iter().filter(|a| !remove_foreign && !replacing.contains(&&a.path)).count();
                remove.extend(
                    o.added.iter().map(|a| &a.path).filter(|p| remove_foreign || replacing.contains(p)).cloned(),
                );
                if kept > 0 {
                    skipped.push((o.id.clone(), Skip::ForeignKept));
                }
                let mut reclaim: Vec<String> = Vec::new();
                for d in &o.disowned {
                    if ssa && !reclaim.contains(&d.manager) {
                        reclaim.push(d.manager.clone());
                    }
                }
                if restore.is_empty() && remove.is_empty() && reclaim.is_empty() {
                    continue;
                }
                let patch = Change::Patch(repair_ops(o, &remove));
                let changes = match (ssa, remove.is_empty()) {
                    (false, _) => vec![patch],
                    (true, true) => vec![Change::Apply(keep_ignored(desired, o))],
                    // Server-side apply cannot drop what another manager owns: remove it with a
                    // guarded patch first, then apply as Helm.
                    (true, false) => vec![patch, Change::Apply(keep_ignored(desired, o))],
                };
                steps.push(step(Action::Repair { restore, remove, reclaim }, changes, ssa));
            }
            Verdict::Unknown { reason } => skipped.push((o.id.clone(), Skip::Cannot(reason.clone()))),
            Verdict::Error { message } => skipped.push((o.id.clone(), Skip::Cannot(message.clone()))),
            Verdict::Excluded { .. } => {}
        }
    }
    // What an object needs first: in Helm's install order (stable within a kind).
    steps.sort_by_key(|s| super::order::rank(&e.objects[s.index].kind));
    if !only.is_empty() && selected_objects.is_empty() {
        return Err(no_such_object(e, only));
    }
    Ok(Steps { before: e.report.with_objects(selected_objects), steps, skipped })
}

/// `--only` named no object of the release: the error lists those it has.
fn no_such_object(e: &Evaluated, only: &[String]) -> StepsError {
    let mut objects: Vec<String> = e.report.objects.iter().map(|o| format!("{}/{}", o.id.kind, o.id.name)).collect();
    objects.sort();
    let objects = if objects.len() > 20 {
        format!("{}, and {} more", objects[..20].join(", "), objects.len() - 20)
    } else {
        objects.join(", ")
    };
    StepsError::NoSuchObject { only: only.join(", "), release: e.report.release.clone(), objects }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FieldDiff, Foreign, ObjectDrift, Ownership};
    use serde_json::json;

    const MANIFEST: &str = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: edited\ndata:\n  a: \"1\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owned\n---\napiVersion: x/v1\nkind: Gadget\nmetadata:\n  name: odd\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: quiet\n";

    /// A release of five objects: deleted, edited (a changed field and a field added outside
    /// Helm), in sync but owned elsewhere, of a kind not served, excluded.
    fn evaluated(apply_method: Option<&str>) -> Evaluated {
        let release = crate::release::Release::for_tests(json!({
            "name": "web", "namespace": "apps", "version": 1, "info": {"status": "deployed"},
            "manifest": MANIFEST, "apply_method": apply_method
        }));
        let objects = crate::desired::from_manifest(MANIFEST).unwrap();
        let id = |kind: &str, name: &str| ObjectId::new("v1", kind, Some("apps"), name);
        let path = crate::testing::path;
        let mut edited = ObjectDrift::new(id("ConfigMap", "edited"), None, Verdict::Modified);
        edited.fields.push(FieldDiff::new(path("/data/a"), Some(&json!("1")), Some(&json!("2"))));
        edited.added.push(Foreign {
            path: path("/data/extra"),
            value: json!("x"),
            manager: "kubectl-edit".into(),
            changed_by: None,
        });
        let mut owned = ObjectDrift::new(id("ConfigMap", "owned"), None, Verdict::InSync);
        owned.disowned.push(Ownership { path: path("/data"), manager: "kubectl-patch".into(), shared: false });
        let report = DriftReport {
            release: "web".into(),
            namespace: "apps".into(),
            objects: vec![
                ObjectDrift::new(id("ConfigMap", "gone"), None, Verdict::Missing),
                edited,
                owned,
                ObjectDrift::new(id("Gadget", "odd"), None, Verdict::Unknown { reason: "not served".into() }),
                ObjectDrift::new(id("ConfigMap", "quiet"), None, Verdict::Excluded { reason: "annotation".into() }),
            ],
            ..DriftReport::default()
        };
        Evaluated { report, release, objects, locations: vec![None; 5], writer: Default::default() }
    }

    fn kinds(p: &DraftStep) -> Vec<&'static str> {
        p.changes
            .iter()
            .map(|c| match c {
                Change::Apply(_) => "apply",
                Change::Create(_) => "create",
                Change::Patch(_) => "patch",
                Change::Replace(_) => "replace",
                Change::Update(_) => "update",
            })
            .collect()
    }

    #[test]
    fn client_side_releases_are_recreated_and_patched_keeping_foreign_fields() {
        let drafted = draft(&evaluated(None), &[], false, false).unwrap();
        let steps: Vec<(&str, Vec<&str>)> =
            drafted.steps.iter().map(|s| (s.step.object.name.as_str(), kinds(s))).collect();
        assert_eq!(
            steps,
            [("gone", vec!["create"]), ("edited", vec!["patch"])],
            "owned elsewhere: nothing to reclaim client-side"
        );
        let Action::Repair { restore, remove, .. } = &drafted.steps[1].step.action else { panic!() };
        assert_eq!((restore.len(), remove.len()), (1, 0));
        let Change::Patch(ops) = &drafted.steps[1].changes[0] else { panic!() };
        assert_eq!(ops[0]["op"], "test", "guarded: {ops}");
        let skipped: Vec<(&str, &Skip)> = drafted.skipped.iter().map(|(id, s)| (id.name.as_str(), s)).collect();
        assert_eq!(skipped, [("edited", &Skip::ForeignKept), ("odd", &Skip::Cannot("not served".into()))]);
        assert_eq!(drafted.before.objects.len(), 5);
    }

    #[test]
    fn server_side_releases_apply_remove_foreign_fields_first_and_reclaim_ownership() {
        let drafted = draft(&evaluated(Some("ssa")), &[], true, false).unwrap();
        let steps: Vec<(&str, Vec<&str>, bool)> =
            drafted.steps.iter().map(|s| (s.step.object.name.as_str(), kinds(s), s.reclaim)).collect();
        assert_eq!(
            steps,
            [("gone", vec!["apply"], false), ("edited", vec!["patch", "apply"], true), ("owned", vec!["apply"], true)]
        );
        let Action::Repair { remove, reclaim, .. } = &drafted.steps[1].step.action else { panic!() };
        assert_eq!(remove.iter().map(FieldPath::pointer).collect::<Vec<_>>(), ["/data/extra"]);
        assert!(reclaim.is_empty());
        let Action::Repair { reclaim, .. } = &drafted.steps[2].step.action else { panic!() };
        assert_eq!(reclaim, &["kubectl-patch".to_string()]);
        assert!(!drafted.skipped.iter().any(|(_, s)| *s == Skip::ForeignKept), "removed, not kept");
    }

    #[test]
    fn a_missing_hook_job_is_never_created_again_but_a_hook_config_map_is() {
        let mut e = evaluated(None);
        let origin = crate::testing::hook(&["post-install"], 1, 1);
        e.report.objects[0].hook = Some(Box::new(origin.clone()));
        let mut job =
            ObjectDrift::new(ObjectId::new("batch/v1", "Job", Some("apps"), "migrate"), None, Verdict::Missing);
        job.hook = Some(Box::new(origin));
        e.report.objects.push(job);
        e.objects.push(e.objects[0].clone());
        e.locations.push(None);
        let steps = draft(&e, &[], false, false).unwrap();
        assert_eq!(steps.steps[0].step.object.name, "gone", "a kept hook ConfigMap is put back");
        let why = steps.skipped.iter().find(|(id, _)| id.name == "migrate").map(|(_, s)| s);
        assert_eq!(why, Some(&Skip::Cannot("creating hook Job again runs it (helm upgrade runs hooks)".into())));
    }

    #[test]
    fn only_selects_objects_and_names_what_it_cannot_find() {
        let steps = draft(&evaluated(None), &["ConfigMap/edited".into()], false, false).unwrap();
        assert_eq!(steps.steps.len(), 1);
        assert_eq!(steps.before.objects.len(), 1);
        let err = super::draft(&evaluated(None), &["Deployment/nope".into()], false, false).err().unwrap();
        let said = err.to_string();
        assert!(said.starts_with("--only Deployment/nope: no such object in release web (its objects: "), "{said}");
        assert!(said.contains("ConfigMap/edited"), "what exists is listed: {said}");
        // As kubectl users write kinds.
        assert_eq!(super::draft(&evaluated(None), &["cm/edited".into()], false, false).unwrap().steps.len(), 1);
    }
}

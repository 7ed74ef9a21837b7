//! The evaluation's pure steps, as functions over data read beforehand: which objects a
//! record yields, which are read with a shared LIST, what a verdict adds (a removed API version's
//! replacement, a drifted CRD of `crds/`), and the report. The I/O is in `evaluate`.

use super::error::{EvaluateError, TooManyObjects};
use crate::desired::{self, DesiredError, DesiredObject};
use crate::live::Location;
use crate::model::{DriftReport, ObjectDrift, ObjectId, Verdict};
use crate::release::{Release, Selected};
use crate::settings::CompareOptions;
use anyhow::Context;
use std::collections::HashMap;

/// The objects a record yields: its manifest's (the first `from_manifest`), then with
/// `--include-crds` the chart's `crds/`; documents that are not objects apart.
pub(crate) struct Desired {
    pub(crate) objects: Vec<DesiredObject>,
    pub(crate) from_manifest: usize,
    pub(crate) broken: Vec<DesiredError>,
}

/// The objects of `release` (read from `record`), refusing more than `--max-objects`.
pub(crate) fn desired_objects(
    release: &Release,
    record: &str,
    options: &CompareOptions,
) -> Result<Desired, EvaluateError> {
    let (mut objects, mut broken) = (Vec::new(), Vec::new());
    for parsed in desired::parse_manifest(&release.manifest) {
        match parsed {
            Ok(o) => objects.push(o),
            Err(e) => broken.push(e),
        }
    }
    let limit = options.object_limit();
    if objects.len() > limit {
        return Err(TooManyObjects { record: record.to_string(), objects: objects.len(), limit }.into());
    }
    let from_manifest = objects.len();
    if options.include_crds
        && let Some(chart) = &release.chart
    {
        objects.extend(
            desired::crds(chart)
                .with_context(|| format!("cannot parse the CRDs of {record}"))
                .map_err(EvaluateError::Other)?,
        );
    }
    Ok(Desired { objects, from_manifest, broken })
}

/// The objects of a release's kept hooks (`--hooks`), refusing more than `--max-objects` (one
/// hook's document may be a `kind: List`).
pub(crate) fn hook_objects(
    sorted: &super::hooks::Sorted,
    release: &Release,
    record: &str,
    options: &CompareOptions,
) -> Result<(Vec<DesiredObject>, Vec<DesiredError>), EvaluateError> {
    let (objects, broken) = desired::hook_objects(&sorted.kept, release.revision());
    let limit = options.object_limit();
    if objects.len() > limit {
        return Err(TooManyObjects { record: format!("{record} (its hooks)"), objects: objects.len(), limit }.into());
    }
    Ok((objects, broken))
}

/// Which objects are read with a shared LIST: those of a kind with several objects in one
/// namespace (one LIST beats a GET each).
pub(crate) fn shared_lists(locations: &[Option<Location>]) -> Vec<bool> {
    let group = |at: &Location| (at.resource.plural.clone() + "." + &at.resource.group, at.namespace.clone());
    let mut per_group: HashMap<(String, Option<String>), usize> = HashMap::new();
    for at in locations.iter().flatten() {
        *per_group.entry(group(at)).or_default() += 1;
    }
    locations.iter().map(|at| at.as_ref().is_some_and(|at| per_group[&group(at)] >= 2)).collect()
}

/// A kind no longer served at the recorded version: the reason names the version that replaced
/// it (`served(apiVersion, kind)`, from discovery) and the plugin that rewrites the record.
pub(crate) fn name_replacements(
    verdicts: &mut [ObjectDrift],
    objects: &[DesiredObject],
    release: &Release,
    served: impl Fn(&str, &str) -> Option<String>,
) {
    for (v, o) in verdicts.iter_mut().zip(objects) {
        if let Verdict::Unknown { reason } = &mut v.verdict
            && let Some(served) = served(&o.api_version, &o.kind)
        {
            reason.push_str(&format!(
                "; it serves {served} {kind} instead: the record still names the removed version (the mapkubeapis plugin rewrites it: helm mapkubeapis {} -n {})",
                release.name(),
                release.namespace(),
                kind = o.kind
            ));
        }
    }
}

/// Helm installs `crds/` once and never upgrades them: each drifted one (after the first
/// `from_manifest` objects) is a finding of its own.
pub(crate) fn crd_findings(verdicts: &[ObjectDrift], from_manifest: usize) -> Vec<String> {
    verdicts
        .iter()
        .skip(from_manifest)
        .filter(|v| v.is_drift() && v.hook.is_none())
        .map(|v| {
            format!(
                "{} differs from the chart's crds/ copy: Helm never upgrades crds/, so helm upgrade will not change it (apply the chart's CRD by hand, or helm drift repair)",
                v.id
            )
        })
        .collect()
}

/// A person's check: the drifted objects the record lists outside its own namespace that
/// `repair` writes only when the namespace is trusted (`--trust-namespace`): all of them, but
/// those a HelmRelease's origin labels give to a record stored apart. The watcher says it of
/// every such object already ("not compared"), and a trusted namespace needs no word.
pub(crate) fn outside_findings(
    verdicts: &[ObjectDrift],
    home: crate::model::Home<'_>,
    trust: &crate::settings::TrustRules,
) -> Vec<String> {
    let stored = home.stored;
    if trust.confined || trust.namespaces.trusts(stored) {
        return Vec::new();
    }
    // What a repair as an identity of the record's namespace may not write either (the one
    // decision says).
    use crate::model::{Acting, Deed, Question, Refusal, Rights, decide};
    let as_namespace = Rights::ServiceAccount(stored.to_string(), String::new());
    let outside: Vec<String> = verdicts
        .iter()
        .filter(|v| {
            let namespace = v.id.namespace.as_deref();
            let live = v.live.as_ref();
            let q =
                Question { acting: Acting::Person, home, trusted: false, object: &v.id, namespace, live, owned: true };
            let deed = if live.is_some() { Deed::Change } else { Deed::Create };
            v.is_drift() && matches!(decide(&q, deed, &as_namespace), Err(Refusal::OutsideNamespace { .. }))
        })
        .map(|v| format!("{} ({})", v.id, crate::model::place(v.id.namespace.as_deref())))
        .collect();
    if outside.is_empty() {
        return Vec::new();
    }
    let whose = match stored == home.release {
        true => "the release's namespace".to_string(),
        false => format!("namespace {stored}, where its record is stored"),
    };
    vec![format!(
        "outside {whose}: {}. The record listing them can be written by anyone who may write \
         Secrets in namespace {stored}, so helm drift repair writes them only with --trust-namespace {stored}",
        outside.join(", ")
    )]
}

/// Documents that are not objects: an error verdict each (the others are still checked).
pub(crate) fn broken_documents(broken: Vec<DesiredError>, record: &str) -> Vec<ObjectDrift> {
    broken
        .into_iter()
        .map(|e| {
            let message = format!("cannot parse the manifest of {record}: {e}");
            ObjectDrift::new(ObjectId::new("", "Document", None, e.at()), Some(e.at()), Verdict::Error { message })
        })
        .collect()
}

/// The notes of a release: without `--hooks` (`hooks` is `None`), that its hooks are not
/// checked; with it, what is said of the hooks not compared.
pub(crate) fn notes(release: &Release, hooks: Option<&[String]>) -> Vec<String> {
    if let Some(notes) = hooks {
        return notes.to_vec();
    }
    match release.hook_count() {
        0 => Vec::new(),
        n => vec![format!("{n} hook(s) not checked (--hooks compares the hook objects Helm keeps after they ran)")],
    }
}

/// The report of one release's verdicts.
pub(crate) fn report(
    selected: &Selected,
    objects: Vec<ObjectDrift>,
    notes: Vec<String>,
    findings: Vec<String>,
) -> DriftReport {
    let release = &selected.release;
    let chart =
        release.chart.as_ref().map(|c| format!("{}-{}", c.metadata.name, c.metadata.version)).unwrap_or_default();
    DriftReport {
        release: release.name().to_string(),
        namespace: release.namespace().to_string(),
        revision: release.revision(),
        status: release.status().to_string(),
        chart,
        record: selected.record.clone(),
        stored_apart: release
            .vouch()
            .map(|v| crate::model::StoredApart { namespace: release.stored_in().to_string(), vouch: v.clone() }),
        newest: selected.newest.clone(),
        objects,
        notes,
        stale: Vec::new(),
        findings,
        explanations: Vec::new(),
        rerender: None,
        guard: None,
        accepted_until: None,
        writer: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::{ApiResource, GroupVersionKind};

    fn release(manifest: &str) -> Release {
        Release::for_tests(serde_json::json!({
            "name": "web", "namespace": "apps", "version": 3, "info": {"status": "deployed"},
            "manifest": manifest, "hooks": [{"name": "h"}]
        }))
    }

    fn at(plural: &str, namespace: Option<&str>) -> Option<Location> {
        let gvk = GroupVersionKind::gvk("", "v1", plural);
        Some(Location {
            resource: ApiResource::from_gvk_with_plural(&gvk, plural),
            namespace: namespace.map(str::to_string),
        })
    }

    const TWO: &str = "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\nkind: [broken\n";

    #[test]
    fn a_record_yields_its_objects_and_its_broken_documents_apart_within_the_limit() {
        let options = CompareOptions::default();
        let d = desired_objects(&release(TWO), "Secret apps/r", &options).unwrap();
        assert_eq!((d.objects.len(), d.from_manifest, d.broken.len()), (2, 2, 1));
        let errors = broken_documents(d.broken, "Secret apps/r");
        assert!(
            matches!(&errors[0].verdict, Verdict::Error { message } if message.starts_with("cannot parse the manifest of Secret apps/r"))
        );
        let tight = CompareOptions { max_objects: 1, ..CompareOptions::default() };
        let refused = desired_objects(&release(TWO), "Secret apps/r", &tight).err().unwrap();
        let EvaluateError::TooMany(too_many) = refused else { panic!("typed: {refused:?}") };
        assert_eq!((too_many.objects, too_many.limit), (2, 1));
        let unlimited = CompareOptions { max_objects: 0, ..CompareOptions::default() };
        assert!(desired_objects(&release(TWO), "r", &unlimited).is_ok(), "0 is the default limit, not none");
    }

    #[test]
    fn several_objects_of_a_kind_in_one_namespace_share_a_list() {
        let locations = [at("configmaps", Some("a")), at("configmaps", Some("a")), at("configmaps", Some("b")), None];
        assert_eq!(shared_lists(&locations), [true, true, false, false]);
        assert_eq!(shared_lists(&[at("secrets", Some("a")), at("configmaps", Some("a"))]), [false, false]);
    }

    #[test]
    fn a_removed_version_names_its_replacement_and_only_unknown_verdicts_do() {
        let r = release(TWO);
        let objects = desired_objects(&r, "r", &CompareOptions::default()).unwrap().objects;
        let unknown = Verdict::Unknown { reason: "not served".into() };
        let mut verdicts = vec![
            ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some("apps"), "a"), None, unknown),
            ObjectDrift::new(ObjectId::new("v1", "ConfigMap", Some("apps"), "b"), None, Verdict::InSync),
        ];
        name_replacements(&mut verdicts, &objects, &r, |_, _| Some("v2".into()));
        let Verdict::Unknown { reason } = &verdicts[0].verdict else { panic!() };
        assert!(reason.contains("it serves v2 ConfigMap instead") && reason.contains("helm mapkubeapis web -n apps"));
        assert_eq!(verdicts[1].verdict, Verdict::InSync);
    }

    #[test]
    fn only_drifted_objects_after_the_manifest_are_crd_findings() {
        let missing = |name: &str| ObjectDrift::new(ObjectId::new("v1", "X", None, name), None, Verdict::Missing);
        let verdicts = [
            missing("from-manifest"),
            missing("crd"),
            ObjectDrift::new(ObjectId::new("v1", "X", None, "ok"), None, Verdict::InSync),
        ];
        let findings = crd_findings(&verdicts, 1);
        assert_eq!(findings.len(), 1);
        assert!(findings[0].starts_with("X crd differs from the chart's crds/ copy"), "{findings:?}");
    }

    #[test]
    fn the_report_carries_the_record_and_a_note_about_hooks() {
        let r = release(TWO);
        assert_eq!(
            notes(&r, None),
            ["1 hook(s) not checked (--hooks compares the hook objects Helm keeps after they ran)"]
        );
        let selected = Selected { release: r, record: "Secret apps/r".into(), newest: None };
        let report = report(&selected, Vec::new(), Vec::new(), Vec::new());
        assert_eq!((report.release.as_str(), report.revision, report.record.as_str()), ("web", 3, "Secret apps/r"));
        assert_eq!(report.chart, "");
    }
}

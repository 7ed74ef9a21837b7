//! The verdict for one object: live state, ignore rules, the client-side comparison, and the
//! server-side apply dry-run (the exact engine) for objects that differ client-side.

use super::grounds::{Grounds, Judge, Reads};
use super::rules::{Excluded, left_out, object_ref, rules};
use crate::api::ApiError;
use crate::compare::IgnorePrefix;
use crate::compare::managed::OwnedElsewhere;
use crate::compare::provenance;
use crate::compare::{self, attribution, defaults, exact, managed, merge, ownership, subset};
use crate::desired::DesiredObject;
use crate::live::{self, LiveState, Location, WriteTo};
use crate::model::path::under;
use crate::model::{Deed, FieldDiff, Foreign, Ignored, Method, ObjectDrift, Question, Rights, Verdict, decide};
use crate::policy::ignore::{self, ObjectRef};
use crate::policy::{controllers, expected};
use serde_json::Value;

/// What reading an object gave: its live state where it lives, or the verdict reached without it
/// (a kind not served, an object outside the trust rule).
pub(crate) enum Reading<'a> {
    Verdict(Box<ObjectDrift>),
    Live(LiveState, &'a Location),
}

/// Reads the object (from the shared LIST of its kind when `listed`), unless its verdict is
/// reached without it; an object outside the record's claim (nothing where it lives names the
/// release, for one Helm gives its ownership metadata: `owned`) is named, never judged.
pub(crate) async fn read<'a>(
    reads: &Reads<'_>,
    obj: &DesiredObject,
    at: Option<&'a Location>,
    (listed, owned): (bool, bool),
) -> Reading<'a> {
    let verdict = |verdict| Reading::Verdict(Box::new(ObjectDrift::new(obj.id(), obj.source.as_deref(), verdict)));
    let Some(at) = at else {
        return verdict(Verdict::Unknown {
            reason: format!("the cluster does not serve {} {}", obj.api_version, obj.kind),
        });
    };
    let id = obj.id();
    let question = |live| Question {
        acting: reads.acting,
        home: reads.home,
        trusted: reads.trusted,
        object: &id,
        namespace: at.namespace.as_deref(),
        live,
        owned,
    };
    if let Err(reason) = decide(&question(None), Deed::Read, &Rights::Nobody) {
        return verdict(Verdict::Excluded { reason: reason.to_string() });
    }
    let live = reads.cache.get(reads.client, at, &obj.name, listed).await;
    let found = match &live {
        LiveState::Present(found) => Some(found),
        LiveState::Absent | LiveState::Failed(_) => None,
    };
    // Judged on the record's word only where the evidence allows: an absent object reads, to
    // the watcher, as one it may not judge (nothing it publishes tells which).
    if let Err(reason) = decide(&question(found), Deed::Judge, &Rights::Nobody) {
        return verdict(Verdict::Excluded { reason: reason.to_string() });
    }
    Reading::Live(live, at)
}

/// The verdict for one object from what [`read`] gave. A pipeline of small steps over the
/// object's evidence: rules, compare, ownership, attribution, managers the rules leave alone,
/// expected changes, verdict.
pub(crate) async fn judge(judge: &Judge<'_>, obj: &DesiredObject, read: Reading<'_>) -> ObjectDrift {
    let ctx = &judge.grounds;
    let mut drift = ObjectDrift::new(obj.id(), obj.source.as_deref(), Verdict::InSync);
    drift.hook = obj.hook.clone();
    let (live, at) = match read {
        Reading::Verdict(mut verdict) => {
            verdict.hook = drift.hook;
            return *verdict;
        }
        Reading::Live(live, at) => (live, at),
    };
    let me = object_ref(obj);
    if let Some(Excluded(reason)) = left_out(ctx, &me, obj) {
        drift.verdict = Verdict::Excluded { reason };
        return drift;
    }
    let live = match live {
        LiveState::Present(v) => v,
        LiveState::Absent => {
            // A Job deleted after its TTL, an expired token: gone as the chart asks.
            match controllers::gone_by_design(&object_ref(obj), &obj.object).filter(|_| !ctx.options.strict) {
                Some(expected) => drift.expected.push(expected),
                None => drift.verdict = Verdict::Missing,
            }
            return drift;
        }
        LiveState::Failed(e) => {
            drift.verdict = Verdict::Error { message: e.to_string() };
            return drift;
        }
    };
    let ignores = match rules(ctx, obj, &me, &live) {
        Ok(ignores) => ignores,
        Err(Excluded(reason)) => {
            drift.verdict = Verdict::Excluded { reason };
            return drift;
        }
    };
    if !ctx.options.trust_live_annotations && !ctx.options.upgrade {
        drift.flux_left_out = ctx.flux.left_out(me.namespace, &live).map(|why| why.0);
    }
    let (fields, found, engine) = differences(judge, obj, at, &live, &ignores).await;
    conclude(ctx, obj, &me, live, &ignores, Findings { fields, found, engine }, drift)
}

/// What a comparison found of one object, before the rules judge it.
struct Findings {
    /// The recorded fields that differ.
    fields: Vec<FieldDiff>,
    /// Fields other managers own (added outside Helm, the server's own values).
    found: OwnedElsewhere,
    /// How it was compared.
    engine: Method,
}

/// The verdict from the differences found (client-side or by the dry-run): ignored paths set
/// aside, ownership, who wrote what, managers the rules leave alone, expected changes.
fn conclude(
    ctx: &Grounds<'_>,
    obj: &DesiredObject,
    me: &ObjectRef,
    live: Value,
    ignores: &[IgnorePrefix],
    Findings { fields, found, engine }: Findings,
    mut drift: ObjectDrift,
) -> ObjectDrift {
    (drift.fields, drift.added, drift.ignored) = compare::without_ignored(fields, found.added, ignores);
    // The server's own values for Helm's object, written by whoever re-created it: ownership,
    // not content (and nothing --remove-foreign would remove).
    drift.server_values = found.defaults;
    drift.admission = found.admission;
    let helm = ctx.writer.manager.as_str();
    drift.recreated = attribution::recreated(&live, helm);
    drift.apply = ctx.deployed.apply;
    ownership(ctx, obj, &live, ignores, &mut drift);
    // No entry of Helm's writer, and no other manager took its fields: the record was wiped.
    let wiped = !managed::holds_entry_of(&live, helm) && drift.disowned.is_empty();
    drift.ownership_wiped = wiped.then(|| helm.to_string());
    attribute(&live, helm, &mut drift);
    leave_managers(ctx, me, &mut drift);
    if !ctx.options.strict {
        let (fields, added) = (std::mem::take(&mut drift.fields), std::mem::take(&mut drift.added));
        let (fields, added, mut by_design) = controllers::set_aside(me, &obj.object, fields, added);
        (drift.fields, drift.added, drift.expected) =
            expected::set_aside(&ctx.options.expected, me, fields, added, helm);
        drift.expected.append(&mut by_design);
        drift.expected.extend(found.admitted);
    } else {
        // --strict: what admission may have added counts, as everything expected does.
        let admitted = found.admitted.into_iter().map(|e| Foreign {
            path: e.path,
            value: e.value,
            manager: String::new(),
            changed_by: None,
        });
        drift.added.extend(admitted);
    }
    if matches!(engine, Method::ReadOnly { .. }) {
        helms_own(ctx, obj, &live, &mut drift);
    }
    // Values as recorded but owned elsewhere: only an upgrade that changes those fields
    // conflicts, so it is its own verdict, drift only with --strict.
    let disowned = !drift.disowned.is_empty() && ctx.options.strict;
    let drifted = !drift.fields.is_empty() || !drift.added.is_empty() || disowned;
    drift.verdict = if drifted { Verdict::Modified } else { Verdict::InSync };
    drift.engine = Some(engine);
    if drifted {
        let mut live = live;
        exact::strip_server_fields(&mut live);
        drift.live = Some(live);
    }
    drift
}

/// The differences and the engine that found them: client-side first, then the server's
/// dry-run for an object that differs client-side (unless read-only or refused). Fields another
/// manager owns are judged against what the server would hold for Helm's object (its defaults,
/// a CRD's schema defaults, the values it chooses).
async fn differences(
    judge: &Judge<'_>,
    obj: &DesiredObject,
    at: &Location,
    live: &Value,
    ignores: &[IgnorePrefix],
) -> (Vec<FieldDiff>, OwnedElsewhere, Method) {
    let comparable = subset::comparable(&obj.object);
    // An empty value that lets the server choose (`nodePort: 0`) sets nothing: not compared,
    // and whoever changes the value the server chose owns a field the chart does not set.
    let desired = defaults::without_empty_choices(obj.group(), &obj.kind, &comparable);
    let fields = subset::differences(&desired, live);
    // Only another writer's fields can be foreign (or the server's values in its hands): for
    // the objects no one else touched, nothing is worked out.
    let mut found = OwnedElsewhere::default();
    let helm = judge.grounds.writer.manager.as_str();
    if managed::owned_besides_helm(live, helm) {
        let creators = attribution::creators(live, helm);
        let held = |schema| defaults::held(obj.group(), &obj.kind, &desired, schema);
        found = managed::foreign(&desired, &held(None), &creators, live, helm);
        if !found.added.is_empty()
            && !defaults::is_built_in(obj.group())
            && let Some(schema) = judge.cache.crd_schema(judge.client, at).await
        {
            found = managed::foreign(&desired, &held(Some(&schema)), &creators, live, helm);
        }
    }
    let asked = super::grounds::Inquiry { obj, at, desired: &desired, live };
    let mut claimed = super::own_name::unexplained(judge, &asked).await;
    // A field another manager's entry names itself is that manager's addition, not one under
    // Helm's name too (Helm 3's entry left holding `f:data: {}` after a JSON patch took keys):
    // each field is reported, and removed, once.
    claimed.retain(|c| !found.added.iter().any(|f| f.path == c.path));
    found.added.append(&mut claimed);
    let (mut nobodys, admitted) = super::own_name::unowned(judge, &asked, &found.added).await;
    found.added.append(&mut nobodys);
    found.added.sort_by_cached_key(|f| f.path.pointer());
    found.admitted = admitted;
    if judge.grounds.options.read_only {
        if !fields.is_empty() {
            // The read-only engine's changed values: a webhook covering it may have made them.
            found.admission = super::admitted::covering(judge, &asked).await;
        }
        return (fields, found, Method::ReadOnly { reason: "--read-only".into() });
    }
    if !fields.iter().any(|f| !compare::is_ignored(&f.path.pointer(), ignores)) {
        return (fields, found, Method::Exact);
    }
    let refused =
        match live::apply_dry_run(WriteTo { client: judge.client, at, name: &obj.name, manager: helm }, &obj.object)
            .await
        {
            Ok(after) => return (not_added(exact::differences(&after, live), &found), found, Method::Exact),
            Err(e @ ApiError::Invalid { .. }) => match update_differences(judge, obj, at, live, &found).await {
                Some(differences) => return (differences, found, Method::Exact),
                None => e,
            },
            Err(e) => e,
        };
    // The read-only engine's changed values: a webhook covering the object may have made them.
    found.admission = super::admitted::covering(judge, &asked).await;
    (fields, found, Method::ReadOnly { reason: fallback_reason(&refused) })
}

/// The differences when the apply dry-run is refused for its merge (a Service port renumbered
/// by hand: the apply merges the recorded port into the live list, and the list it makes is
/// invalid): the live object with the chart's fields laid over it, the lists the chart sets
/// whole (the recorded object as a repair leaves it), written as a dry-run update by Helm's
/// writer.
async fn update_differences(
    judge: &Judge<'_>,
    obj: &DesiredObject,
    at: &Location,
    live: &Value,
    found: &OwnedElsewhere,
) -> Option<Vec<FieldDiff>> {
    let written = merge::client_side(live, &[], &obj.object, false);
    let to = WriteTo { client: judge.client, at, name: &obj.name, manager: &judge.grounds.writer.manager };
    let after = live::update_dry_run(to, &written).await.ok()?;
    Some(not_added(exact::differences(&after, live), found))
}

/// The differences without what another manager (or a borrowed name) added: reported as added
/// (`found`), not twice.
fn not_added(mut differences: Vec<FieldDiff>, found: &OwnedElsewhere) -> Vec<FieldDiff> {
    let added = |p: &str| found.added.iter().any(|a| under(p, &a.path.pointer()));
    differences.retain(|d| d.recorded.is_some() || !added(&d.path.pointer()));
    differences
}

/// Fields the chart sets that another manager owns while Helm owns none: drift for server-side
/// applied releases; for client-side applied ones a note (their upgrade overwrites them).
fn ownership(ctx: &Grounds<'_>, obj: &DesiredObject, live: &Value, ignores: &[IgnorePrefix], drift: &mut ObjectDrift) {
    // The object as sent, not as compared: a Secret's write-only `stringData` is owned as sent.
    let mut disowned = ownership::disowned(&obj.object, live, &ctx.writer.manager);
    // A field whose value differs is reported as modified; ignored paths are left alone.
    disowned.retain(|o| {
        let at = o.path.pointer();
        !compare::is_ignored(&at, ignores)
            && !drift.fields.iter().any(|f| {
                let diff = f.path.pointer();
                under(&at, &diff) || under(&diff, &at)
            })
    });
    // A re-created object's fields are owned elsewhere whatever the apply method: Helm never
    // wrote it.
    if ctx.deployed.apply.is_server_side() || drift.recreated.is_some() {
        drift.disowned = disowned;
        return;
    }
    drift.ignored.extend(disowned.into_iter().map(|d| Ignored {
        reason: format!(
            "owned by {}; the release is applied client-side, so the next helm upgrade overwrites it without a conflict",
            d.manager
        ),
        path: d.path,
    }));
}

/// Who last wrote each difference (`helm`: the release's writer).
fn attribute(live: &Value, helm: &str, drift: &mut ObjectDrift) {
    for f in &mut drift.fields {
        f.changed_by = attribution::of(live, &f.path);
        // A field the record holds was not removed by Helm: the last writer of what holds it
        // (Helm, or a repair in Helm's name) is not who removed it, and nobody else is known.
        let by_helm = f.changed_by.as_ref().is_some_and(|c| c.manager == helm);
        if f.live.is_none() && by_helm {
            f.changed_by = None;
        }
    }
    for a in &mut drift.added {
        a.changed_by = attribution::of(live, &a.path);
    }
}

/// The read-only engine cannot ask the server what Helm's request becomes: a value that differs
/// under Helm's name is Helm's apply as admission left it (expected, the evidence its reason)
/// only when the cluster's record of the write says so; otherwise it stays drift, with what
/// decided (or why nothing could). `--strict` counts the admitted ones too.
fn helms_own(ctx: &Grounds<'_>, obj: &DesiredObject, live: &Value, drift: &mut ObjectDrift) {
    let write = provenance::JudgedObject { group: obj.group(), kind: &obj.kind, live, deployed: &ctx.deployed };
    let mut kept = Vec::new();
    for mut f in std::mem::take(&mut drift.fields) {
        let by_helm = f.changed_by.as_ref().filter(|c| ctx.writer.is(&c.manager));
        let (Some(by), true, true) = (by_helm, f.live.is_some(), f.recorded.is_some()) else {
            kept.push(f);
            continue;
        };
        let found = provenance::of(&write, &f.path, by);
        if found.admitted()
            && !ctx.options.strict
            && let Some(value) = f.live.take()
        {
            let reason = format!("{}: {}", expected::MUTATED_AT_ADMISSION, found.evidence);
            drift.expected.push(crate::model::Expected { path: f.path, value, reason, changed_by: f.changed_by });
        } else {
            f.provenance = Some(found);
            kept.push(f);
        }
    }
    drift.fields = kept;
}

/// What the managers the rules name wrote is left alone (Argo CD's managedFieldsManagers).
fn leave_managers(ctx: &Grounds<'_>, me: &ObjectRef, drift: &mut ObjectDrift) {
    let managers = ignore::managers_for(&ctx.options.rules, me, ctx.release);
    if managers.is_empty() {
        return;
    }
    let rule_for =
        |writer: Option<&str>| managers.iter().find(|(m, _)| Some(m.as_str()) == writer).map(|(_, r)| r.clone());
    let ignored = &mut drift.ignored;
    drift.fields.retain(|f| match rule_for(f.changed_by.as_ref().map(|c| c.manager.as_str())) {
        Some(reason) => !ignored_too(ignored, &f.path, reason),
        None => true,
    });
    drift.added.retain(|a| match rule_for(Some(&a.manager)) {
        Some(reason) => !ignored_too(ignored, &a.path, reason),
        None => true,
    });
}

/// Records a difference as ignored; always true (for `retain`).
fn ignored_too(ignored: &mut Vec<Ignored>, path: &crate::model::FieldPath, reason: String) -> bool {
    ignored.push(Ignored { path: path.clone(), reason });
    true
}

/// Why the read-only comparison was used instead of the server's dry-run: what the server said.
fn fallback_reason(e: &ApiError) -> String {
    match e {
        ApiError::Forbidden { .. } => format!("server-side dry-run {e}"),
        _ => format!("the server refused the server-side apply dry-run: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::provenance::Deployed;
    use crate::live::Scaled;
    use crate::model::HelmWriter;
    use crate::settings::CompareOptions;
    use serde_json::json;

    const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - name: web\n          image: a\n";

    fn object(yaml: &str) -> DesiredObject {
        crate::desired::from_manifest(yaml).unwrap().remove(0)
    }

    static HELM: std::sync::OnceLock<HelmWriter> = std::sync::OnceLock::new();
    static FLUX: std::sync::OnceLock<crate::policy::flux::HelmReleaseRules> = std::sync::OnceLock::new();

    fn policy<'a>(options: &'a CompareOptions, scaled: &'a [Scaled]) -> Grounds<'a> {
        Grounds {
            options,
            scaled,
            deployed: Deployed::default(),
            release: "web",
            flux: FLUX.get_or_init(Default::default),
            writer: HELM.get_or_init(HelmWriter::helm_command),
        }
    }

    /// The read-only engine end to end, without a cluster: rules, the client-side comparison,
    /// the verdict.
    fn read_only(ctx: &Grounds<'_>, obj: &DesiredObject, live: Value) -> ObjectDrift {
        let drift = ObjectDrift::new(obj.id(), None, Verdict::InSync);
        let me = object_ref(obj);
        let ignores = match rules(ctx, obj, &me, &live) {
            Ok(i) => i,
            Err(Excluded(reason)) => return ObjectDrift::new(obj.id(), None, Verdict::Excluded { reason }),
        };
        let desired = subset::comparable(&obj.object);
        let held = defaults::held(obj.group(), &obj.kind, &desired, None);
        let found = managed::foreign(&desired, &held, &attribution::creators(&live, "helm"), &live, "helm");
        let found = Findings { fields: subset::differences(&desired, &live), found, engine: Method::Exact };
        conclude(ctx, obj, &me, live, &ignores, found, drift)
    }

    fn live(replicas: u32, managed: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "apps", "resourceVersion": "7", "managedFields": managed},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "web", "image": "a"}]}}}})
    }

    #[test]
    fn a_changed_field_is_modified_with_the_live_object_kept_without_server_fields() {
        let options = CompareOptions::default();
        let d = read_only(&policy(&options, &[]), &object(DEPLOYMENT), live(5, json!([])));
        assert_eq!(d.verdict, Verdict::Modified);
        assert_eq!(d.fields.iter().map(|f| f.path.pointer()).collect::<Vec<_>>(), ["/spec/replicas"]);
        let kept = d.live.expect("kept for the diff");
        assert!(
            kept.pointer("/metadata/managedFields").is_none() && kept.pointer("/metadata/resourceVersion").is_none()
        );
        let same = read_only(&policy(&options, &[]), &object(DEPLOYMENT), live(2, json!([])));
        assert_eq!((same.verdict, same.live), (Verdict::InSync, None));
    }

    /// A hook Job as Helm created it, and as it lives after it ran: the server's selector and
    /// labels, the Job controller's status. What it declares is in sync; its run state is not
    /// compared.
    #[test]
    fn a_hook_job_is_compared_for_what_it_declares_not_its_run_state() {
        const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  namespace: apps\n  annotations:\n    helm.sh/hook: pre-upgrade\nspec:\n  backoffLimit: 1\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: m\n          image: migrate:1\n";
        let uid = "batch.kubernetes.io/controller-uid";
        let live = json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "migrate", "namespace": "apps", "annotations": {"helm.sh/hook": "pre-upgrade"},
                "labels": {uid: "u1", "batch.kubernetes.io/job-name": "migrate"},
                "managedFields": [
                    {"manager": "helm", "operation": "Update", "apiVersion": "batch/v1",
                     "fieldsV1": {"f:metadata": {"f:annotations": {"f:helm.sh/hook": {}}}, "f:spec": {"f:backoffLimit": {}, "f:template": {}}}},
                    {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status", "apiVersion": "batch/v1",
                     "fieldsV1": {"f:status": {"f:succeeded": {}, "f:completionTime": {}, "f:conditions": {}}}}]},
            "spec": {"backoffLimit": 1, "completions": 1, "parallelism": 1, "selector": {"matchLabels": {uid: "u1"}},
                "template": {"metadata": {"labels": {uid: "u1", "batch.kubernetes.io/job-name": "migrate"}},
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "migrate:1"}]}}},
            "status": {"succeeded": 1, "completionTime": "2026-12-01T10:00:00Z", "conditions": [{"type": "Complete", "status": "True"}]}});
        let options = CompareOptions::default();
        let d = read_only(&policy(&options, &[]), &object(JOB), live.clone());
        assert_eq!(d.drift_kind(), crate::model::DriftKind::InSync, "{:?} {:?}", d.fields, d.added);
        let mut edited = live;
        edited["spec"]["backoffLimit"] = json!(6);
        let d = read_only(&policy(&options, &[]), &object(JOB), edited);
        assert_eq!(d.fields.iter().map(|f| f.path.pointer()).collect::<Vec<_>>(), ["/spec/backoffLimit"]);
    }

    #[test]
    fn an_autoscaled_workload_leaves_its_replicas_to_the_hpa() {
        let options = CompareOptions::default();
        let scaled = [Scaled {
            namespace: "apps".into(),
            group: "apps".into(),
            kind: "Deployment".into(),
            name: "web".into(),
            hpa: "web-hpa".into(),
        }];
        let d = read_only(&policy(&options, &scaled), &object(DEPLOYMENT), live(5, json!([])));
        assert_eq!(d.verdict, Verdict::InSync);
        assert_eq!(d.ignored.len(), 1);
        assert!(d.ignored[0].reason.contains("HorizontalPodAutoscaler web-hpa"), "{:?}", d.ignored);
        let other = [Scaled { name: "api".into(), ..scaled[0].clone() }];
        assert_eq!(
            read_only(&policy(&options, &other), &object(DEPLOYMENT), live(5, json!([]))).verdict,
            Verdict::Modified
        );
    }

    #[test]
    fn an_opt_out_in_the_chart_excludes_a_live_one_only_when_trusted() {
        let options = CompareOptions::default();
        let opted_out = DEPLOYMENT.replace(
            "  namespace: apps\n",
            "  namespace: apps\n  annotations:\n    helm-drift.io/disabled: \"true\"\n",
        );
        let d = read_only(&policy(&options, &[]), &object(&opted_out), live(5, json!([])));
        assert!(matches!(d.verdict, Verdict::Excluded { .. }), "{:?}", d.verdict);
        let mut edited = live(5, json!([]));
        edited["metadata"]["annotations"] = json!({"helm-drift.io/disabled": "true"});
        let d = read_only(&policy(&options, &[]), &object(DEPLOYMENT), edited.clone());
        assert_eq!(d.verdict, Verdict::Modified, "whoever drifted it cannot hide it");
        let trusting = CompareOptions { trust_live_annotations: true, ..CompareOptions::default() };
        let d = read_only(&policy(&trusting, &[]), &object(DEPLOYMENT), edited);
        assert!(matches!(d.verdict, Verdict::Excluded { .. }), "{:?}", d.verdict);
    }

    #[test]
    fn a_rollout_restart_is_expected_unless_strict() {
        let restart = json!([{"manager": "kubectl-rollout", "operation": "Update", "apiVersion": "apps/v1",
            "time": "2026-11-30T10:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:template": {"f:metadata": {"f:annotations": {"f:kubectl.kubernetes.io/restartedAt": {}}}}}}}]);
        let mut restarted = live(2, restart);
        restarted["spec"]["template"]["metadata"] =
            json!({"annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-30T10:00:00Z"}});
        let options = CompareOptions {
            expected: crate::policy::expected::rules(Vec::new(), "test").unwrap(),
            ..CompareOptions::default()
        };
        let d = read_only(&policy(&options, &[]), &object(DEPLOYMENT), restarted.clone());
        assert_eq!(d.verdict, Verdict::InSync, "{d:?}");
        assert_eq!(d.expected.len(), 1, "shown as expected: {d:?}");
        let strict = CompareOptions { strict: true, ..options };
        assert_eq!(read_only(&policy(&strict, &[]), &object(DEPLOYMENT), restarted).verdict, Verdict::Modified);
    }

    #[test]
    fn a_recreated_object_with_the_recorded_values_is_owned_elsewhere_and_drift_only_when_strict() {
        let created = json!([{"manager": "kubectl-create", "operation": "Update", "time": "2026-11-30T10:00:00Z",
            "fieldsV1": {"f:spec": {"f:replicas": {}, "f:revisionHistoryLimit": {}, "f:template": {"f:spec": {
                "f:dnsPolicy": {}, "f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:name": {}, "f:image": {}, "f:imagePullPolicy": {}}}}}}}}]);
        let mut restored = live(2, created);
        restored["spec"]["revisionHistoryLimit"] = json!(10);
        restored["spec"]["template"]["spec"]["dnsPolicy"] = json!("ClusterFirst");
        restored["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = json!("Always");
        let options = CompareOptions::default();
        let d = read_only(&policy(&options, &[]), &object(DEPLOYMENT), restored.clone());
        assert_eq!(d.verdict, Verdict::InSync, "{d:?}");
        assert_eq!(d.drift_kind(), crate::model::DriftKind::TakenOver);
        assert_eq!(d.recreated.as_ref().map(|r| r.manager.as_str()), Some("kubectl-create"));
        assert!(d.added.is_empty() && d.server_values.iter().any(|i| i.path.pointer() == "/spec/revisionHistoryLimit"));
        let strict = CompareOptions { strict: true, ..CompareOptions::default() };
        assert!(read_only(&policy(&strict, &[]), &object(DEPLOYMENT), restored.clone()).is_drift());
        // A value the server would not hold is still drift, named.
        restored["spec"]["revisionHistoryLimit"] = json!(3);
        let d = read_only(&policy(&options, &[]), &object(DEPLOYMENT), restored);
        assert_eq!(d.added.iter().map(|a| a.path.pointer()).collect::<Vec<_>>(), ["/spec/revisionHistoryLimit"]);
    }

    /// A recorded field that is gone was not removed by Helm: the last writer of what held it
    /// (Helm, or a repair in Helm's name) is not named as who removed it.
    #[test]
    fn a_removal_is_never_blamed_on_helm() {
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "apps",
            "managedFields": [{"manager": "helm", "operation": "Update", "apiVersion": "apps/v1",
                "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {}}}}}}]},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "web"}]}}}});
        let d = read_only(&policy(&CompareOptions::default(), &[]), &object(DEPLOYMENT), live);
        let image = d.fields.iter().find(|f| f.path.pointer().ends_with("/image")).expect("the image is gone");
        assert_eq!(image.live, None);
        assert_eq!(image.changed_by, None, "{:?}", image.changed_by);
    }
}

//! `-o json`: one document per run, schema version 1 (2 for a fleet of clusters; documented in
//! the README). Every `path`
//! is an RFC 6901 pointer that resolves in the object it describes: the recorded object for
//! removed values, the live one otherwise.

use super::secret;
use crate::model::{
    AcceptReport, Attribution, Audited, Cause, DocChange, DriftReport, Explanation, FieldDiff, FleetReport, HelmWriter,
    Method, ObjectDrift, Outcome, ReleaseVerdict, RenderReport, RunReport, WriterFound,
};
use serde_json::{Value, json};

/// Version 2 named the verdicts anew (`changed`, `fields-added`, `taken-over`; `takenOver` for
/// `ownedElsewhere`): see the CHANGELOG.
pub(crate) const SCHEMA_VERSION: u32 = 2;

/// `check -o json`.
pub(crate) fn run(run: &RunReport, style: &super::style::Style) -> String {
    document(run, style.show_secrets)
}

/// The JSON document of a run.
pub(crate) fn document(run: &RunReport, show_secrets: bool) -> String {
    let doc = json!({
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "helm-drift", "version": env!("CARGO_PKG_VERSION")},
        "summary": summary(run),
        "releases": releases(run, show_secrets),
    });
    pretty(&doc)
}

/// The schema version of a fleet's document: the run's document (version 2), each release with
/// its `cluster`, and a `clusters` list.
pub(crate) const FLEET_SCHEMA_VERSION: u32 = 3;

/// `-o json` of a fleet check: every release of every cluster, with its cluster.
pub(crate) fn fleet(fleet: &FleetReport, style: &super::style::Style) -> String {
    let show_secrets = style.show_secrets;
    let mut all = Vec::new();
    let clusters: Vec<Value> = fleet
        .clusters
        .iter()
        .map(|c| {
            for mut r in releases(&c.run, show_secrets) {
                if let Some(map) = r.as_object_mut() {
                    map.insert("cluster".into(), c.cluster.clone().into());
                }
                all.push(r);
            }
            json!({"name": c.cluster, "summary": summary(&c.run)})
        })
        .collect();
    let (in_sync, drifted, errors) = fleet.counts();
    let doc = json!({
        "schemaVersion": FLEET_SCHEMA_VERSION,
        "tool": {"name": "helm-drift", "version": env!("CARGO_PKG_VERSION")},
        "summary": {
            "clusters": fleet.clusters.len(),
            "releases": fleet.releases(),
            "inSync": in_sync,
            "drifted": drifted,
            "errors": errors,
            "exitCode": fleet.exit_status().code(),
        },
        "clusters": clusters,
        "releases": all,
    });
    pretty(&doc)
}

fn summary(run: &RunReport) -> Value {
    let (in_sync, drifted, errors) = run.counts();
    json!({
        "releases": run.outcomes.len(),
        "inSync": in_sync,
        "drifted": drifted,
        "errors": errors,
        "refused": run.refused(),
        "exitCode": run.exit_status().code(),
    })
}

fn releases(run: &RunReport, show_secrets: bool) -> Vec<Value> {
    run.outcomes
        .iter()
        .map(|o| match o {
            Outcome::Checked(r) => release(r, show_secrets),
            Outcome::Failed(e) => json!({
                "name": e.release,
                "namespace": e.namespace,
                "verdict": if e.refused { "refused" } else { ReleaseVerdict::Error.word() },
                "error": e.message,
                "objects": [],
            }),
        })
        .collect()
}

/// Pretty JSON with a final newline.
pub(crate) fn pretty(doc: &Value) -> String {
    let mut text = serde_json::to_string_pretty(doc).unwrap_or_default();
    text.push('\n');
    text
}

/// Helm's writer of a release: its field manager, how it was found and why, and the objects
/// whose recorded fields another manager owns.
pub(super) fn writer(w: &HelmWriter) -> Value {
    let others = match &w.found {
        WriterFound::Learnt { others, .. } => {
            others.iter().map(|(id, m)| json!({"object": id.to_string(), "manager": m})).collect()
        }
        _ => Vec::new(),
    };
    json!({"manager": w.manager, "found": w.source(), "why": w.why(), "objectsOwnedByOthers": others})
}

pub(super) fn release(r: &DriftReport, show_secrets: bool) -> Value {
    json!({
        "name": r.release,
        "namespace": r.namespace,
        "revision": r.revision,
        "status": r.status,
        "chart": r.chart,
        "record": r.record,
        "storageNamespace": r.stored_apart.as_ref().map(|s| &s.namespace),
        "storedApartBecause": r.stored_apart.as_ref().map(|s| s.why()),
        "newestRevision": r.newest.as_ref().map(|(rev, status)| json!({"revision": rev, "status": status})),
        "verdict": r.verdict().word(),
        "error": Value::Null,
        "engine": engine(&r.engine()),
        "writer": writer(&r.writer),
        "notes": r.notes,
        "findings": r.findings,
        "guard": r.guard,
        "explanations": r.explanations.iter().map(|e| explanation(e, show_secrets)).collect::<Vec<_>>(),
        "upgradeCommand": super::present::upgrade_command(r, &style(show_secrets)),
        "unexplained": r.unexplained(),
        "rerender": r.rerender.as_ref().map(|now| json!({
            "documents": now.documents,
            "lookup": if now.lookup_answered { "cluster" } else { "none" },
            "changedDocuments": now.changed.iter().map(|d| d.source.clone()).collect::<Vec<_>>(),
            "unpredictable": now.unpredictable,
            "upgradeWouldChange": now.against_live.objects.iter().filter(|o| o.is_drift()).map(|o| object(o, show_secrets)).collect::<Vec<_>>(),
        })),
        "staleBaseline": r.stale.iter().map(|(object, path, changed)| json!({"object": object, "path": path, "valueChanged": changed})).collect::<Vec<_>>(),
        "counts": {"objects": r.objects.len(), "drifted": r.drifted(), "takenOver": r.taken_over(), "errors": r.errors()},
        "objects": r.objects.iter().filter(|o| o.hook.is_none()).map(|o| placed(r, o, show_secrets)).collect::<Vec<_>>(),
        "hooks": r.objects.iter().filter(|o| o.hook.is_some()).map(|o| placed(r, o, show_secrets)).collect::<Vec<_>>(),
    })
}

/// An object of a release, with whether it lives outside the release's namespace.
fn placed(r: &DriftReport, o: &ObjectDrift, show_secrets: bool) -> Value {
    let mut v = object(o, show_secrets);
    if let Some(map) = v.as_object_mut() {
        map.insert("outsideReleaseNamespace".into(), r.is_outside(o).into());
    }
    v
}

/// One explained field: its values (`valueKeys`, `shape`), the `--set-json` pairs that make it
/// live, or why none (`reason`), or the template that writes it.
fn explanation(e: &Explanation, show_secrets: bool) -> Value {
    let sets = super::present::set_pairs(e, &style(show_secrets));
    let (keys, shape, reason, template) = match &e.cause {
        Cause::Values(b) => (b.keys.clone(), Some(b.shape.clone()).filter(|s| !s.is_empty()), b.misfit.clone(), None),
        Cause::HardCoded(t) => (Vec::new(), None, None, t.clone()),
        Cause::NotFound(why) => (Vec::new(), None, Some(why.clone()), None),
    };
    let also = match &e.cause {
        Cause::Values(b) if b.misfit.is_none() => b.also.clone(),
        _ => Vec::new(),
    };
    let shape = shape.filter(|_| !e.object.is_secret_path(&e.path.pointer()) || show_secrets);
    json!({"object": e.object.to_string(), "path": e.path.pointer(), "valueKey": keys.first(), "valueKeys": keys,
        "shape": shape, "setJson": sets, "reason": reason, "template": template, "alsoChanges": also})
}

fn engine(e: &Method) -> Value {
    match e {
        Method::Exact => json!({"name": "exact", "reason": Value::Null}),
        Method::ReadOnly { reason } => json!({"name": "read-only", "reason": reason}),
    }
}

/// The style the shared text helpers need.
fn style(show_secrets: bool) -> super::style::Style {
    super::Style { show_secrets, ..Default::default() }
}

/// Who last wrote a field, or `null`; with the audit read, who made that write.
fn changed_by(by: &Option<Attribution>) -> Value {
    by.as_ref().map_or(Value::Null, |b| {
        let mut v = json!({"manager": b.manager, "operation": b.operation, "subresource": b.subresource, "time": b.time, "person": b.person});
        if let (Some(audited), Some(map)) = (&b.audit, v.as_object_mut()) {
            map.extend(actor(audited));
        }
        v
    })
}

/// What the audit says about a write: `auditRecord` (`found`, `none`, `ambiguous`) and, when
/// found, who (`user`, `groups`, `impersonatedBy`, `userAgent`, `sourceIPs`, `auditId`, `verb`,
/// `auditTime`).
fn actor(audited: &Audited) -> serde_json::Map<String, Value> {
    let v = match audited {
        Audited::Found(a) => json!({
            "auditRecord": "found", "user": a.user, "groups": a.groups, "impersonatedBy": a.impersonated_by,
            "userAgent": a.user_agent, "sourceIPs": a.source_ips, "auditId": a.audit_id, "verb": a.verb, "auditTime": a.time,
        }),
        Audited::NoRecord(why) if *why == crate::audit::matching::SEVERAL => {
            json!({"auditRecord": "ambiguous", "user": null})
        }
        Audited::NoRecord(_) => json!({"auditRecord": "none", "user": null}),
    };
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

/// The pointer of a difference: in the recorded object when the value is gone live.
fn pointer(f: &FieldDiff) -> String {
    let on_side = if f.live.is_none() { f.path.recorded_pointer() } else { f.path.live_pointer() };
    on_side.unwrap_or_else(|| f.path.pointer())
}

/// A `watch` notification: the event, the release, the drift signature and the object in the
/// shape of `-o json` (secret values hidden). A resolved drift carries the object's identity.
pub(crate) fn notification(
    event: &str,
    release: &DriftReport,
    signature: &str,
    drifted: Option<&ObjectDrift>,
    id: &crate::model::ObjectId,
) -> Value {
    let object = match drifted {
        Some(o) => object(o, false),
        None => {
            json!({"apiVersion": id.api_version, "kind": id.kind, "namespace": id.namespace, "name": id.name, "verdict": "in-sync"})
        }
    };
    json!({
        "schemaVersion": SCHEMA_VERSION,
        "event": event,
        "release": {"name": release.release, "namespace": release.namespace, "revision": release.revision, "chart": release.chart},
        "signature": signature,
        "object": object,
    })
}

/// The same notification for a Slack-compatible incoming webhook: one line of text.
pub(crate) fn slack(notification: &Value) -> Value {
    let o = &notification["object"];
    let r = &notification["release"];
    let mut paths: Vec<&str> = ["differences", "addedOutsideHelm", "takenOver"]
        .iter()
        .flat_map(|k| o[k].as_array().into_iter().flatten())
        .filter_map(|d| d["path"].as_str())
        .collect();
    paths.dedup();
    let at = if paths.is_empty() { String::new() } else { format!(": {}", paths.join(", ")) };
    let cluster = notification["cluster"].as_str().map_or(String::new(), |c| format!("[{c}] "));
    // A repair not made says why (the rule that refused it, the manager that fights).
    if let Some(message) = notification["message"].as_str() {
        let text = format!("{cluster}{}: {message}", notification["event"].as_str().unwrap_or_default());
        return json!({"text": mrkdwn(&text)});
    }
    let ns = o["namespace"].as_str().map_or(String::new(), |n| format!("{n}/"));
    json!({"text": mrkdwn(&format!(
        "{cluster}{} {} {}{} of release {}/{} (revision {}), {}{at}",
        notification["event"].as_str().unwrap_or_default(),
        o["kind"].as_str().unwrap_or_default(),
        ns,
        o["name"].as_str().unwrap_or_default(),
        r["namespace"].as_str().unwrap_or_default(),
        r["name"].as_str().unwrap_or_default(),
        r["revision"],
        o["verdict"].as_str().unwrap_or_default(),
    ))})
}

/// Text for Slack's mrkdwn, as Slack asks: `&`, `<` and `>` escaped, so that no name or path
/// from the cluster becomes a mention (`<!channel>`) or a link (`<url|text>`).
fn mrkdwn(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn object(o: &ObjectDrift, show_secrets: bool) -> Value {
    let value = |at: &str, v: &Option<Value>| v.as_ref().map(|v| secret::mask(&o.id, at, v, show_secrets));
    let mut out = json!({
        "apiVersion": o.id.api_version,
        "kind": o.id.kind,
        "namespace": o.id.namespace,
        "name": o.id.name,
        "source": o.source,
        "verdict": o.drift_kind().word(),
        "reason": o.reason(),
        "engine": o.engine.as_ref().map(engine),
        "differences": o.fields.iter().map(|f| {
            let at = pointer(f);
            let mut d = json!({"path": at, "recorded": value(&at, &f.recorded), "live": value(&at, &f.live), "changedBy": changed_by(&f.changed_by)});
            // Under Helm's name, in the read-only engine: which write the cluster says it was.
            if let Some(p) = &f.provenance {
                d["provenance"] = json!({"helmsApply": p.admitted(), "decided": p.decided(), "evidence": p.evidence});
            }
            d
        }).collect::<Vec<_>>(),
        "addedOutsideHelm": o.added.iter().map(|a| {
            let at = a.path.pointer();
            json!({"path": at, "value": secret::mask(&o.id, &at, &a.value, show_secrets), "manager": a.manager, "changedBy": changed_by(&a.changed_by)})
        }).collect::<Vec<_>>(),
        "takenOver": o.disowned.iter().map(|d| json!({"path": d.path.pointer(), "manager": d.manager, "sharedWithHelm": d.shared})).collect::<Vec<_>>(),
        "recreatedBy": changed_by(&o.recreated),
        "deletedBy": o.deleted_by.as_ref().map(|d| Value::Object(actor(d))),
        "serverValues": o.server_values.iter().map(|v| json!({"path": v.path.pointer(), "manager": v.manager})).collect::<Vec<_>>(),
        "expected": o.expected.iter().map(|e| {
            let at = e.path.pointer();
            json!({"path": at, "value": secret::mask(&o.id, &at, &e.value, show_secrets), "reason": e.reason, "changedBy": changed_by(&e.changed_by)})
        }).collect::<Vec<_>>(),
        "accepted": o.accepted.iter().map(|a| json!({"path": a.path.pointer(), "change": a.change, "expiresAt": a.until})).collect::<Vec<_>>(),
        "ignored": o.ignored.iter().map(|i| json!({"path": i.path.pointer(), "reason": i.reason})).collect::<Vec<_>>(),
        "hook": o.hook.as_ref().map(|h| json!({"events": h.events, "deletePolicies": h.delete_policies, "ranAtRevision": h.ran_at})),
    });
    // The read-only engine's changed values: the mutating webhooks and policies that may have
    // made them at admission.
    if !o.admission.is_empty() {
        out["mayBeAdmissions"] = json!(o.admission);
    }
    // Left out of Flux's drift correction by an annotation on the live object: reported, not
    // repaired.
    if let Some(why) = &o.flux_left_out {
        out["leftAloneByRepair"] = json!(why);
    }
    // No managedFields entry of the release's writer: the ownership record was wiped.
    if let Some(writer) = &o.ownership_wiped {
        out["ownershipWiped"] = json!(writer);
    }
    out
}

/// The `render` report: which documents render differently from the stored manifest.
pub(crate) fn render(r: &RenderReport, style: &super::style::Style) -> String {
    let show = style.show_secrets;
    let docs: Vec<_> = r
        .diffs
        .iter()
        .map(|d| {
            let (stored, rendered) = super::present::sides(&d.change, show);
            let mut doc = serde_json::json!({"source": d.source, "change": d.change.word()});
            if !matches!(d.change, DocChange::OnlyRendered(_)) {
                doc["stored"] = stored.into();
            }
            if !matches!(d.change, DocChange::OnlyStored(_)) {
                doc["rendered"] = rendered.into();
            }
            doc
        })
        .collect();
    pretty(&serde_json::json!({
        "schemaVersion": SCHEMA_VERSION,
        "release": r.release,
        "namespace": r.namespace,
        "revision": r.revision,
        "kubeVersion": r.kube_version,
        "documents": r.documents,
        "differences": docs,
    }))
}

/// `accept -o json`: the drift accepted, where, and the release's entries after it.
pub(crate) fn accept(r: &AcceptReport) -> String {
    let doc = json!({
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "helm-drift", "version": env!("CARGO_PKG_VERSION")},
        "release": r.release,
        "namespace": r.namespace,
        "location": r.location,
        "dryRun": r.dry_run,
        "accepted": r.accepted.iter().map(|a| json!({
            "object": a.object, "path": a.path, "change": a.change, "expiresAt": a.expires_at,
        })).collect::<Vec<_>>(),
        "dropped": r.dropped,
        "entries": r.entries,
    });
    pretty(&doc)
}

//! Kubernetes Events for drift: `DriftDetected`, `DriftResolved` and `DriftRepairAbandoned` on the
//! object, named after the drift signature so that the same drift is recorded once, whoever
//! records it (a resync, a restarted watcher, a new leader). They name paths, never values.

use crate::api::ApiError;
use crate::model::ObjectId;
use k8s_openapi::api::core::v1::{Event, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, ListParams, PostParams};
use std::collections::{BTreeMap, HashMap};

pub(crate) const DETECTED: &str = "DriftDetected";
pub(crate) const RESOLVED: &str = "DriftResolved";
pub(crate) const ABANDONED: &str = "DriftRepairAbandoned";
pub(crate) const REFUSED: &str = "DriftRepairRefused";
/// A drifted object held by a break-glass pause (`helm drift pause`).
pub(crate) const PAUSED: &str = "DriftPaused";
/// On a HelmReleaseProxy: the revision deployed on its cluster is not the one CAAPH recorded.
pub(crate) const UNRECORDED: &str = "RevisionNotRecorded";
/// On the watcher's own Pod, in its own namespace: a record a HelmRelease claims conflicts with
/// the claimed namespace's own record of the release (said to the operator, not the tenants).
pub(crate) const CONFLICT: &str = "ReleaseClaimConflict";
/// The component helm-drift's Events name.
const COMPONENT: &str = "helm-drift";
const SIGNATURE: &str = "helm-drift.io/signature";
const RELEASE: &str = "helm-drift.io/release";
/// When the Event last happened, to the nanosecond (Event times have seconds only).
const AT: &str = "helm-drift.io/last-seen";

/// What became of an Event.
#[derive(Debug)]
pub(crate) enum Recorded {
    Created,
    /// An Event with this signature exists: recorded before (by this or another watcher).
    Existing,
    /// An Event of that name exists that helm-drift did not write (another component, or
    /// another signature): the drift is news all the same.
    Foreign,
}

/// Records one Event about `object` (in [`crate::live::event_namespace`]).
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn record(
    client: &kube::Client,
    (object, uid): (&ObjectId, Option<&str>),
    release: &crate::watch::keys::ReleaseKey,
    reason: &str,
    signature: &str,
    message: &str,
) -> Result<Recorded, ApiError> {
    let namespace = crate::live::event_namespace(object.namespace.as_deref()).to_string();
    let now = k8s_openapi::jiff::Timestamp::now();
    let involved = ObjectReference {
        api_version: Some(object.api_version.clone()),
        kind: Some(object.kind.clone()),
        name: Some(object.name.clone()),
        namespace: object.namespace.clone(),
        uid: uid.map(str::to_string),
        ..Default::default()
    };
    let warning = reason != RESOLVED;
    let mut event = crate::live::event(
        involved,
        &namespace,
        name(&object.name, reason, signature),
        reason,
        message,
        warning,
        "Watch",
    );
    event.metadata.annotations = Some(BTreeMap::from([
        (SIGNATURE.to_string(), signature.to_string()),
        (RELEASE.to_string(), release.to_string()),
        (AT.to_string(), now.to_string()),
    ]));
    let api: Api<Event> = Api::namespaced(client.clone(), &namespace);
    let created = api.create(&PostParams::default(), &event).await;
    match created {
        Ok(_) => Ok(Recorded::Created),
        Err(kube::Error::Api(s)) if s.code == 409 => again(&api, object, reason, signature, now).await,
        Err(e) => Err(ApiError::from_kube(&e, "create", "events")),
    }
}

/// The Event for this signature exists. Recorded before (a resync, a restart, another replica),
/// unless the opposite Event (resolved for detected, detected for resolved) is newer: then the
/// same drift came back (or went away) again, and the existing Event is counted up.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn again(
    api: &Api<Event>,
    object: &ObjectId,
    reason: &str,
    signature: &str,
    now: k8s_openapi::jiff::Timestamp,
) -> Result<Recorded, ApiError> {
    let read =
        |name: String| async move { api.get_opt(&name).await.map_err(|e| ApiError::from_kube(&e, "get", "events")) };
    let existing = read(name(&object.name, reason, signature)).await?;
    if existing.as_ref().is_some_and(|e| !ours(e, Some(signature))) {
        return Ok(Recorded::Foreign);
    }
    let opposite = match reason {
        DETECTED => RESOLVED,
        RESOLVED => DETECTED,
        _ => return Ok(Recorded::Existing),
    };
    let counterpart = read(name(&object.name, opposite, signature)).await?;
    let (Some(existing), Some(counterpart)) = (existing, counterpart) else { return Ok(Recorded::Existing) };
    if last(&counterpart) <= last(&existing) {
        return Ok(Recorded::Existing);
    }
    let patch = serde_json::json!({
        "metadata": {"annotations": {AT: now.to_string()}},
        "count": existing.count.unwrap_or(1) + 1,
        "lastTimestamp": Time(now),
    });
    let at = existing.metadata.name.clone().unwrap_or_default();
    api.patch(&at, &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&patch))
        .await
        .map_err(|e| ApiError::from_kube(&e, "patch", "events"))?;
    Ok(Recorded::Created)
}

/// When an Event last happened.
fn last(e: &Event) -> Option<k8s_openapi::jiff::Timestamp> {
    let precise = e.metadata.annotations.as_ref().and_then(|a| a.get(AT)).and_then(|t| t.parse().ok());
    precise.or_else(|| e.last_timestamp.as_ref().or(e.first_timestamp.as_ref()).map(|t| t.0))
}

/// Whether helm-drift wrote this Event (its component, and the signature when one is given).
fn ours(e: &Event, signature: Option<&str>) -> bool {
    let component = e.reporting_component.as_deref().or(e.source.as_ref().and_then(|s| s.component.as_deref()));
    let recorded = e.metadata.annotations.as_ref().and_then(|a| a.get(SIGNATURE)).map(String::as_str);
    component == Some(COMPONENT) && signature.is_none_or(|s| recorded == Some(s))
}

/// The Event's name: the object's name, the reason and the signature's first 16 digits.
fn name(object: &str, reason: &str, signature: &str) -> String {
    let tag = match reason {
        DETECTED => "drift",
        RESOLVED => "resolved",
        REFUSED => "refused",
        UNRECORDED => "revision",
        PAUSED => "paused",
        CONFLICT => "conflict",
        _ => "abandoned",
    };
    let head: String = object.chars().take(200).collect();
    let short: String = signature.chars().take(16).collect();
    format!("{head}.{tag}-{short}")
}

/// What [`unresolved`] found.
#[derive(Debug, Default)]
pub(crate) struct Earlier {
    /// Drift signatures recorded and not resolved, by release and object.
    pub(crate) unresolved: HashMap<crate::watch::keys::ReleaseObject, String>,
    /// When each unresolved drift was reported (its Event's time), for the timeline.
    pub(crate) reported: HashMap<crate::watch::keys::ReleaseObject, k8s_openapi::jiff::Timestamp>,
    /// Events of helm-drift's reasons that were not taken: another component wrote them, or
    /// their signature or object reference is malformed.
    pub(crate) rejected: usize,
}

/// The drift signatures earlier watchers recorded and did not resolve, by object: read from the
/// Events in `namespace` (every namespace when `None`). Anyone who may create Events can write
/// one with these reasons: only well-formed Events of helm-drift's component are taken.
pub(crate) async fn unresolved(client: &kube::Client, namespace: Option<&str>) -> Result<Earlier, ApiError> {
    let api: Api<Event> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let list = |reason: &'static str| {
        let api = api.clone();
        async move { seen(&api, reason).await.map_err(|e| ApiError::from_kube(&e, "list", "events")) }
    };
    let (detected, resolved) = futures::try_join!(list(DETECTED), list(RESOLVED))?;
    let mut rejected = 0;
    let mut newest = |events: &[Seen]| {
        let mut out: HashMap<crate::watch::keys::ReleaseObject, (Option<k8s_openapi::jiff::Timestamp>, String)> =
            HashMap::new();
        for (taken, at) in events {
            let Some((id, sig)) = taken else {
                rejected += 1;
                continue;
            };
            if out.get(id).is_none_or(|(t, _)| at >= t) {
                out.insert(id.clone(), (*at, sig.clone()));
            }
        }
        out
    };
    let detected = newest(&detected);
    let resolved = newest(&resolved);
    // Unresolved: the newest drift of the object has no resolution after it.
    let open: Vec<_> = detected
        .into_iter()
        .filter(|(id, (at, sig))| resolved.get(id).is_none_or(|(r_at, r_sig)| r_sig != sig || r_at < at))
        .collect();
    let reported = open.iter().filter_map(|(id, (at, _))| Some((id.clone(), (*at)?))).collect();
    let unresolved = open.into_iter().map(|(id, (_, sig))| (id, sig)).collect();
    Ok(Earlier { unresolved, rejected, reported })
}

/// What is kept of one Event read at start: what [`taken`] found in it, and when it last
/// happened. Nothing else (its message may be a megabyte) outlives its page.
type Seen = (Option<(crate::watch::keys::ReleaseObject, String)>, Option<k8s_openapi::jiff::Timestamp>);

/// Events per page at start: an Event may hold up to about a megabyte (anyone who may create
/// Events can write one), so a page is a few tens of MiB at most, and only [`Seen`] is kept.
const EVENT_PAGE: u32 = 25;
/// The most Events of one reason read at start; the rest are not read (they only seed what was
/// already reported: a drift they would have named is announced again).
const MOST_EVENTS: usize = 20_000;

/// The Events of `reason`, a page at a time, each reduced to [`Seen`] before the next is read.
/// An expired continue token starts the list again (paged: what was seen twice is the same).
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn seen(api: &Api<Event>, reason: &str) -> Result<Vec<Seen>, kube::Error> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    let mut restarted = false;
    loop {
        let mut lp = ListParams::default().fields(&format!("reason={reason}")).limit(EVENT_PAGE);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = match crate::api::retry(|| api.list(&lp)).await {
            Ok(page) => page,
            Err(kube::Error::Api(s)) if s.code == 410 && token.is_some() && !restarted => {
                (token, restarted) = (None, true);
                continue;
            }
            Err(e) => return Err(e),
        };
        token = page.metadata.continue_.clone().filter(|t| !t.is_empty());
        out.extend(page.items.iter().map(|e| (taken(e), last(e))));
        if token.is_none() {
            return Ok(out);
        }
        if out.len() >= MOST_EVENTS {
            // The rest is left unread: counted once as not taken (a drift they would have
            // named is announced again).
            out.push((None, None));
            return Ok(out);
        }
    }
}

/// The release, object and signature of an Event helm-drift wrote, `None` for anything else
/// (another component's, malformed, or stored in another namespace than its object's Events).
fn taken(e: &Event) -> Option<(crate::watch::keys::ReleaseObject, String)> {
    if !ours(e, None) {
        return None;
    }
    let o = &e.involved_object;
    // The API server keeps an Event in its object's namespace; one that is not was written to
    // speak for objects its writer has no say over.
    if e.metadata.namespace.as_deref() != Some(crate::live::event_namespace(o.namespace.as_deref())) {
        return None;
    }
    let annotations = e.metadata.annotations.as_ref()?;
    let sig = annotations.get(SIGNATURE)?;
    if !crate::watch::store::signature::well_formed(sig) {
        return None;
    }
    let (release_ns, release) = annotations.get(RELEASE)?.split_once('/')?;
    // helm-drift records an Event about an object beyond the release's namespace on the
    // release's record, in the release's namespace: one elsewhere (a cluster-scoped object's,
    // in `default`) was written by someone else, to speak for releases they have no say over.
    if e.metadata.namespace.as_deref() != Some(release_ns) {
        return None;
    }
    let (api_version, kind, name) = (o.api_version.as_deref()?, o.kind.as_deref()?, o.name.as_deref()?);
    let valid = |s: &str| !s.is_empty() && s.len() <= 253;
    if ![api_version, kind, name, release_ns, release].into_iter().all(valid)
        || o.namespace.as_deref().is_some_and(|n| !valid(n))
    {
        return None;
    }
    let id = ObjectId::new(api_version, kind, o.namespace.as_deref(), name);
    Some(((crate::watch::keys::ReleaseKey::new(release_ns, release), id), sig.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(component: &str, signature: &str) -> Event {
        let involved = ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
            name: Some("c".into()),
            namespace: Some("ns".into()),
            ..Default::default()
        };
        let mut e = crate::live::event(involved, "ns", "c.drift-x".into(), DETECTED, "m", true, "Watch");
        e.reporting_component = Some(component.into());
        e.source = None;
        e.metadata.annotations = Some(BTreeMap::from([
            (SIGNATURE.to_string(), signature.to_string()),
            (RELEASE.to_string(), "ns/web".to_string()),
        ]));
        e
    }

    #[test]
    fn only_well_formed_events_of_helm_drift_are_taken() {
        let sig = "ab".repeat(32);
        let ((release, id), taken_sig) = taken(&event(COMPONENT, &sig)).unwrap();
        assert_eq!((release.name.as_str(), id.name.as_str(), taken_sig), ("web", "c", sig.clone()));
        assert!(taken(&event("someone", &sig)).is_none());
        for bad in ["x", "é", &"é".repeat(32), &"AB".repeat(32), ""] {
            assert!(taken(&event(COMPONENT, bad)).is_none(), "{bad:?}");
        }
        let mut nameless = event(COMPONENT, &sig);
        nameless.involved_object.name = Some(String::new());
        assert!(taken(&nameless).is_none());
        let mut unreleased = event(COMPONENT, &sig);
        unreleased.metadata.annotations.as_mut().unwrap().remove(RELEASE);
        assert!(taken(&unreleased).is_none());
        // Stored in another namespace than its object's Events: speaks for what it may not.
        let mut elsewhere = event(COMPONENT, &sig);
        elsewhere.metadata.namespace = Some("tenant".into());
        assert!(taken(&elsewhere).is_none());
        // A cluster-scoped object's Event in `default`, claiming a release of another namespace.
        let mut forged = event(COMPONENT, &sig);
        forged.involved_object.namespace = None;
        forged.involved_object.kind = Some("ClusterRole".into());
        forged.metadata.namespace = Some("default".into());
        assert!(taken(&forged).is_none(), "an Event speaks only for releases of its namespace");
        forged.metadata.annotations.as_mut().unwrap().insert(RELEASE.into(), "default/web".into());
        assert!(taken(&forged).is_some(), "one of its own namespace's releases");
        assert!(ours(&event(COMPONENT, &sig), Some(&sig)));
        assert!(!ours(&event(COMPONENT, &sig), Some(&"cd".repeat(32))));
    }

    #[test]
    fn names_never_split_a_character() {
        assert_eq!(name("web", DETECTED, "é"), "web.drift-é");
        assert_eq!(name("web", REFUSED, &"é".repeat(40)), format!("web.refused-{}", "é".repeat(16)));
    }

    #[test]
    fn names_are_derived_from_the_signature() {
        let sig = "0123456789abcdef0123";
        assert_eq!(name("web", DETECTED, sig), "web.drift-0123456789abcdef");
        assert_eq!(name("web", RESOLVED, sig), "web.resolved-0123456789abcdef");
        assert_eq!(name(&"x".repeat(300), ABANDONED, sig).len(), 200 + ".abandoned-".len() + 16);
    }
}

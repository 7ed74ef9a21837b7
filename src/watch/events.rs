//! Kubernetes Events for drift: `DriftDetected`, `DriftResolved` and `DriftRepairAbandoned` on the
//! object, named after the drift signature so that the same drift is recorded once, whoever
//! records it (a resync, a restarted watcher, a new leader). They name paths, never values.

use crate::live::LiveError;
use crate::model::ObjectId;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Api, ListParams, PostParams};
use std::collections::{BTreeMap, HashMap};

pub const DETECTED: &str = "DriftDetected";
pub const RESOLVED: &str = "DriftResolved";
pub const ABANDONED: &str = "DriftRepairAbandoned";
const SIGNATURE: &str = "helm-drift.io/signature";
const RELEASE: &str = "helm-drift.io/release";

/// What became of an Event.
#[derive(Debug)]
pub enum Recorded {
    Created,
    /// An Event with this signature exists: recorded before (by this or another watcher).
    AlreadyRecorded,
}

/// Records one Event about `object` (the namespace `default` for cluster-scoped objects).
pub async fn record(
    client: &kube::Client,
    object: &ObjectId,
    release: &(String, String),
    reason: &str,
    signature: &str,
    message: &str,
) -> Result<Recorded, LiveError> {
    let namespace = object.namespace.clone().unwrap_or_else(|| "default".into());
    let now = k8s_openapi::jiff::Timestamp::now();
    let event = Event {
        metadata: ObjectMeta {
            name: Some(name(&object.name, reason, signature)),
            namespace: Some(namespace.clone()),
            annotations: Some(BTreeMap::from([
                (SIGNATURE.to_string(), signature.to_string()),
                (RELEASE.to_string(), format!("{}/{}", release.0, release.1)),
            ])),
            ..Default::default()
        },
        involved_object: ObjectReference {
            api_version: Some(object.api_version.clone()),
            kind: Some(object.kind.clone()),
            name: Some(object.name.clone()),
            namespace: object.namespace.clone(),
            ..Default::default()
        },
        reason: Some(reason.to_string()),
        message: Some(message.to_string()),
        type_: Some(if reason == RESOLVED { "Normal" } else { "Warning" }.to_string()),
        source: Some(EventSource { component: Some("helm-drift".into()), ..Default::default() }),
        reporting_component: Some("helm-drift".into()),
        reporting_instance: Some("helm-drift".into()),
        action: Some("Watch".into()),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        event_time: Some(MicroTime(now)),
        count: Some(1),
        ..Default::default()
    };
    let api: Api<Event> = Api::namespaced(client.clone(), &namespace);
    match api.create(&PostParams::default(), &event).await {
        Ok(_) => Ok(Recorded::Created),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(Recorded::AlreadyRecorded),
        Err(e) => Err(LiveError::from_kube(&e, "create", "events")),
    }
}

/// The Event's name: the object's name, the reason and the signature's first 16 digits.
fn name(object: &str, reason: &str, signature: &str) -> String {
    let tag = match reason {
        DETECTED => "drift",
        RESOLVED => "resolved",
        _ => "abandoned",
    };
    let head: String = object.chars().take(200).collect();
    format!("{head}.{tag}-{}", &signature[..signature.len().min(16)])
}

/// The drift signatures earlier watchers recorded and did not resolve, by object: read from the
/// Events in `namespace` (every namespace when `None`).
pub async fn unresolved(
    client: &kube::Client,
    namespace: Option<&str>,
) -> Result<HashMap<ObjectId, String>, LiveError> {
    let api: Api<Event> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let list = |reason: &str| {
        let api = api.clone();
        let lp = ListParams::default().fields(&format!("reason={reason}"));
        async move { api.list(&lp).await.map_err(|e| LiveError::from_kube(&e, "list", "events")) }
    };
    let detected = list(DETECTED).await?;
    let resolved = list(RESOLVED).await?;
    let key = |e: &Event| {
        let o = &e.involved_object;
        let sig = e.metadata.annotations.as_ref()?.get(SIGNATURE)?.clone();
        let id =
            ObjectId::new(o.api_version.as_deref()?, o.kind.as_deref()?, o.namespace.as_deref(), o.name.as_deref()?);
        Some((id, sig))
    };
    let done: std::collections::HashSet<(ObjectId, String)> = resolved.items.iter().filter_map(key).collect();
    let mut latest: HashMap<ObjectId, (Option<Time>, String)> = HashMap::new();
    for e in &detected.items {
        let Some((id, sig)) = key(e) else { continue };
        let at = e.metadata.creation_timestamp.clone();
        let newer = latest.get(&id).is_none_or(|(t, _)| at.as_ref().map(|a| a.0) >= t.as_ref().map(|t| t.0));
        if newer {
            latest.insert(id, (at, sig));
        }
    }
    Ok(latest
        .into_iter()
        .filter(|(id, (_, sig))| !done.contains(&(id.clone(), sig.clone())))
        .map(|(id, (_, s))| (id, s))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_derived_from_the_signature() {
        let sig = "0123456789abcdef0123";
        assert_eq!(name("web", DETECTED, sig), "web.drift-0123456789abcdef");
        assert_eq!(name("web", RESOLVED, sig), "web.resolved-0123456789abcdef");
        assert_eq!(name(&"x".repeat(300), ABANDONED, sig).len(), 200 + ".abandoned-".len() + 16);
    }
}

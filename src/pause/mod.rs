//! Break-glass (`helm drift pause`): during an incident an operator keeps a hand edit for a
//! while; the watcher keeps reporting the drift, as paused (metric, Event, the reason, who,
//! until when), and does not heal it until the pause ends by itself. A pause is a ConfigMap
//! in the watcher's own namespace (`--pause-namespace`), never next to the release: whoever may
//! write Secrets or ConfigMaps in a release's namespace (and so a release record) cannot pause
//! its healing, only whoever may write in the watcher's namespace, the operator. `check` never
//! reads pauses: a pause hides nothing from it.

pub(crate) mod announce;

use crate::api::ApiError;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, Patch, PatchParams};
use std::collections::BTreeMap;

/// The label every pause carries.
pub(crate) const LABEL: &str = "helm-drift.io/pause";

/// Whether a pause's `cluster` names the watcher's cluster: its inventory name (`fleet/eu`), or
/// that name without the inventory's namespace (`eu`).
fn names(cluster: &str, watched: &str) -> bool {
    cluster == watched || watched.rsplit_once('/').is_some_and(|(_, name)| name == cluster)
}

/// What a pause may hold: an object of a release, on a cluster (`None`: a watcher of one
/// cluster without a `--cluster` name).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) release: &'a str,
    pub(crate) object: &'a str,
    pub(crate) cluster: Option<&'a str>,
}

/// One pause: a release (or one of its objects) not healed until `until`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pause {
    pub(crate) namespace: String,
    pub(crate) release: String,
    /// `Kind/name`: only this object of the release; every object when `None`.
    pub(crate) object: Option<String>,
    /// Only on this cluster of a fleet (a pause written in the management cluster); on every
    /// cluster when `None`.
    pub(crate) cluster: Option<String>,
    pub(crate) reason: String,
    /// Who wrote it, as the pause says: `helm drift pause` writes the API server's word, but
    /// whoever may write in the watcher's namespace may write any name here.
    pub(crate) by: String,
    pub(crate) until: Timestamp,
}

impl Pause {
    /// The ConfigMap's name: one pause per release and object.
    pub(crate) fn name(&self) -> String {
        let mut key = format!("{}/{}/{}", self.namespace, self.release, self.object.as_deref().unwrap_or(""));
        if let Some(c) = &self.cluster {
            key = format!("{c}:{key}");
        }
        format!("helm-drift-pause-{}", crate::digest::sha256_hex(&key, 6))
    }

    /// Whether it holds at `now` for object `object` (`Kind/name`) of the release `namespace/release`.
    pub(crate) fn holds(&self, at: Held<'_>, now: Timestamp) -> bool {
        self.namespace == at.namespace
            && self.release == at.release
            && self.object.as_deref().is_none_or(|o| names_object(o, at.object))
            && self.cluster.as_deref().is_none_or(|c| at.cluster.is_some_and(|at| names(c, at)))
            && now < self.until
    }

    fn data(&self) -> BTreeMap<String, String> {
        let mut d = BTreeMap::from([
            ("namespace".to_string(), self.namespace.clone()),
            ("release".to_string(), self.release.clone()),
            ("reason".to_string(), self.reason.clone()),
            ("by".to_string(), self.by.clone()),
            ("until".to_string(), self.until.to_string()),
        ]);
        if let Some(o) = &self.object {
            d.insert("object".into(), o.clone());
        }
        if let Some(c) = &self.cluster {
            d.insert("cluster".into(), c.clone());
        }
        d
    }

    fn from_data(data: &BTreeMap<String, String>) -> Option<Pause> {
        let get = |k: &str| data.get(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        Some(Pause {
            namespace: get("namespace")?,
            release: get("release")?,
            object: get("object"),
            cluster: get("cluster"),
            reason: get("reason").map(|r| cut(&r)).unwrap_or_default(),
            by: get("by").map(|b| cut(&b)).unwrap_or_else(|| "unknown".into()),
            until: get("until")?.parse().ok()?,
        })
    }
}

/// `text` within [`MAX_REASON`] characters (cut, and marked so).
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_REASON) {
        Some((at, _)) => format!("{}… (cut)", &text[..at]),
        None => text.to_string(),
    }
}

/// Writes (or replaces) a pause in `home`.
pub(crate) async fn write(client: &kube::Client, home: &str, pause: &Pause) -> Result<String, ApiError> {
    let name = pause.name();
    apply(client, (home, &name), LABEL, pause.data(), "helm-drift-pause").await?;
    Ok(name)
}

/// Applies (server-side, as `manager`) the ConfigMap `home/name` labelled `label: "true"` with
/// `data`: a pause, or a watcher's announcement.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn apply(
    client: &kube::Client,
    (home, name): (&str, &str),
    label: &str,
    data: BTreeMap<String, String>,
    manager: &str,
) -> Result<(), ApiError> {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(home.to_string()),
            labels: Some(BTreeMap::from([(label.to_string(), "true".to_string())])),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    };
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), home);
    let params = PatchParams::apply(manager).force();
    api.patch(name, &params, &Patch::Apply(&cm))
        .await
        .map(|_| ())
        .map_err(|e| ApiError::from_kube(&e, "patch", "configmaps"))
}

/// Ends a pause before its time (none there is no error).
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn end(client: &kube::Client, home: &str, pause: &Pause) -> Result<bool, ApiError> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), home);
    match api.delete(&pause.name(), &Default::default()).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
        Err(e) => Err(ApiError::from_kube(&e, "delete", "configmaps")),
    }
}

/// The most pauses read: a namespace flooded with them costs no more.
const MOST: usize = 256;
/// Pauses read in a page: a page of ConfigMaps padded to etcd's limit costs no more than this
/// many.
const PAGE: u32 = 16;
/// The longest reason kept (log, Event, timeline, notifications); a longer one is cut, marked.
pub(crate) const MAX_REASON: usize = 256;

/// The pauses in `home`, and how many ConfigMaps labelled as pauses could not be read as one
/// (or were past the [`MOST`] read: at least one more when there were), read in pages of
/// [`PAGE`].
pub(crate) async fn read(client: &kube::Client, home: &str) -> Result<(Vec<Pause>, usize), ApiError> {
    let (found, more) =
        labelled(client, home, LABEL, (PAGE, MOST)).await.map_err(|e| ApiError::from_kube(&e, "list", "configmaps"))?;
    let read = found.len();
    let pauses: Vec<Pause> = found.iter().filter_map(|cm| cm.data.as_ref().and_then(Pause::from_data)).collect();
    let bad = read - pauses.len() + usize::from(more);
    Ok((pauses, bad))
}

/// The ConfigMaps of `home` labelled `label: "true"`, `page` at a time until `most` are read (a
/// namespace flooded with large ones costs a page at a time, and no more than `most`), and
/// whether more were left unread.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
async fn labelled(
    client: &kube::Client,
    home: &str,
    label: &str,
    (page, most): (u32, usize),
) -> Result<(Vec<ConfigMap>, bool), kube::Error> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), home);
    let mut found = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut params = ListParams::default().labels(&format!("{label}=true")).limit(page);
        params.continue_token = token.take();
        let list = api.list(&params).await?;
        found.extend(list.items);
        match list.metadata.continue_.filter(|t| !t.is_empty()) {
            Some(_) if found.len() >= most => return Ok((found, true)),
            Some(next) => token = Some(next),
            None => return Ok((found, false)),
        }
    }
}

/// Who this client authenticates as (the API server's SelfSubjectReview), for a pause's `by`.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn whoami(client: &kube::Client) -> String {
    use k8s_openapi::api::authentication::v1::SelfSubjectReview;
    let api: Api<SelfSubjectReview> = Api::all(client.clone());
    let review = api.create(&Default::default(), &SelfSubjectReview::default()).await;
    review
        .ok()
        .and_then(|r| r.status?.user_info?.username)
        .unwrap_or_else(|| "unknown (the API server did not say)".into())
}

/// Whether a pause's `--object` (`KIND/NAME`, or `NAMESPACE/KIND/NAME` for one of namesakes in
/// several namespaces) names the object a repair would heal (`NAMESPACE/KIND/NAME`, `KIND/NAME`
/// when cluster-scoped).
fn names_object(paused: &str, object: &str) -> bool {
    let kind_name = object.split_once('/').map(|(_, rest)| rest).filter(|rest| rest.contains('/'));
    paused.eq_ignore_ascii_case(object) || kind_name.is_some_and(|k| paused.eq_ignore_ascii_case(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_holds_its_release_or_object_until_it_ends() {
        let until: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        let p = Pause {
            namespace: "shop".into(),
            release: "web".into(),
            object: Some("Deployment/web".into()),
            reason: "incident 42".into(),
            by: "alice".into(),
            until,
            cluster: None,
        };
        let before: Timestamp = "2026-12-01T11:59:59Z".parse().unwrap();
        let at = |namespace, object, cluster| Held { namespace, release: "web", object, cluster };
        assert!(p.holds(at("shop", "deployment/web", None), before));
        assert!(p.holds(at("shop", "deployment/web", Some("eu")), before), "no cluster: every cluster");
        assert!(p.holds(at("shop", "shop/Deployment/web", None), before), "the watcher names it in full");
        let one = Pause { object: Some("shop/Deployment/web".into()), ..p.clone() };
        assert!(one.holds(at("shop", "shop/Deployment/web", None), before));
        assert!(!one.holds(at("shop", "other/Deployment/web", None), before), "its namesake elsewhere");
        assert!(!p.holds(at("shop", "ConfigMap/web", None), before), "another object");
        assert!(!p.holds(at("other", "Deployment/web", None), before), "another namespace");
        assert!(!p.holds(at("shop", "Deployment/web", None), until), "ended by itself");
        let whole = Pause { object: None, ..p.clone() };
        assert!(whole.holds(at("shop", "ConfigMap/web", None), before));
        assert_ne!(whole.name(), p.name(), "one pause per object");
        let eu = Pause { cluster: Some("eu".into()), ..p.clone() };
        assert!(eu.holds(at("shop", "Deployment/web", Some("eu")), before));
        assert!(!eu.holds(at("shop", "Deployment/web", Some("us")), before), "another cluster");
        assert!(!eu.holds(at("shop", "Deployment/web", None), before), "a watcher of no named cluster");
        assert!(eu.holds(at("shop", "Deployment/web", Some("fleet/eu")), before), "its inventory name");
        assert!(!eu.holds(at("shop", "Deployment/web", Some("fleet/neu")), before));
        assert_ne!(eu.name(), p.name(), "one pause per cluster");
        assert_eq!(Pause::from_data(&eu.data()), Some(eu.clone()));
        assert_eq!(Pause::from_data(&p.data()), Some(p.clone()));
        let mut long = p.data();
        long.insert("reason".into(), "r".repeat(100_000));
        let read = Pause::from_data(&long).unwrap();
        assert_eq!(read.reason.chars().count(), MAX_REASON + "… (cut)".chars().count(), "a reason is cut");
        let mut broken = p.data();
        broken.insert("until".into(), "soon".into());
        assert_eq!(Pause::from_data(&broken), None, "an unreadable end is no pause");
    }
}

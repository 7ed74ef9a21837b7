//! Where pauses are read, said by the watchers themselves: a watcher that heals announces its
//! namespace (where it reads pauses) with a ConfigMap there, renewed at each full check, naming
//! the namespaces whose releases it heals. `helm drift pause` writes a pause in the namespace the
//! operator names (or the chart's usual home) once a watcher that heals the release announces
//! there that it reads them, and refuses a pause that no watcher would read. Announcements
//! elsewhere are never taken: whoever may write a ConfigMap anywhere could write one.

use crate::api::ApiError;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};
use std::collections::BTreeMap;

/// The label every announcement carries.
pub(crate) const LABEL: &str = "helm-drift.io/watcher";
/// The namespace pauses go to when the operator names none (the chart's usual home).
pub(crate) const USUAL_HOME: &str = "helm-drift";
/// The most announcements read (a namespace full of forged ones costs no more).
const MOST: usize = 256;

/// A healing watcher's word on where it reads pauses.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Announcement {
    /// The namespaces whose releases it heals (`*`: every one).
    pub(crate) namespaces: Vec<String>,
    /// It watches a fleet's clusters (reading pauses in the management cluster).
    pub(crate) fleet: bool,
    pub(crate) renewed: Timestamp,
    /// How often it is renewed: past three times that, the watcher is taken as gone.
    pub(crate) every: SignedDuration,
}

impl Announcement {
    /// Whether it heals releases of `namespace`.
    pub(crate) fn covers(&self, namespace: &str) -> bool {
        self.namespaces.iter().any(|n| n == "*" || n == namespace)
    }

    /// Whether the watcher renewed it lately enough to be taken as running at `now`.
    pub(crate) fn fresh(&self, now: Timestamp) -> bool {
        let slack = self.every.checked_mul(3).unwrap_or(SignedDuration::MAX).max(SignedDuration::from_secs(60));
        self.renewed.checked_add(slack).is_ok_and(|until| now < until)
    }

    fn data(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("namespaces".to_string(), self.namespaces.join(",")),
            ("fleet".to_string(), self.fleet.to_string()),
            ("renewed".to_string(), self.renewed.to_string()),
            ("everySeconds".to_string(), self.every.as_secs().to_string()),
        ])
    }

    fn from_data(data: &BTreeMap<String, String>) -> Option<Announcement> {
        let get = |k: &str| data.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let namespaces: Vec<String> =
            get("namespaces")?.split(',').map(str::trim).filter(|n| !n.is_empty()).map(String::from).take(64).collect();
        Some(Announcement {
            namespaces,
            fleet: get("fleet") == Some("true"),
            renewed: get("renewed")?.parse().ok()?,
            every: SignedDuration::from_secs(get("everySeconds")?.parse::<i64>().ok()?.clamp(1, 86_400)),
        })
    }
}

/// The announcement's ConfigMap name for a watcher known as `watcher` (its Lease name and what
/// it watches): the same across its restarts.
pub(crate) fn name(watcher: &str) -> String {
    format!("helm-drift-watcher-{}", crate::digest::sha256_hex(watcher, 6))
}

/// Writes (or renews) the announcement `name` in `home`.
pub(crate) async fn announce(client: &kube::Client, home: &str, name: &str, a: &Announcement) -> Result<(), ApiError> {
    super::apply(client, (home, name), LABEL, a.data(), "helm-drift-watcher").await
}

/// Announcements read in a page: an announcement is a few hundred bytes, and a page of
/// ConfigMaps padded to etcd's limit (about 1.5 MiB each) costs no more than this many.
const PAGE: u32 = 8;

/// The announcements in `home`, with the namespace each is in: at most [`MOST`] are read, in
/// pages of [`PAGE`] (a namespace of large forged ones costs a page's worth at a time).
pub(crate) async fn announced(client: &kube::Client, home: &str) -> Result<Vec<(String, Announcement)>, ApiError> {
    let (found, _) = super::labelled(client, home, LABEL, (PAGE, MOST))
        .await
        .map_err(|e| ApiError::from_kube(&e, "list", &format!("configmaps in namespace {home}")))?;
    let read = |cm: &ConfigMap| Some((cm.metadata.namespace.clone()?, Announcement::from_data(cm.data.as_ref()?)?));
    Ok(found.iter().filter_map(read).collect())
}

/// The namespaces other than `home` holding announcements (their names only, at most five;
/// empty when they cannot be listed): what an operator may choose to name.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) async fn named_elsewhere(client: &kube::Client, home: &str) -> Vec<String> {
    let api: Api<ConfigMap> = Api::all(client.clone());
    let params = ListParams::default().labels(&format!("{LABEL}=true")).limit(MOST as u32);
    let Ok(list) = api.list_metadata(&params).await else { return Vec::new() };
    let mut namespaces: Vec<String> =
        list.items.into_iter().filter_map(|m| m.metadata.namespace).filter(|ns| ns != home).collect();
    namespaces.sort();
    namespaces.dedup();
    namespaces.truncate(5);
    namespaces
}

/// The namespaces where a running watcher that heals releases of `namespace` reads pauses.
pub(crate) fn homes_for(found: &[(String, Announcement)], namespace: &str, now: Timestamp) -> Vec<String> {
    let mut homes: Vec<String> =
        found.iter().filter(|(_, a)| a.covers(namespace) && a.fresh(now)).map(|(home, _)| home.clone()).collect();
    homes.sort();
    homes.dedup();
    homes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: &str) -> Timestamp {
        t.parse().unwrap()
    }

    #[test]
    fn a_pause_goes_where_a_running_watcher_of_its_namespace_reads_them() {
        let a = Announcement {
            namespaces: vec!["shop".into(), "web".into()],
            fleet: false,
            renewed: at("2026-12-01T12:00:00Z"),
            every: SignedDuration::from_secs(600),
        };
        assert_eq!(Announcement::from_data(&a.data()), Some(a.clone()));
        assert!(a.covers("shop") && !a.covers("kube-system"));
        assert!(a.fresh(at("2026-12-01T12:29:59Z")) && !a.fresh(at("2026-12-01T12:30:00Z")), "three renewals missed");
        let every = Announcement { namespaces: vec!["*".into()], ..a.clone() };
        assert!(every.covers("kube-system"));
        let found = vec![("ops".to_string(), a.clone()), ("helm-drift".to_string(), every), ("ops".to_string(), a)];
        let now = at("2026-12-01T12:01:00Z");
        assert_eq!(homes_for(&found, "shop", now), ["helm-drift", "ops"]);
        assert_eq!(homes_for(&found, "kube-system", now), ["helm-drift"]);
        assert!(homes_for(&found, "shop", at("2026-12-02T00:00:00Z")).is_empty(), "gone watchers read nothing");
        let mut bad = BTreeMap::from([("namespaces".to_string(), "a".to_string())]);
        assert_eq!(Announcement::from_data(&bad), None, "no renewal time: no announcement");
        bad.insert("renewed".into(), "2026-12-01T12:00:00Z".into());
        bad.insert("everySeconds".into(), "-5".into());
        assert_eq!(Announcement::from_data(&bad).unwrap().every, SignedDuration::from_secs(1));
        assert_eq!(name("helm-drift|-A"), name("helm-drift|-A"));
        assert_ne!(name("helm-drift|-A"), name("helm-drift|shop"));
    }
}

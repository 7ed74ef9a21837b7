//! What the watcher knows, as plain data: each watched release (verdict, revision, the objects
//! it placed), which releases own each object, and the watches that follow from them. No I/O:
//! the loop feeds it verdicts and touches and acts on what it answers.

pub(crate) mod refused;
pub(crate) mod signature;
pub(crate) mod signing_key;
pub(crate) mod timeline;
pub(crate) mod tracker;

use crate::live::Location;
use crate::watch::keys::{ObjectKey, ReleaseKey, Touch, WatchKey};
use kube::api::ApiResource;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// What the watcher knows about one release.
struct Watched {
    /// Where its objects live: what to watch.
    resources: Vec<(ApiResource, Option<String>)>,
    /// Its objects, each the one key the index holds (not a copy of its four names).
    objects: Vec<Arc<ObjectKey>>,
    drifted: bool,
    revision: u32,
}

/// A kind and the namespaces its watched objects live in (`None`: cluster-scoped).
type KindScope = (ApiResource, BTreeSet<Option<String>>);

/// The watched releases and the index from objects to the releases that placed them (most
/// objects have one: a sorted Vec, not a set whose first entry takes a 0.5 KiB node).
#[derive(Default)]
pub(crate) struct State {
    releases: HashMap<ReleaseKey, Watched>,
    owners: HashMap<Arc<ObjectKey>, Vec<ReleaseKey>>,
}

impl State {
    /// Every object a watched release placed.
    pub(crate) fn objects(&self) -> impl Iterator<Item = ObjectKey> + '_ {
        self.owners.keys().map(|k| ObjectKey::clone(k))
    }

    /// A release's new verdict and where its objects are (`placed`: each object's name and
    /// location, `None` for an object the cluster does not serve). Says whether it is a decision
    /// worth a log line: the verdict changed, a new revision, or a release first seen drifted (one
    /// first seen in sync is only counted in the "ready" line).
    pub(crate) fn absorb(
        &mut self,
        key: &ReleaseKey,
        revision: u32,
        drifted: bool,
        placed: &[(String, Option<Location>)],
    ) -> bool {
        let mut resources: Vec<(ApiResource, Option<String>)> = Vec::new();
        let mut objects = Vec::new();
        for (name, at) in placed {
            let Some(at) = at else { continue };
            objects.push(ObjectKey {
                group: at.resource.group.clone(),
                plural: at.resource.plural.clone(),
                namespace: at.namespace.clone(),
                name: name.clone(),
            });
            let same = |(r, ns): &(ApiResource, Option<String>)| {
                r.plural == at.resource.plural
                    && r.group == at.resource.group
                    && r.version == at.resource.version
                    && *ns == at.namespace
            };
            if !resources.iter().any(same) {
                resources.push((at.resource.clone(), at.namespace.clone()));
            }
        }
        let objects = self.index(key, objects);
        let before = self.releases.insert(key.clone(), Watched { resources, objects, drifted, revision });
        let was = before.as_ref().map(|w| w.drifted);
        let new_revision = before.as_ref().is_some_and(|w| w.revision != revision);
        (was.is_some() || drifted) && was != Some(drifted) || new_revision
    }

    /// Whether a release is watched.
    pub(crate) fn watches(&self, key: &ReleaseKey) -> bool {
        self.releases.contains_key(key)
    }

    /// How many releases are watched, and how many of them drifted.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.releases.len(), self.releases.values().filter(|w| w.drifted).count())
    }

    /// Forgets a release (uninstalled, no longer selected); says whether it was watched.
    pub(crate) fn forget(&mut self, key: &ReleaseKey) -> bool {
        self.index(key, Vec::new());
        self.releases.remove(key).is_some()
    }

    /// The watched releases not among `found` (gone from storage or from the selection).
    pub(crate) fn gone(&self, found: &BTreeSet<ReleaseKey>) -> Vec<ReleaseKey> {
        let mut gone: Vec<ReleaseKey> = self.releases.keys().filter(|k| !found.contains(*k)).cloned().collect();
        gone.sort();
        gone
    }

    /// The releases a change concerns: a release's records when it is selected (`names` empty:
    /// every release), an object's owners.
    pub(crate) fn releases_of(&self, touch: &Touch, names: &[String]) -> Vec<ReleaseKey> {
        match touch {
            Touch::Release(key) => {
                if names.is_empty() || names.contains(&key.name) {
                    vec![key.clone()]
                } else {
                    Vec::new()
                }
            }
            Touch::Object(object) => self.owners.get(object).map(|s| s.to_vec()).unwrap_or_default(),
            Touch::Kind(group, plural) => {
                let owners = self.owners.iter().filter(|(o, _)| &o.group == group && &o.plural == plural);
                owners.flat_map(|(_, keys)| keys.iter().cloned()).collect::<BTreeSet<_>>().into_iter().collect()
            }
            Touch::Records => {
                let mut keys: Vec<_> = self.releases.keys().cloned().collect();
                keys.sort();
                keys
            }
        }
    }

    /// The watches the releases need: one per kind, in the one namespace all its objects live
    /// in, else cluster-wide.
    pub(crate) fn wanted_watches(&self) -> BTreeMap<WatchKey, ApiResource> {
        let mut by_kind: BTreeMap<(String, String, String), KindScope> = BTreeMap::new();
        for w in self.releases.values() {
            for (r, ns) in &w.resources {
                let entry = by_kind
                    .entry((r.group.clone(), r.version.clone(), r.plural.clone()))
                    .or_insert_with(|| (r.clone(), BTreeSet::new()));
                entry.1.insert(ns.clone());
            }
        }
        let mut wanted = BTreeMap::new();
        for ((group, version, plural), (resource, namespaces)) in by_kind {
            let namespace = match namespaces.iter().collect::<Vec<_>>().as_slice() {
                [Some(ns)] => Some(ns.clone()),
                _ => None,
            };
            wanted.insert(WatchKey { group, version, plural, namespace }, resource);
        }
        wanted
    }

    /// Points each object of a release at it, and no longer the objects it dropped; the keys
    /// as the index holds them.
    fn index(&mut self, key: &ReleaseKey, objects: Vec<ObjectKey>) -> Vec<Arc<ObjectKey>> {
        if let Some(old) = self.releases.get(key) {
            for o in &old.objects {
                if let Some(owners) = self.owners.get_mut(o) {
                    owners.retain(|k| k != key);
                    if owners.is_empty() {
                        self.owners.remove(o);
                    }
                }
            }
        }
        let mut held = Vec::with_capacity(objects.len());
        for o in objects {
            let o = match self.owners.get_key_value(&o) {
                Some((k, _)) => k.clone(),
                None => Arc::new(o),
            };
            let owners = self.owners.entry(o.clone()).or_default();
            if let Err(at) = owners.binary_search(key) {
                owners.insert(at, key.clone());
            }
            held.push(o);
        }
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(group: &str, plural: &str, namespace: Option<&str>) -> Option<Location> {
        let gvk = kube::api::GroupVersionKind::gvk(group, "v1", plural);
        Some(Location {
            resource: ApiResource::from_gvk_with_plural(&gvk, plural),
            namespace: namespace.map(str::to_string),
        })
    }

    fn key(ns: &str, name: &str) -> ReleaseKey {
        ReleaseKey::new(ns, name)
    }

    fn touch(group: &str, plural: &str, namespace: Option<&str>, name: &str) -> Touch {
        Touch::Object(ObjectKey {
            group: group.into(),
            plural: plural.into(),
            namespace: namespace.map(str::to_string),
            name: name.into(),
        })
    }

    #[test]
    fn a_change_to_an_object_touches_every_release_that_placed_it_and_only_those() {
        let mut s = State::default();
        let shared = ("shared".to_string(), at("", "configmaps", Some("a")));
        s.absorb(&key("a", "web"), 1, false, &[shared.clone(), ("web".into(), at("apps", "deployments", Some("a")))]);
        s.absorb(&key("a", "api"), 1, false, &[shared]);
        let both = s.releases_of(&touch("", "configmaps", Some("a"), "shared"), &[]);
        assert_eq!(both, [key("a", "api"), key("a", "web")]);
        assert_eq!(s.releases_of(&touch("apps", "deployments", Some("a"), "web"), &[]), [key("a", "web")]);
        assert!(s.releases_of(&touch("", "configmaps", Some("b"), "shared"), &[]).is_empty(), "another namespace");
        assert!(s.releases_of(&touch("", "secrets", Some("a"), "shared"), &[]).is_empty(), "another kind");
        // Objects gone unseen during a watch's gap: every release with an object of the kind.
        let kind = |group: &str, plural: &str| Touch::Kind(group.into(), plural.into());
        assert_eq!(s.releases_of(&kind("", "configmaps"), &[]), [key("a", "api"), key("a", "web")]);
        assert_eq!(s.releases_of(&kind("apps", "deployments"), &[]), [key("a", "web")]);
        assert!(s.releases_of(&kind("", "secrets"), &[]).is_empty());
        assert_eq!(s.releases_of(&Touch::Records, &[]), [key("a", "api"), key("a", "web")], "records gone unseen");
        // A new revision that drops an object: changes to it touch the release no more.
        s.absorb(&key("a", "web"), 2, false, &[("web".into(), at("apps", "deployments", Some("a")))]);
        assert_eq!(s.releases_of(&touch("", "configmaps", Some("a"), "shared"), &[]), [key("a", "api")]);
        assert!(s.forget(&key("a", "api")));
        assert!(!s.forget(&key("a", "api")), "forgotten once");
        assert!(s.releases_of(&touch("", "configmaps", Some("a"), "shared"), &[]).is_empty());
        assert!(s.owners.values().all(|o| !o.is_empty()), "no empty owner sets left");
    }

    #[test]
    fn record_changes_touch_only_selected_releases() {
        let s = State::default();
        let record = Touch::Release(key("a", "web"));
        assert_eq!(s.releases_of(&record, &[]), [key("a", "web")]);
        assert_eq!(s.releases_of(&record, &["web".into()]), [key("a", "web")]);
        assert!(s.releases_of(&record, &["api".into()]).is_empty());
    }

    #[test]
    fn a_line_when_the_verdict_changes_a_new_revision_or_a_release_first_seen_drifted() {
        let mut s = State::default();
        let (web, api) = (key("a", "web"), key("a", "api"));
        assert!(!s.absorb(&web, 1, false, &[]), "first seen in sync: counted, not said");
        assert!(s.absorb(&api, 1, true, &[]), "first seen drifted");
        assert!(!s.absorb(&web, 1, false, &[]), "nothing new");
        assert!(s.absorb(&web, 1, true, &[]), "drifted");
        assert!(!s.absorb(&web, 1, true, &[]), "still drifted");
        assert!(s.absorb(&web, 1, false, &[]), "back in sync");
        assert!(s.absorb(&web, 2, false, &[]), "a new revision");
    }

    #[test]
    fn one_watch_per_kind_namespaced_only_when_all_its_objects_share_a_namespace() {
        let mut s = State::default();
        s.absorb(
            &key("a", "web"),
            1,
            false,
            &[
                ("c1".into(), at("", "configmaps", Some("a"))),
                ("c2".into(), at("", "configmaps", Some("a"))),
                ("d".into(), at("apps", "deployments", Some("a"))),
                ("r".into(), at("rbac.authorization.k8s.io", "clusterroles", None)),
                ("gone".into(), None),
            ],
        );
        s.absorb(&key("b", "api"), 1, false, &[("d".into(), at("apps", "deployments", Some("b")))]);
        let wanted: Vec<(String, Option<String>)> =
            s.wanted_watches().keys().map(|k| (k.plural.clone(), k.namespace.clone())).collect();
        assert_eq!(
            wanted,
            [("configmaps".into(), Some("a".into())), ("deployments".into(), None), ("clusterroles".into(), None)]
        );
        s.forget(&key("b", "api"));
        let deployments = s.wanted_watches().into_keys().find(|k| k.plural == "deployments").unwrap();
        assert_eq!(deployments.namespace.as_deref(), Some("a"), "narrowed again once b is gone");
        assert_eq!(s.gone(&[key("a", "web")].into()), Vec::<ReleaseKey>::new());
        assert_eq!(s.gone(&BTreeSet::new()), [key("a", "web")]);
    }
}

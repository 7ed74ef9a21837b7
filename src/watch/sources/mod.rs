//! The watches behind `watch`: Helm's storage records (new revisions, rollbacks, uninstalls) and
//! the kinds the watched releases contain, through kube's runtime watcher (bookmarks, re-list
//! after expiry, backoff while the API server is away), metadata only. Each turns changes into
//! [`Touch`]es: what to evaluate again.

pub(crate) mod watches;

use crate::api::{scoped, scoped_with, watch_config};
use crate::release::{Driver, RECORDS, records_selector, release_of};
use crate::watch::keys::{ObjectKey, ReleaseKey, Touch, WatchKey};
use crate::watch::outputs::log::Log;
use crate::watch::outputs::metrics::Metrics;
use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::PartialObjectMeta;
use kube::runtime::watcher::{self, Event, watcher};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Sends touches to the loop, each with the moment it was seen (the debounce counts from there,
/// not from when a busy loop gets to it).
#[derive(Clone)]
pub(crate) struct TouchSender(pub mpsc::UnboundedSender<(Touch, crate::watch::clock::Instant)>);

impl TouchSender {
    pub(crate) fn send(&self, touch: Touch) -> Result<(), ()> {
        self.0.send((touch, crate::watch::clock::Instant::now())).map_err(|_| ())
    }
}

/// What every watch task shares.
#[derive(Clone)]
pub(crate) struct Sink {
    pub(crate) tx: TouchSender,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) log: Log,
}

/// Watches Helm's release records (narrowed by `selector`) in `namespace` or everywhere; `None`
/// for the SQL driver, which has nothing to watch.
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) fn storage(
    client: &kube::Client,
    driver: Driver,
    namespace: Option<&str>,
    selector: Option<&str>,
    since: Timestamp,
    sink: Sink,
) -> Option<tokio::task::JoinHandle<()>> {
    let mut config = watch_config().labels(&records_selector(RECORDS, selector));
    // Whoever may write a Secret can give a record 1 MiB of annotations: a page of records'
    // metadata is as small as `check`'s (a page of 500 forged ones was 390 MiB at its peak).
    let page = crate::release::METADATA_PAGE;
    config.page_size = Some(config.page_size.map_or(page, |n| n.min(page)));
    let touch = |m: &ObjectMeta| release_of(m).map(|(namespace, name)| Touch::Release(ReleaseKey { namespace, name }));
    let version = |m: &ObjectMeta| hash(&m.resource_version);
    Some(match driver {
        Driver::Secrets => {
            let api: Api<PartialObjectMeta<Secret>> = scoped(client, namespace);
            tokio::spawn(follow(metas(watcher(api, config)), "storage", touch, version, Touch::Records, since, sink))
        }
        Driver::ConfigMaps => {
            let api: Api<PartialObjectMeta<ConfigMap>> = scoped(client, namespace);
            tokio::spawn(follow(metas(watcher(api, config)), "storage", touch, version, Touch::Records, since, sink))
        }
        Driver::Sql => return None,
    })
}

/// Watches one kind (metadata only).
#[expect(clippy::disallowed_methods, reason = "a door of src/doors.rs")]
pub(crate) fn kind(
    client: &kube::Client,
    resource: &ApiResource,
    key: &WatchKey,
    since: Timestamp,
    sink: Sink,
) -> tokio::task::JoinHandle<()> {
    let api: Api<PartialObjectMeta<DynamicObject>> = scoped_with(client, key.namespace.as_deref(), resource);
    let (group, plural) = (resource.group.clone(), resource.plural.clone());
    let touch = move |m: &ObjectMeta| {
        Some(Touch::Object(ObjectKey {
            group: group.clone(),
            plural: plural.clone(),
            namespace: m.namespace.clone(),
            name: m.name.clone()?,
        }))
    };
    let label = format!("{}.{}", resource.plural, resource.group);
    let lost = Touch::Kind(resource.group.clone(), resource.plural.clone());
    tokio::spawn(follow(metas(watcher(api, watch_config())), label, touch, spec_fingerprint, lost, since, sink))
}

/// A watch's events with only the metadata kept, backed off while the API server is away.
fn metas<K, S>(stream: S) -> impl Stream<Item = Result<Event<ObjectMeta>, watcher::Error>> + Send
where
    S: Stream<Item = Result<Event<kube::core::PartialObjectMeta<K>>, watcher::Error>> + Send,
    K: Send,
{
    crate::api::backed_off(stream, None).map(|r| {
        r.map(|e| match e {
            Event::Apply(o) => Event::Apply(o.metadata),
            Event::Delete(o) => Event::Delete(o.metadata),
            Event::Init => Event::Init,
            Event::InitApply(o) => Event::InitApply(o.metadata),
            Event::InitDone => Event::InitDone,
        })
    })
}

/// Annotations that controllers write on the objects they run.
const CONTROLLER_ANNOTATIONS: [&str; 2] =
    ["deployment.kubernetes.io/revision", "deprecated.daemonset.template.generation"];

/// What a change of the object's desired state changes: the generation where there is one
/// (status writes do not bump it), else the resourceVersion; and labels and annotations.
fn spec_fingerprint(m: &ObjectMeta) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    match m.generation {
        Some(g) => g.hash(&mut h),
        None => m.resource_version.hash(&mut h),
    }
    m.labels.hash(&mut h);
    // Annotations controllers keep (a Deployment's revision number) are not changes of its spec.
    let annotations = m.annotations.iter().flatten().filter(|(k, _)| !CONTROLLER_ANNOTATIONS.contains(&k.as_str()));
    annotations.collect::<Vec<_>>().hash(&mut h);
    m.owner_references.as_ref().map(|o| o.len()).hash(&mut h);
    m.deletion_timestamp.as_ref().map(|t| t.0.as_second()).hash(&mut h);
    h.finish()
}

fn hash<T: Hash>(v: &T) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// The newest write the object records (managedFields times, creation).
fn last_written(m: &ObjectMeta) -> Option<Timestamp> {
    let writes = m.managed_fields.iter().flatten().filter_map(|f| f.time.as_ref().map(|t| t.0));
    writes.chain(m.creation_timestamp.as_ref().map(|t| t.0)).max()
}

/// Follows one watch: sends a touch for every object whose fingerprint changed, that appeared or
/// that went away (across a re-list, when events may have been missed, `lost`: the watch keeps no
/// names). On the first list, objects written since `since` are touched: they may have changed
/// after the full check read them.
///
/// What a watch keeps of each object is 16 bytes: a hash of its namespace and name (keyed at
/// random per watch, so that no one can choose names that collide) and its fingerprint. A
/// cluster-wide watch sees every object of its kind, most of them no release's: a fleet member
/// watching the Secrets of a cluster with a thousand others keeps 16 KiB for them, not the
/// 350 KiB their names and touches took.
async fn follow<S, T, F>(
    stream: S,
    label: impl Into<String>,
    touch: T,
    fingerprint: F,
    lost: Touch,
    since: Timestamp,
    sink: Sink,
) where
    S: Stream<Item = Result<Event<ObjectMeta>, watcher::Error>>,
    T: Fn(&ObjectMeta) -> Option<Touch>,
    F: Fn(&ObjectMeta) -> u64,
{
    let label = label.into();
    let since = since - std::time::Duration::from_secs(1); // managedFields times have seconds only
    let names = std::collections::hash_map::RandomState::new();
    let key = |m: &ObjectMeta| names.hash_one((&m.namespace, &m.name));
    let mut known: HashMap<u64, u64> = HashMap::new();
    let mut listing: Option<HashSet<u64>> = None;
    let mut first = true;
    let mut failing = false;
    futures::pin_mut!(stream);
    while let Some(item) = stream.next().await {
        let event = match item {
            Ok(e) => e,
            Err(e) => {
                sink.metrics.error("watch");
                if !failing {
                    sink.log.warn("watch interrupted, retrying with backoff", &[("watch", &label), ("error", &e)]);
                }
                failing = true;
                continue;
            }
        };
        if failing {
            sink.log.info("watch resumed", &[("watch", &label)]);
            failing = false;
        }
        match event {
            Event::Init => listing = Some(HashSet::new()),
            Event::InitApply(m) | Event::Apply(m) => {
                let Some(t) = touch(&m) else { continue };
                let k = key(&m);
                if let Some(l) = listing.as_mut() {
                    l.insert(k);
                }
                let fp = fingerprint(&m);
                let changed = match known.insert(k, fp) {
                    Some(old) => old != fp,
                    None if first && listing.is_some() => last_written(&m).is_some_and(|w| w >= since),
                    None => true,
                };
                if changed {
                    let _ = sink.tx.send(t);
                }
            }
            Event::Delete(m) => {
                if let Some(t) = touch(&m) {
                    known.remove(&key(&m));
                    let _ = sink.tx.send(t);
                }
            }
            Event::InitDone => {
                if let Some(listed) = listing.take() {
                    let before = known.len();
                    known.retain(|k, _| listed.contains(k));
                    if known.len() < before {
                        let _ = sink.tx.send(lost.clone());
                    }
                    known.shrink_to_fit();
                }
                first = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::keys::ObjectKey;
    use std::collections::BTreeMap;

    fn meta(generation: i64, version: &str) -> ObjectMeta {
        ObjectMeta { generation: Some(generation), resource_version: Some(version.into()), ..ObjectMeta::default() }
    }

    fn named(name: &str, version: &str) -> ObjectMeta {
        ObjectMeta { name: Some(name.into()), namespace: Some("a".into()), ..meta(1, version) }
    }

    fn object(name: &str) -> Touch {
        Touch::Object(ObjectKey {
            group: String::new(),
            plural: "secrets".into(),
            namespace: Some("a".into()),
            name: name.into(),
        })
    }

    /// Runs `follow` over `events` and returns the touches it sent, in order.
    async fn touches(events: Vec<Event<ObjectMeta>>) -> Vec<Touch> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sink = Sink { tx: TouchSender(tx), metrics: Arc::new(Metrics::new()), log: Log::default() };
        let stream = futures::stream::iter(events.into_iter().map(Ok));
        let touch = |m: &ObjectMeta| Some(object(m.name.as_deref()?));
        let lost = Touch::Kind(String::new(), "secrets".into());
        follow(stream, "secrets", touch, |m: &ObjectMeta| hash(&m.resource_version), lost, Timestamp::now(), sink)
            .await;
        let mut out = Vec::new();
        while let Ok((t, _)) = rx.try_recv() {
            out.push(t);
        }
        out
    }

    #[tokio::test]
    async fn a_watch_touches_what_changed_and_says_when_objects_went_away_unseen() {
        use Event::*;
        let events = vec![
            Init,
            InitApply(named("web", "1")),
            InitApply(named("api", "1")),
            InitDone,
            Apply(named("web", "1")), // the same fingerprint: nothing
            Apply(named("web", "2")),
            Delete(named("web", "2")),
            Apply(named("new", "1")),
            // A re-list after a gap: "api" went away unseen, "new" is still there.
            Init,
            InitApply(named("new", "1")),
            InitDone,
            // And one where nothing went away: no word of loss.
            Init,
            InitApply(named("new", "1")),
            InitDone,
        ];
        let lost = Touch::Kind(String::new(), "secrets".into());
        assert_eq!(touches(events).await, [object("web"), object("web"), object("new"), lost]);
    }

    #[test]
    fn status_only_writes_do_not_touch_a_release() {
        let before = spec_fingerprint(&meta(3, "100"));
        assert_eq!(spec_fingerprint(&meta(3, "101")), before, "a status write: same generation");
        let mut revised = meta(3, "102");
        revised.annotations = Some(BTreeMap::from([("deployment.kubernetes.io/revision".into(), "4".into())]));
        assert_eq!(spec_fingerprint(&revised), before, "the controller's revision annotation");
        assert_ne!(spec_fingerprint(&meta(4, "103")), before, "a spec change bumps the generation");
        let mut labelled = meta(3, "104");
        labelled.labels = Some(BTreeMap::from([("team".into(), "x".into())]));
        assert_ne!(spec_fingerprint(&labelled), before, "labels are not in the generation");
        let unversioned = |v: &str| ObjectMeta { resource_version: Some(v.into()), ..ObjectMeta::default() };
        assert_ne!(
            spec_fingerprint(&unversioned("1")),
            spec_fingerprint(&unversioned("2")),
            "without a generation (ConfigMaps) every write counts"
        );
    }
}

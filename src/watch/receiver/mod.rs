//! The API server's audit as a source of the watcher: its webhook's batches ([`server`], over
//! TLS, each sender authenticated as one cluster by [`credentials`]) feed one window per
//! cluster, keeping only the writes to objects of that cluster's watched releases; each of
//! those writes touches its releases, so a drift is attributed as soon as its audit event
//! arrives. An event counts only for the cluster whose credentials sent it.

pub(crate) mod credentials;
pub(crate) mod server;

use crate::audit::{AuditedWrite, Target, Window, WindowLimits};
use crate::model::DriftReport;
use crate::watch::keys::{ObjectKey, Touch};
use crate::watch::sources::TouchSender;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;

/// `watch --audit-*`: where the webhook is served, how senders authenticate, what is kept.
#[derive(Clone, Debug)]
pub(crate) struct AuditOptions {
    pub(crate) address: String,
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
    /// Client certificates signed by this CA authenticate a cluster (their Common Name).
    pub(crate) client_ca: Option<PathBuf>,
    /// Bearer tokens, one per line with the cluster they authenticate.
    pub(crate) tokens: Option<PathBuf>,
    pub(crate) limits: WindowLimits,
    /// `--audit-publish-names`: people's names in Events and notifications too.
    pub(crate) publish_names: bool,
}

/// A watcher's subscription to its feed in the hub, by the feed's name.
pub(crate) struct Subscription {
    hub: std::sync::Arc<Hub>,
    name: String,
}

impl Subscription {
    /// To the feed of `cluster` (a fleet member's; `None`: the one cluster's).
    pub(crate) fn of(hub: &std::sync::Arc<Hub>, cluster: Option<&str>) -> Subscription {
        Subscription { hub: hub.clone(), name: hub.feed_name(cluster) }
    }

    /// The link of a watcher whose releases' objects are touched through `touches`.
    pub(crate) fn link(self, touches: TouchSender) -> Link {
        Link { hub: self.hub, feed: self.name, touches }
    }
}

/// A watcher's feed in the hub: the hub, the feed's name, and the touches of its releases.
pub(crate) struct Link {
    hub: std::sync::Arc<Hub>,
    feed: String,
    touches: TouchSender,
}

impl Link {
    /// Names who made the report's drift, as far as the audit kept (`discovery`: how each
    /// object is named in the audit's requests).
    pub(crate) fn attribute(&self, report: &mut DriftReport, discovery: &kube::Discovery) {
        let namespace = report.namespace.clone();
        self.hub.attribute(&self.feed, report, |id| crate::engine::makers::target(discovery, &namespace, id));
    }

    /// The watcher's objects now.
    pub(crate) fn watching(&self, objects: impl Iterator<Item = ObjectKey>) {
        self.hub.watching(&self.feed, objects, &self.touches);
    }

    /// The last write to an object between two moments, not counting the control plane's own
    /// (status, a controller's annotations): who put it back.
    pub(crate) fn last_write(
        &self,
        target: &Target,
        (after, before): (jiff::Timestamp, jiff::Timestamp),
    ) -> Option<crate::model::Actor> {
        let feeds = self.hub.feeds.lock().ok()?;
        let writes = feeds.get(&self.feed)?.window.writes(target);
        let controller = |u: &str| u.starts_with("system:kube-") || u.starts_with("system:serviceaccount:kube-system:");
        writes
            .filter(|w| w.completed >= after && w.received <= before)
            .filter(|w| w.subresource.as_deref() != Some("status") && !controller(&w.actor.user))
            .max_by_key(|w| w.completed)
            .map(|w| w.actor.clone())
    }
}

/// One cluster's kept writes, the objects its watcher watches and how to touch it.
struct Feed {
    window: Window,
    interest: HashSet<Target>,
    /// The collections the watched objects are in (a `deletecollection` names only those).
    collections: HashSet<Target>,
    /// None until its watcher's first check.
    touches: Option<TouchSender>,
    /// The objects touched for a batch whose touch no check has attributed since, and when: an
    /// object is not touched again while its touch waits, so what queues for the watcher is
    /// bounded by its objects, whatever the senders' volume.
    touched_at: HashMap<Target, crate::watch::clock::Instant>,
}

/// A touch no check took up (its object in sync) stops holding back new ones after this.
const TOUCH_WAITS: std::time::Duration = std::time::Duration::from_secs(10);

impl Feed {
    /// An empty feed, its watcher not started yet.
    fn new(limits: WindowLimits) -> Feed {
        Feed {
            window: Window::new(limits),
            interest: HashSet::new(),
            collections: HashSet::new(),
            touches: None,
            touched_at: HashMap::new(),
        }
    }
}

/// Every cluster's feed, by the name its credentials carry (`""`: the one cluster of a watcher
/// that is not a fleet's).
pub(crate) struct Hub {
    limits: WindowLimits,
    feeds: Mutex<HashMap<String, Feed>>,
    /// A watcher of one cluster: with `--cluster`, a sender's cluster name must be empty or this
    /// one; without, any authenticated sender speaks for the one cluster.
    single: Option<String>,
}

impl Hub {
    /// The hub of a watcher of one cluster (`--cluster`, when named).
    pub(crate) fn single(limits: WindowLimits, cluster: Option<&str>) -> Hub {
        // Its one feed from the start: a batch sent before the first check is not refused.
        let feeds = Mutex::new(HashMap::from([(String::new(), Feed::new(limits))]));
        Hub { limits, feeds, single: Some(cluster.unwrap_or_default().to_string()) }
    }

    /// The hub of a fleet: each sender's cluster is one of its members.
    pub(crate) fn fleet(limits: WindowLimits) -> Hub {
        Hub { limits, feeds: Mutex::default(), single: None }
    }

    /// The feed a sender authenticated as `cluster` writes to, when it is one watched.
    fn feed_of(&self, cluster: &str) -> Option<String> {
        match &self.single {
            Some(name) if name.is_empty() || cluster.is_empty() || cluster == name => Some(String::new()),
            Some(_) => None,
            None => Some(cluster.to_string()),
        }
    }

    /// The feed a watcher reads (its member name in a fleet).
    pub(crate) fn feed_name(&self, member: Option<&str>) -> String {
        if self.single.is_some() { String::new() } else { member.unwrap_or_default().to_string() }
    }

    /// A watcher's objects: only writes to them are kept from now on (and the writes kept to
    /// others forgotten when the window moves on).
    pub(crate) fn watching(&self, feed: &str, objects: impl Iterator<Item = ObjectKey>, touches: &TouchSender) {
        let interest =
            objects.map(|k| Target { group: k.group, plural: k.plural, namespace: k.namespace, name: k.name });
        let Ok(mut feeds) = self.feeds.lock() else { return };
        let f = feeds.entry(feed.to_string()).or_insert_with(|| Feed::new(self.limits));
        f.interest = interest.collect();
        f.collections = f.interest.iter().map(Target::collection).collect();
        let interest = &f.interest;
        f.touched_at.retain(|t, _| interest.contains(t));
        f.touches = Some(touches.clone());
    }

    /// A fleet member's feed, from its start: its API server's batches are not refused before
    /// its watcher's first check.
    pub(crate) fn expect(&self, feed: &str) {
        let Ok(mut feeds) = self.feeds.lock() else { return };
        feeds.entry(feed.to_string()).or_insert_with(|| Feed::new(self.limits));
    }

    /// A watcher gone: its feed with it.
    pub(crate) fn forget(&self, feed: &str) {
        if let Ok(mut feeds) = self.feeds.lock() {
            feeds.remove(feed);
        }
    }

    /// Writes a sender authenticated as `cluster` reported: those to watched objects kept, and
    /// their releases touched. Returns how many were kept, `None` when the cluster is not one
    /// watched here.
    pub(crate) fn receive(&self, cluster: &str, writes: Vec<AuditedWrite>) -> Option<usize> {
        let name = self.feed_of(cluster)?;
        let now = jiff::Timestamp::now();
        let mut feeds = self.feeds.lock().ok()?;
        let feed = feeds.get_mut(&name)?;
        let mut kept = 0;
        // One touch per object a batch wrote, however many writes it holds, and none for an
        // object whose last touch still waits for its check.
        let mut touched = HashSet::new();
        let wanted = |t: &Target| feed.interest.contains(t) || feed.collections.contains(t);
        let writes: Vec<AuditedWrite> = writes.into_iter().filter(|w| wanted(&w.target)).collect();
        for w in writes {
            if !w.target.is_collection() {
                touched.insert(w.target.clone());
            }
            feed.window.keep(w, now);
            kept += 1;
        }
        if let Some(touches) = &feed.touches {
            let at = crate::watch::clock::Instant::now();
            for t in touched {
                let waiting = feed.touched_at.get(&t).is_some_and(|last| at.duration_since(*last) < TOUCH_WAITS);
                if waiting {
                    continue;
                }
                feed.touched_at.insert(t.clone(), at);
                let key = ObjectKey { group: t.group, plural: t.plural, namespace: t.namespace, name: t.name };
                let _ = touches.send(Touch::Object(key));
            }
        }
        feed.window.forget_old(now);
        Some(kept)
    }

    /// Attributes a report's drift from the feed's window.
    pub(crate) fn attribute(
        &self,
        feed: &str,
        report: &mut DriftReport,
        target: impl Fn(&crate::model::ObjectId) -> Option<Target>,
    ) {
        let Ok(mut feeds) = self.feeds.lock() else { return };
        match feeds.get_mut(feed) {
            Some(f) => {
                for t in report.objects.iter().filter_map(|o| target(&o.id)) {
                    f.touched_at.remove(&t);
                }
                crate::audit::attribute(report, &f.window, target)
            }
            None => crate::audit::attribute(report, &Window::new(self.limits), target),
        }
    }

    /// Writes kept, their bytes, and writes forgotten early for the bound, over every feed.
    pub(crate) fn size(&self) -> (usize, usize, u64) {
        let Ok(feeds) = self.feeds.lock() else { return (0, 0, 0) };
        let each = feeds.values().map(|f| (f.window.size(), f.window.dropped()));
        each.fold((0, 0, 0), |(a, b, c), ((d, e), f)| (a + d, b + e, c + f))
    }
}

/// Who last wrote an object between two moments, from a watcher's audit feed (what the
/// timeline asks to learn who ended a drift); `None` without a feed.
pub(crate) fn ender<'a>(
    audit: Option<&'a Link>,
    session: &'a crate::engine::Session,
    namespace: &'a str,
) -> Option<impl Fn(&crate::model::ObjectId, (jiff::Timestamp, jiff::Timestamp)) -> Option<crate::model::Actor> + 'a> {
    let audit = audit?;
    Some(move |id: &crate::model::ObjectId, between| {
        let target = crate::engine::makers::target(session.discovery(), namespace, id)?;
        audit.last_write(&target, between)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sender_speaks_for_the_cluster_its_credentials_name() {
        let any = Hub::single(WindowLimits::default(), None);
        assert_eq!(any.feed_of("kube-apiserver"), Some(String::new()), "unnamed: any authenticated sender");
        let named = Hub::single(WindowLimits::default(), Some("prod"));
        assert_eq!(named.feed_of("prod"), Some(String::new()));
        assert_eq!(named.feed_of(""), Some(String::new()), "a token that names no cluster");
        assert_eq!(named.feed_of("intruder"), None);
        let fleet = Hub::fleet(WindowLimits::default());
        assert_eq!(fleet.feed_of("fleet/eu"), Some("fleet/eu".to_string()), "its own feed only");
    }

    /// However many batches write one object, one touch waits for it until a check attributes it.
    #[test]
    fn a_flood_of_batches_queues_one_touch_per_object() {
        let hub = Hub::single(WindowLimits::default(), None);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let key =
            ObjectKey { group: "".into(), plural: "configmaps".into(), namespace: Some("ns".into()), name: "c".into() };
        hub.watching("", std::iter::once(key), &TouchSender(tx));
        let event = serde_json::json!({"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"a","stage":"ResponseComplete",
            "requestURI":"/api/v1/namespaces/ns/configmaps/c","verb":"patch","user":{"username":"alice"},
            "objectRef":{"resource":"configmaps","namespace":"ns","name":"c","apiVersion":"v1"},"responseStatus":{"code":200},
            "requestReceivedTimestamp":"2026-12-02T14:59:00Z","stageTimestamp":"2026-12-02T14:59:00Z"});
        let write = || crate::audit::event::parse_line(&event.to_string()).unwrap().unwrap();
        for _ in 0..200 {
            assert_eq!(hub.receive("", (0..50).map(|_| write()).collect()), Some(50));
        }
        let mut queued = || std::iter::from_fn(|| rx.try_recv().ok()).count();
        assert_eq!(queued(), 1, "10,000 writes to one object, one touch");
        let id = crate::model::ObjectId::new("v1", "ConfigMap", Some("ns"), "c");
        let mut report = DriftReport {
            objects: vec![crate::model::ObjectDrift::new(id, None, crate::model::Verdict::Modified)],
            ..Default::default()
        };
        let target = |_: &crate::model::ObjectId| Some(write().target);
        hub.attribute("", &mut report, target);
        hub.receive("", vec![write()]);
        assert_eq!(queued(), 1, "a batch after its check touches it again");
    }
}

//! Self-healing (`watch --repair`): which releases opt in, what the rate limit and fights leave
//! (`decide`), the one decision for a drifted release (`course`: pure, from the facts read
//! first), whether releases opt in now (read here from their records), and the act (`act`:
//! reads the facts, carries the course out: a repair within the
//! release's authority, reported as it went).

mod act;
mod course;
mod decide;
mod paused;
pub(crate) mod window;

pub(crate) use act::{Hands, instant};
pub(crate) use decide::HealPolicy;
pub(crate) use paused::{Reach, announce};

use crate::release::{ReleaseIndex, Storage};
use crate::watch::keys::ReleaseKey;
use crate::watch::outputs::Outputs;
use decide::{Decider, Memory};
use std::collections::{BTreeSet, HashMap};

/// `--repair`: which releases heal themselves, and how.
#[derive(Clone, Debug)]
pub(crate) struct RepairOptions {
    /// A label selector on the releases' storage records; the releases it matches opt in.
    pub(crate) selector: String,
    pub(crate) remove_foreign: bool,
    pub(crate) policy: HealPolicy,
    /// Repair as this ServiceAccount of the namespace the release's record is stored in
    /// (impersonated).
    pub(crate) service_account: Option<String>,
    /// The namespaces whose records the operator trusts (`--trust-namespace`).
    pub(crate) trust: crate::settings::Trust,
    /// `--repair-window` and `--repair-deny-window`.
    pub(crate) windows: Vec<window::RepairWindow>,
    /// `--pause-namespace`: where break-glass pauses are read (else the watcher's namespace).
    pub(crate) pauses: Option<String>,
}

impl RepairOptions {
    /// The authority a repair of a release acts within: trusted when the namespace its record
    /// is stored in is; writing as the `--repair-service-account` of the namespace the record is
    /// stored in, else as the ServiceAccount the HelmRelease vouching for a record stored apart
    /// names (as Flux's lockdown writes), never as an identity of a namespace the record only
    /// claims.
    fn authority(&self, report: &crate::model::DriftReport) -> crate::repair::Authority {
        let named = self.service_account.as_deref();
        crate::repair::Authority::of(report, &self.trust, named, crate::model::Acting::Watcher)
    }
}

/// What healing keeps about one release, in one entry: forgetting the release removes it
/// whole (a watcher over releases that come and go keeps nothing of the gone).
#[derive(Debug, Default)]
pub(super) struct Healed {
    /// It opts in (its storage labels, or its proxy's say).
    opted: bool,
    /// The windows with a selector that apply to it, by their place.
    windows: BTreeSet<usize>,
    /// Waiting for a window, and what was said about it.
    waiting: Option<String>,
    /// Its repairs: the rate limit and the fights.
    memory: Memory,
}

impl Healed {
    fn is_empty(&self) -> bool {
        !self.opted && self.windows.is_empty() && self.waiting.is_none() && self.memory.is_empty()
    }
}

/// The healing part of a watcher: its options, one entry per release it knows something of,
/// and the clients that impersonate a ServiceAccount, by user.
pub(crate) struct Healing {
    options: RepairOptions,
    decider: Decider,
    releases: HashMap<ReleaseKey, Healed>,
    /// The clients that impersonate a ServiceAccount, by user.
    impersonated: HashMap<String, kube::Client>,
    pauses: paused::Pauses,
    /// The watcher's cluster name (`--cluster`, a fleet member's).
    cluster: Option<String>,
    /// Where pauses are read when not from the watched cluster (a fleet's management cluster).
    pause_client: Option<kube::Client>,
}

impl Healing {
    /// Reads whether each of these releases opts in, and which windows with a selector apply to
    /// it; a read that fails is said and counted, and leaves what was known.
    pub(crate) async fn read_opt_ins(&mut self, storage: &Storage, indexes: &[ReleaseIndex], outputs: &Outputs) {
        for index in indexes {
            let key = ReleaseKey::new(&index.namespace, &index.name);
            let selector = format!("name={},{}", index.name, self.selector());
            match storage.releases(Some(&index.namespace), Some(&selector)).await {
                Ok(found) => self.opts(key.clone(), !found.is_empty()),
                Err(e) => {
                    outputs.metrics.error("storage");
                    outputs.log.error(
                        "cannot read whether the release opts in to repair",
                        &[("release", &key), ("error", &e)],
                    );
                }
            }
            for (window, selector) in self.window_selectors() {
                let selector = format!("name={},{selector}", index.name);
                match storage.releases(Some(&index.namespace), Some(&selector)).await {
                    Ok(found) => self.in_window(window, key.clone(), !found.is_empty()),
                    Err(e) => {
                        outputs.metrics.error("storage");
                        outputs.log.error(
                            "cannot read whether a repair window applies to the release",
                            &[("release", &key), ("selector", &selector), ("error", &e)],
                        );
                    }
                }
            }
        }
        self.follow(outputs.proxies.as_deref());
    }

    pub(crate) fn new(options: &RepairOptions, cluster: Option<String>, pause_client: Option<kube::Client>) -> Healing {
        Healing {
            cluster,
            pause_client,
            options: options.clone(),
            decider: Decider::new(options.policy.clone()),
            releases: HashMap::new(),
            impersonated: HashMap::new(),
            pauses: Default::default(),
        }
    }

    /// The namespace the operator named for pauses (`--pause-namespace`), if any.
    pub(crate) fn named_pauses(&self) -> Option<&str> {
        self.options.pauses.as_deref()
    }

    /// Whether it heals a fleet's member (the fleet says where it reads pauses, not the member).
    pub(crate) fn is_member(&self) -> bool {
        self.pause_client.is_some()
    }

    /// The label selector of the releases that opt in.
    pub(crate) fn selector(&self) -> &str {
        &self.options.selector
    }

    /// The releases that opt in now (read at each full check).
    pub(crate) fn opted(&mut self, releases: impl IntoIterator<Item = ReleaseKey>) {
        self.releases.values_mut().for_each(|h| h.opted = false);
        for key in releases {
            self.releases.entry(key).or_default().opted = true;
        }
        self.tidy();
    }

    /// Forgets a release gone (uninstalled, or out of the selection): its one entry, and the
    /// pauses said of it.
    pub(crate) fn forget(&mut self, release: &ReleaseKey) {
        self.releases.remove(release);
        self.pauses.forget(release);
    }

    /// Drops the entries with nothing left in them.
    fn tidy(&mut self) {
        self.releases.retain(|_, h| !h.is_empty());
    }

    /// Remembers a repair attempt of a release now, and the objects it changed.
    fn repaired_now(&mut self, release: &ReleaseKey, applied: &[crate::model::ObjectId]) {
        let memory = &mut self.releases.entry(release.clone()).or_default().memory;
        memory.repaired(&self.decider.policy, applied, crate::watch::clock::Instant::now());
    }

    /// A release's entry, made when first needed.
    fn entry(&mut self, release: &ReleaseKey) -> &mut Healed {
        self.releases.entry(release.clone()).or_default()
    }

    /// The releases CAAPH installed heal as their HelmReleaseProxy (or HelmChartProxy) says, in
    /// the management cluster: whatever the workload cluster's records are labelled.
    pub(crate) fn follow(&mut self, proxies: Option<&crate::watch::caaph::Proxies>) {
        for (key, repair, interval) in proxies.into_iter().flat_map(|p| p.opt_ins()) {
            self.opts(key.clone(), repair);
            self.interval(key, interval);
        }
    }

    pub(crate) fn opts(&mut self, release: ReleaseKey, opts_in: bool) {
        if opts_in {
            self.entry(&release).opted = true;
        } else if let Some(h) = self.releases.get_mut(&release) {
            h.opted = false;
            if h.is_empty() {
                self.releases.remove(&release);
            }
        }
    }

    /// A release's own least time between two repairs (`None`: `--repair-cooldown`).
    pub(crate) fn interval(&mut self, release: &ReleaseKey, interval: Option<std::time::Duration>) {
        if interval.is_some() || self.releases.contains_key(release) {
            self.entry(release).memory.cooldown(interval);
        }
    }

    /// The windows with a selector, by their place: the selector to read their releases with.
    pub(crate) fn window_selectors(&self) -> Vec<(usize, String)> {
        let w = &self.options.windows;
        w.iter().enumerate().filter_map(|(i, w)| Some((i, w.selector.clone()?))).collect()
    }

    /// The releases a window with a selector applies to now (read at each full check).
    pub(crate) fn windowed(&mut self, window: usize, releases: impl IntoIterator<Item = ReleaseKey>) {
        self.releases.values_mut().for_each(|h| {
            h.windows.remove(&window);
        });
        for key in releases {
            self.entry(&key).windows.insert(window);
        }
        self.tidy();
    }

    /// Whether a window with a selector applies to one release now (read when it changes).
    pub(crate) fn in_window(&mut self, window: usize, release: ReleaseKey, applies: bool) {
        if applies {
            self.entry(&release).windows.insert(window);
        } else if let Some(h) = self.releases.get_mut(&release) {
            h.windows.remove(&window);
        }
    }

    /// Whether a release may heal at `now`, by the windows that apply to it.
    fn gate(&self, release: &ReleaseKey, now: jiff::Timestamp) -> window::Gate {
        let mine = self.releases.get(release);
        let applies = |(i, w): &(usize, &window::RepairWindow)| {
            w.selector.is_none() || mine.is_some_and(|h| h.windows.contains(i))
        };
        let windows: Vec<&window::RepairWindow> =
            self.options.windows.iter().enumerate().filter(applies).map(|(_, w)| w).collect();
        window::gate(&windows, now)
    }

    fn opts_in(&self, release: &ReleaseKey) -> bool {
        self.releases.get(release).is_some_and(|h| h.opted)
    }

    /// Takes in a release's latest verdicts (an abandoned object seen in sync is healed again).
    pub(crate) fn observe(&mut self, report: &crate::model::DriftReport) {
        if let Some(h) = self.releases.get_mut(&ReleaseKey::of(report)) {
            h.memory.observe(report);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ObjectId;
    use std::time::Duration;

    fn options() -> RepairOptions {
        RepairOptions {
            selector: "helm-drift.io/repair=true".into(),
            remove_foreign: false,
            policy: HealPolicy {
                cooldown: Duration::from_secs(30),
                fight_limit: 3,
                fight_window: Duration::from_secs(600),
            },
            service_account: None,
            trust: Default::default(),
            windows: Vec::new(),
            pauses: None,
        }
    }

    /// Issue 94: 1,000 releases that opt in, drift, are repaired, abandoned, wait for a window
    /// and go leave no entry behind; one that opts out with nothing to remember leaves none
    /// either, and one that opts out after a fight keeps its memory of it until it goes.
    #[test]
    fn a_release_gone_leaves_nothing_behind() {
        let mut h = Healing::new(&options(), None, None);
        let keys: Vec<ReleaseKey> = (0..1000).map(|i| ReleaseKey::new("ns", &format!("r{i}"))).collect();
        h.opted(keys.clone());
        for (i, key) in keys.iter().enumerate() {
            h.in_window(0, key.clone(), true);
            h.interval(key, Some(Duration::from_secs(60)));
            let id = ObjectId::new("v1", "ConfigMap", Some("ns"), &format!("c{i}"));
            h.repaired_now(key, std::slice::from_ref(&id));
            h.entry(key).memory.abandon(&[(id, "kubectl".into())]);
            h.entry(key).waiting = Some("outside its window".into());
        }
        assert_eq!(h.releases.len(), 1000);
        // A full check that finds none opted in: each still remembers its fight.
        h.opted(Vec::new());
        assert_eq!(h.releases.len(), 1000);
        for key in &keys {
            h.forget(key);
        }
        assert_eq!(h.releases.len(), 0, "nothing of the gone");
        h.opts(keys[0].clone(), true);
        assert!(h.opts_in(&keys[0]));
        h.opts(keys[0].clone(), false);
        assert_eq!(h.releases.len(), 0, "opted out with nothing to remember");
        h.opts(keys[1].clone(), false);
        h.interval(&keys[1], None);
        h.in_window(0, keys[1].clone(), false);
        assert_eq!(h.releases.len(), 0, "asked about, never opted in");
    }
}

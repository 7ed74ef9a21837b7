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
use decide::Decider;
use std::collections::{HashMap, HashSet};

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

/// The healing part of a watcher: its options, what it remembers of earlier repairs, the
/// releases that opted in, and the clients that impersonate a ServiceAccount, by user.
pub(crate) struct Healing {
    options: RepairOptions,
    decider: Decider,
    opted: HashSet<ReleaseKey>,
    /// The clients that impersonate a ServiceAccount, by user.
    impersonated: HashMap<String, kube::Client>,
    /// The releases each window with a selector applies to (by the window's place).
    windowed: HashMap<usize, HashSet<ReleaseKey>>,
    /// Releases waiting for a window, and what was said about it.
    waiting: HashMap<ReleaseKey, String>,
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
            opted: HashSet::new(),
            impersonated: HashMap::new(),
            windowed: HashMap::new(),
            waiting: HashMap::new(),
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
        self.opted = releases.into_iter().collect();
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
            self.opted.insert(release);
        } else {
            self.opted.remove(&release);
        }
    }

    /// A release's own least time between two repairs (`None`: `--repair-cooldown`).
    pub(crate) fn interval(&mut self, release: &ReleaseKey, interval: Option<std::time::Duration>) {
        self.decider.cooldown(release.clone(), interval);
    }

    /// The windows with a selector, by their place: the selector to read their releases with.
    pub(crate) fn window_selectors(&self) -> Vec<(usize, String)> {
        let w = &self.options.windows;
        w.iter().enumerate().filter_map(|(i, w)| Some((i, w.selector.clone()?))).collect()
    }

    /// The releases a window with a selector applies to now (read at each full check).
    pub(crate) fn windowed(&mut self, window: usize, releases: impl IntoIterator<Item = ReleaseKey>) {
        self.windowed.insert(window, releases.into_iter().collect());
    }

    /// Whether a window with a selector applies to one release now (read when it changes).
    pub(crate) fn in_window(&mut self, window: usize, release: ReleaseKey, applies: bool) {
        let set = self.windowed.entry(window).or_default();
        if applies {
            set.insert(release);
        } else {
            set.remove(&release);
        }
    }

    /// Whether a release may heal at `now`, by the windows that apply to it.
    fn gate(&self, release: &ReleaseKey, now: jiff::Timestamp) -> window::Gate {
        let applies = |(i, w): &(usize, &window::RepairWindow)| {
            w.selector.is_none() || self.windowed.get(i).is_some_and(|set| set.contains(release))
        };
        let windows: Vec<&window::RepairWindow> =
            self.options.windows.iter().enumerate().filter(applies).map(|(_, w)| w).collect();
        window::gate(&windows, now)
    }

    fn opts_in(&self, release: &ReleaseKey) -> bool {
        self.opted.contains(release)
    }

    /// Takes in a release's latest verdicts (an abandoned object seen in sync is healed again).
    pub(crate) fn observe(&mut self, report: &crate::model::DriftReport) {
        self.decider.observe(report);
    }
}

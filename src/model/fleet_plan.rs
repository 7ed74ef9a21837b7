//! The outcome of `plan --helmchartproxy`: for every workload cluster a Cluster API
//! `HelmChartProxy` reaches, what the Helm add-on provider's next reconcile does to its release
//! there (the plan of an install, upgrade, reinstall or uninstall), or why it does nothing.

use super::{ExitStatus, NotRun, PlanReport};

/// What CAAPH does to the release on one cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProxyAction {
    /// No release yet: installed.
    Install,
    /// Its values or chart version differ from the record's (or the release failed): upgraded.
    Upgrade,
    /// The chart name, repository or release name changed: uninstalled, then installed anew.
    Reinstall,
    /// The cluster is no longer selected: its HelmReleaseProxy is deleted, the release
    /// uninstalled.
    Uninstall,
}

impl ProxyAction {
    /// The word in every format.
    pub(crate) fn word(self) -> &'static str {
        match self {
            ProxyAction::Install => "install",
            ProxyAction::Upgrade => "upgrade",
            ProxyAction::Reinstall => "reinstall",
            ProxyAction::Uninstall => "uninstall",
        }
    }
}

/// One cluster's part of the plan.
#[derive(Clone, Debug)]
pub(crate) enum ClusterOutcome {
    /// CAAPH runs `action`; the plan says what it does to the cluster as it is.
    Planned { action: ProxyAction, plan: Box<PlanReport> },
    /// CAAPH leaves the release as it is, and why (values and chart version unchanged, an
    /// `InstallOnce` release installed): today's drift stays.
    Untouched(String),
    /// CAAPH does not reconcile the cluster now (paused, being deleted, control plane not
    /// initialized).
    Skipped(String),
    /// CAAPH's reconcile fails before any write (its values template does not execute): the
    /// error it will set on the HelmChartProxy's conditions.
    Fails(String),
    /// The plan could not be made (the cluster unreachable, an object unreadable).
    NotRun(NotRun),
}

/// One workload cluster: `namespace/name` of its Cluster, and its outcome.
#[derive(Clone, Debug)]
pub(crate) struct ClusterPlan {
    pub(crate) cluster: String,
    pub(crate) outcome: ClusterOutcome,
}

/// Every cluster the HelmChartProxy selects (and those it no longer does, that hold a
/// release it made), in the order their Clusters are named.
#[derive(Clone, Debug)]
pub(crate) struct FleetPlan {
    /// `namespace/name` of the HelmChartProxy, and where it was read (the cluster, a file).
    pub(crate) proxy: String,
    pub(crate) source: String,
    pub(crate) clusters: Vec<ClusterPlan>,
    /// How the plans were made, for every cluster (the chart given, values rendered by Helm's
    /// engine).
    pub(crate) notes: Vec<String>,
}

impl ClusterOutcome {
    /// 0 nothing changes, 2 something changes, 3 it fails, 1 it could not be planned.
    pub(crate) fn exit_status(&self) -> ExitStatus {
        match self {
            ClusterOutcome::Planned { plan, .. } => plan.exit_status(),
            ClusterOutcome::Untouched(_) | ClusterOutcome::Skipped(_) => ExitStatus::InSync,
            ClusterOutcome::Fails(_) => ExitStatus::WouldFail,
            ClusterOutcome::NotRun(_) => ExitStatus::Error,
        }
    }

    /// The outcome in a few words: `upgrade: the upgrade changes 2 objects`, `untouched`...
    pub(crate) fn summary(&self) -> String {
        match self {
            ClusterOutcome::Planned { action, plan } => {
                let verdict = plan.verdict().to_string().replacen("the upgrade", &format!("the {}", action.word()), 1);
                format!("{}: {verdict}", action.word())
            }
            ClusterOutcome::Untouched(_) => "untouched".into(),
            ClusterOutcome::Skipped(_) => "skipped".into(),
            ClusterOutcome::Fails(_) => "fails".into(),
            ClusterOutcome::NotRun(_) => "not planned".into(),
        }
    }
}

impl FleetPlan {
    /// The worst of every cluster's (an error, then a failure, then a change).
    pub(crate) fn exit_status(&self) -> ExitStatus {
        self.clusters.iter().map(|c| c.outcome.exit_status()).fold(ExitStatus::InSync, ExitStatus::max)
    }

    /// `(changed, failing, untouched or skipped, not planned)` clusters.
    pub(crate) fn counts(&self) -> (usize, usize, usize, usize) {
        let mut out = (0, 0, 0, 0);
        for c in &self.clusters {
            match c.outcome.exit_status() {
                ExitStatus::Drift => out.0 += 1,
                ExitStatus::WouldFail => out.1 += 1,
                ExitStatus::InSync => out.2 += 1,
                ExitStatus::Error => out.3 += 1,
            }
        }
        out
    }

    /// The fleet in one sentence.
    pub(crate) fn verdict(&self) -> String {
        let (changed, failing, quiet, unplanned) = self.counts();
        let n = self.clusters.len();
        let mut parts = vec![format!("{changed} changed")];
        if failing > 0 {
            parts.push(format!("{failing} failing"));
        }
        parts.push(format!("{quiet} unchanged"));
        if unplanned > 0 {
            parts.push(format!("{unplanned} not planned"));
        }
        format!("{n} cluster{}: {}", if n == 1 { "" } else { "s" }, parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fleet(outcomes: Vec<ClusterOutcome>) -> FleetPlan {
        let clusters = outcomes
            .into_iter()
            .enumerate()
            .map(|(i, outcome)| ClusterPlan { cluster: format!("fleet/c{i}"), outcome })
            .collect();
        FleetPlan { proxy: "fleet/cni".into(), source: "the cluster".into(), clusters, notes: Vec::new() }
    }

    #[test]
    fn the_fleet_exits_with_its_worst_cluster() {
        let quiet =
            fleet(vec![ClusterOutcome::Untouched("same values".into()), ClusterOutcome::Skipped("paused".into())]);
        assert_eq!(quiet.exit_status(), ExitStatus::InSync);
        assert_eq!(quiet.verdict(), "2 clusters: 0 changed, 2 unchanged");
        let failing = fleet(vec![ClusterOutcome::Untouched("x".into()), ClusterOutcome::Fails("bad template".into())]);
        assert_eq!(failing.exit_status(), ExitStatus::WouldFail);
        let down = fleet(vec![ClusterOutcome::Fails("x".into()), ClusterOutcome::NotRun(NotRun("unreachable".into()))]);
        assert_eq!(down.exit_status(), ExitStatus::Error, "a cluster not planned is never a clean fleet");
        assert_eq!(down.verdict(), "2 clusters: 0 changed, 1 failing, 0 unchanged, 1 not planned");
    }
}

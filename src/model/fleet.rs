//! A check of several clusters in one run (`check --kube-context a --kube-context b`,
//! `--all-contexts`), or a repair of one named release in each (`repair R --kube-context a
//! --kube-context b`): each cluster's report under its kubeconfig context's name.

use super::{ExitStatus, RepairReport, RunReport};

/// One cluster's part of a fleet check.
#[derive(Clone, Debug)]
pub(crate) struct ClusterReport {
    /// The kubeconfig context the cluster was reached through.
    pub(crate) cluster: String,
    pub(crate) run: RunReport,
}

/// Every cluster's report, in the order the clusters were named.
#[derive(Clone, Debug, Default)]
pub(crate) struct FleetReport {
    pub(crate) clusters: Vec<ClusterReport>,
}

impl FleetReport {
    /// The worst of every cluster's: an unreachable cluster is an error, whatever the others say.
    pub(crate) fn exit_status(&self) -> ExitStatus {
        self.clusters.iter().map(|c| c.run.exit_status()).fold(ExitStatus::InSync, ExitStatus::max)
    }

    /// Releases in sync, drifted, in error, over every cluster.
    pub(crate) fn counts(&self) -> (usize, usize, usize) {
        self.clusters.iter().map(|c| c.run.counts()).fold((0, 0, 0), |(a, b, c), (x, y, z)| (a + x, b + y, c + z))
    }

    /// Releases over every cluster.
    pub(crate) fn releases(&self) -> usize {
        self.clusters.iter().map(|c| c.run.outcomes.len()).sum()
    }
}

/// A repair of one release in each of several clusters, in the order they were named; a cluster
/// where the repair could not run holds why.
#[derive(Clone, Debug, Default)]
pub(crate) struct FleetRepair {
    pub(crate) clusters: Vec<(String, Result<RepairReport, NotRun>)>,
}

/// Why a cluster's repair could not run: its error and causes, in one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NotRun(pub(crate) String);

impl FleetRepair {
    /// The worst of every cluster's.
    pub(crate) fn exit_status(&self) -> ExitStatus {
        self.clusters
            .iter()
            .map(|(_, r)| r.as_ref().map_or(ExitStatus::Error, RepairReport::exit_status))
            .fold(ExitStatus::InSync, ExitStatus::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_cluster_decides_and_counts_add_up() {
        let sync = RunReport::default();
        let down = RunReport::unchecked(&[], "", "cannot reach the cluster");
        let fleet = FleetReport {
            clusters: vec![
                ClusterReport { cluster: "a".into(), run: sync.clone() },
                ClusterReport { cluster: "b".into(), run: down },
            ],
        };
        assert_eq!(fleet.exit_status(), ExitStatus::Error);
        assert_eq!((fleet.counts(), fleet.releases()), ((0, 0, 1), 1));
        let calm = FleetReport { clusters: vec![ClusterReport { cluster: "a".into(), run: sync }] };
        assert_eq!(calm.exit_status(), ExitStatus::InSync);
    }

    #[test]
    fn a_repair_that_could_not_run_in_one_cluster_is_an_error() {
        let none = FleetRepair::default();
        assert_eq!(none.exit_status(), ExitStatus::InSync);
        let down = FleetRepair { clusters: vec![("b".into(), Err(NotRun("cannot reach the cluster".into())))] };
        assert_eq!(down.exit_status(), ExitStatus::Error);
    }
}

//! `--leader-elect`: only the replica that holds a coordination.k8s.io Lease acts (through
//! kube-lease-manager); the others stand by, serving health.

use anyhow::{Context, Result};
use kube_lease_manager::LeaseManagerBuilder;
use tokio::sync::watch;

/// Which Lease, and who this replica is.
#[derive(Clone, Debug)]
pub struct LeaderOptions {
    pub name: String,
    /// The Lease's namespace (default: the watcher's namespace).
    pub namespace: Option<String>,
    /// This replica's name in the Lease (default: the host name, a pod's name).
    pub identity: String,
    /// Seconds a leader holds the Lease without renewing it.
    pub duration: u64,
}

/// This replica's standing, kept renewed by a task of its own.
pub struct Elected {
    state: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<kube_lease_manager::Result<kube_lease_manager::LeaseManager>>,
}

/// Joins the election (creating the Lease when there is none).
pub async fn elect(client: &kube::Client, options: &LeaderOptions, namespace: &str) -> Result<Elected> {
    let namespace = options.namespace.as_deref().unwrap_or(namespace);
    let manager = LeaseManagerBuilder::new(client.clone(), &options.name)
        .with_namespace(namespace)
        .with_identity(&options.identity)
        .with_duration(options.duration)
        .with_grace((options.duration / 3).max(1))
        .with_field_manager("helm-drift-leader")
        .build()
        .await
        .with_context(|| format!("cannot use Lease {namespace}/{} for --leader-elect", options.name))?;
    let (state, task) = manager.watch().await;
    Ok(Elected { state, task })
}

impl Elected {
    /// Resolves once this replica holds the Lease.
    pub async fn acquired(&mut self) -> Result<()> {
        loop {
            if *self.state.borrow_and_update() {
                return Ok(());
            }
            self.state.changed().await.context("the Lease manager stopped")?;
        }
    }

    /// Leaves the election, releasing the Lease when held (so a standby takes over at once).
    pub async fn resign(self) {
        drop(self.state);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), self.task).await;
    }

    /// Resolves when this replica no longer holds the Lease.
    pub async fn lost(&mut self) {
        loop {
            if !*self.state.borrow_and_update() {
                return;
            }
            if self.state.changed().await.is_err() {
                return;
            }
        }
    }
}

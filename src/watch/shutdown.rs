//! When the watcher stops: SIGINT, SIGTERM, or the helm process that started it gone.

use std::time::Duration;

/// Resolves on SIGINT or SIGTERM, or, run as a Helm plugin, when helm is gone: helm does not
/// pass a SIGTERM on to its plugin, which would otherwise keep running on its own.
pub(crate) async fn requested() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
            _ = helm_gone() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

/// The process that started this one, as it was at the very start: helm, when run as a plugin.
static PARENT: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

/// Remembers the parent process; called first thing in `main`, so that a helm killed while this
/// process was still starting is noticed too (read later, the parent would already be init).
pub(crate) fn note_parent() {
    #[cfg(unix)]
    PARENT.get_or_init(std::os::unix::process::parent_id);
}

/// Resolves when the helm process that started this plugin has ended (never when not run by helm).
#[cfg(unix)]
async fn helm_gone() {
    if std::env::var_os("HELM_PLUGIN_DIR").is_none() {
        return std::future::pending().await;
    }
    let parent = *PARENT.get_or_init(std::os::unix::process::parent_id);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        if std::os::unix::process::parent_id() != parent {
            return;
        }
    }
}

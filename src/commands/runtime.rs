//! The async runtime the process runs on: one, built the first time a command needs it and
//! shared by every call after (a `check` of several steps, a fleet), never one per call.

use std::sync::OnceLock;
use tokio::runtime::Runtime;

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The process's runtime (multi-threaded, I/O and time enabled).
pub(super) fn runtime() -> std::io::Result<&'static Runtime> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let built = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    // Another thread may have built one meanwhile: theirs is kept, this one dropped.
    Ok(RUNTIME.get_or_init(|| built))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_call_gets_the_same_runtime() {
        let a = super::runtime().unwrap() as *const _;
        let b = super::runtime().unwrap() as *const _;
        assert_eq!(a, b);
    }
}

//! The watcher's one clock: the runtime's (`tokio::time`), which tests pause and advance. Every
//! deadline, cooldown, debounce, backoff and timing of the watcher reads it; a test below keeps
//! `std::time::Instant` out of `src/watch`, so paused-time tests cover every part.

pub(crate) use tokio::time::Instant;

#[cfg(test)]
mod tests {
    /// No file of the watcher names the wall-clock-free instant of the standard library.
    #[test]
    fn the_watcher_reads_one_clock() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/watch");
        let mut dirs = vec![root];
        let mut found = Vec::new();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let std_instant = ["std::time::Instant", "std::time::{Duration, Instant}", "tokio::time::Instant"];
                    for (n, line) in text.lines().enumerate() {
                        let own = path.ends_with("clock.rs");
                        if !own && std_instant.iter().any(|s| line.contains(s)) {
                            found.push(format!("{}:{}: {line}", path.display(), n + 1));
                        }
                    }
                }
            }
        }
        assert!(found.is_empty(), "the watcher's clock is crate::watch::clock::Instant: {found:#?}");
    }
}

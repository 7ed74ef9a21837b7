//! Progress of long work (releases checked, repair steps validated and applied), told by the
//! engine and shown by the report layer (a progress line on a terminal, nothing otherwise).

use std::sync::Arc;

/// One step forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tick {
    /// `done` of `total` releases checked; `objects` in the one just checked.
    Release { done: usize, total: usize, objects: usize },
    /// `done` of `total` repair steps through `phase`.
    Step { phase: Phase, done: usize, total: usize },
}

/// The phases of a repair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Each step's server dry-run.
    Validating,
    /// Each step made.
    Applying,
}

/// Where ticks go; [`Progress::none`] drops them.
#[derive(Clone)]
pub(crate) struct Progress(Option<Arc<dyn Fn(Tick) + Send + Sync>>);

impl Progress {
    pub(crate) fn new(f: impl Fn(Tick) + Send + Sync + 'static) -> Progress {
        Progress(Some(Arc::new(f)))
    }

    pub(crate) fn none() -> Progress {
        Progress(None)
    }

    pub(crate) fn tell(&self, tick: Tick) {
        if let Some(f) = &self.0 {
            f(tick);
        }
    }
}

impl Default for Progress {
    fn default() -> Progress {
        Progress::none()
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Progress(shown)" } else { "Progress(none)" })
    }
}

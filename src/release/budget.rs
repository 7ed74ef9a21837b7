//! The memory the decoded release records of the whole process may hold at once, in bytes: a
//! record reserves what it decodes to (its JSON, and what its manifest may expand to) before it
//! is inflated, and gives it back when the last copy of its [`Release`](super::Release) is
//! dropped. Many small records share the budget; a few large (or hostile) ones wait their turn
//! instead of adding up past the process's memory limit.

use std::sync::Arc;
use tokio::sync::{Semaphore, SemaphorePermit};

/// The budget's unit: reservations are counted in KiB.
const UNIT: usize = 1024;
/// The whole process's budget for decoded records (well under the chart's 256 MiB limit).
pub(crate) const TOTAL: usize = 128 * 1024 * 1024;

static BUDGET: Semaphore = Semaphore::const_new(TOTAL / UNIT);

/// A reservation of the budget, shared by the copies of one release.
#[derive(Clone, Debug)]
pub(crate) struct Reserved(#[allow(dead_code)] Option<Arc<SemaphorePermit<'static>>>);

impl Reserved {
    /// Gives back what is reserved past `bytes` (once the record is decoded and its manifest's
    /// size known: [`cost`]); nothing when the reservation is shared already.
    pub(crate) fn shrink_to(&mut self, bytes: usize) {
        let keep = units(bytes) as usize;
        if let Some(permit) = self.0.as_mut().and_then(Arc::get_mut)
            && permit.num_permits() > keep
        {
            drop(permit.split(permit.num_permits() - keep));
        }
    }

    /// No reservation: a release helm printed on this machine (its size is helm's to bound), and
    /// tests.
    pub(crate) fn none() -> Reserved {
        Reserved(None)
    }
}

/// What a record of `size` bytes of JSON whose manifest is `manifest` bytes costs decoded: the
/// JSON held as text, and the bytes its manifest may expand to (`yaml::Budget`), at most
/// the whole budget. Before decoding, the manifest may be the whole record: `cost(size, size)`.
pub(crate) fn cost(size: usize, manifest: usize) -> usize {
    size.saturating_add(expansion(manifest)).min(TOTAL)
}

use crate::yaml::expansion;

fn units(bytes: usize) -> u32 {
    bytes.div_ceil(UNIT).max(1) as u32
}

/// Waits until a record of `size` bytes fits the budget, and reserves it.
pub(crate) async fn reserve(size: usize) -> Reserved {
    Reserved(BUDGET.acquire_many(units(cost(size, size))).await.ok().map(Arc::new))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_costs_its_text_and_its_expansion_at_most_the_whole_budget() {
        assert_eq!(cost(0, 0), 1 << 20);
        assert_eq!(cost(1000, 1000), 1000 + 8000 + (1 << 20));
        assert_eq!(cost(1000, 10), 1000 + 80 + (1 << 20));
        assert_eq!(cost(usize::MAX, usize::MAX), TOTAL);
    }

    #[tokio::test]
    async fn reservations_are_returned_when_the_last_copy_goes() {
        let mut shrunk = reserve(8 << 20).await;
        let held = |r: &Reserved| r.0.as_ref().map_or(0, |p| p.num_permits());
        assert_eq!(held(&shrunk), cost(8 << 20, 8 << 20) / UNIT);
        shrunk.shrink_to(cost(8 << 20, 1000));
        assert_eq!(held(&shrunk), cost(8 << 20, 1000).div_ceil(UNIT), "values are not a manifest");
        drop(shrunk);
        let before = BUDGET.available_permits();
        let r = reserve(4 << 20).await;
        let copy = r.clone();
        assert!(BUDGET.available_permits() < before);
        drop(r);
        assert!(BUDGET.available_permits() < before, "a copy still holds it");
        drop(copy);
        assert_eq!(BUDGET.available_permits(), before);
    }
}

//! [`ReadBudget`]: the bytes all file reads of one call may return together, shared by
//! `read_skill_file` and `read_file`, so a model cannot page a large file into its context
//! without bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes left for the reads of one call. Cheap to clone; clones share the budget.
#[derive(Debug, Clone)]
pub(crate) struct ReadBudget {
    left: Arc<AtomicU64>,
    total: u64,
}

impl ReadBudget {
    /// A budget of `total` bytes.
    pub(crate) fn new(total: u64) -> Self {
        ReadBudget {
            left: Arc::new(AtomicU64::new(total)),
            total,
        }
    }

    /// How many of `wanted` bytes are left now (a read reads at most that much, then
    /// [`Self::take`]s what it got).
    pub(crate) fn available(&self, wanted: usize) -> usize {
        let left = self.left.load(Ordering::Relaxed);
        usize::try_from(left).map_or(wanted, |left| left.min(wanted))
    }

    /// Takes up to `used` bytes, atomically; returns how many were granted (fewer when
    /// concurrent reads took the rest first — the caller then cuts its text).
    pub(crate) fn take(&self, used: usize) -> usize {
        let used = used as u64;
        let before = self
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                Some(left.saturating_sub(used))
            })
            .unwrap_or(0);
        usize::try_from(before.min(used)).unwrap_or(usize::MAX)
    }

    /// Gives back granted bytes a read did not keep.
    pub(crate) fn refund(&self, unused: usize) {
        self.left.fetch_add(unused as u64, Ordering::Relaxed);
    }

    /// The error a read gets once the budget is spent.
    pub(crate) fn spent_message(&self) -> String {
        format!(
            "this call has read its {} bytes of files; answer with what you have",
            self.total
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_budget() {
        let budget = ReadBudget::new(10);
        let other = budget.clone();
        assert_eq!(budget.available(8), 8);
        assert_eq!(budget.take(8), 8);
        assert_eq!(other.available(8), 2);
        assert_eq!(other.take(8), 2);
        assert_eq!(budget.take(1), 0);
        other.refund(2);
        assert_eq!(budget.take(5), 2);
    }
}

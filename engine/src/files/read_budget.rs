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

    /// How many of `wanted` bytes may be read now (0 when the budget is spent).
    pub(crate) fn available(&self, wanted: usize) -> usize {
        let left = self.left.load(Ordering::Relaxed);
        usize::try_from(left).map_or(wanted, |left| left.min(wanted))
    }

    /// Records `used` bytes as read.
    pub(crate) fn spend(&self, used: usize) {
        let used = used as u64;
        let _ = self
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                Some(left.saturating_sub(used))
            });
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
        budget.spend(8);
        assert_eq!(other.available(8), 2);
        other.spend(5);
        assert_eq!(budget.available(1), 0);
    }
}

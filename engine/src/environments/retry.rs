//! A failed environment build, remembered ([`Failure`]) so the next uses report it instead of
//! running the installer again, until it is due: [`RETRY_FIRST`] after the first failure,
//! doubling per consecutive failure up to [`RETRY_MAX`].
//!
//! Not here: where failures are kept (one slot per key, `Environments`), building (`build`).

use std::time::{Duration, Instant};

use super::error::EnvironmentError;
use super::{RETRY_FIRST, RETRY_MAX};

/// A failed build, remembered until it is due again.
#[derive(Debug, Clone)]
pub(super) struct Failure {
    why: EnvironmentError,
    /// How long it is remembered.
    pub(super) wait: Duration,
    /// When it is due again.
    pub(super) retry_at: Instant,
    /// Consecutive failures of this key.
    failures: u32,
}

impl Failure {
    pub(super) fn after(
        previous: Option<&Failure>,
        why: EnvironmentError,
        now: Instant,
    ) -> Failure {
        let failures = previous.map_or(1, |f| f.failures.saturating_add(1));
        let wait = RETRY_FIRST
            .saturating_mul(1u32 << (failures - 1).min(10))
            .min(RETRY_MAX);
        Failure {
            why,
            wait,
            retry_at: now + wait,
            failures,
        }
    }

    pub(super) fn due(&self, now: Instant) -> bool {
        now >= self.retry_at
    }

    /// The reason, with when it is tried again (stable: the same text until it is).
    pub(super) fn reason(&self) -> EnvironmentError {
        EnvironmentError::RetryLater {
            why: Box::new(self.why.clone()),
            wait: self.wait,
        }
    }
}

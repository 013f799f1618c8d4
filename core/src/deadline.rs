//! `Deadline`: the one wall-clock limit of a call, shared by its provider requests, retries and
//! tool calls.

use std::time::Duration;

use tokio::time::Instant;

/// A point in time after which a call's work must stop. Cheap to copy; every part of a call
/// checks the same instant, so the limit holds over everything together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Deadline(Instant);

impl Deadline {
    /// The deadline `timeout` from now.
    pub fn after(timeout: Duration) -> Self {
        Deadline(Instant::now() + timeout)
    }

    /// The deadline at `instant`.
    pub fn at(instant: Instant) -> Self {
        Deadline(instant)
    }

    /// The instant itself (for `tokio::time::timeout_at` and the providers' `CallOptions`).
    pub fn instant(self) -> Instant {
        self.0
    }

    /// Time left, zero once passed.
    pub fn remaining(self) -> Duration {
        self.0.saturating_duration_since(Instant::now())
    }

    /// Whether the deadline has passed.
    pub fn expired(self) -> bool {
        Instant::now() >= self.0
    }

    /// The earlier of this deadline and `timeout` from now (e.g. a per-tool timeout inside the
    /// call's deadline).
    pub fn min_after(self, timeout: Duration) -> Self {
        self.min(Deadline::after(timeout))
    }
}

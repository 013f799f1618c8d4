//! Per-identity abuse limits: calls per minute (a token bucket refilled continuously, so a
//! burst of at most the per-minute count) and calls in flight at once. One key or token
//! subject reaching its limit is refused (retryable, with how long to wait) while every other
//! identity keeps its own room.
//!
//! Not here: the server-wide concurrent-call limit (the core's slots).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Limits of one identity's calls; `None`: unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallerLimits {
    /// Calls started per minute.
    pub calls_per_minute: Option<u32>,
    /// Calls in flight at once.
    pub max_concurrent_calls: Option<usize>,
}

/// Most identities tracked before idle ones are forgotten (token subjects are unbounded).
const MAX_TRACKED: usize = 4096;

struct Bucket {
    tokens: f64,
    refilled: Instant,
    in_flight: Arc<Semaphore>,
    limits: CallerLimits,
}

impl Bucket {
    fn refill(&mut self, now: Instant) {
        if let Some(per_minute) = self.limits.calls_per_minute {
            let rate = f64::from(per_minute) / 60.0;
            let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
            self.tokens = (self.tokens + elapsed * rate).min(f64::from(per_minute));
        }
        self.refilled = now;
    }

    fn is_idle(&self) -> bool {
        let full = self
            .limits
            .calls_per_minute
            .is_none_or(|max| self.tokens >= f64::from(max));
        let none_running = self
            .limits
            .max_concurrent_calls
            .is_none_or(|max| self.in_flight.available_permits() == max);
        full && none_running
    }
}

/// The buckets of every identity seen.
#[derive(Default)]
pub(crate) struct Limiter {
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter").finish_non_exhaustive()
    }
}

/// Held while an identity's call runs (frees its concurrency room on drop).
#[derive(Debug)]
pub(crate) struct CallerPermit {
    _permit: Option<OwnedSemaphorePermit>,
}

impl Limiter {
    /// Takes room for one call of `identity`, or says how long to wait.
    pub(crate) fn acquire(
        &self,
        identity: &str,
        limits: CallerLimits,
    ) -> Result<CallerPermit, Duration> {
        if limits == CallerLimits::default() {
            return Ok(CallerPermit { _permit: None });
        }
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= MAX_TRACKED && !buckets.contains_key(identity) {
            for bucket in buckets.values_mut() {
                bucket.refill(now);
            }
            buckets.retain(|_, b| !b.is_idle());
        }
        let bucket = buckets
            .entry(identity.to_owned())
            .or_insert_with(|| Bucket {
                tokens: limits.calls_per_minute.map_or(0.0, f64::from),
                refilled: now,
                in_flight: Arc::new(Semaphore::new(limits.max_concurrent_calls.unwrap_or(0))),
                limits,
            });
        bucket.refill(now);
        let permit = match limits.max_concurrent_calls {
            None => None,
            Some(_) => Some(
                Arc::clone(&bucket.in_flight)
                    .try_acquire_owned()
                    .map_err(|_| Duration::from_secs(1))?,
            ),
        };
        if let Some(per_minute) = limits.calls_per_minute {
            if bucket.tokens < 1.0 {
                let rate = f64::from(per_minute.max(1)) / 60.0;
                let wait = ((1.0 - bucket.tokens) / rate).ceil().max(1.0);
                return Err(Duration::from_secs_f64(wait));
            }
            bucket.tokens -= 1.0;
        }
        Ok(CallerPermit { _permit: permit })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_beyond_the_per_minute_count_waits_and_others_are_not_affected() {
        let limiter = Limiter::default();
        let limits = CallerLimits {
            calls_per_minute: Some(2),
            max_concurrent_calls: None,
        };
        assert!(limiter.acquire("a", limits).is_ok());
        assert!(limiter.acquire("a", limits).is_ok());
        let wait = limiter.acquire("a", limits).unwrap_err();
        assert_eq!(wait, Duration::from_secs(30));
        assert!(limiter.acquire("b", limits).is_ok(), "b has its own bucket");
        tokio::time::advance(Duration::from_secs(30)).await;
        assert!(limiter.acquire("a", limits).is_ok());
    }

    #[test]
    fn concurrent_calls_are_capped_until_one_ends() {
        let limiter = Limiter::default();
        let limits = CallerLimits {
            calls_per_minute: None,
            max_concurrent_calls: Some(1),
        };
        let first = limiter.acquire("a", limits).unwrap();
        assert!(limiter.acquire("a", limits).is_err());
        drop(first);
        assert!(limiter.acquire("a", limits).is_ok());
    }
}

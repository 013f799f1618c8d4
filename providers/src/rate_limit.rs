//! Requests- and tokens-per-minute limits of one provider (`requests_per_minute`,
//! `tokens_per_minute` in `provider_config`), enforced before every attempt — retries and
//! fallbacks included, since each is a request the server counts.
//!
//! A limit is a GCRA bucket ([`governor`]) that refills evenly over the minute and holds at most
//! the minute's allowance (so up to N requests may go at once after a quiet minute). The clock is
//! tokio's. Tokens are estimated before the request is sent,
//! from the encoded body (four bytes a token, at least one); a request larger than a whole
//! minute's allowance waits for a full bucket. The answer's output tokens are not charged.
//! (The tests wait about a second of real time at most: a paused clock would need tokio's
//! `test-util`, a second feature set of tokio for the whole workspace.)
//!
//! A wait is never longer than the call's deadline: when the bucket would open only after it,
//! the attempt fails at once with a `Timeout` error that names the limit. Every wait is told to
//! the call's [`RetryObserver`](crate::RetryObserver) before it starts (the engine turns it into
//! a `log` event).
//!
//! The limiter lives in the provider, and providers are shared by every call with an equal spec
//! (`pool.rs`), so all calls to one configured provider share its limits. What is not here:
//! the server's own 429s (`retry.rs` waits their `Retry-After`).

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use serde::Serialize;

use crate::error::ProviderError;
use crate::kind::ProviderKind;
use crate::notices::{RateLimitKind, RateLimitNotice};
use crate::provider::{CallOptions, bounded};

/// The limits one provider's spec sets (both off by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct RateLimits {
    /// Most requests sent per minute.
    pub requests_per_minute: Option<NonZeroU32>,
    /// Most (estimated) prompt tokens sent per minute.
    pub tokens_per_minute: Option<NonZeroU32>,
}

/// Time since the limiter was made, on tokio's clock.
#[derive(Debug, Clone)]
struct TokioClock {
    start: tokio::time::Instant,
}

impl Clock for TokioClock {
    type Instant = Duration;

    fn now(&self) -> Duration {
        self.start.elapsed()
    }
}

type Bucket = RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<Duration>>;

/// One limit's bucket.
struct Limit {
    bucket: Bucket,
    per_minute: NonZeroU32,
    kind: RateLimitKind,
}

impl Limit {
    fn new(kind: RateLimitKind, per_minute: NonZeroU32, clock: &TokioClock) -> Self {
        Limit {
            bucket: RateLimiter::direct_with_clock(Quota::per_minute(per_minute), clock.clone()),
            per_minute,
            kind,
        }
    }

    /// Takes `n` cells when they are there; else how long until they are.
    fn try_take(&self, n: u32) -> Option<Duration> {
        // More than the bucket holds can never go at once: a whole bucket stands for it.
        let n = NonZeroU32::new(n.clamp(1, self.per_minute.get())).unwrap_or(NonZeroU32::MIN);
        match self.bucket.check_n(n) {
            Ok(Ok(())) | Err(_) => None,
            Ok(Err(not_until)) => Some(not_until.wait_time_from(self.bucket_now())),
        }
    }

    fn bucket_now(&self) -> Duration {
        // `NotUntil` measures from the limiter's own clock reading.
        self.bucket.clock().now()
    }
}

/// The limits of one provider, shared by its calls.
pub(crate) struct ProviderRateLimiter {
    provider: ProviderKind,
    limits: Vec<Limit>,
}

impl ProviderRateLimiter {
    /// The limiter for `limits` (`None` when both are off).
    pub(crate) fn new(provider: ProviderKind, limits: RateLimits) -> Option<Self> {
        let clock = TokioClock {
            start: tokio::time::Instant::now(),
        };
        let mut buckets = Vec::new();
        if let Some(n) = limits.requests_per_minute {
            buckets.push(Limit::new(RateLimitKind::Requests, n, &clock));
        }
        if let Some(n) = limits.tokens_per_minute {
            buckets.push(Limit::new(RateLimitKind::Tokens, n, &clock));
        }
        (!buckets.is_empty()).then_some(ProviderRateLimiter {
            provider,
            limits: buckets,
        })
    }

    /// Waits until a request of `body_bytes` may be sent: each limit in turn (a request cell is
    /// taken once, then the tokens). Fails at once when a wait would cross the deadline.
    pub(crate) async fn admit(
        &self,
        body_bytes: usize,
        options: &CallOptions<'_>,
    ) -> Result<(), ProviderError> {
        let tokens = u32::try_from(body_bytes.div_ceil(4)).unwrap_or(u32::MAX);
        for limit in &self.limits {
            let cells = match limit.kind {
                RateLimitKind::Requests => 1,
                RateLimitKind::Tokens => tokens,
            };
            while let Some(wait) = limit.try_take(cells) {
                let notice = RateLimitNotice {
                    provider: self.provider,
                    limit: limit.kind,
                    per_minute: limit.per_minute.get(),
                    wait,
                };
                if let Some(deadline) = options.deadline
                    && tokio::time::Instant::now() + wait >= deadline
                {
                    return Err(ProviderError::deadline_exceeded(&format!(
                        ": the provider's {notice}, past the deadline"
                    ))
                    .with_retryable(false));
                }
                tracing::debug!(
                    provider = self.provider.as_str(),
                    limit = limit.kind.as_str(),
                    wait_ms = wait.as_millis() as u64,
                    "waiting for the provider's rate limit"
                );
                if let Some(observer) = options.retry_observer {
                    observer.rate_limited(&notice);
                }
                bounded(options, async {
                    tokio::time::sleep(wait).await;
                    Ok::<(), ProviderError>(())
                })
                .await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::error::ProviderErrorKind;
    use crate::notices::{RetryNotice, RetryObserver};

    #[derive(Default)]
    struct Waits(Mutex<Vec<RateLimitNotice>>);

    impl RetryObserver for Waits {
        fn retrying(&self, _: &RetryNotice) {}
        fn rate_limited(&self, notice: &RateLimitNotice) {
            self.0.lock().unwrap().push(notice.clone());
        }
    }

    fn limiter(rpm: Option<u32>, tpm: Option<u32>) -> ProviderRateLimiter {
        let limits = RateLimits {
            requests_per_minute: rpm.and_then(NonZeroU32::new),
            tokens_per_minute: tpm.and_then(NonZeroU32::new),
        };
        ProviderRateLimiter::new(ProviderKind::Ollama, limits).unwrap()
    }

    #[test]
    fn no_limits_make_no_limiter() {
        assert!(ProviderRateLimiter::new(ProviderKind::Ollama, RateLimits::default()).is_none());
    }

    #[tokio::test]
    async fn a_full_request_bucket_waits_and_tells_the_observer() {
        let limiter = limiter(Some(60), None);
        let waits = Waits::default();
        let options = CallOptions::default().with_retry_observer(&waits);
        for _ in 0..60 {
            limiter.admit(10, &options).await.unwrap();
        }
        assert!(
            waits.0.lock().unwrap().is_empty(),
            "a minute's allowance goes at once"
        );
        // The 61st waits for the next cell, about a second.
        limiter.admit(10, &options).await.unwrap();
        let seen = waits.0.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].limit, RateLimitKind::Requests);
        assert_eq!(seen[0].per_minute, 60);
        assert!(seen[0].wait > Duration::ZERO && seen[0].wait <= Duration::from_secs(1));
        assert!(seen[0].to_string().contains("requests_per_minute = 60"));
    }

    #[tokio::test]
    async fn tokens_are_estimated_from_the_body_four_bytes_a_token() {
        let limiter = limiter(None, Some(60_000));
        let waits = Waits::default();
        let options = CallOptions::default().with_retry_observer(&waits);
        // 240 000 bytes ≈ 60 000 tokens: the whole minute's allowance, at once.
        limiter.admit(240_000, &options).await.unwrap();
        assert!(waits.0.lock().unwrap().is_empty());
        // 4000 bytes ≈ 1000 tokens more: a sixtieth of a minute later.
        limiter.admit(4000, &options).await.unwrap();
        let seen = waits.0.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0].limit, RateLimitKind::Tokens);
        assert!(seen[0].wait <= Duration::from_secs(1), "{:?}", seen[0].wait);
    }

    #[tokio::test]
    async fn a_wait_past_the_deadline_fails_at_once_naming_the_limit() {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let options = CallOptions::default().with_deadline(deadline);
        let requests = limiter(Some(1), None);
        requests.admit(10, &options).await.unwrap();
        let error = requests.admit(10, &options).await.unwrap_err();
        assert_eq!(error.kind, ProviderErrorKind::Timeout, "{error}");
        assert!(!error.retryable);
        assert!(error.message.contains("requests_per_minute = 1"), "{error}");
        // A body larger than a minute's tokens waits for a full bucket: here past the deadline.
        let tokens = limiter(None, Some(1000));
        tokens.admit(4000, &options).await.unwrap();
        let error = tokens.admit(40_000, &options).await.unwrap_err();
        assert!(
            error.message.contains("tokens_per_minute = 1000"),
            "{error}"
        );
    }
}

//! The one retry policy every provider runs its attempts through.
//!
//! A request an HTTP/2 server turned away unread (`REFUSED_STREAM`, a graceful `GOAWAY`) is sent
//! again at once, up to twice per call, without counting as an attempt.
//!
//! Retries only errors marked retryable (429 except quota, 5xx/529, connection failures and
//! drops, read timeouts, truncated streams that delivered nothing yet). Waits the server's
//! `Retry-After`/`retry-after-ms` when it sent one, else exponential backoff with jitter
//! (`backon`). Never sleeps past the call's deadline: when the wait would cross it, the call fails
//! at once with a `Timeout` error. Every attempt runs raced against the deadline and the
//! cancellation token, so a hung server cannot outlive the call. Each retry is logged at debug
//! level with provider, status and wait (never a credential) and reported to the observer.
//!
//! What is not here: classifying errors (`error.rs`) and anything about a wire format.

use std::future::Future;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use tokio::time::Instant;

use crate::error::ProviderError;
use crate::kind::ProviderKind;
use crate::notices::RetryNotice;
use crate::provider::{CallOptions, bounded};
use crate::spec::RetrySettings;

/// Requests a call may send again at once, on top of its attempts, after an HTTP/2 server
/// turned them away unread ([`ProviderError::resend_at_once`]).
const RESENDS_AT_ONCE: u32 = 2;

/// Runs `attempt` (given the 1-based attempt number) until it succeeds, fails with a
/// non-retryable error, runs out of attempts, hits the deadline or is cancelled.
pub(crate) async fn run_with_retries<T, F, Fut>(
    provider: ProviderKind,
    settings: &RetrySettings,
    options: &CallOptions<'_>,
    mut attempt: F,
) -> Result<T, ProviderError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, ProviderError>>,
{
    let max_attempts = settings.max_attempts.max(1);
    let mut backoff = ExponentialBuilder::new()
        .with_jitter()
        .with_min_delay(settings.initial_backoff)
        .with_max_delay(settings.max_backoff)
        .with_max_times(max_attempts as usize)
        .build();

    let mut number = 1;
    let mut resent = 0;
    loop {
        if options.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(ProviderError::deadline_exceeded(""));
        }
        // Boxed: a future passed by value to an async fn is stored twice in its state (the
        // argument and the `select!` that polls it), which would double the largest part of
        // every call in flight.
        // Matched where it is awaited: a named result would be kept in the retry's state
        // (192 bytes) through the back-off wait below, though it was moved out of.
        let error = match bounded(options, Box::pin(attempt(number))).await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        if error.resend_at_once && resent < RESENDS_AT_ONCE {
            // Not an attempt that failed: the server never read it (the HTTP client's body is
            // not kept for resending, so the resend is made here, from a fresh encoding).
            resent += 1;
            tracing::debug!(
                provider = provider.as_str(),
                attempt = number,
                "the server turned the request away unread; sending it again at once"
            );
            continue;
        }
        if !error.retryable || number >= max_attempts {
            tracing::debug!(
                provider = provider.as_str(),
                attempt = number,
                status = error.status,
                kind = error.kind.as_str(),
                "provider call failed, not retrying"
            );
            return Err(error);
        }

        let wait = match error.retry_after() {
            Some(requested) if requested > settings.max_retry_after => {
                tracing::debug!(
                    provider = provider.as_str(),
                    status = error.status,
                    retry_after_ms = requested.as_millis() as u64,
                    "server asked for a wait longer than max_retry_after; not retrying"
                );
                return Err(error);
            }
            Some(requested) => requested,
            None => backoff.next().unwrap_or(settings.max_backoff),
        };
        if let Some(deadline) = options.deadline
            && Instant::now() + wait >= deadline
        {
            let cause = match error.status {
                Some(status) => format!("HTTP {status} ({})", error.kind.as_str()),
                None => error.kind.as_str().to_owned(),
            };
            tracing::debug!(
                provider = provider.as_str(),
                status = error.status,
                wait_ms = wait.as_millis() as u64,
                "retry wait would cross the deadline; failing now"
            );
            let mut timeout = ProviderError::deadline_exceeded(&format!(
                ": after {cause} a retry would wait {:.1}s, past the deadline",
                wait.as_secs_f64()
            ))
            .with_request_id(error.request_id.clone())
            .with_retryable(false);
            timeout.status = error.status;
            return Err(timeout);
        }

        let notice = RetryNotice {
            provider,
            attempt: number,
            max_attempts,
            wait,
            error_kind: error.kind.clone(),
            status: error.status,
        };
        tracing::debug!(
            provider = provider.as_str(),
            attempt = number,
            max_attempts,
            status = error.status,
            kind = error.kind.as_str(),
            wait_ms = wait.as_millis() as u64,
            "retrying provider call"
        );
        if let Some(observer) = options.retry_observer {
            observer.retrying(&notice);
        }
        // Boxed: only a retry waits here, so the wait's state is not part of the future every
        // call in flight holds.
        Box::pin(sleep_cancellable(options, wait)).await?;
        number += 1;
    }
}

async fn sleep_cancellable(options: &CallOptions<'_>, wait: Duration) -> Result<(), ProviderError> {
    bounded(options, async {
        tokio::time::sleep(wait).await;
        Ok::<(), ProviderError>(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::error::ProviderErrorKind;

    fn fast() -> RetrySettings {
        RetrySettings {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(5),
            max_retry_after: Duration::from_secs(60),
        }
    }

    fn unavailable() -> ProviderError {
        ProviderError::new(ProviderErrorKind::Unavailable, "down").with_status(503)
    }

    #[tokio::test]
    async fn retryable_errors_are_retried_up_to_max_attempts() {
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = run_with_retries(
            ProviderKind::Ollama,
            &fast(),
            &CallOptions::default(),
            |_| {
                calls.fetch_add(1, Ordering::SeqCst);
                async { Err(unavailable()) }
            },
        )
        .await;
        assert_eq!(result.unwrap_err().kind, ProviderErrorKind::Unavailable);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn non_retryable_errors_fail_on_the_first_attempt() {
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = run_with_retries(
            ProviderKind::Ollama,
            &fast(),
            &CallOptions::default(),
            |_| {
                calls.fetch_add(1, Ordering::SeqCst);
                async { Err(ProviderError::new(ProviderErrorKind::Auth, "no")) }
            },
        )
        .await;
        assert_eq!(result.unwrap_err().kind, ProviderErrorKind::Auth);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn retry_after_past_the_deadline_fails_at_once_with_timeout() {
        let calls = AtomicU32::new(0);
        let options = CallOptions::default().with_deadline(Instant::now() + Duration::from_secs(5));
        let result: Result<(), _> =
            run_with_retries(ProviderKind::Openai, &fast(), &options, |_| {
                calls.fetch_add(1, Ordering::SeqCst);
                async {
                    Err(ProviderError::new(
                        ProviderErrorKind::RateLimited {
                            retry_after: Some(Duration::from_secs(30)),
                        },
                        "slow down",
                    )
                    .with_status(429))
                }
            })
            .await;
        let error = result.unwrap_err();
        assert_eq!(error.kind, ProviderErrorKind::Timeout);
        assert_eq!(error.status, Some(429));
        assert!(!error.retryable);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn observer_hears_every_retry_with_its_wait() {
        let notices = Mutex::new(Vec::new());
        let observer = |n: &RetryNotice| notices.lock().unwrap().push(n.clone());
        let options = CallOptions::default().with_retry_observer(&observer);
        let result: Result<u32, _> =
            run_with_retries(ProviderKind::Anthropic, &fast(), &options, |n| async move {
                if n < 3 {
                    Err(ProviderError::new(
                        ProviderErrorKind::RateLimited {
                            retry_after: Some(Duration::from_millis(2)),
                        },
                        "",
                    )
                    .with_status(429))
                } else {
                    Ok(n)
                }
            })
            .await;
        assert_eq!(result.unwrap(), 3);
        let notices = notices.lock().unwrap();
        assert_eq!(notices.len(), 2);
        assert_eq!(notices[0].wait, Duration::from_millis(2));
        assert_eq!(notices[1].attempt, 2);
        assert!(
            notices[0]
                .to_string()
                .starts_with("retrying after HTTP 429")
        );
    }

    #[tokio::test]
    async fn cancellation_interrupts_a_retry_wait() {
        let token = tokio_util::sync::CancellationToken::new();
        let options = CallOptions::default().with_cancel(&token);
        let settings = RetrySettings {
            initial_backoff: Duration::from_secs(3600),
            max_backoff: Duration::from_secs(3600),
            ..fast()
        };
        let result: Result<(), _> =
            run_with_retries(ProviderKind::Ollama, &settings, &options, |_| {
                token.cancel();
                async { Err(unavailable()) }
            })
            .await;
        assert_eq!(result.unwrap_err().kind, ProviderErrorKind::Cancelled);
    }
}

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
//! A server that is up but still loading its model (HTTP 503 `Loading model`,
//! [`ProviderError::server_loading`]) is not an outage: the call waits for it with its own
//! backoff (250 ms doubling to 2 s), spending no attempts, until the deadline (or, for a call
//! without one, `max_retry_after`), and says so once — an info line and one [`RetryNotice`]
//! naming the server's base URL. Still loading when that time is up, the call fails with an
//! error naming the URL.
//!
//! What is not here: classifying errors (`error.rs`) and anything about a wire format.

use std::future::Future;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use tokio::time::Instant;

use crate::error::{ProviderError, ProviderErrorKind};
use crate::kind::ProviderKind;
use crate::notices::RetryNotice;
use crate::provider::{CallOptions, bounded};
use crate::spec::RetrySettings;

/// Requests a call may send again at once, on top of its attempts, after an HTTP/2 server
/// turned them away unread ([`ProviderError::resend_at_once`]).
const RESENDS_AT_ONCE: u32 = 2;

/// The first wait for a server still loading its model; doubles up to [`LOADING_MAX_WAIT`].
const LOADING_FIRST_WAIT: Duration = Duration::from_millis(250);

/// The longest single wait for a server still loading its model.
const LOADING_MAX_WAIT: Duration = Duration::from_secs(2);

/// Time left for the last try after waiting for a loading server: a wait that would leave
/// less before the deadline is cut short, and with less than this left the call fails.
const LOADING_LAST_TRY: Duration = Duration::from_millis(250);

/// Runs `attempt` (given the 1-based attempt number) until it succeeds, fails with a
/// non-retryable error, runs out of attempts, hits the deadline or is cancelled. `server` is
/// the base URL (never with credentials), named when the server is still loading its model.
pub(crate) async fn run_with_retries<T, F, Fut>(
    provider: ProviderKind,
    server: &str,
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
    let mut loading = LoadingWait::default();
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
        if error.server_loading() {
            let wait = loading.next(provider, server, settings, options, number, &error)?;
            Box::pin(sleep_cancellable(options, wait)).await?;
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
            loading_server: None,
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

/// The waits of one call for a server still loading its model.
#[derive(Default)]
struct LoadingWait {
    /// When the call first heard the server was loading.
    since: Option<Instant>,
    /// Waits so far.
    waits: u32,
}

impl LoadingWait {
    /// The next wait after `error` (a loading answer), told once; or the error to fail with
    /// when no time is left.
    fn next(
        &mut self,
        provider: ProviderKind,
        server: &str,
        settings: &RetrySettings,
        options: &CallOptions<'_>,
        attempt: u32,
        error: &ProviderError,
    ) -> Result<Duration, ProviderError> {
        let now = Instant::now();
        let since = *self.since.get_or_insert(now);
        let until = options.deadline.unwrap_or(since + settings.max_retry_after);
        let left = until.saturating_duration_since(now);
        if left <= LOADING_LAST_TRY {
            return Err(still_loading(
                server,
                error,
                now - since,
                options.deadline.is_some(),
            ));
        }
        let backoff = LOADING_FIRST_WAIT
            .saturating_mul(1 << self.waits.min(8))
            .min(LOADING_MAX_WAIT);
        let wait = backoff.min(left - LOADING_LAST_TRY);
        if self.waits == 0 {
            let up_to = left - LOADING_LAST_TRY;
            tracing::info!(
                provider = provider.as_str(),
                server,
                wait_up_to_ms = up_to.as_millis() as u64,
                "the server at {server} is still loading its model; waiting up to {:.0} s",
                up_to.as_secs_f64().ceil()
            );
            if let Some(observer) = options.retry_observer {
                observer.retrying(&RetryNotice {
                    provider,
                    attempt,
                    max_attempts: settings.max_attempts.max(1),
                    wait: up_to,
                    error_kind: error.kind.clone(),
                    status: error.status,
                    loading_server: Some(server.to_owned()),
                });
            }
        } else {
            tracing::debug!(
                provider = provider.as_str(),
                server,
                wait_ms = wait.as_millis() as u64,
                "the server is still loading its model; waiting again"
            );
        }
        self.waits += 1;
        Ok(wait)
    }
}

/// The error of a call whose server was still loading its model when its time ran out.
fn still_loading(
    server: &str,
    error: &ProviderError,
    waited: Duration,
    deadline: bool,
) -> ProviderError {
    let (kind, until) = if deadline {
        (ProviderErrorKind::Timeout, "the call's deadline")
    } else {
        (ProviderErrorKind::Unavailable, "max_retry_after")
    };
    let mut failed = ProviderError::new(
        kind,
        format!(
            "the server at {server} was still loading its model after {:.1}s of waiting \
             (HTTP 503: {}), and {until} leaves no time to wait longer; start the call once the \
             server has loaded its model (llama-server: GET /health answers 200), or give the \
             call more time",
            waited.as_secs_f64(),
            error.message
        ),
    )
    .with_request_id(error.request_id.clone())
    .with_retryable(false);
    failed.status = error.status;
    failed
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
            "http://server",
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
            "http://server",
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
        let result: Result<(), _> = run_with_retries(
            ProviderKind::Openai,
            "http://server",
            &fast(),
            &options,
            |_| {
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
            },
        )
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
        let result: Result<u32, _> = run_with_retries(
            ProviderKind::Anthropic,
            "http://server",
            &fast(),
            &options,
            |n| async move {
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
            },
        )
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

    fn loading() -> ProviderError {
        ProviderError::new(ProviderErrorKind::Unavailable, "Loading model").with_status(503)
    }

    #[tokio::test]
    async fn a_server_loading_its_model_is_waited_for_past_the_attempts_and_told_once() {
        let notices = Mutex::new(Vec::new());
        let observer = |n: &RetryNotice| notices.lock().unwrap().push(n.clone());
        let options = CallOptions::default()
            .with_deadline(Instant::now() + Duration::from_secs(10))
            .with_retry_observer(&observer);
        let calls = AtomicU32::new(0);
        let result: Result<u32, _> = run_with_retries(
            ProviderKind::Openai,
            "http://server/v1",
            &fast(),
            &options,
            |_| {
                let call = calls.fetch_add(1, Ordering::SeqCst);
                async move { if call < 5 { Err(loading()) } else { Ok(call) } }
            },
        )
        .await;
        assert_eq!(result.unwrap(), 5, "five loading answers, then the answer");
        let notices = notices.lock().unwrap();
        assert_eq!(notices.len(), 1, "told once: {notices:?}");
        let told = notices[0].to_string();
        assert!(
            told.starts_with(
                "the server at http://server/v1 is still loading its model; waiting up to"
            ),
            "{told}"
        );
    }

    #[tokio::test]
    async fn a_server_that_never_finishes_loading_fails_at_the_deadline_naming_its_url() {
        let start = Instant::now();
        let options = CallOptions::default().with_deadline(start + Duration::from_millis(1500));
        let result: Result<(), _> = run_with_retries(
            ProviderKind::Openai,
            "http://server/v1",
            &fast(),
            &options,
            |_| async { Err(loading()) },
        )
        .await;
        let error = result.unwrap_err();
        assert_eq!(error.kind, ProviderErrorKind::Timeout);
        assert_eq!(error.status, Some(503));
        assert!(
            error
                .message
                .contains("the server at http://server/v1 was still loading its model"),
            "{error}"
        );
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(1000) && took <= Duration::from_millis(1500),
            "waited until shortly before the deadline, not past it: {took:?}"
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
        let result: Result<(), _> = run_with_retries(
            ProviderKind::Ollama,
            "http://server",
            &settings,
            &options,
            |_| {
                token.cancel();
                async { Err(unavailable()) }
            },
        )
        .await;
        assert_eq!(result.unwrap_err().kind, ProviderErrorKind::Cancelled);
    }
}

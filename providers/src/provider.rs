//! The [`Provider`] trait and what a caller hands it per call ([`CallOptions`]: deadline,
//! cancellation, stream sink, retry observer).
//!
//! Wire details live in the provider modules; retrying lives in `retry.rs`. This module is only
//! the contract the engine programs against.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::{ProviderError, ProviderErrorKind};
use crate::kind::ProviderKind;
use crate::mode_names::Feature;
use crate::types::StreamSink;
use crate::types::{ChatRequest, ChatResponse};

/// One chat model behind one API. Implementations retry internally with the one retry policy,
/// honour the deadline and cancellation in [`CallOptions`], and stream text deltas to the sink
/// when one is given. Dropping the returned future cancels the HTTP request.
#[async_trait]
pub trait Provider: Send + Sync {
    /// Which API this provider speaks.
    fn kind(&self) -> ProviderKind;

    /// The model every call goes to.
    fn model(&self) -> &str;

    /// The largest image (decoded bytes) the model is to be shown as `ChatMessage::Image`;
    /// `None` when its configuration says it takes none (`vision = false`). A caller keeps
    /// other images out of its requests instead of having the request refused. By default
    /// [`DEFAULT_MAX_IMAGE_BYTES`](crate::DEFAULT_MAX_IMAGE_BYTES): the API decides the rest.
    fn image_bytes_limit(&self) -> Option<usize> {
        Some(crate::images::DEFAULT_MAX_IMAGE_BYTES as usize)
    }

    /// Runs one chat turn.
    async fn chat(
        &self,
        request: ChatRequest,
        options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        self.chat_borrowed(&request, options).await
    }

    /// Runs one chat turn on a borrowed request, so a caller that keeps one conversation for
    /// a whole run (appending to its messages each turn) never copies it.
    async fn chat_borrowed(
        &self,
        request: &ChatRequest,
        options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError>;
}

/// What the retry policy tells an observer before it waits and tries again.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// The kind of the provider whose attempt failed.
    pub provider: ProviderKind,
    /// The attempt that failed (1-based).
    pub attempt: u32,
    /// The attempts allowed in all, the first included (the spec's retry settings).
    pub max_attempts: u32,
    /// How long the policy waits before the next attempt.
    pub wait: Duration,
    /// What the failed attempt returned.
    pub error_kind: ProviderErrorKind,
    /// Its HTTP status, if the server answered.
    pub status: Option<u16>,
}

impl std::fmt::Display for RetryNotice {
    /// E.g. `retrying after HTTP 429 (rate_limited), waiting 1.2s (attempt 2 of 3)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cause = match self.status {
            Some(status) => format!("HTTP {status} ({})", self.error_kind.as_str()),
            None => self.error_kind.as_str().to_owned(),
        };
        write!(
            f,
            "retrying after {cause}, waiting {:.1}s (attempt {} of {})",
            self.wait.as_secs_f64(),
            self.attempt + 1,
            self.max_attempts
        )
    }
}

/// What a provider tells its caller when a refusal moved it to another mode.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeNotice {
    /// The provider's kind.
    pub provider: ProviderKind,
    /// The model the refusal is remembered for (per server + model).
    pub model: String,
    /// What was refused: the answer's schema or the tools.
    pub feature: Feature,
    /// The config spelling of the mode the server refused.
    pub from: String,
    /// The config spelling of the next mode on the ladder, used for this server + model from
    /// now on.
    pub to: String,
    /// The server's words (status and message, redacted and shortened).
    pub reason: String,
}

impl fmt::Display for ModeNotice {
    /// E.g. `the server refused structured output mode json_schema (HTTP 500: ...); using
    /// json_object for gemma from now on`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the server refused {} mode {} ({}); using {} for {} from now on",
            self.feature.as_str(),
            self.from,
            self.reason,
            self.to,
            self.model
        )
    }
}

/// Told about every retry, e.g. so the engine can emit a `log` event.
pub trait RetryObserver: Send + Sync {
    /// Called before the policy sleeps `notice.wait` and tries again.
    fn retrying(&self, notice: &RetryNotice);

    /// Called when the server refused a structured-output or tool mode and the turn is tried
    /// again in the next one (remembered for the server+model from then on).
    fn mode_changed(&self, notice: &ModeNotice) {
        let _ = notice;
    }

    /// Called before a request waits for the provider's own `requests_per_minute` or
    /// `tokens_per_minute` limit (`rate_limit.rs`).
    fn rate_limited(&self, notice: &crate::rate_limit::RateLimitNotice) {
        let _ = notice;
    }

    /// Called when a [`FallbackChain`](crate::FallbackChain) sends the turn to its next
    /// provider (`fallback.rs`).
    fn fell_back(&self, notice: &crate::fallback::FallbackNotice) {
        let _ = notice;
    }
}

impl<F: Fn(&RetryNotice) + Send + Sync> RetryObserver for F {
    fn retrying(&self, notice: &RetryNotice) {
        self(notice)
    }
}

/// Per-call options. `Default` is: no deadline, no cancellation, no streaming, no observer.
#[derive(Clone, Copy, Default)]
pub struct CallOptions<'a> {
    /// The call fails with [`ProviderErrorKind::Timeout`] at this instant, including any retry
    /// waits; a retry that would have to wait past it fails at once.
    pub deadline: Option<Instant>,
    /// Cancelling this token ends the call with [`ProviderErrorKind::Cancelled`].
    pub cancel: Option<&'a CancellationToken>,
    /// When set, the provider streams and hands every text delta to the sink.
    pub stream: Option<&'a dyn StreamSink>,
    /// When set, told about every retry before the wait.
    pub retry_observer: Option<&'a dyn RetryObserver>,
}

impl<'a> CallOptions<'a> {
    /// Sets the deadline.
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Sets the cancellation token.
    pub fn with_cancel(mut self, cancel: &'a CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Streams text deltas to `sink`.
    pub fn with_stream(mut self, sink: &'a dyn StreamSink) -> Self {
        self.stream = Some(sink);
        self
    }

    /// Reports retries to `observer`.
    pub fn with_retry_observer(mut self, observer: &'a dyn RetryObserver) -> Self {
        self.retry_observer = Some(observer);
        self
    }
}

impl std::fmt::Debug for CallOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("deadline", &self.deadline)
            .field("cancel", &self.cancel.is_some())
            .field("stream", &self.stream.is_some())
            .field("retry_observer", &self.retry_observer.is_some())
            .finish()
    }
}

//! The [`Provider`] trait and what a caller hands it per call ([`CallOptions`]: deadline,
//! cancellation, stream sink, retry observer).
//!
//! Wire details live in the provider modules; retrying lives in `retry.rs`. This module is only
//! the contract the engine programs against.

use async_trait::async_trait;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::kind::ProviderKind;
use crate::mode_names::OutputMode;
use crate::modes::SchemaDelivery;
use crate::notices::RetryObserver;
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

    /// How every turn of a conversation — one that offers tools when `with_tools` — will carry
    /// a request's response schema, in the modes this provider uses now and with the skill's
    /// `hint`. A caller whose model reads the schema from the wire need not state it in the
    /// instructions too. [`SchemaDelivery::NotEveryTurn`] by default: a provider that cannot
    /// tell leaves the schema in the instructions.
    fn schema_every_turn(&self, with_tools: bool, hint: Option<OutputMode>) -> SchemaDelivery {
        let _ = (with_tools, hint);
        SchemaDelivery::NotEveryTurn
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

/// Per-call options. `Default` is: no deadline, no cancellation, no streaming, no observer.
#[derive(Clone, Copy, Default)]
pub struct CallOptions<'a> {
    /// The call fails with [`ProviderErrorKind::Timeout`](crate::ProviderErrorKind::Timeout) at
    /// this instant, including any retry waits; a retry that would have to wait past it fails at
    /// once.
    pub deadline: Option<Instant>,
    /// Cancelling this token ends the call with
    /// [`ProviderErrorKind::Cancelled`](crate::ProviderErrorKind::Cancelled).
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

/// Races `work` against the deadline and the cancellation token.
pub(crate) async fn bounded<T>(
    options: &CallOptions<'_>,
    work: impl Future<Output = Result<T, ProviderError>>,
) -> Result<T, ProviderError> {
    let deadline = async {
        match options.deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    let cancelled = async {
        match options.cancel {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        _ = cancelled => Err(ProviderError::cancelled()),
        _ = deadline => Err(ProviderError::deadline_exceeded("")),
        result = work => result,
    }
}

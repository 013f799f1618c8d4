//! The one error type every provider returns, classified into [`ProviderErrorKind`]s with a
//! retryable flag, so the retry policy and the engine decide by kind, never by string matching.
//!
//! Also here: the shared classification of HTTP statuses and headers (`Retry-After`,
//! `retry-after-ms`, request ids) that all three provider modules use. What does *not* live
//! here: the retry loop itself (`retry.rs`).
//!
//! Invariant: no credential ever reaches a `ProviderError`. Messages come from server bodies and
//! transport errors, which never carry our request headers; [`ProviderError::redact`] scrubs a
//! secret anyway in case a server echoes it back.

use std::fmt;
use std::time::Duration;

use http::{HeaderMap, StatusCode};
use secrecy::{ExposeSecret, SecretString};

/// Longest server message kept in an error; bodies can be whole HTML pages.
const MAX_MESSAGE_CHARS: usize = 500;

/// What went wrong, as the engine needs to know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderErrorKind {
    /// 429: too many requests. `retry_after` is the server's requested wait, if it sent one.
    RateLimited {
        /// The wait the server asked for (`retry-after-ms` or `Retry-After`).
        retry_after: Option<Duration>,
    },
    /// 429 `insufficient_quota` (or similar billing refusal): waiting does not help.
    QuotaExceeded,
    /// The server is down or overloaded (5xx, 529), or the connection dropped.
    Unavailable,
    /// No connection could be made to the server at all (refused, no route, name not found):
    /// nothing is listening where the provider's base URL points. Retried like `Unavailable`
    /// (a server may be starting), but never the skill's fault.
    Unreachable,
    /// The call's deadline passed, the server was too slow (read timeout, 408), or a retry would
    /// have had to wait past the deadline.
    Timeout,
    /// 401/403: the credential is missing, wrong or lacks permission.
    Auth,
    /// 404: the model (or endpoint) does not exist.
    NotFound,
    /// The request was rejected as invalid (400, 422, ...).
    BadRequest,
    /// The prompt does not fit the model's context window (or the body is too large).
    ContextTooLong,
    /// The server answered with something that is not the API's shape.
    MalformedResponse,
    /// The response stream ended before the model finished.
    Truncated,
    /// The caller cancelled the call.
    Cancelled,
    /// The provider configuration is unusable (bad header value, bad base URL, ...).
    Config,
    /// The request carries input this provider is declared not to take, refused before
    /// anything is sent: an image for a model with `vision = false`, an image over
    /// `max_image_bytes`, an image URL to an API that takes image bytes only (Ollama).
    UnsupportedInput,
}

impl ProviderErrorKind {
    /// A stable snake_case name for logs and metrics.
    pub fn as_str(&self) -> &'static str {
        match self {
            ProviderErrorKind::RateLimited { .. } => "rate_limited",
            ProviderErrorKind::QuotaExceeded => "quota_exceeded",
            ProviderErrorKind::Unavailable => "unavailable",
            ProviderErrorKind::Unreachable => "unreachable",
            ProviderErrorKind::Timeout => "timeout",
            ProviderErrorKind::Auth => "auth",
            ProviderErrorKind::NotFound => "not_found",
            ProviderErrorKind::BadRequest => "bad_request",
            ProviderErrorKind::ContextTooLong => "context_too_long",
            ProviderErrorKind::MalformedResponse => "malformed_response",
            ProviderErrorKind::Truncated => "truncated",
            ProviderErrorKind::Cancelled => "cancelled",
            ProviderErrorKind::Config => "config",
            ProviderErrorKind::UnsupportedInput => "unsupported_input",
        }
    }
}

/// A failed provider call. `Display` and `Debug` never contain a credential.
#[derive(Debug, Clone)]
pub struct ProviderError {
    /// What went wrong, as the engine maps it onto an A2E error code (timeout, auth, rate
    /// limit, refused mode, ...).
    pub kind: ProviderErrorKind,
    /// Human-readable detail (server message or transport error), truncated.
    pub message: String,
    /// Whether trying the same request again may succeed. The retry policy already retried
    /// when this is true; the engine may still use it to pick an error code.
    pub retryable: bool,
    /// The HTTP status, when the server answered.
    pub status: Option<u16>,
    /// The provider's request id, when the server sent one.
    pub request_id: Option<String>,
    /// Set when the server refused a feature the request used (structured output or tools)
    /// and no other mode was left to try: the call failed on the server's dialect, not on an
    /// outage.
    pub refused: Option<crate::mode_names::Feature>,
    /// Set when an HTTP/2 server turned the request away before reading it (the stream refused
    /// with `REFUSED_STREAM`, or the connection closing gracefully with `GOAWAY`): sending it again
    /// on a new stream is safe and needs no wait (RFC 9113, section 8.7).
    pub resend_at_once: bool,
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind.as_str())?;
        if let Some(status) = self.status {
            write!(f, " (HTTP {status})")?;
        }
        if let ProviderErrorKind::RateLimited {
            retry_after: Some(wait),
        } = &self.kind
        {
            write!(f, " (retry after {:.1}s)", wait.as_secs_f64())?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ProviderError {}

impl ProviderError {
    /// An error of `kind` with the default retryability for that kind.
    pub fn new(kind: ProviderErrorKind, message: impl Into<String>) -> Self {
        let retryable = matches!(
            kind,
            ProviderErrorKind::RateLimited { .. }
                | ProviderErrorKind::Unavailable
                | ProviderErrorKind::Unreachable
                | ProviderErrorKind::Truncated
        );
        ProviderError {
            kind,
            message: truncate(message.into()),
            retryable,
            status: None,
            request_id: None,
            refused: None,
            resend_at_once: false,
        }
    }

    /// Sets the HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Marks the error as the server refusing `feature` (never retried as an outage).
    pub fn with_refused(mut self, feature: crate::mode_names::Feature) -> Self {
        self.refused = Some(feature);
        // The request used something this server does not do: not an outage.
        self.kind = ProviderErrorKind::BadRequest;
        self.retryable = false;
        self
    }

    /// Overrides the retryable flag.
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// Sets the request id.
    pub fn with_request_id(mut self, request_id: Option<String>) -> Self {
        self.request_id = request_id;
        self
    }

    /// The call was cancelled by the caller.
    pub fn cancelled() -> Self {
        ProviderError::new(ProviderErrorKind::Cancelled, "the call was cancelled")
    }

    /// The call's deadline passed.
    pub fn deadline_exceeded(detail: &str) -> Self {
        ProviderError::new(
            ProviderErrorKind::Timeout,
            format!("the call's deadline passed{detail}"),
        )
    }

    /// The server's body did not have the expected shape.
    pub fn malformed(message: impl Into<String>) -> Self {
        ProviderError::new(ProviderErrorKind::MalformedResponse, message)
    }

    /// The stream ended before the model finished. Retryable only while nothing was delivered
    /// to the caller's stream sink (a retry would otherwise repeat text the caller has seen).
    pub fn truncated(message: impl Into<String>, delivered_anything: bool) -> Self {
        ProviderError::new(ProviderErrorKind::Truncated, message)
            .with_retryable(!delivered_anything)
    }

    /// The server answered with a failure mid-stream after the status line said 200.
    pub(crate) fn from_stream_error(message: impl Into<String>, delivered_anything: bool) -> Self {
        let message = message.into();
        let lower = message.to_ascii_lowercase();
        let kind = if lower.contains("overloaded") || lower.contains("unavailable") {
            ProviderErrorKind::Unavailable
        } else if lower.contains("rate") && lower.contains("limit") {
            ProviderErrorKind::RateLimited { retry_after: None }
        } else {
            ProviderErrorKind::Unavailable
        };
        ProviderError::new(kind, message).with_retryable(!delivered_anything)
    }

    /// Classifies a transport (reqwest) error: connect failures are `Unreachable`, dropped
    /// connections `Unavailable`, read/connect timeouts `Timeout`, all retryable. Body read errors
    /// count as dropped connections: we parse JSON ourselves, so reqwest's "decode" errors only
    /// ever mean the body stopped arriving.
    pub(crate) fn from_transport(err: &reqwest::Error) -> Self {
        // reqwest's Display includes the URL, which never carries the key (keys travel in
        // headers), but strip it anyway: base URLs may embed tokens in paths on some gateways.
        let message = err.without_url_ref_text();
        if turned_away_unread(err) {
            let mut error = ProviderError::new(ProviderErrorKind::Unavailable, message);
            error.resend_at_once = true;
            error
        } else if err.is_timeout() {
            ProviderError::new(ProviderErrorKind::Timeout, message).with_retryable(true)
        } else if err.is_builder() {
            ProviderError::new(ProviderErrorKind::Config, message)
        } else if err.is_connect() {
            ProviderError::new(ProviderErrorKind::Unreachable, message)
        } else {
            ProviderError::new(ProviderErrorKind::Unavailable, message)
        }
    }

    /// Classifies an HTTP error response from its status, headers, the error's `type`/`code`
    /// strings, the wait its body asked for and its message, as parsed from the body by the
    /// provider module.
    ///
    /// A 429 that names a wait is a rate limit even when its message speaks of quota: Gemini
    /// answers every per-minute limit with "You exceeded your current quota" and a
    /// `RetryInfo.retryDelay`; only a quota refusal without a wait is [`QuotaExceeded`].
    ///
    /// [`QuotaExceeded`]: ProviderErrorKind::QuotaExceeded
    pub(crate) fn from_http(
        status: StatusCode,
        headers: &HeaderMap,
        error_codes: &[&str],
        body_retry_after: Option<Duration>,
        message: String,
    ) -> Self {
        let code = status.as_u16();
        let has_code = |wanted: &str| error_codes.iter().any(|c| c.eq_ignore_ascii_case(wanted));
        let lower = message.to_ascii_lowercase();
        let context_too_long = has_code("context_length_exceeded")
            || lower.contains("context length")
            || lower.contains("context_length")
            || lower.contains("context window")
            || lower.contains("prompt is too long")
            || lower.contains("too many tokens")
            // Gemini: "The input token count (N) exceeds the maximum number of tokens allowed".
            || lower.contains("exceeds the maximum number of tokens");
        let kind = match code {
            429 if has_code("insufficient_quota")
                || (body_retry_after.is_none()
                    && lower.contains("exceeded your current quota")) =>
            {
                ProviderErrorKind::QuotaExceeded
            }
            429 => ProviderErrorKind::RateLimited {
                retry_after: retry_after(headers).or(body_retry_after),
            },
            401 | 403 => ProviderErrorKind::Auth,
            404 => ProviderErrorKind::NotFound,
            408 => ProviderErrorKind::Timeout,
            413 => ProviderErrorKind::ContextTooLong,
            400..=499 if context_too_long => ProviderErrorKind::ContextTooLong,
            500..=599 => ProviderErrorKind::Unavailable,
            _ => ProviderErrorKind::BadRequest,
        };
        // 408 (request timeout) is the server giving up on a slow upload: worth another try.
        let retryable = matches!(
            kind,
            ProviderErrorKind::RateLimited { .. } | ProviderErrorKind::Unavailable
        ) || code == 408;
        let message = if message.trim().is_empty() {
            status.canonical_reason().unwrap_or("").to_owned()
        } else {
            message
        };
        ProviderError::new(kind, message)
            .with_status(code)
            .with_retryable(retryable)
            .with_request_id(request_id(headers))
    }

    /// Replaces every occurrence of each secret in the message, in case a server echoed one.
    pub fn redact<'a>(mut self, secrets: impl IntoIterator<Item = &'a SecretString>) -> Self {
        for secret in secrets {
            let text = secret.expose_secret();
            if !text.is_empty() && self.message.contains(text) {
                self.message = self.message.replace(text, "[REDACTED]");
            }
        }
        self
    }

    /// Whether this is a server that is up but still loading its model: HTTP 503 whose message
    /// says so — llama.cpp's `llama-server` answers `{"error": {"code": 503, "message": "Loading
    /// model", "type": "unavailable_error"}}` until the model is in memory; Hugging Face's TGI and
    /// Inference API say `Model … is currently loading`. Waiting helps, for longer than a retry
    /// budget allows (`retry.rs`).
    pub fn server_loading(&self) -> bool {
        self.status == Some(503) && self.message.to_ascii_lowercase().contains("loading")
    }

    /// The server's requested wait, when this is a rate limit that named one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self.kind {
            ProviderErrorKind::RateLimited { retry_after } => retry_after,
            _ => None,
        }
    }
}

/// Reads the server's requested wait: `retry-after-ms` (milliseconds, OpenAI) first, then
/// `Retry-After` in seconds. HTTP-date values are ignored (no provider we speak sends them).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let parse = |name: &str| -> Option<f64> {
        let value = headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()?;
        (value.is_finite() && value >= 0.0).then_some(value)
    };
    if let Some(ms) = parse("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    parse("retry-after").map(Duration::from_secs_f64)
}

/// The provider's request id from the usual headers.
/// Whether `err` is an HTTP/2 server turning the request away unread: its stream reset with
/// `REFUSED_STREAM`, or a graceful `GOAWAY` (`NO_ERROR`) before the stream was processed.
fn turned_away_unread(err: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        if let Some(h2) = cause.downcast_ref::<h2::Error>() {
            let reason = h2.reason();
            return h2.is_remote()
                && ((h2.is_reset() && reason == Some(h2::Reason::REFUSED_STREAM))
                    || (h2.is_go_away() && reason == Some(h2::Reason::NO_ERROR)));
        }
        source = cause.source();
    }
    false
}

pub fn request_id(headers: &HeaderMap) -> Option<String> {
    ["x-request-id", "request-id"]
        .iter()
        .find_map(|name| headers.get(*name)?.to_str().ok())
        .map(str::to_owned)
}

fn truncate(mut message: String) -> String {
    if let Some((cut, _)) = message.char_indices().nth(MAX_MESSAGE_CHARS) {
        message.truncate(cut);
        message.push('…');
    }
    message
}

/// reqwest's error text without its URL.
trait WithoutUrlText {
    fn without_url_ref_text(&self) -> String;
}

impl WithoutUrlText for reqwest::Error {
    fn without_url_ref_text(&self) -> String {
        use std::error::Error as _;
        let mut text = if self.is_timeout() {
            "timed out".to_owned()
        } else if self.is_connect() {
            "connection failed".to_owned()
        } else if self.is_body() || self.is_decode() {
            "reading the response body failed".to_owned()
        } else if self.is_request() {
            "sending the request failed".to_owned()
        } else {
            "HTTP error".to_owned()
        };
        // The source chain carries the useful part (e.g. "connection reset by peer").
        let mut source = self.source();
        while let Some(cause) = source {
            let cause_text = cause.to_string();
            if !text.contains(&cause_text) {
                text.push_str(": ");
                text.push_str(&cause_text);
            }
            source = cause.source();
        }
        text
    }
}

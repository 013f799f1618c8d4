//! HTTP plumbing shared by the wires and the generic provider: building the one pooled
//! `reqwest` client (no redirects, no per-spec timeouts), sensitive header values, a stream sink
//! wrapper that remembers whether anything was delivered, and the typed error envelope the APIs
//! share.
//!
//! What is not here: any provider's request or response shape.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::HeaderValue;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use crate::error::ProviderError;
use crate::types::StreamSink;

/// Answer bytes all calls on one HTTP/2 connection may have in flight.
const HTTP2_CONNECTION_WINDOW: u32 = 64 << 20;

/// Answer bytes one call on an HTTP/2 connection may have in flight.
const HTTP2_STREAM_WINDOW: u32 = 4 << 20;

/// Builds an HTTP client the providers of a pool share: one negotiating the protocol (HTTP/1.1
/// on `http://`, HTTP/2 or 1.1 by ALPN on `https://`), and one speaking HTTP/2 from the first
/// byte when `http2_prior_knowledge` (a pool builds each at most once). It carries no timeouts:
/// those differ per spec and are applied per request (`http_provider.rs`), so distinct timeouts
/// never mean distinct clients or connection pools. Redirects are not followed: an API never
/// needs them, and following one could steer a request past the override policy's base-URL
/// allow-list to an internal host.
/// Idle connections kept per server for reuse (more are closed as their calls finish).
pub const POOL_MAX_IDLE_PER_HOST: usize = 32;
/// How long an idle connection is kept.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn build_http_client(
    http2_prior_knowledge: bool,
) -> Result<reqwest::Client, ProviderError> {
    // Idle keep-alive connections are bounded per server and closed after a short quiet: a
    // burst of 200 calls otherwise left 200 sockets open for 90 s (issue 30).
    let builder = reqwest::Client::builder()
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .pool_max_idle_per_host(POOL_MAX_IDLE_PER_HOST)
        .redirect(reqwest::redirect::Policy::none());
    let builder = if http2_prior_knowledge {
        // Thousands of calls share one connection, so its receive window must hold all their
        // answers at once: with a small window the server has to cut them into many small DATA
        // frames, which h2's flood protection (half the window) counts against the connection
        // and answers by closing it (ENHANCE_YOUR_CALM). Windows are credit, not buffers: memory
        // is used only for answer bytes received and not yet read.
        builder
            .http2_prior_knowledge()
            .http2_initial_connection_window_size(HTTP2_CONNECTION_WINDOW)
            .http2_initial_stream_window_size(HTTP2_STREAM_WINDOW)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .http2_keep_alive_while_idle(false)
    } else {
        builder
    };
    builder
        .build()
        .map_err(|e| ProviderError::from_transport(&e))
}

/// Adds `Authorization: Bearer <key>` (marked sensitive) when a key is configured: the
/// credential of the OpenAI-style APIs and of Ollama behind an authenticating proxy.
pub(crate) fn bearer_auth(
    key: Option<&SecretString>,
    headers: &mut http::HeaderMap,
) -> Result<(), ProviderError> {
    if let Some(key) = key {
        headers.insert(http::header::AUTHORIZATION, secret_header("Bearer ", key)?);
    }
    Ok(())
}

/// A header value built from a secret, marked sensitive. The error names no value.
pub(crate) fn secret_header(
    prefix: &str,
    secret: &SecretString,
) -> Result<HeaderValue, ProviderError> {
    let mut value =
        HeaderValue::from_str(&format!("{prefix}{}", secret.expose_secret())).map_err(|_| {
            ProviderError::new(
                crate::ProviderErrorKind::Config,
                "the API key contains characters not allowed in an HTTP header",
            )
        })?;
    value.set_sensitive(true);
    Ok(value)
}

/// Wraps the caller's sink for one attempt and remembers whether any text went out, which
/// decides whether a broken stream may be retried.
pub(crate) struct TrackingSink<'a> {
    inner: Option<&'a dyn StreamSink>,
    delivered: AtomicBool,
}

impl<'a> TrackingSink<'a> {
    pub(crate) fn new(inner: Option<&'a dyn StreamSink>) -> Self {
        TrackingSink {
            inner,
            delivered: AtomicBool::new(false),
        }
    }

    /// Forwards a non-empty delta.
    pub(crate) fn text(&self, delta: &str) {
        if delta.is_empty() {
            return;
        }
        if let Some(sink) = self.inner {
            self.delivered.store(true, Ordering::Relaxed);
            sink.text_delta(delta);
        }
    }

    /// Whether anything reached the caller in this attempt.
    pub(crate) fn delivered(&self) -> bool {
        self.delivered.load(Ordering::Relaxed)
    }
}

/// What a wire extracts from an error body: the error's `type`/`code` strings, its message, and
/// a wait the body asked for (Gemini's `RetryInfo.retryDelay`; the others use headers).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ErrorBody {
    pub codes: Vec<String>,
    pub message: String,
    pub retry_after: Option<std::time::Duration>,
}

/// The `{"error": ...}` envelope the three APIs share in some form: OpenAI and Anthropic send
/// an object with `type`/`code`/`message`, Ollama a plain string.
#[derive(Deserialize)]
pub(crate) struct ErrorEnvelope {
    pub error: ErrorDetail,
}

/// The inside of an [`ErrorEnvelope`].
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum ErrorDetail {
    Text(String),
    Object {
        #[serde(default, rename = "type")]
        kind: Option<String>,
        /// A string on OpenAI, sometimes a number on compatible servers.
        #[serde(default)]
        code: Option<serde_json::Value>,
        #[serde(default)]
        message: Option<String>,
    },
}

impl From<ErrorDetail> for ErrorBody {
    fn from(detail: ErrorDetail) -> Self {
        match detail {
            ErrorDetail::Text(message) => ErrorBody {
                message,
                ..ErrorBody::default()
            },
            ErrorDetail::Object {
                kind,
                code,
                message,
            } => {
                let code = code.map(|c| match c {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                });
                ErrorBody {
                    codes: kind.into_iter().chain(code).collect(),
                    message: message.unwrap_or_default(),
                    retry_after: None,
                }
            }
        }
    }
}

/// Reads an error body: the envelope when it is one, else the body as text.
pub(crate) fn parse_error_envelope(body: &[u8]) -> ErrorBody {
    match serde_json::from_slice::<ErrorEnvelope>(body) {
        Ok(envelope) => envelope.error.into(),
        Err(_) => ErrorBody {
            message: lossy_text(body),
            ..ErrorBody::default()
        },
    }
}

/// The error an API put where an answer or chunk should be (`{"error": ...}` under status
/// 200), if `body` is one.
pub(crate) fn in_band_error(body: &[u8]) -> Option<ErrorBody> {
    serde_json::from_slice::<ErrorEnvelope>(body)
        .ok()
        .map(|e| e.error.into())
}

/// The body as lossy UTF-8, for error bodies that are not the API's JSON shape.
pub(crate) fn lossy_text(body: &[u8]) -> String {
    String::from_utf8_lossy(body).trim().to_owned()
}

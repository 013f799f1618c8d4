//! HTTP plumbing shared by the provider modules: building the pooled `reqwest` client (connect
//! and read timeouts, no redirects), sending a JSON POST and classifying a non-2xx answer, a
//! stream sink wrapper that remembers whether anything was delivered, and sensitive header
//! values.
//!
//! What is not here: any provider's request or response shape.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::HeaderValue;
use secrecy::{ExposeSecret, SecretString};

use crate::error::ProviderError;
use crate::provider::StreamSink;
use crate::spec::Timeouts;

/// Builds the HTTP client one or more providers share. Redirects are not followed: an API never
/// needs them, and following one could steer a request past the override policy's base-URL
/// allow-list to an internal host.
pub(crate) fn build_http_client(timeouts: &Timeouts) -> Result<reqwest::Client, ProviderError> {
    reqwest::Client::builder()
        .connect_timeout(timeouts.connect)
        .read_timeout(timeouts.read)
        .pool_idle_timeout(Duration::from_secs(90))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| ProviderError::from_transport(&e))
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

/// What a provider module extracts from an error body: the error's `type`/`code` strings and
/// its message.
pub(crate) struct ErrorBody {
    pub codes: Vec<String>,
    pub message: String,
}

/// Sends `request`; a non-2xx answer becomes a classified [`ProviderError`] using `parse_error`
/// to read the body.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    parse_error: fn(&[u8]) -> ErrorBody,
) -> Result<reqwest::Response, ProviderError> {
    let response = request
        .send()
        .await
        .map_err(|e| ProviderError::from_transport(&e))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let headers = response.headers().clone();
    // A body that cannot be read still leaves the status to classify by.
    let body = response.bytes().await.unwrap_or_default();
    let parsed = parse_error(&body);
    let codes: Vec<&str> = parsed.codes.iter().map(String::as_str).collect();
    Err(ProviderError::from_http(
        status,
        &headers,
        &codes,
        parsed.message,
    ))
}

/// The body as lossy UTF-8, for error bodies that are not the API's JSON shape.
pub(crate) fn lossy_text(body: &[u8]) -> String {
    String::from_utf8_lossy(body).trim().to_owned()
}

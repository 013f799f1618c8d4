//! [`HttpProvider`]: the one [`Provider`] implementation, generic over a [`Wire`]. It owns what
//! every chat API shares: the request built once per call (URL parsed and headers built once
//! per provider, body serialized once per call), the one retry policy, sending through the
//! shared pooled HTTP client with per-request timeouts, reading streams under size limits with
//! delivery tracking, cancellation and the deadline (via `retry.rs`), and redaction of errors.
//!
//! Successful bodies are never scrubbed: they go to the caller, not to a log. Error messages,
//! which can reach logs and clients, are redacted of every secret of the spec.
//!
//! What is not here: anything about one API's JSON (the wires).

use std::marker::PhantomData;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue};

use crate::error::{ProviderError, ProviderErrorKind};
use crate::frames::{BodyLimits, read_events, read_whole};
use crate::provider::{CallOptions, Provider};
use crate::retry::run_with_retries;
use crate::spec::{ProviderKind, ProviderSpec};
use crate::transport::TrackingSink;
use crate::types::{ChatRequest, ChatResponse};
use crate::wire::{StreamDecoder, Wire};

/// A provider speaking wire `W` over the shared HTTP client.
pub(crate) struct HttpProvider<W: Wire> {
    spec: ProviderSpec,
    http: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    limits: BodyLimits,
    wire: PhantomData<fn() -> W>,
}

impl<W: Wire> HttpProvider<W> {
    /// Builds the provider: parses the endpoint URL and builds the headers once.
    pub(crate) fn new(spec: ProviderSpec, http: reqwest::Client) -> Result<Self, ProviderError> {
        let url = reqwest::Url::parse(&format!("{}{}", spec.base_url, W::PATH)).map_err(|_| {
            ProviderError::new(ProviderErrorKind::Config, "the base URL is not usable")
        })?;
        let mut headers = spec.header_map();
        W::auth_headers(&spec, &mut headers)?;
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        Ok(HttpProvider {
            spec,
            http,
            url,
            headers,
            limits: BodyLimits::default(),
            wire: PhantomData,
        })
    }

    /// Replaces the body size limits (tests use small ones).
    #[cfg(test)]
    pub(crate) fn with_limits(mut self, limits: BodyLimits) -> Self {
        self.limits = limits;
        self
    }

    /// One attempt: send, classify the status, read the answer.
    async fn attempt(
        &self,
        body: Bytes,
        state: &W::CallState,
        options: &CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let timeouts = &self.spec.timeouts;
        let mut request = reqwest::Request::new(reqwest::Method::POST, self.url.clone());
        *request.headers_mut() = self.headers.clone();
        *request.body_mut() = Some(body.into());
        // The wait for the response head covers connecting and the server's first bytes.
        let head_wait = timeouts.connect + timeouts.read;
        let response = match tokio::time::timeout(head_wait, self.http.execute(request)).await {
            Ok(sent) => sent.map_err(|e| ProviderError::from_transport(&e))?,
            Err(_) => return Err(no_answer(head_wait)),
        };
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            // A body that cannot be read still leaves the status to classify by.
            let body = read_whole(response, timeouts.read, self.limits)
                .await
                .unwrap_or_default();
            let parsed = W::parse_error(&body);
            let codes: Vec<&str> = parsed.codes.iter().map(String::as_str).collect();
            return Err(ProviderError::from_http(
                status,
                &headers,
                &codes,
                parsed.message,
            ));
        }
        let header_id = crate::error::request_id(response.headers());
        let mut reply = match options.stream {
            None => {
                let body = read_whole(response, timeouts.read, self.limits).await?;
                W::decode_whole(&body, state)?
            }
            Some(_) => {
                let sink = TrackingSink::new(options.stream);
                let mut decoder = W::decoder(state);
                read_events(
                    response,
                    timeouts.read,
                    self.limits,
                    W::FRAMING,
                    &sink,
                    |event| decoder.event(event, &sink),
                )
                .await?;
                decoder.finish(&sink)?
            }
        };
        if header_id.is_some() {
            reply.request_id = header_id;
        }
        Ok(reply)
    }
}

fn no_answer(waited: Duration) -> ProviderError {
    ProviderError::new(
        ProviderErrorKind::Timeout,
        format!(
            "no response from the server within {} ms (connect_timeout_ms + read_timeout_ms)",
            waited.as_millis()
        ),
    )
    .with_retryable(true)
}

#[async_trait]
impl<W: Wire> Provider for HttpProvider<W> {
    fn kind(&self) -> ProviderKind {
        self.spec.kind
    }

    fn model(&self) -> &str {
        &self.spec.model
    }

    async fn chat(
        &self,
        request: ChatRequest,
        options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let (body, state) = W::request(&self.spec, &request, options.stream.is_some());
        let body = Bytes::from(serde_json::to_vec(&body).map_err(|e| {
            ProviderError::new(
                ProviderErrorKind::BadRequest,
                format!("the request cannot be encoded: {e}"),
            )
        })?);
        drop(request);
        let state = &state;
        let options_ref = &options;
        run_with_retries(self.spec.kind, &self.spec.retry, &options, |_| {
            let body = body.clone();
            async move {
                self.attempt(body, state, options_ref)
                    .await
                    .map_err(|e| e.redact(self.spec.secrets()))
            }
        })
        .await
    }
}

/// Runs a decoder over already-received events; shared by wires whose whole body is one event
/// (Ollama's non-streamed answer is its `done` line).
pub(crate) fn decode_single<D: StreamDecoder>(
    mut decoder: D,
    data: &[u8],
) -> Result<ChatResponse, ProviderError> {
    let sink = TrackingSink::new(None);
    // When this was not the end marker, `finish` reports the truncation.
    decoder.event(crate::wire::StreamEvent { name: "", data }, &sink)?;
    decoder.finish(&sink)
}

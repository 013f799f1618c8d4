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
use crate::hints;
use crate::kind::{ProviderKind, with_provider_kinds};
use crate::modes::{Feature, ModeCell, Modes, OutputMode, SchemaDelivery, TurnPlan};
use crate::notices::ModeNotice;
use crate::provider::{CallOptions, Provider};
use crate::rate_limit::ProviderRateLimiter;
use crate::refusal::{Sent, refused_feature};
use crate::retry::run_with_retries;
use crate::spec::ProviderSpec;
use crate::transport::TrackingSink;
use crate::types::{ChatRequest, ChatResponse};
use crate::wire::{StreamDecoder, Wire};

/// A provider speaking wire `W` over the shared HTTP client.
pub(crate) struct HttpProvider<W: Wire> {
    spec: ProviderSpec,
    http: reqwest::Client,
    url: reqwest::Url,
    /// The URL of streamed calls (the same as `url` but for wires that name streaming in the
    /// path, Gemini's).
    stream_url: reqwest::Url,
    headers: HeaderMap,
    limits: BodyLimits,
    /// The structured-output and tool modes this server+model accepts (shared, process-wide).
    modes: std::sync::Arc<ModeCell>,
    /// The spec's requests- and tokens-per-minute limits, shared by every call.
    rate_limiter: Option<ProviderRateLimiter>,
    wire: PhantomData<fn() -> W>,
}

impl<W: Wire> HttpProvider<W> {
    /// Builds the provider: parses the endpoint URL and builds the headers once.
    pub(crate) fn new(spec: ProviderSpec, http: reqwest::Client) -> Result<Self, ProviderError> {
        let endpoint = |streaming: bool| {
            let path = W::path(&spec.model, streaming);
            reqwest::Url::parse(&format!("{}{path}", spec.base_url)).map_err(|_| {
                ProviderError::new(ProviderErrorKind::Config, "the base URL is not usable")
            })
        };
        let (url, stream_url) = (endpoint(false)?, endpoint(true)?);
        let mut headers = spec.header_map();
        W::auth_headers(spec.wire_settings(), &mut headers)?;
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let modes = ModeCell::shared(
            spec.kind.capabilities(),
            &spec.base_url,
            &spec.model,
            spec.output_mode,
            spec.tool_mode,
        );
        let rate_limiter = ProviderRateLimiter::new(spec.kind, spec.rate_limits);
        Ok(HttpProvider {
            rate_limiter,
            spec,
            http,
            url,
            stream_url,
            headers,
            limits: BodyLimits::default(),
            modes,
            wire: PhantomData,
        })
    }

    /// Replaces the body size limits (tests use small ones).
    #[cfg(test)]
    pub(crate) fn with_limits(mut self, limits: BodyLimits) -> Self {
        self.limits = limits;
        self
    }

    /// A failure to send or to read the head. With `http2_prior_knowledge`, a server that does
    /// not speak HTTP/2 without negotiation fails every request at the connection (an invalid
    /// frame, a closed stream), which the transport's words do not make obvious: say so.
    fn transport_error(&self, error: &reqwest::Error) -> ProviderError {
        let mut failure = ProviderError::from_transport(error);
        if failure.kind == ProviderErrorKind::Unreachable {
            // What a person needs to act: where Skillet looked, and what says where to look.
            failure.message.push_str(&hints::unreachable(&self.spec));
        }
        if self.spec.http2_prior_knowledge
            && failure.kind == ProviderErrorKind::Unavailable
            && !failure.resend_at_once
        {
            failure.message.push_str(
                " (this provider sends HTTP/2 without negotiating it, `http2_prior_knowledge`: \
                 if the server at its base URL speaks only HTTP/1.1, every request fails so)",
            );
        }
        failure
    }

    /// One attempt: send, classify the status, read the answer.
    ///
    /// Its future is part of every call in flight, so what it does after the wait for the
    /// response head is kept out of it: the request is built by a plain function (a local
    /// built here would keep its storage for the whole attempt), and reading the answer —
    /// whole, streamed or refused — is boxed, allocated once the head has come.
    async fn attempt(
        &self,
        body: Bytes,
        state: &W::CallState,
        sent: Sent,
        options: &CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let timeouts = &self.spec.timeouts;
        // The wait for the response head covers connecting and the server's first bytes.
        let head_wait = timeouts.connect + timeouts.read;
        let sending = self.http.execute(self.request(body, options));
        let response = match tokio::time::timeout(head_wait, sending).await {
            Ok(sent) => sent.map_err(|e| self.transport_error(&e))?,
            Err(_) => return Err(no_answer(head_wait)),
        };
        if !response.status().is_success() {
            return Err(Box::pin(self.refused(response, sent)).await);
        }
        let header_id = crate::error::request_id(response.headers());
        let mut reply = match options.stream {
            None => {
                // Boxed as well: the read starts when the head has come, so the future a call
                // holds while it waits for the server does not carry the read's state too.
                let body = Box::pin(read_whole(response, timeouts.read, self.limits)).await?;
                W::decode_whole(&body, state)?
            }
            Some(_) => {
                let sink = TrackingSink::new(options.stream);
                Box::pin(read_stream::<W>(
                    response,
                    timeouts.read,
                    self.limits,
                    state,
                    &sink,
                ))
                .await?
            }
        };
        if header_id.is_some() {
            reply.request_id = header_id;
        }
        Ok(reply)
    }

    /// The POST of one attempt.
    fn request(&self, body: Bytes, options: &CallOptions<'_>) -> reqwest::Request {
        let url = match options.stream {
            Some(_) => &self.stream_url,
            None => &self.url,
        };
        let mut request = reqwest::Request::new(reqwest::Method::POST, url.clone());
        *request.headers_mut() = self.headers.clone();
        // A body reqwest cannot copy: it keeps a copy of a reusable one (and of the request's
        // headers) until the answer, to resend it itself. A call in flight then holds neither;
        // `retry.rs` resends what an HTTP/2 server turned away, encoded again.
        *request.body_mut() = Some(reqwest::Body::wrap(http_body_util::Full::new(body)));
        request
    }

    /// The error of an answer whose status is not a success, classified by its status, headers
    /// and body.
    async fn refused(&self, response: reqwest::Response, sent: Sent) -> ProviderError {
        let status = response.status();
        let headers = response.headers().clone();
        // A body that cannot be read still leaves the status to classify by.
        let body = read_whole(response, self.spec.timeouts.read, self.limits)
            .await
            .unwrap_or_default();
        let parsed = W::parse_error(&body);
        let codes: Vec<&str> = parsed.codes.iter().map(String::as_str).collect();
        let mut error =
            ProviderError::from_http(status, &headers, &codes, parsed.retry_after, parsed.message);
        if error.kind == ProviderErrorKind::Auth {
            error.message.push_str(&hints::refused_key(&self.spec));
        }
        match refused_feature(status.as_u16(), &body, sent) {
            Some(feature) => error.with_refused(feature),
            None => error,
        }
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

    fn image_bytes_limit(&self) -> Option<usize> {
        let images = self.spec.images;
        images.vision.then_some(images.max_image_bytes as usize)
    }

    fn schema_every_turn(&self, with_tools: bool, hint: Option<OutputMode>) -> SchemaDelivery {
        TurnPlan::schema_every_turn(
            self.spec.kind.capabilities(),
            self.modes.current(hint),
            with_tools,
        )
    }

    async fn chat_borrowed(
        &self,
        request: &ChatRequest,
        options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        self.spec
            .images
            .check(request, &self.spec.model, W::IMAGE_URLS)?;
        loop {
            let modes = self.modes.current(request.output_mode_hint);
            let plan = TurnPlan::new(self.spec.kind.capabilities(), modes, request, || {
                crate::toolshim::union_schema(request)
            });
            // Prompted tools: the conversation as a server without tools reads it (a copy,
            // made only in that mode).
            let prompted = plan
                .prompted_tools
                .then(|| Box::new(crate::toolshim::prompted_request(request)));
            let sent_request = prompted.as_deref().unwrap_or(request);
            match self.send(sent_request, &plan, &options).await {
                Ok(response) => {
                    return Ok(crate::text_reply::finish_response(response, &plan, request));
                }
                Err(error) => {
                    let Some(feature) = error.refused else {
                        return Err(error);
                    };
                    // "Failed to parse grammar" refuses this schema, not the mode: another
                    // skill's schema may well pass, so it is not kept across processes.
                    let lasting = !error.message.to_ascii_lowercase().contains("grammar");
                    let Some(next) = self.modes.step_down(modes, feature, lasting) else {
                        return Err(error);
                    };
                    self.tell_mode_change(&options, feature, modes, next, &error);
                }
            }
        }
    }
}

impl<W: Wire> HttpProvider<W> {
    /// One turn in one plan, with the retry policy.
    async fn send(
        &self,
        request: &ChatRequest,
        plan: &TurnPlan,
        options: &CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let (body, state) = W::request(
            self.spec.wire_settings(),
            request,
            plan,
            options.stream.is_some(),
        );
        let sent = Sent {
            structured_output: plan.sends_structured_output(),
            tools: plan.native_tools,
        };
        let (body, state) = (&body, &state);
        let options_ref = options;
        run_with_retries(
            self.spec.kind,
            &self.spec.base_url,
            &self.spec.retry,
            options,
            |_| {
                // Encoded per attempt (the body borrows the request): no copy of the bytes is held
                // while the call waits for its answer, only in case a retry needs them.
                let bytes = skillet_json::to_vec(body).map(Bytes::from).map_err(|e| {
                    ProviderError::new(
                        ProviderErrorKind::BadRequest,
                        format!("the request cannot be encoded: {e}"),
                    )
                });
                async move {
                    let bytes = bytes?;
                    if let Some(limiter) = &self.rate_limiter {
                        limiter.admit(bytes.len(), options_ref).await?;
                    }
                    self.attempt(bytes, state, sent, options_ref)
                        .await
                        .map_err(|e| e.redact(self.spec.secrets()))
                }
            },
        )
        .await
    }

    /// Logs and reports a move to other modes after a refusal.
    fn tell_mode_change(
        &self,
        options: &CallOptions<'_>,
        feature: Feature,
        from: Modes,
        to: Modes,
        error: &ProviderError,
    ) {
        let name = |m: Modes| match feature {
            Feature::StructuredOutput => m.output.as_str(),
            Feature::Tools => m.tools.as_str(),
        };
        let mut reason: String = error.to_string().chars().take(160).collect();
        if reason.len() < error.to_string().len() {
            reason.push('…');
        }
        let notice = ModeNotice {
            provider: self.spec.kind,
            model: self.spec.model.clone(),
            feature,
            from: name(from).to_owned(),
            to: name(to).to_owned(),
            reason,
        };
        tracing::info!(provider = self.spec.kind.as_str(), "{notice}");
        if let Some(observer) = options.retry_observer {
            observer.mode_changed(&notice);
        }
    }
}

/// Reads a streamed 2xx answer through `W`'s framing and decoder under `limits` (also the
/// fuzzing entry's way in).
pub(crate) async fn read_stream<W: Wire>(
    response: reqwest::Response,
    stall: Duration,
    limits: BodyLimits,
    state: &W::CallState,
    sink: &TrackingSink<'_>,
) -> Result<ChatResponse, ProviderError> {
    let mut decoder = W::decoder(state);
    read_events(response, stall, limits, W::FRAMING, sink, |event| {
        decoder.event(event, sink)
    })
    .await?;
    decoder.finish(sink)
}

/// The constructor dispatch, from the kind table (`kind.rs`), here because it builds this module's provider: a provider of a kind for `spec`.
macro_rules! define_provider_build {
    ($($(#[$doc:meta])* $variant:ident => $wire:ty,)*) => {
        impl ProviderKind {
            /// A provider of this kind for `spec` on the shared HTTP client.
            pub(crate) fn build(
                self,
                spec: ProviderSpec,
                http: reqwest::Client,
            ) -> Result<std::sync::Arc<dyn Provider>, ProviderError> {
                Ok(match self {
                    $(ProviderKind::$variant => {
                        std::sync::Arc::new(HttpProvider::<$wire>::new(spec, http)?)
                    })*
                })
            }
        }
    };
}

with_provider_kinds!(define_provider_build);

#[cfg(test)]
#[path = "http_provider_tests.rs"]
mod tests;

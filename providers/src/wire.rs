//! The crate-private [`Wire`] trait: everything that differs between two chat APIs, and nothing
//! else. One implementation per API lives in its own folder, every folder the same shape
//! (`mod.rs` the `Wire` impl, `request.rs`, `response.rs`, `stream.rs`); the generic
//! `HttpProvider` (`http_provider.rs`) runs every one of them with the same retry, send,
//! streaming, cancellation, deadline and redaction code. What two wires share lives here, so no
//! wire imports another.
//!
//! A wire maps a [`ChatRequest`] to its **typed** request body (serde structs, never `json!`),
//! decodes a whole response body, decodes a stream event by event, and reads its error bodies.
//! It does no I/O.
//!
//! What is not here: HTTP, retries, framing of streams into lines or SSE events (`frames.rs`).

use std::borrow::Cow;

use http::HeaderMap;
use secrecy::SecretString;
use serde::Serialize;

use crate::error::ProviderError;
use crate::modes::{Capabilities, TurnPlan};
use crate::transport::{ErrorBody, TrackingSink, bearer_auth};
use crate::types::{ChatRequest, ChatResponse, Hints};

/// Static facts about one provider kind; [`ProviderKind`](crate::ProviderKind)'s tables read
/// them, so they are written once, next to the wire code.
#[derive(Debug)]
/// The part of a provider's settings a wire reads. A view narrower than `ProviderSpec`, so the
/// wires do not depend on the spec module, whose kind table is built from the wires.
#[derive(Clone, Copy)]
pub(crate) struct WireSettings<'a> {
    /// The model to ask for.
    pub(crate) model: &'a str,
    /// The API key, when the endpoint takes one.
    pub(crate) api_key: Option<&'a SecretString>,
    /// Sampling hints a request leaves unset.
    pub(crate) default_hints: &'a Hints,
    /// Anthropic's `anthropic-version` header value.
    pub(crate) anthropic_version: &'a str,
    /// The endpoint is OpenAI's own API, not an OpenAI-compatible server.
    pub(crate) official_openai: bool,
    /// Mark the prompt's stable prefix for the provider's cache (where the API is asked to).
    pub(crate) prompt_cache: bool,
    /// How much the model reasons (each wire sends its own API's setting).
    pub(crate) reasoning: &'a crate::types::Reasoning,
}

pub(crate) struct KindInfo {
    /// The `provider_name` spelling (kebab-case, as serde spells the enum variant).
    pub name: &'static str,
    /// The base URL used when a config names none (`None`: the kind needs one).
    pub default_base_url: Option<&'static str>,
    /// Whether a spec without an API key is refused.
    pub requires_key: bool,
    /// The environment variable an ad-hoc provider of this kind conventionally reads its key
    /// from (e.g. `OPENAI_API_KEY`).
    pub conventional_key_env: Option<&'static str>,
    /// What the API can do about structured output (the negotiation reads it).
    pub modes: Capabilities,
}

/// How a streamed response is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Server-sent events: `event:`/`data:` lines, an empty line ends an event.
    Sse,
    /// One JSON document per line.
    Ndjson,
}

/// Whether a decoder wants more events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Keep reading.
    More,
    /// The response is complete; stop reading.
    Done,
}

/// One event of a stream: the SSE event name (empty for NDJSON and unnamed SSE events) and its
/// data (the SSE `data:` lines joined, or one NDJSON line).
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamEvent<'a> {
    pub name: &'a str,
    pub data: &'a [u8],
}

/// Assembles one streamed response.
pub(crate) trait StreamDecoder: Send {
    /// Takes in one event; text deltas go to `sink` as they arrive. An in-stream error event
    /// fails the attempt.
    fn event(
        &mut self,
        event: StreamEvent<'_>,
        sink: &TrackingSink<'_>,
    ) -> Result<Flow, ProviderError>;

    /// The response, once the stream ended (after [`Flow::Done`] or at end of body). A stream
    /// that ended before the API's end marker is a truncation error.
    fn finish(self, sink: &TrackingSink<'_>) -> Result<ChatResponse, ProviderError>;
}

/// One chat API. Implementations are unit types; every method is a pure mapping.
pub(crate) trait Wire: Send + Sync + 'static {
    /// Name, default base URL and credential rule of the kind.
    const INFO: KindInfo;
    /// How streamed responses are framed.
    const FRAMING: Framing;
    /// The path appended to the base URL (e.g. `/chat/completions`), unless [`Wire::path`]
    /// says otherwise.
    const PATH: &'static str;

    /// Whether the API fetches an image given by URL (else it takes image bytes only, and a
    /// request with an image URL is refused before it is sent).
    const IMAGE_URLS: bool = true;

    /// The typed request body; it may borrow from the request it is built from (it is
    /// serialized at once, never kept).
    type Body<'a>: Serialize + Send + Sync;
    /// What decoding needs to know about the request it answers (e.g. an answer-tool shape).
    type CallState: Send + Sync;
    /// The stream decoder.
    type Decoder: StreamDecoder;

    /// The path appended to the base URL for `model`, whole or streamed. Called once per
    /// provider for each of the two (`HttpProvider::new` keeps both URLs), never per turn.
    /// Default: [`Wire::PATH`] either way, borrowed. Gemini names the model and the streaming
    /// in its path (`/v1beta/models/{model}:streamGenerateContent?alt=sse`).
    fn path(model: &str, streaming: bool) -> Cow<'static, str> {
        let _ = (model, streaming);
        Cow::Borrowed(Self::PATH)
    }

    /// Adds the credential and API-version headers (the spec's extra headers are added by the
    /// provider). Header values built from secrets must be marked sensitive. Default:
    /// `Authorization: Bearer <key>` when a key is configured (the OpenAI-style APIs, and Ollama
    /// behind an authenticating proxy).
    fn auth_headers(
        settings: WireSettings<'_>,
        headers: &mut HeaderMap,
    ) -> Result<(), ProviderError> {
        bearer_auth(settings.api_key, headers)
    }

    /// Maps the request to the API's body, expressing structured output and tools as `plan`
    /// says for this turn (`modes.rs`).
    fn request<'a>(
        settings: WireSettings<'a>,
        request: &'a ChatRequest,
        plan: &'a TurnPlan,
        stream: bool,
    ) -> (Self::Body<'a>, Self::CallState);

    /// Decodes a whole (non-streamed) 2xx body.
    fn decode_whole(body: &[u8], state: &Self::CallState) -> Result<ChatResponse, ProviderError>;

    /// A decoder for one streamed attempt.
    fn decoder(state: &Self::CallState) -> Self::Decoder;

    /// Reads a non-2xx body: the error's `type`/`code` strings and its message.
    fn parse_error(body: &[u8]) -> ErrorBody;
}

/// Tool errors go back as text for APIs whose tool messages have no error flag. A successful
/// result is borrowed as is.
pub(crate) fn tool_result_text(content: &str, is_error: bool) -> Cow<'_, str> {
    if is_error {
        Cow::Owned(format!("Error: {content}"))
    } else {
        Cow::Borrowed(content)
    }
}

/// Runs a decoder over already-received events; shared by wires whose whole body is one event
/// (a non-streamed answer that is its stream's last line).
pub(crate) fn decode_single<D: StreamDecoder>(
    mut decoder: D,
    data: &[u8],
) -> Result<ChatResponse, ProviderError> {
    let sink = TrackingSink::new(None);
    // When this was not the end marker, `finish` reports the truncation.
    decoder.event(StreamEvent { name: "", data }, &sink)?;
    decoder.finish(&sink)
}

//! Anthropic Messages (`POST {base}/v1/messages`, SSE when streaming): the `Wire` (crate-private,
//! `wire.rs`) for the `anthropic` kind.
//!
//! Anthropic specifics: `max_tokens` is required (default [`DEFAULT_MAX_TOKENS`]), the system
//! text is a top-level field, tool calls are `tool_use` blocks and their results are
//! `tool_result` blocks inside a `user` message, streamed tool input arrives as
//! `input_json_delta` fragments, and structured output goes through a forced tool
//! ([`ANSWER_TOOL`]) whose input is the answer.
//!
//! Prompt caching (`prompt_cache`, on unless a spec turns it off): `cache_control` breakpoints
//! on the last tool (the tools are the start of the cached prefix), on the system prompt (sent
//! as one text block to carry it), and from the second turn on the last block of the
//! conversation, so each turn reads the prefix the one before wrote. Three of the API's four
//! breakpoints; a prefix shorter than the model's minimum is simply not cached.
//!
//! The folder has every wire's shape: this file is the `Wire` impl (the kind's facts, headers,
//! error bodies); `request.rs` the typed request body; `response.rs` the whole answer;
//! `stream.rs` the SSE events; `thinking_tests.rs` extended thinking across all three.
//! What is not here: HTTP, retries, stream framing (the shared `http_provider.rs`,
//! `frames.rs`), anything of another wire.

mod request;
mod response;
mod stream;
#[cfg(test)]
mod thinking_tests;

use http::HeaderMap;

use self::request::{WireRequest, to_wire_request};
use self::response::{AnswerShape, decode_whole};
use self::stream::EventDecoder;
use crate::error::{ProviderError, ProviderErrorKind};
pub use crate::modes::ANSWER_TOOL;
use crate::modes::{Capabilities, OutputMode, TurnPlan};
use crate::transport::{ErrorBody, parse_error_envelope, secret_header};
use crate::types::{ChatRequest, ChatResponse};
use crate::wire::{Framing, KindInfo, Wire, WireSettings};

/// `max_tokens` sent when neither the request nor the spec sets one (the API requires it).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Anthropic Messages.
pub(crate) struct Anthropic;

impl Wire for Anthropic {
    const INFO: KindInfo = KindInfo {
        name: "anthropic",
        default_base_url: Some("https://api.anthropic.com"),
        requires_key: true,
        conventional_key_env: Some("ANTHROPIC_API_KEY"),
        modes: Capabilities {
            name: "anthropic",
            output_ladder: &[OutputMode::Tool, OutputMode::Prompted],
            grammar: false,
            strict_subset: false,
            // The forced answer tool is the API's structured output.
            json_modes: false,
            answer_tool: true,
            // Read back by this wire itself (`response.rs`).
            generic_answer_tool: false,
        },
    };
    const FRAMING: Framing = Framing::Sse;
    const PATH: &'static str = "/v1/messages";

    type Body<'a> = WireRequest<'a>;
    type CallState = AnswerShape;
    type Decoder = EventDecoder;

    /// The key goes in `x-api-key`, the API version in `anthropic-version`.
    fn auth_headers(spec: WireSettings<'_>, headers: &mut HeaderMap) -> Result<(), ProviderError> {
        if let Some(key) = spec.api_key {
            headers.insert("x-api-key", secret_header("", key)?);
        }
        let version = http::HeaderValue::from_str(spec.anthropic_version).map_err(|_| {
            ProviderError::new(ProviderErrorKind::Config, "bad anthropic_version value")
        })?;
        headers.insert("anthropic-version", version);
        Ok(())
    }

    fn request<'a>(
        spec: WireSettings<'a>,
        request: &'a ChatRequest,
        plan: &'a TurnPlan,
        stream: bool,
    ) -> (WireRequest<'a>, AnswerShape) {
        to_wire_request(spec, request, plan, stream)
    }

    fn decode_whole(body: &[u8], answer: &AnswerShape) -> Result<ChatResponse, ProviderError> {
        decode_whole(body, answer)
    }

    fn decoder(answer: &AnswerShape) -> EventDecoder {
        EventDecoder::new(*answer)
    }

    fn parse_error(body: &[u8]) -> ErrorBody {
        parse_error_envelope(body)
    }
}

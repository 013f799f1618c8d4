//! Ollama's native chat API (`POST {base}/api/chat`, NDJSON when streaming): the [`Wire`] for
//! the `ollama` kind.
//!
//! Ollama specifics: `stream` must be sent explicitly (it defaults to true), structured output
//! goes in `format` as a JSON Schema, sampling hints go in `options` (`num_predict` for the
//! token limit), tool-call arguments are JSON objects and each call arrives whole, tool results
//! carry `tool_name`, and a failure mid-stream is an `{"error": ...}` line under status 200. The
//! non-streamed answer is a single `done` line, decoded by the same decoder. A thinking model's
//! `message.thinking` (`think: true`) becomes the response's `reasoning`, never its text.
//!
//! The folder has every wire's shape: this file is the `Wire` impl (the kind's facts, error
//! bodies); `request.rs` the typed request body; `response.rs` an answer line, whole or
//! streamed; `stream.rs` the line decoder; `tags.rs` the models a server has (`GET /api/tags`).
//! What is not here: HTTP, retries, stream framing (the shared `http_provider.rs`, `frames.rs`),
//! anything of another wire.

mod request;
mod response;
mod stream;
mod tags;

pub use self::tags::{OllamaModelsError, ollama_models};

use self::request::{WireRequest, to_wire_request};
use self::response::decode_whole;
use self::stream::LineDecoder;
use crate::error::ProviderError;
use crate::modes::{Capabilities, OutputMode, TurnPlan};
use crate::transport::{ErrorBody, parse_error_envelope};
use crate::types::{ChatRequest, ChatResponse};
use crate::wire::{Framing, KindInfo, Wire, WireSettings};

/// Ollama's `/api/chat`.
pub(crate) struct Ollama;

impl Wire for Ollama {
    const INFO: KindInfo = KindInfo {
        name: "ollama",
        default_base_url: Some("http://127.0.0.1:11434"),
        requires_key: false,
        conventional_key_env: None,
        modes: Capabilities {
            name: "ollama",
            output_ladder: &[
                OutputMode::JsonSchema,
                OutputMode::JsonObject,
                OutputMode::Prompted,
            ],
            grammar: true,
            strict_subset: false,
            json_modes: true,
            // No `tool_choice`: an answer tool cannot be forced.
            answer_tool: false,
            generic_answer_tool: false,
        },
    };
    const FRAMING: Framing = Framing::Ndjson;
    const PATH: &'static str = "/api/chat";
    const IMAGE_URLS: bool = false;

    type Body<'a> = WireRequest<'a>;
    type CallState = ();
    type Decoder = LineDecoder;

    fn request<'a>(
        spec: WireSettings<'a>,
        request: &'a ChatRequest,
        plan: &'a TurnPlan,
        stream: bool,
    ) -> (WireRequest<'a>, ()) {
        (to_wire_request(spec, request, plan, stream), ())
    }

    fn decode_whole(body: &[u8], _: &()) -> Result<ChatResponse, ProviderError> {
        decode_whole(body)
    }

    fn decoder(_: &()) -> LineDecoder {
        LineDecoder::default()
    }

    fn parse_error(body: &[u8]) -> ErrorBody {
        parse_error_envelope(body)
    }
}

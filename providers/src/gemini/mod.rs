//! Google Gemini (`POST {base}/v1beta/models/{model}:generateContent`, and
//! `:streamGenerateContent?alt=sse` when streaming): the `Wire` (crate-private, `wire.rs`) for
//! the `gemini` kind.
//!
//! Gemini specifics: the model and the streaming are in the path, not the body (the one wire
//! that overrides [`Wire::path`]); the key goes in the `x-goog-api-key` header, never in the URL
//! (the API also takes `?key=`, which would put it in every log of every proxy); the
//! conversation is `contents` of `user`/`model` turns made of `parts`; the system prompt is
//! `systemInstruction`; tools are one `functionDeclarations` list whose parameters go as
//! `parametersJsonSchema` (full JSON Schema, where `parameters` takes only an OpenAPI subset);
//! calls are `functionCall` parts with object `args`, answered by `functionResponse` parts
//! (`{"output": …}` or `{"error": …}`) in a `user` turn; structured output is
//! `generationConfig.responseMimeType: application/json` with `responseJsonSchema`; reasoning
//! is `generationConfig.thinkingConfig` (`thinking_budget_tokens` → `thinkingBudget`,
//! `reasoning_effort` → `thinkingLevel`, with `includeThoughts` so the thought summary comes
//! back as the response's `reasoning`). A thinking model's `thoughtSignature`s are kept as
//! [`ThinkingBlock::ThoughtSignature`](crate::ThinkingBlock::ThoughtSignature) and sent back
//! on the parts they came with, as the API requires of function-calling turns.
//!
//!
//! The folder has every wire's shape: this file is the `Wire` impl (the kind's facts, its path
//! and key header); `request.rs` the typed request body; `response.rs` a
//! `GenerateContentResponse` and the error body; `stream.rs` the decoder that reads a whole
//! answer and a stream alike (a streamed answer is a series of whole responses). What is not
//! here: HTTP, retries, stream framing (the shared `http_provider.rs`, `frames.rs`), anything
//! of another wire.

mod request;
mod response;
mod stream;

use std::borrow::Cow;

use http::HeaderMap;

use self::request::{WireRequest, to_wire_request};
use self::response::{decode_whole, parse_error};
use self::stream::ResponseDecoder;
use crate::error::ProviderError;
use crate::modes::{Capabilities, OutputMode, TurnPlan};
use crate::transport::{ErrorBody, secret_header};
use crate::types::{ChatRequest, ChatResponse};
use crate::wire::{Framing, KindInfo, Wire, WireSettings};

/// Google Gemini (the Gemini Developer API's REST surface).
pub(crate) struct Gemini;

impl Wire for Gemini {
    const INFO: KindInfo = KindInfo {
        name: "gemini",
        default_base_url: Some("https://generativelanguage.googleapis.com"),
        requires_key: true,
        conventional_key_env: Some("GEMINI_API_KEY"),
        modes: Capabilities {
            name: "gemini",
            output_ladder: &[
                OutputMode::JsonSchema,
                OutputMode::JsonObject,
                OutputMode::Prompted,
            ],
            // Gemini before 3 refuses a JSON response type beside function calling: enforce the
            // schema only where no tools are offered or the answer is due (as on a grammar
            // server), and a refusal steps the mode down (`refusal.rs`).
            grammar: true,
            strict_subset: false,
            json_modes: true,
            answer_tool: false,
            generic_answer_tool: false,
        },
    };
    const FRAMING: Framing = Framing::Sse;
    const PATH: &'static str = "/v1beta/models";

    type Body<'a> = WireRequest<'a>;
    type CallState = ();
    type Decoder = ResponseDecoder;

    /// `/v1beta/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse`.
    fn path(model: &str, streaming: bool) -> Cow<'static, str> {
        let model = model.strip_prefix("models/").unwrap_or(model);
        let action = if streaming {
            "streamGenerateContent?alt=sse"
        } else {
            "generateContent"
        };
        Cow::Owned(format!("{}/{}:{action}", Self::PATH, path_segment(model)))
    }

    /// The key goes in `x-goog-api-key` (marked sensitive), never in the URL.
    fn auth_headers(spec: WireSettings<'_>, headers: &mut HeaderMap) -> Result<(), ProviderError> {
        if let Some(key) = spec.api_key {
            headers.insert("x-goog-api-key", secret_header("", key)?);
        }
        Ok(())
    }

    fn request<'a>(
        spec: WireSettings<'a>,
        request: &'a ChatRequest,
        plan: &'a TurnPlan,
        _stream: bool,
    ) -> (WireRequest<'a>, ()) {
        (to_wire_request(spec, request, plan), ())
    }

    fn decode_whole(body: &[u8], _: &()) -> Result<ChatResponse, ProviderError> {
        decode_whole(body)
    }

    fn decoder(_: &()) -> ResponseDecoder {
        ResponseDecoder::default()
    }

    fn parse_error(body: &[u8]) -> ErrorBody {
        parse_error(body)
    }
}

/// A model name as one path segment: unreserved characters as they are, anything else
/// percent-encoded, so a name with `/`, `?` or `#` cannot change the URL's shape.
fn path_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

//! OpenAI Chat Completions (`POST {base}/chat/completions`, SSE when streaming) for OpenAI
//! itself and every OpenAI-compatible server (vLLM, llama.cpp, LM Studio, OpenRouter, Ollama
//! `/v1`): the [`Wire`] for both kinds.
//!
//! The response and stream-chunk types are async-openai's typed Chat Completions model; the
//! request body is our own borrowing mirror of its request type (`request.rs`, tested against it
//! in `request_tests.rs`); sending goes through the shared transport like every other wire.
//! Specifics: OpenAI wants `max_completion_tokens` where compatible servers read `max_tokens`;
//! tool errors go back as `Error: ...` text (tool messages have no error flag); streamed tool
//! calls arrive as fragments sharing an `index`; the stream ends with `data: [DONE]`, and a
//! stream that ends without a `finish_reason` is a truncation, not a short answer.
//!
//! The folder has every wire's shape: this file is the `Wire` impl (both kinds' facts, error
//! bodies); `request.rs` the typed request body; `response.rs` the whole completion;
//! `stream.rs` the chunks. What is not here: HTTP, retries, stream framing (the shared
//! `http_provider.rs`, `frames.rs`), anything of another wire.

mod request;
mod response;
mod stream;

use self::request::ChatCompletionBody;
use self::response::decode_whole;
use self::stream::ChunkDecoder;
use crate::error::ProviderError;
use crate::modes::{Capabilities, OutputMode, TurnPlan};
use crate::transport::{ErrorBody, parse_error_envelope};
use crate::types::{ChatRequest, ChatResponse};
use crate::wire::{Framing, KindInfo, Wire, WireSettings};

/// Chat Completions; `OFFICIAL` is OpenAI itself (default URL, key required,
/// `max_completion_tokens`), otherwise any compatible server.
pub(crate) struct ChatCompletions<const OFFICIAL: bool>;

/// OpenAI itself.
pub(crate) type OpenAi = ChatCompletions<true>;
/// Any OpenAI-compatible server.
pub(crate) type OpenAiCompatible = ChatCompletions<false>;

impl<const OFFICIAL: bool> Wire for ChatCompletions<OFFICIAL> {
    const INFO: KindInfo = if OFFICIAL {
        KindInfo {
            name: "openai",
            default_base_url: Some("https://api.openai.com/v1"),
            requires_key: true,
            conventional_key_env: Some("OPENAI_API_KEY"),
            modes: Capabilities {
                name: "openai",
                output_ladder: &[
                    OutputMode::JsonSchema,
                    OutputMode::Tool,
                    OutputMode::Prompted,
                ],
                // OpenAI's models choose between the tools and the schema.
                grammar: false,
                strict_subset: true,
                json_modes: true,
                answer_tool: true,
                generic_answer_tool: true,
            },
        }
    } else {
        KindInfo {
            name: "openai-compatible",
            default_base_url: None,
            requires_key: false,
            conventional_key_env: None,
            modes: Capabilities {
                name: "openai-compatible",
                output_ladder: &[
                    OutputMode::JsonSchema,
                    OutputMode::JsonObject,
                    OutputMode::Tool,
                    OutputMode::Prompted,
                ],
                grammar: true,
                strict_subset: false,
                json_modes: true,
                answer_tool: true,
                generic_answer_tool: true,
            },
        }
    };
    const FRAMING: Framing = Framing::Sse;
    const PATH: &'static str = "/chat/completions";

    type Body<'a> = ChatCompletionBody<'a>;
    type CallState = ();
    type Decoder = ChunkDecoder;

    fn request<'a>(
        spec: WireSettings<'a>,
        request: &'a ChatRequest,
        plan: &'a TurnPlan,
        stream: bool,
    ) -> (ChatCompletionBody<'a>, ()) {
        (ChatCompletionBody::new(spec, request, plan, stream), ())
    }

    fn decode_whole(body: &[u8], _: &()) -> Result<ChatResponse, ProviderError> {
        decode_whole(body)
    }

    fn decoder(_: &()) -> ChunkDecoder {
        ChunkDecoder::default()
    }

    fn parse_error(body: &[u8]) -> ErrorBody {
        parse_error_envelope(body)
    }
}

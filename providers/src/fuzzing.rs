//! The fuzzing entry (`fuzz/`): the real response decoders of the three wires, fed bytes that
//! did not come from a socket. Built only with the `fuzzing` feature (the fuzz crate's); it exists
//! so the fuzz targets drive exactly the code a provider runs, without making the wires public.
//!
//! A streamed answer goes through the same framing (SSE or NDJSON lines, with the per-line/event
//! and total caps) and the same stream decoder as [`crate::Provider::chat`], from a response
//! whose body arrives in the chunks the caller chose. Whole bodies and error bodies go through
//! the wire's own decoders.
//!
//! Not here: HTTP status handling, retries, deadlines (`http_provider`, `retry`).

use std::time::Duration;

use serde_json::{Value, json};

use crate::anthropic::Anthropic;
use crate::error::ProviderError;
use crate::frames::BodyLimits;
use crate::gemini::Gemini;
use crate::http_provider::read_stream;
use crate::kind::ProviderKind;
use crate::ollama::Ollama;
use crate::openai::OpenAiCompatible;
use crate::spec::ProviderSpec;
use crate::transport::TrackingSink;
use crate::types::{ChatMessage, ChatRequest, ChatResponse, ResponseSchema, ToolSpec};
use crate::wire::Wire;

/// Which decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI chat completions (SSE chunks).
    OpenAi,
    /// Anthropic messages (named SSE events).
    Anthropic,
    /// Ollama chat (NDJSON lines).
    Ollama,
    /// Gemini `streamGenerateContent` (unnamed SSE events, each a whole response).
    Gemini,
}

/// What the request asked for, which decides how an answer is read (Anthropic reads a
/// structured answer from its answer tool, as an object or wrapped in `{"value": ..}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Free text; one tool offered.
    Text,
    /// An object schema.
    Object,
    /// A non-object schema.
    Array,
}

/// The per-line/event and whole-body caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Longest NDJSON line or SSE event, bytes.
    pub max_event_bytes: usize,
    /// Largest body, bytes.
    pub max_total_bytes: usize,
}

impl Default for Caps {
    /// The caps a provider uses.
    fn default() -> Self {
        let limits = BodyLimits::default();
        Caps {
            max_event_bytes: limits.max_event_bytes,
            max_total_bytes: limits.max_total_bytes,
        }
    }
}

/// Decodes a streamed 2xx answer whose body arrives as `chunks`, text deltas going to a sink.
/// Needs a Tokio runtime with time enabled (the stall timer is armed per chunk).
pub async fn decode_stream(
    api: Api,
    asked: Asked,
    chunks: Vec<Vec<u8>>,
    caps: Caps,
) -> Result<ChatResponse, ProviderError> {
    match api {
        Api::OpenAi => stream::<OpenAiCompatible>(asked, chunks, caps).await,
        Api::Anthropic => stream::<Anthropic>(asked, chunks, caps).await,
        Api::Ollama => stream::<Ollama>(asked, chunks, caps).await,
        Api::Gemini => stream::<Gemini>(asked, chunks, caps).await,
    }
}

/// Decodes a whole (non-streamed) 2xx body.
pub fn decode_whole(api: Api, asked: Asked, body: &[u8]) -> Result<ChatResponse, ProviderError> {
    match api {
        Api::OpenAi => whole::<OpenAiCompatible>(asked, body),
        Api::Anthropic => whole::<Anthropic>(asked, body),
        Api::Ollama => whole::<Ollama>(asked, body),
        Api::Gemini => whole::<Gemini>(asked, body),
    }
}

/// Reads an error body: the error's type/code strings and its message.
pub fn decode_error_body(api: Api, body: &[u8]) -> (Vec<String>, String) {
    let parsed = match api {
        Api::OpenAi => OpenAiCompatible::parse_error(body),
        Api::Anthropic => Anthropic::parse_error(body),
        Api::Ollama => Ollama::parse_error(body),
        Api::Gemini => Gemini::parse_error(body),
    };
    (parsed.codes, parsed.message)
}

async fn stream<W: Wire>(
    asked: Asked,
    chunks: Vec<Vec<u8>>,
    caps: Caps,
) -> Result<ChatResponse, ProviderError> {
    let spec = spec::<W>();
    let request = request(asked);
    let plan = crate::modes::TurnPlan::best_for(spec.kind.capabilities(), &request);
    let (_, state) = W::request(spec.wire_settings(), &request, &plan, true);
    let chunks = chunks
        .into_iter()
        .map(|chunk| Ok::<_, std::io::Error>(bytes::Bytes::from(chunk)));
    let body = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    let response = reqwest::Response::from(http::Response::new(body));
    let delivered = |_: &str| {};
    let sink = TrackingSink::new(Some(&delivered));
    let limits = BodyLimits {
        max_event_bytes: caps.max_event_bytes,
        max_total_bytes: caps.max_total_bytes,
    };
    read_stream::<W>(response, Duration::from_secs(60), limits, &state, &sink).await
}

fn whole<W: Wire>(asked: Asked, body: &[u8]) -> Result<ChatResponse, ProviderError> {
    let spec = spec::<W>();
    let request = request(asked);
    let plan = crate::modes::TurnPlan::best_for(spec.kind.capabilities(), &request);
    let (_, state) = W::request(spec.wire_settings(), &request, &plan, false);
    W::decode_whole(body, &state)
}

fn spec<W: Wire>() -> ProviderSpec {
    let kind = ProviderKind::parse(W::INFO.name).expect("every wire names its kind");
    ProviderSpec::new(kind, "fuzz-model", Some("http://127.0.0.1:9"))
        .expect("a spec with a model and a base URL is valid for every wire")
}

fn request(asked: Asked) -> ChatRequest {
    let schema = |schema: Value| {
        Some(ResponseSchema {
            name: "answer".to_owned(),
            schema: schema.into(),
        })
    };
    let (tools, response_schema) = match asked {
        Asked::Text => (
            vec![ToolSpec {
                name: "lookup".to_owned(),
                description: "Looks a word up.".to_owned(),
                parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}})
                    .into(),
            }],
            None,
        ),
        Asked::Object => (Vec::new(), schema(json!({"type": "object"}))),
        Asked::Array => (Vec::new(), schema(json!({"type": "array"}))),
    };
    ChatRequest {
        system: Some("Answer.".to_owned()),
        messages: vec![ChatMessage::user("hi")],
        tools,
        response_schema,
        ..ChatRequest::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ProviderErrorKind;
    use crate::types::FinishReason;

    /// Captured from mock-llm: a text answer on each wire.
    const OPENAI: &str = concat!(
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",",
        "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},",
        "\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",",
        "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    const ANTHROPIC: &str = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",",
        "\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],",
        "\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,",
        "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,",
        "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":",
        "\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
    );
    const OLLAMA: &str = concat!(
        "{\"model\":\"m\",\"created_at\":\"2024-01-01T00:00:00Z\",\"message\":{\"role\":",
        "\"assistant\",\"content\":\"Hello\"},\"done\":false}\n",
        "{\"model\":\"m\",\"created_at\":\"2024-01-01T00:00:00Z\",\"message\":{\"role\":",
        "\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n"
    );

    const GEMINI: &str = concat!(
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":",
        "\"Hel\"}]}}],\"responseId\":\"r1\"}\n\n",
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":",
        "\"lo\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1,",
        "\"candidatesTokenCount\":2},\"responseId\":\"r1\"}\n\n"
    );

    /// Each wire with its well-formed stream body (text `Hello`).
    const EVERY_WIRE: [(Api, &str); 4] = [
        (Api::OpenAi, OPENAI),
        (Api::Anthropic, ANTHROPIC),
        (Api::Ollama, OLLAMA),
        (Api::Gemini, GEMINI),
    ];

    /// `body` decoded as one read and as reads of `size` bytes.
    async fn whole_and_cut(
        api: Api,
        body: &str,
        size: usize,
        caps: Caps,
    ) -> [Result<ChatResponse, ProviderError>; 2] {
        let pieces = body.as_bytes().chunks(size).map(<[u8]>::to_vec).collect();
        [
            decode_stream(api, Asked::Text, vec![body.into()], caps).await,
            decode_stream(api, Asked::Text, pieces, caps).await,
        ]
    }

    #[tokio::test]
    async fn a_stream_decodes_the_same_in_one_chunk_and_byte_by_byte_on_every_wire() {
        for (api, body) in EVERY_WIRE {
            let whole = decode_stream(api, Asked::Text, vec![body.into()], Caps::default())
                .await
                .unwrap_or_else(|e| panic!("{api:?}: {e}"));
            assert_eq!(whole.text, "Hello", "{api:?}");
            assert_eq!(whole.finish_reason, FinishReason::Stop, "{api:?}");
            let bytes: Vec<Vec<u8>> = body.bytes().map(|b| vec![b]).collect();
            let split = decode_stream(api, Asked::Text, bytes, Caps::default()).await;
            assert_eq!(split.unwrap(), whole, "{api:?}");
        }
    }

    /// Found by `fuzz/openai_stream` and `fuzz/anthropic_stream`: a stream that ends within
    /// the body cap, followed by bytes beyond it, failed when the whole body came in one read
    /// (the cap was checked before the chunk's events) and succeeded when it came in pieces.
    #[tokio::test]
    async fn a_stream_complete_within_the_body_cap_succeeds_however_the_bytes_arrive() {
        for (api, body) in EVERY_WIRE {
            let caps = Caps {
                max_event_bytes: 4096,
                max_total_bytes: body.len() + 8,
            };
            let body = format!("{body}{}", "x".repeat(64));
            for answer in whole_and_cut(api, &body, 7, caps).await {
                assert_eq!(answer.unwrap().text, "Hello", "{api:?}");
            }
        }
    }

    #[tokio::test]
    async fn a_stream_unfinished_at_the_body_cap_fails_however_the_bytes_arrive() {
        for (api, body) in EVERY_WIRE {
            let caps = Caps {
                max_event_bytes: 4096,
                max_total_bytes: body.len() - 20,
            };
            for outcome in whole_and_cut(api, body, 7, caps).await {
                let error = outcome.unwrap_err();
                assert_eq!(error.kind, ProviderErrorKind::MalformedResponse, "{api:?}");
                assert!(error.message.contains("body exceeds"), "{api:?}: {error}");
            }
        }
    }

    #[tokio::test]
    async fn a_line_over_the_small_cap_fails_as_malformed_on_every_wire() {
        let caps = Caps {
            max_event_bytes: 32,
            max_total_bytes: 1024,
        };
        for (api, body) in EVERY_WIRE {
            let error = decode_stream(api, Asked::Text, vec![body.into()], caps)
                .await
                .unwrap_err();
            assert_eq!(error.kind, ProviderErrorKind::MalformedResponse, "{api:?}");
            assert!(error.message.contains("32-byte limit"), "{api:?}: {error}");
        }
    }

    /// Found by `fuzz/anthropic_stream` (10-minute run): a line exactly at the line cap that ends
    /// in `\r\n` passed when it arrived whole and failed when its `\r` arrived before its `\n`
    /// (the pending-bytes check counted the `\r` the line loses). Now both pass.
    #[tokio::test]
    async fn a_line_exactly_at_the_cap_ending_in_crlf_passes_however_the_bytes_arrive() {
        let caps = Caps {
            max_event_bytes: 4096,
            max_total_bytes: 1 << 20,
        };
        for (api, body) in EVERY_WIRE {
            // A blank line of spaces: an unknown SSE field, a skipped NDJSON line.
            let body = format!("{}\r\n{body}", " ".repeat(caps.max_event_bytes));
            for answer in whole_and_cut(api, &body, 1, caps).await {
                assert_eq!(answer.unwrap().text, "Hello", "{api:?}");
            }
        }
    }
}

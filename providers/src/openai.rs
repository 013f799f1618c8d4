//! OpenAI Chat Completions (`POST {base}/chat/completions`, SSE when streaming) for OpenAI
//! itself and every OpenAI-compatible server (vLLM, llama.cpp, LM Studio, OpenRouter, Ollama
//! `/v1`): the [`Wire`] for both kinds.
//!
//! The response and stream-chunk types are async-openai's typed Chat Completions model; the
//! request body is our own borrowing mirror of its request type (`openai_request.rs`, tested
//! against it); sending goes through the shared transport like every other wire. Specifics: OpenAI
//! wants `max_completion_tokens` where compatible servers read `max_tokens`; tool errors go back
//! as `Error: ...` text (tool messages have no error flag); streamed tool calls arrive as
//! fragments sharing an `index`; the stream ends with `data: [DONE]`, and a stream that ends
//! without a `finish_reason` is a truncation, not a short answer.

use std::borrow::Cow;
use std::collections::BTreeMap;

use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, CompletionUsage, CreateChatCompletionResponse,
    CreateChatCompletionStreamResponse, FinishReason as WireFinish,
};

use crate::error::ProviderError;
use crate::modes::{Capabilities, OutputMode, TurnPlan};
use crate::openai_request::ChatCompletionBody;
use crate::transport::{TrackingSink, in_band_error, parse_error_envelope};
use crate::types::{ChatRequest, ChatResponse, FinishReason, ToolCall, Usage};
use crate::wire::{Flow, Framing, KindInfo, StreamDecoder, StreamEvent, Wire, WireSettings};

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
        match serde_json::from_slice::<CreateChatCompletionResponse>(body) {
            Ok(response) => {
                let mut reply = from_wire_response(response)?;
                if reply.usage.is_none() {
                    reply.usage = llama_cpp_timings(body);
                }
                reply.reasoning = reasoning_content(body, "message");
                Ok(reply)
            }
            // A 200 carrying an error object instead of a completion.
            Err(_) if in_band_error(body).is_some() => {
                let error = in_band_error(body).unwrap_or_default();
                Err(ProviderError::from_stream_error(error.message, false))
            }
            Err(e) => Err(ProviderError::malformed(format!(
                "the body is not a chat completion: {e}"
            ))),
        }
    }

    fn decoder(_: &()) -> ChunkDecoder {
        ChunkDecoder::default()
    }

    fn parse_error(body: &[u8]) -> crate::transport::ErrorBody {
        parse_error_envelope(body)
    }
}

// ---------------------------------------------------------------------------------------------
// Request mapping
// ---------------------------------------------------------------------------------------------

/// Tool errors go back as text: Chat Completions has no error flag on tool messages (Ollama's
/// tool messages neither). A successful result is borrowed as is.
pub(crate) fn tool_result_text(content: &str, is_error: bool) -> Cow<'_, str> {
    if is_error {
        Cow::Owned(format!("Error: {content}"))
    } else {
        Cow::Borrowed(content)
    }
}

// ---------------------------------------------------------------------------------------------
// Response mapping
// ---------------------------------------------------------------------------------------------

fn from_wire_response(
    response: CreateChatCompletionResponse,
) -> Result<ChatResponse, ProviderError> {
    let choice = response
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| ProviderError::malformed("the response has no choices"))?;
    let message = choice.message;
    let tool_calls: Vec<ToolCall> = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .filter_map(|call| match call {
            ChatCompletionMessageToolCalls::Function(f) => Some(ToolCall::from_raw_arguments(
                f.id,
                f.function.name,
                &f.function.arguments,
            )),
            ChatCompletionMessageToolCalls::Custom(_) => None,
        })
        .collect();
    let text = message.content.or(message.refusal).unwrap_or_default();
    Ok(ChatResponse {
        finish_reason: finish_reason(choice.finish_reason, !tool_calls.is_empty()),
        text,
        tool_calls,
        usage: response.usage.map(usage),
        request_id: Some(response.id),
        reasoning: None,
        thinking: Vec::new(),
    })
}

/// The `reasoning_content` of choice 0's `message` (whole) or `delta` (a chunk), as llama.cpp
/// and DeepSeek send a reasoning model's thinking (async-openai's types have no such field).
/// Parsed a second time only when the bytes name the field, so other answers cost one scan
/// (`memmem`: a window-by-window compare of every answer was ~1 % of a server's CPU).
fn reasoning_content(body: &[u8], within: &str) -> Option<String> {
    const FIELD: &[u8] = b"\"reasoning_content\"";
    memchr::memmem::find(body, FIELD)?;
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let text = value.pointer(&format!("/choices/0/{within}/reasoning_content"))?;
    text.as_str().filter(|t| !t.is_empty()).map(str::to_owned)
}

/// Token counts from llama.cpp's `timings` (`prompt_n`, `predicted_n`), for an answer that
/// carries no `usage`; `None` when there are none either.
fn llama_cpp_timings(body: &[u8]) -> Option<Usage> {
    #[derive(serde::Deserialize)]
    struct WithTimings {
        timings: Option<Timings>,
    }
    #[derive(serde::Deserialize)]
    struct Timings {
        prompt_n: Option<u64>,
        predicted_n: Option<u64>,
        cache_n: Option<u64>,
    }
    let timings = serde_json::from_slice::<WithTimings>(body).ok()?.timings?;
    let (prompt, predicted) = (timings.prompt_n?, timings.predicted_n?);
    let cached = timings.cache_n.unwrap_or(0);
    Some(Usage {
        // `prompt_n` counts the prompt tokens evaluated; `cache_n` those reused from the cache.
        input_tokens: prompt + cached,
        output_tokens: predicted,
        cached_input_tokens: (cached > 0).then_some(cached),
        ..Usage::default()
    })
}

fn usage(u: CompletionUsage) -> Usage {
    Usage {
        input_tokens: u.prompt_tokens.into(),
        output_tokens: u.completion_tokens.into(),
        cached_input_tokens: u
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens)
            .map(u64::from),
        cache_creation_input_tokens: None,
        reasoning_tokens: u
            .completion_tokens_details
            .and_then(|d| d.reasoning_tokens)
            .map(u64::from),
    }
}

/// Normalizes the finish reason; tool calls always mean `ToolCalls` (some compatible servers
/// say `stop` while calling tools).
fn finish_reason(reason: Option<WireFinish>, has_tool_calls: bool) -> FinishReason {
    match reason {
        _ if has_tool_calls => FinishReason::ToolCalls,
        Some(WireFinish::Stop) | None => FinishReason::Stop,
        Some(WireFinish::Length) => FinishReason::Length,
        Some(WireFinish::ToolCalls) | Some(WireFinish::FunctionCall) => FinishReason::ToolCalls,
        Some(WireFinish::ContentFilter) => FinishReason::ContentFilter,
    }
}

// ---------------------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------------------

/// One tool call being assembled from fragments that share an `index`.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl PartialCall {
    /// Whether a fragment carrying `id` and `name` starts another call rather than continuing
    /// this one: some servers (llama.cpp builds, vLLM-style routers) stream parallel calls all
    /// at `index` 0, each opened by its own id, or by its name once this one's arguments are
    /// whole.
    fn is_followed_by(&self, id: Option<&str>, name: Option<&str>) -> bool {
        if self.name.is_empty() {
            return false;
        }
        match id {
            Some(id) if !id.is_empty() && !self.id.is_empty() => id != self.id,
            _ => {
                name.is_some_and(|n| !n.is_empty())
                    && serde_json::from_str::<serde::de::IgnoredAny>(&self.arguments).is_ok()
            }
        }
    }
}

/// Assembles a streamed completion from its chunks.
#[derive(Default)]
pub(crate) struct ChunkDecoder {
    text: String,
    /// The calls in the order they were opened.
    calls: Vec<PartialCall>,
    /// The call each wire `index` is adding to now.
    open: BTreeMap<u32, usize>,
    finish: Option<WireFinish>,
    usage: Option<Usage>,
    response_id: Option<String>,
    reasoning: String,
}

impl StreamDecoder for ChunkDecoder {
    fn event(
        &mut self,
        event: StreamEvent<'_>,
        sink: &TrackingSink<'_>,
    ) -> Result<Flow, ProviderError> {
        if event.data == b"[DONE]" {
            return Ok(Flow::Done);
        }
        let chunk: CreateChatCompletionStreamResponse = match serde_json::from_slice(event.data) {
            Ok(chunk) => chunk,
            Err(e) => {
                return Err(match in_band_error(event.data) {
                    Some(error) => {
                        ProviderError::from_stream_error(error.message, sink.delivered())
                    }
                    None => ProviderError::malformed(format!("a stream chunk is not valid: {e}")),
                });
            }
        };
        self.response_id.get_or_insert(chunk.id);
        if let Some(piece) = reasoning_content(event.data, "delta") {
            self.reasoning.push_str(&piece);
        }
        if let Some(u) = chunk.usage {
            self.usage = Some(usage(u));
        }
        let finishing = chunk.choices.iter().any(|c| c.finish_reason.is_some());
        if finishing && self.usage.is_none() {
            // llama.cpp's last chunk carries `timings` even without `include_usage`.
            self.usage = llama_cpp_timings(event.data);
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta.content {
                sink.text(&delta);
                self.text.push_str(&delta);
            }
            for fragment in choice.delta.tool_calls.unwrap_or_default() {
                let name = fragment.function.as_ref().and_then(|f| f.name.as_deref());
                let at = match self.open.get(&fragment.index) {
                    Some(&at) if !self.calls[at].is_followed_by(fragment.id.as_deref(), name) => at,
                    _ => {
                        self.calls.push(PartialCall::default());
                        self.open.insert(fragment.index, self.calls.len() - 1);
                        self.calls.len() - 1
                    }
                };
                let call = &mut self.calls[at];
                if let Some(id) = fragment.id {
                    call.id = id;
                }
                if let Some(function) = fragment.function {
                    if let Some(name) = function.name {
                        call.name.push_str(&name);
                    }
                    if let Some(arguments) = function.arguments {
                        call.arguments.push_str(&arguments);
                    }
                }
            }
            if choice.finish_reason.is_some() {
                self.finish = choice.finish_reason;
            }
        }
        Ok(Flow::More)
    }

    fn finish(self, sink: &TrackingSink<'_>) -> Result<ChatResponse, ProviderError> {
        if self.finish.is_none() {
            return Err(ProviderError::truncated(
                "the stream ended before the model finished (no finish_reason)",
                sink.delivered(),
            ));
        }
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(index, c)| {
                let id = if c.id.is_empty() {
                    format!("call_{index}")
                } else {
                    c.id
                };
                ToolCall::from_raw_arguments(id, c.name, &c.arguments)
            })
            .collect();
        Ok(ChatResponse {
            finish_reason: finish_reason(self.finish, !tool_calls.is_empty()),
            text: self.text,
            tool_calls,
            usage: self.usage,
            request_id: self.response_id,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            thinking: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_cpp_timings_stand_in_for_missing_usage() {
        let body = br#"{"id":"c","object":"chat.completion","created":1,"model":"m",
            "choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],
            "timings":{"cache_n":4,"prompt_n":40,"predicted_n":18}}"#;
        let reply = OpenAiCompatible::decode_whole(body, &()).unwrap();
        let usage = reply.usage.expect("read from timings");
        assert_eq!((usage.input_tokens, usage.output_tokens), (44, 18));
        assert_eq!(usage.cached_input_tokens, Some(4));
        let bare = br#"{"id":"c","object":"chat.completion","created":1,"model":"m",
            "choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}]}"#;
        assert_eq!(
            OpenAiCompatible::decode_whole(bare, &()).unwrap().usage,
            None
        );
    }
}

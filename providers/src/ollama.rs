//! Ollama's native chat API (`POST {base}/api/chat`, NDJSON when streaming): the [`Wire`] for
//! the `ollama` kind.
//!
//! Ollama specifics: `stream` must be sent explicitly (it defaults to true), structured output
//! goes in `format` as a JSON Schema, sampling hints go in `options` (`num_predict` for the
//! token limit), tool-call arguments are JSON objects and each call arrives whole, tool results
//! carry `tool_name`, and a failure mid-stream is an `{"error": ...}` line under status 200. The
//! non-streamed answer is a single `done` line, decoded by the same decoder. A thinking model's
//! `message.thinking` (`think: true`) becomes the response's `reasoning`, never its text.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::ProviderError;
use crate::modes::{Capabilities, OutputMode, TurnPlan};
use crate::openai::tool_result_text;
use crate::transport::{ErrorBody, ErrorDetail, TrackingSink, parse_error_envelope};
use crate::types::{
    ChatMessage, ChatRequest, ChatResponse, FinishReason, ImageSource, ToolCall, Usage,
};
use crate::wire::{
    Flow, Framing, KindInfo, StreamDecoder, StreamEvent, Wire, WireSettings, decode_single,
};

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
        decode_single(LineDecoder::default(), body)
    }

    fn decoder(_: &()) -> LineDecoder {
        LineDecoder::default()
    }

    fn parse_error(body: &[u8]) -> ErrorBody {
        parse_error_envelope(body)
    }
}

// ---------------------------------------------------------------------------------------------
// Request mapping
// ---------------------------------------------------------------------------------------------

/// The `/api/chat` request body. It borrows the conversation, tool schemas and response schema
/// from the [`ChatRequest`]: the loop re-sends them every turn, and nothing is copied to do so.
#[derive(Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireRequestMessage<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "WireOptions::is_empty")]
    options: WireOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    think: Option<bool>,
}

#[derive(Serialize)]
struct WireRequestMessage<'a> {
    role: &'static str,
    content: Cow<'a, str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireRequestToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_name: Option<&'a str>,
    /// Base64 images of a user message.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    images: Vec<&'a str>,
}

#[derive(Serialize)]
struct WireRequestToolCall<'a> {
    function: WireRequestFunction<'a>,
}

#[derive(Serialize)]
struct WireRequestFunction<'a> {
    name: &'a str,
    arguments: &'a Value,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireToolFunction<'a>,
}

#[derive(Serialize)]
struct WireToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a RawValue,
}

/// `format: "json"`: JSON mode without a schema.
fn json_format() -> &'static RawValue {
    static JSON: LazyLock<Box<RawValue>> = LazyLock::new(|| {
        RawValue::from_string("\"json\"".to_owned()).unwrap_or_else(|_| RawValue::NULL.to_owned())
    });
    &JSON
}

/// The arguments sent back for a call whose own were not a JSON object.
static NO_ARGUMENTS: LazyLock<Value> = LazyLock::new(|| Value::Object(Map::new()));

#[derive(Serialize, Default)]
struct WireOptions {
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    num_predict: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
}

impl WireOptions {
    fn is_empty(&self) -> bool {
        self.temperature.is_none()
            && self.top_p.is_none()
            && self.num_predict.is_none()
            && self.seed.is_none()
    }
}

fn to_wire_request<'a>(
    spec: WireSettings<'a>,
    request: &'a ChatRequest,
    plan: &'a TurnPlan,
    stream: bool,
) -> WireRequest<'a> {
    let hints = request.hints.or(spec.default_hints);
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    let message = |role, content: Cow<'a, str>| WireRequestMessage {
        role,
        content,
        tool_calls: Vec::new(),
        tool_name: None,
        images: Vec::new(),
    };
    if let Some(system) = &request.system {
        messages.push(message("system", Cow::Borrowed(system)));
    }
    for m in &request.messages {
        if let ChatMessage::Image { image } = m {
            // The bytes go on the user message they follow; an image URL was refused before
            // the request was built (`Wire::IMAGE_URLS`).
            let ImageSource::Base64(data) = &image.source else {
                continue;
            };
            match messages.last_mut() {
                Some(last) if last.role == "user" => last.images.push(data),
                _ => messages.push(WireRequestMessage {
                    images: vec![data],
                    ..message("user", Cow::Borrowed(""))
                }),
            }
            continue;
        }
        messages.push(match m {
            ChatMessage::Image { .. } => continue,
            ChatMessage::User { text } => message("user", Cow::Borrowed(text)),
            ChatMessage::Assistant {
                text, tool_calls, ..
            } => WireRequestMessage {
                tool_calls: tool_calls
                    .iter()
                    .map(|c| WireRequestToolCall {
                        function: WireRequestFunction {
                            name: &c.name,
                            // Ollama only accepts object arguments; a call whose arguments
                            // were invalid goes back with none (the engine answered it with an
                            // error).
                            arguments: if c.arguments.is_object() {
                                &c.arguments
                            } else {
                                &NO_ARGUMENTS
                            },
                        },
                    })
                    .collect(),
                ..message("assistant", Cow::Borrowed(text))
            },
            ChatMessage::ToolResult {
                name,
                content,
                is_error,
                ..
            } => WireRequestMessage {
                tool_name: Some(name),
                ..message("tool", tool_result_text(content, *is_error))
            },
        });
    }
    WireRequest {
        model: spec.model,
        messages,
        stream,
        tools: request
            .tools
            .iter()
            .filter(|_| plan.native_tools)
            .map(|t| WireTool {
                kind: "function",
                function: WireToolFunction {
                    name: &t.name,
                    description: &t.description,
                    parameters: t.parameters.json_text(),
                },
            })
            .collect(),
        format: match (plan.output, &plan.schema) {
            (OutputMode::JsonSchema, Some(schema)) => Some(schema.schema.json_text()),
            (OutputMode::JsonObject, Some(_)) => Some(json_format()),
            _ => None,
        },
        options: WireOptions {
            temperature: hints.temperature,
            top_p: hints.top_p,
            num_predict: hints.max_tokens,
            seed: hints.seed,
        },
        think: hints.reasoning.think.or(spec.reasoning.think),
    }
}

// ---------------------------------------------------------------------------------------------
// Response mapping
// ---------------------------------------------------------------------------------------------

/// One NDJSON line (or the whole non-streamed body).
#[derive(Deserialize)]
struct WireLine {
    #[serde(default)]
    message: Option<WireMessage>,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
    #[serde(default)]
    error: Option<ErrorDetail>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: String,
    /// A thinking model's reasoning (`think: true`), kept out of the answer.
    #[serde(default)]
    thinking: String,
    #[serde(default)]
    tool_calls: Vec<WireToolCall>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// The reply being assembled from lines.
#[derive(Default)]
pub(crate) struct LineDecoder {
    text: String,
    reasoning: String,
    tool_calls: Vec<ToolCall>,
    done_reason: Option<String>,
    done: bool,
    usage: Option<Usage>,
}

impl StreamDecoder for LineDecoder {
    /// Takes in one line; an `error` line fails the attempt.
    fn event(
        &mut self,
        event: StreamEvent<'_>,
        sink: &TrackingSink<'_>,
    ) -> Result<Flow, ProviderError> {
        let line: WireLine = serde_json::from_slice(event.data).map_err(|e| {
            ProviderError::malformed(format!("the body is not an Ollama chat line: {e}"))
        })?;
        if let Some(error) = line.error {
            let error = ErrorBody::from(error);
            return Err(ProviderError::from_stream_error(
                error.message,
                sink.delivered(),
            ));
        }
        if let Some(message) = line.message {
            sink.text(&message.content);
            self.text.push_str(&message.content);
            self.reasoning.push_str(&message.thinking);
            for call in message.tool_calls {
                let id = call
                    .id
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| format!("call_{}", self.tool_calls.len()));
                self.tool_calls.push(ToolCall::from_value(
                    id,
                    call.function.name,
                    call.function.arguments,
                ));
            }
        }
        if !line.done {
            return Ok(Flow::More);
        }
        self.done = true;
        self.done_reason = line.done_reason;
        // Counts the server did not send are unknown, not zero.
        self.usage =
            (line.prompt_eval_count.is_some() || line.eval_count.is_some()).then(|| Usage {
                input_tokens: line.prompt_eval_count.unwrap_or(0),
                output_tokens: line.eval_count.unwrap_or(0),
                // Ollama reports no cache or reasoning breakdown.
                ..Usage::default()
            });
        Ok(Flow::Done)
    }

    fn finish(self, sink: &TrackingSink<'_>) -> Result<ChatResponse, ProviderError> {
        if !self.done {
            return Err(ProviderError::truncated(
                "the reply ended before the model finished (no done line)",
                sink.delivered(),
            ));
        }
        let finish_reason = match self.done_reason.as_deref() {
            _ if !self.tool_calls.is_empty() => FinishReason::ToolCalls,
            Some("stop") | None => FinishReason::Stop,
            Some("length") => FinishReason::Length,
            Some(_) => FinishReason::Other,
        };
        Ok(ChatResponse {
            text: self.text,
            tool_calls: self.tool_calls,
            finish_reason,
            usage: self.usage,
            request_id: None,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            thinking: Vec::new(),
        })
    }
}

//! Anthropic Messages (`POST {base}/v1/messages`, SSE when streaming), on `reqwest` +
//! `eventsource-stream`.
//!
//! Same shape as `openai.rs` and `ollama.rs`: client, request mapping, response mapping,
//! streaming. Anthropic specifics: `max_tokens` is required (default [`DEFAULT_MAX_TOKENS`]),
//! the system text is a top-level field, tool calls are `tool_use` blocks and their results are
//! `tool_result` blocks inside a `user` message, streamed tool input arrives as
//! `input_json_delta` fragments, and structured output goes through a forced tool
//! ([`ANSWER_TOOL`]) whose input is the answer.

use std::collections::BTreeMap;

use async_trait::async_trait;
use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::{ProviderError, ProviderErrorKind};
use crate::openai::merged_hints;
use crate::provider::{CallOptions, Provider};
use crate::retry::run_with_retries;
use crate::spec::{ProviderKind, ProviderSpec};
use crate::transport::{ErrorBody, TrackingSink, lossy_text, secret_header, send};
use crate::types::{ChatMessage, ChatRequest, ChatResponse, FinishReason, ToolCall, Usage};

/// `max_tokens` sent when neither the request nor the spec sets one (the API requires it).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Name of the tool the model is made to call when a response schema is given; its input is
/// returned as the response text, and it never appears in [`ChatResponse::tool_calls`].
pub const ANSWER_TOOL: &str = "skillet_final_answer";

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

/// A provider speaking Anthropic Messages.
pub struct AnthropicProvider {
    spec: ProviderSpec,
    http: reqwest::Client,
    url: String,
    headers: http::HeaderMap,
}

impl AnthropicProvider {
    /// Builds the provider on a shared HTTP client; the key goes in `x-api-key`.
    pub fn new(spec: ProviderSpec, http: reqwest::Client) -> Result<Self, ProviderError> {
        let mut headers = spec.header_map();
        if let Some(key) = &spec.api_key {
            headers.insert("x-api-key", secret_header("", key)?);
        }
        let version = http::HeaderValue::from_str(&spec.anthropic_version).map_err(|_| {
            ProviderError::new(ProviderErrorKind::Config, "bad anthropic_version value")
        })?;
        headers.insert("anthropic-version", version);
        Ok(AnthropicProvider {
            url: format!("{}/v1/messages", spec.base_url),
            spec,
            http,
            headers,
        })
    }
}

#[async_trait]
impl Provider for AnthropicProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn model(&self) -> &str {
        &self.spec.model
    }

    async fn chat(
        &self,
        request: ChatRequest,
        options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let (body, answer) = to_wire_request(&self.spec, &request, options.stream.is_some());
        let spec = &self.spec;
        let answer = &answer;
        run_with_retries(ProviderKind::Anthropic, &self.spec.retry, &options, |_| {
            let builder = self
                .http
                .post(&self.url)
                .headers(self.headers.clone())
                .json(&body);
            async move {
                let sink = TrackingSink::new(options.stream);
                let result = async {
                    let response = send(builder, parse_error).await?;
                    let request_id = crate::error::request_id(response.headers());
                    let mut reply = if options.stream.is_some() {
                        read_stream(response, &sink, answer).await?
                    } else {
                        let bytes = response
                            .bytes()
                            .await
                            .map_err(|e| ProviderError::from_transport(&e))?;
                        let message: WireMessage = serde_json::from_slice(&bytes).map_err(|e| {
                            ProviderError::malformed(format!(
                                "the body is not an Anthropic message: {e}"
                            ))
                        })?;
                        from_wire_message(message, answer)
                    };
                    if request_id.is_some() {
                        reply.request_id = request_id;
                    }
                    Ok(reply)
                }
                .await;
                result.map_err(|e: ProviderError| e.redact(spec.secrets()))
            }
        })
        .await
    }
}

// ---------------------------------------------------------------------------------------------
// Request mapping
// ---------------------------------------------------------------------------------------------

/// How the answer tool's input maps back to the answer: the schema is used as `input_schema`
/// directly when it describes an object; otherwise it is wrapped as `{"value": schema}`.
#[derive(Debug, Clone, PartialEq)]
enum AnswerShape {
    None,
    Object,
    Wrapped,
}

fn to_wire_request(
    spec: &ProviderSpec,
    request: &ChatRequest,
    stream: bool,
) -> (Value, AnswerShape) {
    let hints = merged_hints(&request.hints, &spec.default_hints);
    let mut body = json!({
        "model": spec.model,
        "max_tokens": hints.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": to_wire_messages(&request.messages),
    });
    if let Some(system) = request.system.as_ref().filter(|s| !s.is_empty()) {
        body["system"] = json!(system);
    }
    if let Some(t) = hints.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(p) = hints.top_p {
        body["top_p"] = json!(p);
    }
    if stream {
        body["stream"] = json!(true);
    }
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(
            |t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}),
        )
        .collect();
    let mut shape = AnswerShape::None;
    if let Some(schema) = &request.response_schema {
        let is_object = schema.schema.get("type").and_then(Value::as_str) == Some("object");
        let input_schema = if is_object {
            shape = AnswerShape::Object;
            schema.schema.clone()
        } else {
            shape = AnswerShape::Wrapped;
            json!({"type": "object", "properties": {"value": schema.schema}, "required": ["value"]})
        };
        tools.push(json!({
            "name": ANSWER_TOOL,
            "description": "Give your final answer by calling this tool; its input is the answer.",
            "input_schema": input_schema,
        }));
        // Without other tools the answer tool is forced; with them the model must call some
        // tool, so it can still use the real ones before answering.
        body["tool_choice"] = if request.tools.is_empty() {
            json!({"type": "tool", "name": ANSWER_TOOL})
        } else {
            json!({"type": "any"})
        };
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    (body, shape)
}

/// Maps messages to alternating user/assistant turns: consecutive messages of the same role
/// merge (several tool results become one user message, as the API requires).
fn to_wire_messages(messages: &[ChatMessage]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            ChatMessage::User { text } => ("user", text_block(text).into_iter().collect()),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut blocks: Vec<Value> = text_block(text).into_iter().collect();
                blocks.extend(tool_calls.iter().map(|c| {
                    // The API only accepts object input; invalid arguments go back empty.
                    let input = if c.arguments.is_object() {
                        c.arguments.clone()
                    } else {
                        Value::Object(Map::new())
                    };
                    json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input})
                }));
                ("assistant", blocks)
            }
            ChatMessage::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => (
                "user",
                vec![json!({
                    "type": "tool_result", "tool_use_id": call_id,
                    "content": content, "is_error": is_error,
                })],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// The API rejects empty text blocks, so empty text adds none.
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

// ---------------------------------------------------------------------------------------------
// Response mapping
// ---------------------------------------------------------------------------------------------

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    id: Option<String>,
    content: Vec<WireBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: WireUsage,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Cached prompt tokens are still prompt tokens.
    fn input(&self) -> Option<u64> {
        self.input_tokens.map(|n| {
            n + self.cache_creation_input_tokens.unwrap_or(0)
                + self.cache_read_input_tokens.unwrap_or(0)
        })
    }
}

fn from_wire_message(message: WireMessage, answer: &AnswerShape) -> ChatResponse {
    let mut text = String::new();
    let mut calls = Vec::new();
    for block in message.content {
        match block {
            WireBlock::Text { text: t } => text.push_str(&t),
            WireBlock::ToolUse { id, name, input } => {
                calls.push(ToolCall::from_value(id, name, input))
            }
            WireBlock::Other => {}
        }
    }
    assemble(
        text,
        calls,
        message.stop_reason.as_deref(),
        Usage {
            input_tokens: message.usage.input().unwrap_or(0),
            output_tokens: message.usage.output_tokens.unwrap_or(0),
        },
        message.id,
        answer,
    )
}

/// Builds the response; an answer-tool call becomes the response text.
fn assemble(
    mut text: String,
    calls: Vec<ToolCall>,
    stop_reason: Option<&str>,
    usage: Usage,
    request_id: Option<String>,
    answer: &AnswerShape,
) -> ChatResponse {
    let mut tool_calls = Vec::new();
    let mut answered = false;
    for call in calls {
        if call.name == ANSWER_TOOL && *answer != AnswerShape::None {
            text = match (answer, call.arguments) {
                // Invalid JSON from the model: hand its raw text on; output validation will
                // report it as the answer's problem.
                (_, Value::String(raw)) if call.invalid_arguments.is_some() => raw,
                (AnswerShape::Wrapped, input) => input
                    .get("value")
                    .cloned()
                    .unwrap_or(Value::Null)
                    .to_string(),
                (_, input) => input.to_string(),
            };
            answered = true;
        } else {
            tool_calls.push(call);
        }
    }
    let finish_reason = if !tool_calls.is_empty() {
        FinishReason::ToolCalls
    } else if answered {
        FinishReason::Stop
    } else {
        match stop_reason {
            Some("end_turn") | Some("stop_sequence") | None => FinishReason::Stop,
            Some("max_tokens") => FinishReason::Length,
            Some("tool_use") => FinishReason::ToolCalls,
            Some("refusal") => FinishReason::ContentFilter,
            Some(_) => FinishReason::Other,
        }
    };
    ChatResponse {
        text,
        tool_calls,
        finish_reason,
        usage,
        request_id,
    }
}

fn parse_error(body: &[u8]) -> ErrorBody {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.get("error").is_some() => {
            let error = &v["error"];
            ErrorBody {
                codes: error
                    .get("type")
                    .and_then(Value::as_str)
                    .map(|t| vec![t.to_owned()])
                    .unwrap_or_default(),
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            }
        }
        _ => ErrorBody {
            codes: Vec::new(),
            message: lossy_text(body),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------------------

/// One content block being assembled from deltas.
enum PartialBlock {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
}

/// Reads SSE frames until `message_stop`; the connection ending first is a truncation.
async fn read_stream(
    response: reqwest::Response,
    sink: &TrackingSink<'_>,
    answer: &AnswerShape,
) -> Result<ChatResponse, ProviderError> {
    let mut events = response.bytes_stream().eventsource();
    let mut text = String::new();
    let mut blocks: BTreeMap<u64, PartialBlock> = BTreeMap::new();
    let mut usage = WireUsage::default();
    let mut stop_reason: Option<String> = None;
    let mut message_id = None;
    let malformed = |what: &str, e: serde_json::Error| {
        ProviderError::malformed(format!("a `{what}` event is not valid: {e}"))
    };

    while let Some(event) = events.next().await {
        let event = event.map_err(|e| match e {
            EventStreamError::Transport(e) => {
                let error = ProviderError::from_transport(&e);
                if error.kind == ProviderErrorKind::Timeout {
                    error.with_retryable(!sink.delivered())
                } else {
                    ProviderError::truncated(
                        format!("the stream broke: {}", error.message),
                        sink.delivered(),
                    )
                }
            }
            other => {
                ProviderError::malformed(format!("the event stream is not valid SSE: {other}"))
            }
        })?;
        let data: Value = if event.data.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&event.data).map_err(|e| malformed(&event.event, e))?
        };
        match event.event.as_str() {
            "message_start" => {
                let message = &data["message"];
                message_id = message["id"].as_str().map(str::to_owned);
                usage = WireUsage::deserialize(&message["usage"]).unwrap_or_default();
            }
            "content_block_start" => {
                let index = data["index"].as_u64().unwrap_or(0);
                let block = &data["content_block"];
                match block["type"].as_str() {
                    Some("text") => {
                        let initial = block["text"].as_str().unwrap_or("");
                        sink.text(initial);
                        text.push_str(initial);
                        blocks.insert(index, PartialBlock::Text);
                    }
                    Some("tool_use") => {
                        blocks.insert(
                            index,
                            PartialBlock::ToolUse {
                                id: block["id"].as_str().unwrap_or_default().to_owned(),
                                name: block["name"].as_str().unwrap_or_default().to_owned(),
                                json: String::new(),
                            },
                        );
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let index = data["index"].as_u64().unwrap_or(0);
                let delta = &data["delta"];
                match (blocks.get_mut(&index), delta["type"].as_str()) {
                    (Some(PartialBlock::Text), Some("text_delta")) => {
                        let piece = delta["text"].as_str().unwrap_or("");
                        sink.text(piece);
                        text.push_str(piece);
                    }
                    (Some(PartialBlock::ToolUse { name, json, .. }), Some("input_json_delta")) => {
                        let piece = delta["partial_json"].as_str().unwrap_or("");
                        // The structured answer streams like text would on other providers.
                        if name == ANSWER_TOOL && *answer == AnswerShape::Object {
                            sink.text(piece);
                        }
                        json.push_str(piece);
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    stop_reason = Some(reason.to_owned());
                }
                if let Some(out) = data["usage"]["output_tokens"].as_u64() {
                    usage.output_tokens = Some(out);
                }
                if let Some(input) = data["usage"]["input_tokens"].as_u64() {
                    usage.input_tokens = Some(input);
                }
            }
            "message_stop" => {
                let mut calls = Vec::new();
                for block in blocks.into_values() {
                    if let PartialBlock::ToolUse { id, name, json } = block {
                        calls.push(ToolCall::from_raw_arguments(id, name, &json));
                    }
                }
                return Ok(assemble(
                    text,
                    calls,
                    stop_reason.as_deref(),
                    Usage {
                        input_tokens: usage.input().unwrap_or(0),
                        output_tokens: usage.output_tokens.unwrap_or(0),
                    },
                    message_id,
                    answer,
                ));
            }
            "error" => {
                let error = &data["error"];
                let message = error["message"]
                    .as_str()
                    .unwrap_or("stream error")
                    .to_owned();
                let kind = error["type"].as_str().unwrap_or("");
                return Err(match kind {
                    "overloaded_error" | "api_error" => {
                        ProviderError::new(ProviderErrorKind::Unavailable, message)
                            .with_retryable(!sink.delivered())
                    }
                    "rate_limit_error" => ProviderError::new(
                        ProviderErrorKind::RateLimited { retry_after: None },
                        message,
                    )
                    .with_retryable(!sink.delivered()),
                    _ => ProviderError::from_stream_error(message, sink.delivered()),
                });
            }
            _ => {} // ping, content_block_stop, and events added later
        }
    }
    Err(ProviderError::truncated(
        "the stream ended before message_stop",
        sink.delivered(),
    ))
}

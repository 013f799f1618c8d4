//! Ollama's native chat API (`POST {base}/api/chat`, NDJSON when streaming), on `reqwest`.
//!
//! Same shape as `openai.rs` and `anthropic.rs`: client, request mapping, response mapping,
//! streaming. Ollama specifics: `stream` must be sent explicitly (it defaults to true), structured
//! output goes in `format` as a JSON Schema, sampling hints go in `options` (`num_predict` for the
//! token limit), tool-call arguments are JSON objects and each call arrives whole, tool results
//! carry `tool_name`, and a failure mid-stream is an `{"error": ...}` line under status 200.

use async_trait::async_trait;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::error::{ProviderError, ProviderErrorKind};
use crate::openai::{merged_hints, tool_result_text};
use crate::provider::{CallOptions, Provider};
use crate::retry::run_with_retries;
use crate::spec::{ProviderKind, ProviderSpec};
use crate::transport::{ErrorBody, TrackingSink, lossy_text, secret_header, send};
use crate::types::{ChatMessage, ChatRequest, ChatResponse, FinishReason, ToolCall, Usage};

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

/// A provider speaking Ollama's `/api/chat`.
pub struct OllamaProvider {
    spec: ProviderSpec,
    http: reqwest::Client,
    url: String,
    headers: http::HeaderMap,
}

impl OllamaProvider {
    /// Builds the provider on a shared HTTP client. A key, if configured, is sent as a bearer
    /// token (for Ollama behind an authenticating proxy).
    pub fn new(spec: ProviderSpec, http: reqwest::Client) -> Result<Self, ProviderError> {
        let mut headers = spec.header_map();
        if let Some(key) = &spec.api_key {
            headers.insert(http::header::AUTHORIZATION, secret_header("Bearer ", key)?);
        }
        Ok(OllamaProvider {
            url: format!("{}/api/chat", spec.base_url),
            spec,
            http,
            headers,
        })
    }
}

#[async_trait]
impl Provider for OllamaProvider {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Ollama
    }

    fn model(&self) -> &str {
        &self.spec.model
    }

    async fn chat(
        &self,
        request: ChatRequest,
        options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let body = to_wire_request(&self.spec, &request, options.stream.is_some());
        let spec = &self.spec;
        run_with_retries(ProviderKind::Ollama, &self.spec.retry, &options, |_| {
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
                        read_stream(response, &sink).await?
                    } else {
                        let bytes = response
                            .bytes()
                            .await
                            .map_err(|e| ProviderError::from_transport(&e))?;
                        let line: WireLine = serde_json::from_slice(&bytes).map_err(|e| {
                            ProviderError::malformed(format!(
                                "the body is not an Ollama reply: {e}"
                            ))
                        })?;
                        let mut reply = Reply::default();
                        reply.absorb(line, &sink)?;
                        reply.finish(&sink)?
                    };
                    reply.request_id = request_id;
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

fn to_wire_request(spec: &ProviderSpec, request: &ChatRequest, stream: bool) -> Value {
    let hints = merged_hints(&request.hints, &spec.default_hints);
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in &request.messages {
        messages.push(match message {
            ChatMessage::User { text } => json!({"role": "user", "content": text}),
            ChatMessage::Assistant { text, tool_calls } => {
                let mut m = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    m["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            // Ollama only accepts object arguments; a call whose arguments were
                            // invalid goes back with none (the engine answered it with an error).
                            let arguments = if c.arguments.is_object() {
                                c.arguments.clone()
                            } else {
                                Value::Object(Map::new())
                            };
                            json!({"function": {"name": c.name, "arguments": arguments}})
                        })
                        .collect();
                }
                m
            }
            ChatMessage::ToolResult {
                name,
                content,
                is_error,
                ..
            } => json!({
                "role": "tool",
                "tool_name": name,
                "content": tool_result_text(content, *is_error),
            }),
        });
    }
    let mut body = json!({"model": spec.model, "messages": messages, "stream": stream});
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
    }
    if let Some(schema) = &request.response_schema {
        body["format"] = schema.schema.clone();
    }
    let mut wire_options = Map::new();
    if let Some(t) = hints.temperature {
        wire_options.insert("temperature".into(), json!(t));
    }
    if let Some(p) = hints.top_p {
        wire_options.insert("top_p".into(), json!(p));
    }
    if let Some(n) = hints.max_tokens {
        wire_options.insert("num_predict".into(), json!(n));
    }
    if let Some(seed) = hints.seed {
        wire_options.insert("seed".into(), json!(seed));
    }
    if !wire_options.is_empty() {
        body["options"] = Value::Object(wire_options);
    }
    body
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
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: String,
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
struct Reply {
    text: String,
    tool_calls: Vec<ToolCall>,
    done_reason: Option<String>,
    done: bool,
    usage: Usage,
}

impl Reply {
    /// Takes in one line; an `error` line fails the attempt.
    fn absorb(&mut self, line: WireLine, sink: &TrackingSink<'_>) -> Result<(), ProviderError> {
        if let Some(error) = line.error {
            let message = error
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| error.to_string());
            return Err(ProviderError::from_stream_error(message, sink.delivered()));
        }
        if let Some(message) = line.message {
            sink.text(&message.content);
            self.text.push_str(&message.content);
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
        if line.done {
            self.done = true;
            self.done_reason = line.done_reason;
            self.usage = Usage {
                input_tokens: line.prompt_eval_count.unwrap_or(0),
                output_tokens: line.eval_count.unwrap_or(0),
            };
        }
        Ok(())
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
        })
    }
}

fn parse_error(body: &[u8]) -> ErrorBody {
    let message = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error").map(|e| {
                e.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| e.to_string())
            })
        })
        .unwrap_or_else(|| lossy_text(body));
    ErrorBody {
        codes: Vec::new(),
        message,
    }
}

// ---------------------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------------------

/// Reads NDJSON lines until the `done` line; the connection ending first is a truncation.
async fn read_stream(
    response: reqwest::Response,
    sink: &TrackingSink<'_>,
) -> Result<ChatResponse, ProviderError> {
    let mut reply = Reply::default();
    let mut buffer: Vec<u8> = Vec::new();
    let mut bytes = response.bytes_stream();
    loop {
        let chunk = match bytes.next().await {
            Some(Ok(chunk)) => chunk,
            Some(Err(e)) => {
                let error = ProviderError::from_transport(&e);
                let error = if error.kind == ProviderErrorKind::Timeout {
                    error
                } else {
                    ProviderError::truncated(
                        format!("the stream broke: {}", error.message),
                        sink.delivered(),
                    )
                };
                return Err(error.with_retryable(!sink.delivered()));
            }
            None => break,
        };
        buffer.extend_from_slice(&chunk);
        while let Some(newline) = buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buffer.drain(..=newline).collect();
            absorb_line(&mut reply, &line, sink)?;
            if reply.done {
                return reply.finish(sink);
            }
        }
    }
    // A last line without a trailing newline.
    absorb_line(&mut reply, &buffer, sink)?;
    reply.finish(sink)
}

fn absorb_line(
    reply: &mut Reply,
    line: &[u8],
    sink: &TrackingSink<'_>,
) -> Result<(), ProviderError> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let parsed: WireLine = serde_json::from_slice(line).map_err(|e| {
        ProviderError::malformed(format!("a stream line is not an Ollama chunk: {e}"))
    })?;
    reply.absorb(parsed, sink)
}

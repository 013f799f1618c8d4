//! OpenAI Chat Completions (`POST {base}/chat/completions`) for OpenAI itself and every
//! OpenAI-compatible server (vLLM, llama.cpp, LM Studio, OpenRouter, Ollama `/v1`), on
//! `async-openai`.
//!
//! Same shape as `ollama.rs` and `anthropic.rs`: client, request mapping, response mapping,
//! streaming. async-openai's built-in retry layer is replaced (via `with_http_service`) by a plain
//! service that also records the status and headers of each response, so our one retry policy
//! sees `Retry-After` and request ids. A stream that ends without a `finish_reason` is a
//! truncation error, not a short answer.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls,
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestAssistantMessageContent,
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestSystemMessageContent, ChatCompletionRequestToolMessage,
    ChatCompletionRequestToolMessageContent, ChatCompletionRequestUserMessage,
    ChatCompletionRequestUserMessageContent, ChatCompletionStreamOptions, ChatCompletionTool,
    ChatCompletionTools, CreateChatCompletionRequest, CreateChatCompletionResponse,
    FinishReason as WireFinish, FunctionCall, FunctionObject, ResponseFormat,
    ResponseFormatJsonSchema,
};
use async_trait::async_trait;
use futures::StreamExt;
use futures::future::BoxFuture;
use http::{HeaderMap, StatusCode};
use secrecy::{ExposeSecret, SecretString};

use crate::error::{ProviderError, ProviderErrorKind};
use crate::provider::{CallOptions, Provider};
use crate::retry::run_with_retries;
use crate::spec::{ProviderKind, ProviderSpec};
use crate::transport::TrackingSink;
use crate::types::{ChatMessage, ChatRequest, ChatResponse, FinishReason, Hints, ToolCall, Usage};

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

/// A provider speaking OpenAI Chat Completions.
pub struct OpenAiProvider {
    spec: ProviderSpec,
    http: reqwest::Client,
    config: OpenAIConfig,
    /// The spec's secrets, scrubbed from bodies before async-openai (which logs error bodies)
    /// sees them.
    secrets: Arc<[SecretString]>,
}

impl OpenAiProvider {
    /// Builds the provider on a shared HTTP client.
    pub fn new(spec: ProviderSpec, http: reqwest::Client) -> Result<Self, ProviderError> {
        // Always set the key, even to "": OpenAIConfig otherwise falls back to the process's
        // OPENAI_API_KEY and would send it to whatever base URL this spec names.
        let key = spec
            .api_key
            .as_ref()
            .map(|k| k.expose_secret().to_owned())
            .unwrap_or_default();
        let mut config = OpenAIConfig::new()
            .with_api_base(spec.base_url.clone())
            .with_api_key(key)
            .with_org_id("")
            .with_project_id("");
        for (name, value) in &spec.headers {
            let name = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                ProviderError::new(ProviderErrorKind::Config, format!("bad header name {name}"))
            })?;
            config = config
                .with_header(name.clone(), value.expose_secret())
                .map_err(|_| {
                    ProviderError::new(ProviderErrorKind::Config, format!("bad header {name}"))
                })?;
        }
        let secrets = spec.secrets().cloned().collect();
        Ok(OpenAiProvider {
            spec,
            http,
            config,
            secrets,
        })
    }

    /// An async-openai client for one attempt, whose transport records the response head.
    fn attempt_client(&self) -> (Client<OpenAIConfig>, ResponseHead) {
        let head = ResponseHead::default();
        let service = RecordingService {
            http: self.http.clone(),
            head: head.clone(),
            secrets: self.secrets.clone(),
        };
        let client =
            Client::build(self.http.clone(), self.config.clone()).with_http_service(service);
        (client, head)
    }
}

/// Status and headers of the last response an attempt received.
#[derive(Clone, Default)]
struct ResponseHead(Arc<Mutex<Option<(StatusCode, HeaderMap)>>>);

impl ResponseHead {
    fn get(&self) -> Option<(StatusCode, HeaderMap)> {
        self.0.lock().ok().and_then(|g| g.clone())
    }
}

/// The tower service async-openai sends through: no retries (ours is the only policy), it
/// keeps the response head for error classification, and it scrubs our secrets from
/// non-streamed bodies, because async-openai logs error bodies verbatim and a server may echo
/// a key back.
#[derive(Clone)]
struct RecordingService {
    http: reqwest::Client,
    head: ResponseHead,
    secrets: Arc<[SecretString]>,
}

impl tower::Service<HttpRequestFactory> for RecordingService {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = BoxFuture<'static, Result<reqwest::Response, OpenAIError>>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, factory: HttpRequestFactory) -> Self::Future {
        let http = self.http.clone();
        let head = self.head.clone();
        let secrets = self.secrets.clone();
        Box::pin(async move {
            let request = factory.build().await?;
            let response = http.execute(request).await.map_err(OpenAIError::Reqwest)?;
            if let Ok(mut slot) = head.0.lock() {
                *slot = Some((response.status(), response.headers().clone()));
            }
            let streamed = response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/event-stream"));
            if streamed || secrets.is_empty() {
                return Ok(response);
            }
            scrubbed(response, &secrets).await
        })
    }
}

/// Re-assembles a non-streamed response with every secret in its body replaced.
async fn scrubbed(
    response: reqwest::Response,
    secrets: &[SecretString],
) -> Result<reqwest::Response, OpenAIError> {
    let status = response.status();
    let version = response.version();
    let mut headers = response.headers().clone();
    let body = response.bytes().await.map_err(OpenAIError::Reqwest)?;
    let mut text: Option<String> = None;
    for secret in secrets {
        let needle = secret.expose_secret();
        let current = text.as_deref().map_or(&body[..], str::as_bytes);
        if !needle.is_empty()
            && current
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
        {
            let replaced = String::from_utf8_lossy(current).replace(needle, "[REDACTED]");
            text = Some(replaced);
        }
    }
    let body = match text {
        Some(text) => {
            headers.remove(http::header::CONTENT_LENGTH);
            bytes::Bytes::from(text)
        }
        None => body,
    };
    let mut rebuilt = http::Response::new(reqwest::Body::from(body));
    *rebuilt.status_mut() = status;
    *rebuilt.version_mut() = version;
    *rebuilt.headers_mut() = headers;
    Ok(reqwest::Response::from(rebuilt))
}

#[async_trait]
impl Provider for OpenAiProvider {
    fn kind(&self) -> ProviderKind {
        self.spec.kind
    }

    fn model(&self) -> &str {
        &self.spec.model
    }

    async fn chat(
        &self,
        request: ChatRequest,
        options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let wire = to_wire_request(&self.spec, &request);
        let spec = &self.spec;
        run_with_retries(self.spec.kind, &self.spec.retry, &options, |_| {
            let wire = wire.clone();
            async move {
                let (client, head) = self.attempt_client();
                let result = match options.stream {
                    None => client
                        .chat()
                        .create(wire)
                        .await
                        .map_err(|e| map_error(e, &head, false))
                        .and_then(|r| from_wire_response(r, &head)),
                    Some(_) => {
                        let sink = TrackingSink::new(options.stream);
                        stream_chat(&client, wire, &head, &sink).await
                    }
                };
                result.map_err(|e| e.redact(spec.secrets()))
            }
        })
        .await
    }
}

// ---------------------------------------------------------------------------------------------
// Request mapping
// ---------------------------------------------------------------------------------------------

#[allow(deprecated)] // `max_tokens` and `seed` are deprecated by OpenAI but read by compatibles.
fn to_wire_request(spec: &ProviderSpec, request: &ChatRequest) -> CreateChatCompletionRequest {
    let hints = merged_hints(&request.hints, &spec.default_hints);
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(ChatCompletionRequestMessage::System(
            ChatCompletionRequestSystemMessage {
                content: ChatCompletionRequestSystemMessageContent::Text(system.clone()),
                name: None,
            },
        ));
    }
    messages.extend(request.messages.iter().map(to_wire_message));

    let tools = (!request.tools.is_empty()).then(|| {
        request
            .tools
            .iter()
            .map(|t| {
                ChatCompletionTools::Function(ChatCompletionTool {
                    function: FunctionObject {
                        name: t.name.clone(),
                        description: Some(t.description.clone()),
                        parameters: Some(t.parameters.clone()),
                        strict: None,
                    },
                })
            })
            .collect()
    });
    let response_format = request
        .response_schema
        .as_ref()
        .map(|s| ResponseFormat::JsonSchema {
            json_schema: ResponseFormatJsonSchema {
                description: None,
                name: s.name.clone(),
                schema: s.schema.clone(),
                strict: None,
            },
        });

    let mut wire = CreateChatCompletionRequest {
        model: spec.model.clone(),
        messages,
        tools,
        response_format,
        temperature: hints.temperature,
        top_p: hints.top_p,
        seed: hints.seed,
        ..Default::default()
    };
    // OpenAI wants `max_completion_tokens`; most compatible servers (Ollama /v1 among them)
    // only read `max_tokens`.
    match spec.kind {
        ProviderKind::Openai => wire.max_completion_tokens = hints.max_tokens,
        _ => wire.max_tokens = hints.max_tokens,
    }
    wire
}

/// Request hints win; the spec's defaults fill the gaps.
pub(crate) fn merged_hints(request: &Hints, defaults: &Hints) -> Hints {
    Hints {
        max_tokens: request.max_tokens.or(defaults.max_tokens),
        temperature: request.temperature.or(defaults.temperature),
        top_p: request.top_p.or(defaults.top_p),
        seed: request.seed.or(defaults.seed),
    }
}

/// Tool errors go back as text: Chat Completions has no error flag on tool messages.
pub(crate) fn tool_result_text(content: &str, is_error: bool) -> String {
    if is_error {
        format!("Error: {content}")
    } else {
        content.to_owned()
    }
}

#[allow(deprecated)] // the struct has a deprecated `function_call` field we leave unset
fn to_wire_message(message: &ChatMessage) -> ChatCompletionRequestMessage {
    match message {
        ChatMessage::User { text } => {
            ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
                content: ChatCompletionRequestUserMessageContent::Text(text.clone()),
                name: None,
            })
        }
        ChatMessage::Assistant { text, tool_calls } => {
            let calls: Vec<ChatCompletionMessageToolCalls> = tool_calls
                .iter()
                .map(|c| {
                    ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
                        id: c.id.clone(),
                        function: FunctionCall {
                            name: c.name.clone(),
                            arguments: raw_arguments(c),
                        },
                    })
                })
                .collect();
            ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
                content: (!text.is_empty() || calls.is_empty())
                    .then(|| ChatCompletionRequestAssistantMessageContent::Text(text.clone())),
                tool_calls: (!calls.is_empty()).then_some(calls),
                ..Default::default()
            })
        }
        ChatMessage::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
            content: ChatCompletionRequestToolMessageContent::Text(tool_result_text(
                content, *is_error,
            )),
            tool_call_id: call_id.clone(),
        }),
    }
}

/// The argument text to send back: the model's own text when it was invalid JSON.
fn raw_arguments(call: &ToolCall) -> String {
    match (&call.invalid_arguments, &call.arguments) {
        (Some(_), serde_json::Value::String(raw)) => raw.clone(),
        (_, value) => value.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// Response mapping
// ---------------------------------------------------------------------------------------------

fn from_wire_response(
    response: CreateChatCompletionResponse,
    head: &ResponseHead,
) -> Result<ChatResponse, ProviderError> {
    let request_id = head_request_id(head).or_else(|| Some(response.id.clone()));
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
    let usage = response
        .usage
        .map(|u| Usage {
            input_tokens: u.prompt_tokens.into(),
            output_tokens: u.completion_tokens.into(),
        })
        .unwrap_or_default();
    Ok(ChatResponse {
        finish_reason: finish_reason(choice.finish_reason, !tool_calls.is_empty()),
        text,
        tool_calls,
        usage,
        request_id,
    })
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

fn head_request_id(head: &ResponseHead) -> Option<String> {
    head.get()
        .and_then(|(_, headers)| crate::error::request_id(&headers))
}

/// Maps an async-openai error, using the recorded response head for status and `Retry-After`.
fn map_error(error: OpenAIError, head: &ResponseHead, delivered: bool) -> ProviderError {
    let recorded = head.get().filter(|(status, _)| !status.is_success());
    match error {
        OpenAIError::ApiError(api) => {
            let headers = recorded.map(|(_, h)| h).unwrap_or_default();
            let codes: Vec<&str> = [
                api.api_error.r#type.as_deref(),
                api.api_error.code.as_deref(),
            ]
            .into_iter()
            .flatten()
            .collect();
            ProviderError::from_http(api.status_code, &headers, &codes, api.api_error.message)
        }
        // A non-2xx body that is not OpenAI's error shape: classify by the status.
        OpenAIError::JSONDeserialize(_, body) if recorded.is_some() => {
            let (status, headers) = recorded.unwrap_or_default();
            ProviderError::from_http(status, &headers, &[], body)
        }
        // A 200 stream (or body) carrying an error object instead of a chunk.
        OpenAIError::JSONDeserialize(_, body) if stream_error_message(&body).is_some() => {
            let message = stream_error_message(&body).unwrap_or_default();
            ProviderError::from_stream_error(message, delivered)
        }
        OpenAIError::JSONDeserialize(e, _) => {
            ProviderError::malformed(format!("the body is not a chat completion: {e}"))
        }
        OpenAIError::Reqwest(e) => {
            let error = ProviderError::from_transport(&e);
            if delivered {
                error.with_retryable(false)
            } else {
                error
            }
        }
        OpenAIError::StreamError(e) => {
            ProviderError::truncated(format!("the event stream broke: {e}"), delivered)
        }
        OpenAIError::InvalidArgument(message) => {
            ProviderError::new(ProviderErrorKind::BadRequest, message)
        }
        other => ProviderError::new(ProviderErrorKind::Unavailable, other.to_string())
            .with_retryable(!delivered),
    }
}

/// The message of an `{"error": {...}}` body, if that is what `body` is.
fn stream_error_message(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let error = value.get("error")?;
    Some(
        error
            .get("message")
            .and_then(|m| m.as_str())
            .map(str::to_owned)
            .unwrap_or_else(|| error.to_string()),
    )
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

async fn stream_chat(
    client: &Client<OpenAIConfig>,
    mut wire: CreateChatCompletionRequest,
    head: &ResponseHead,
    sink: &TrackingSink<'_>,
) -> Result<ChatResponse, ProviderError> {
    wire.stream = Some(true);
    wire.stream_options = Some(ChatCompletionStreamOptions {
        include_usage: Some(true),
        include_obfuscation: None,
    });
    let mut stream = client
        .chat()
        .create_stream(wire)
        .await
        .map_err(|e| map_error(e, head, false))?;

    let mut text = String::new();
    let mut calls: BTreeMap<u32, PartialCall> = BTreeMap::new();
    let mut finish: Option<WireFinish> = None;
    let mut usage = Usage::default();
    let mut response_id = None;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| map_error(e, head, sink.delivered()))?;
        response_id.get_or_insert(chunk.id);
        if let Some(u) = chunk.usage {
            usage = Usage {
                input_tokens: u.prompt_tokens.into(),
                output_tokens: u.completion_tokens.into(),
            };
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta.content {
                sink.text(&delta);
                text.push_str(&delta);
            }
            for fragment in choice.delta.tool_calls.unwrap_or_default() {
                let call = calls.entry(fragment.index).or_default();
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
                finish = choice.finish_reason;
            }
        }
    }
    if finish.is_none() {
        return Err(ProviderError::truncated(
            "the stream ended before the model finished (no finish_reason)",
            sink.delivered(),
        ));
    }
    let tool_calls: Vec<ToolCall> = calls
        .into_iter()
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
        finish_reason: finish_reason(finish, !tool_calls.is_empty()),
        text,
        tool_calls,
        usage,
        request_id: head_request_id(head).or(response_id),
    })
}

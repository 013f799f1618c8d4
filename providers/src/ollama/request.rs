//! The `/api/chat` request body as typed serde structs that borrow the [`ChatRequest`], and the
//! mapping to it: `stream` always sent, the answer schema in `format`, sampling hints in
//! `options`, tool results carrying `tool_name`, images as bytes only, `think`.
//!
//! What is not here: the `Wire` impl (`mod.rs`), answers (`response.rs`, `stream.rs`).

use std::borrow::Cow;
use std::sync::LazyLock;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::modes::{OutputMode, TurnPlan};
use crate::types::{ChatMessage, ChatRequest, ImageSource};
use crate::wire::{WireSettings, tool_result_text};

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

pub(super) fn to_wire_request<'a>(
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

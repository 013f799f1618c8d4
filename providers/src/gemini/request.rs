//! The `generateContent` request body as typed serde structs that borrow the [`ChatRequest`],
//! and the mapping to it: `contents` of `user`/`model` turns, `systemInstruction`,
//! `functionDeclarations`, `functionResponse` parts, `generationConfig` with the answer schema
//! and `thinkingConfig`, `thoughtSignature`s sent back on their parts.
//!
//! What is not here: the path and key header (`mod.rs`), answers (`response.rs`, `stream.rs`).

use std::sync::LazyLock;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::modes::{OutputMode, TurnPlan};
use crate::types::{ChatMessage, ChatRequest, ImageSource, ThinkingBlock};
use crate::wire::WireSettings;

/// The `generateContent` request body. It borrows the conversation, tool schemas and response
/// schema from the [`ChatRequest`]: nothing is copied per turn.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireRequest<'a> {
    contents: Vec<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<SystemInstruction<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTools<'a>>,
    #[serde(skip_serializing_if = "GenerationConfig::is_empty")]
    generation_config: GenerationConfig<'a>,
}

#[derive(Serialize)]
struct Content<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
}

#[derive(Serialize)]
struct SystemInstruction<'a> {
    parts: [Part<'a>; 1],
}

/// One part: text, a function call or a function response (exactly one of them), with the
/// thought signature that came with it.
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct Part<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    function_call: Option<FunctionCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    function_response: Option<FunctionResponse<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inline_data: Option<InlineData<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file_data: Option<FileData<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thought_signature: Option<&'a str>,
}

/// An image's bytes: `{"mimeType", "data": BASE64}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InlineData<'a> {
    mime_type: &'a str,
    data: &'a str,
}

/// An image the API fetches: `{"mimeType", "fileUri"}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FileData<'a> {
    mime_type: &'a str,
    file_uri: &'a str,
}

#[derive(Serialize)]
struct FunctionCall<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    id: &'a str,
    name: &'a str,
    args: &'a Value,
}

#[derive(Serialize)]
struct FunctionResponse<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    id: &'a str,
    name: &'a str,
    response: ToolOutput<'a>,
}

/// `{"output": TEXT}` or `{"error": TEXT}`, the keys the API documents for a function's result.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum ToolOutput<'a> {
    Output(&'a str),
    Error(&'a str),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireTools<'a> {
    function_declarations: Vec<FunctionDeclaration<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FunctionDeclaration<'a> {
    name: &'a str,
    description: &'a str,
    parameters_json_schema: &'a RawValue,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct GenerationConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_mime_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_json_schema: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_config: Option<ThinkingConfig<'a>>,
}

impl GenerationConfig<'_> {
    fn is_empty(&self) -> bool {
        let GenerationConfig {
            temperature,
            top_p,
            max_output_tokens,
            seed,
            response_mime_type,
            response_json_schema,
            thinking_config,
        } = self;
        temperature.is_none()
            && top_p.is_none()
            && max_output_tokens.is_none()
            && seed.is_none()
            && response_mime_type.is_none()
            && response_json_schema.is_none()
            && thinking_config.is_none()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ThinkingConfig<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_budget: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_level: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    include_thoughts: bool,
}

/// The arguments sent back for a call whose own were not a JSON object.
static NO_ARGUMENTS: LazyLock<Value> = LazyLock::new(|| Value::Object(Map::new()));

pub(super) fn to_wire_request<'a>(
    spec: WireSettings<'a>,
    request: &'a ChatRequest,
    plan: &'a TurnPlan,
) -> WireRequest<'a> {
    let hints = request.hints.or(spec.default_hints);
    let declarations: Vec<FunctionDeclaration> = request
        .tools
        .iter()
        .filter(|_| plan.native_tools)
        .map(|t| FunctionDeclaration {
            name: &t.name,
            description: &t.description,
            parameters_json_schema: t.parameters.json_text(),
        })
        .collect();
    let tools = if declarations.is_empty() {
        Vec::new()
    } else {
        vec![WireTools {
            function_declarations: declarations,
        }]
    };
    let (response_mime_type, response_json_schema) = match (plan.output, &plan.schema) {
        (OutputMode::JsonSchema, Some(schema)) => {
            (Some("application/json"), Some(schema.schema.json_text()))
        }
        (OutputMode::JsonObject, Some(_)) => (Some("application/json"), None),
        _ => (None, None),
    };
    let system_instruction = request
        .system
        .as_deref()
        .filter(|s| !s.is_empty())
        .map(|text| SystemInstruction {
            parts: [Part {
                text: Some(text),
                ..Part::default()
            }],
        });
    WireRequest {
        contents: to_contents(&request.messages),
        system_instruction,
        tools,
        generation_config: GenerationConfig {
            temperature: hints.temperature,
            top_p: hints.top_p,
            max_output_tokens: hints.max_tokens,
            seed: hints.seed,
            response_mime_type,
            response_json_schema,
            thinking_config: thinking_config(&request.hints.reasoning, spec.reasoning),
        },
    }
}

/// `thinkingConfig` from the request's reasoning settings over the spec's: a budget, a level
/// (`reasoning_effort`: `none` is a budget of 0, `xhigh` the API's `high`), or nothing when
/// neither is set.
fn thinking_config<'a>(
    request: &'a crate::types::Reasoning,
    spec: &'a crate::types::Reasoning,
) -> Option<ThinkingConfig<'a>> {
    let mut budget = request
        .thinking_budget_tokens
        .or(spec.thinking_budget_tokens);
    let effort = request
        .reasoning_effort
        .as_deref()
        .or(spec.reasoning_effort.as_deref());
    let level = match effort {
        None => None,
        Some("none") => {
            budget = budget.or(Some(0));
            None
        }
        Some("xhigh") => Some("high"),
        Some(level) => Some(level),
    };
    if budget.is_none() && level.is_none() {
        return None;
    }
    Some(ThinkingConfig {
        thinking_budget: budget,
        thinking_level: level,
        include_thoughts: budget != Some(0),
    })
}

/// Maps messages to `user`/`model` turns: consecutive messages of the same role merge (the
/// answers to parallel calls go back in one turn, as the API asks).
fn to_contents(messages: &[ChatMessage]) -> Vec<Content<'_>> {
    let mut contents: Vec<Content> = Vec::new();
    for message in messages {
        let (role, parts) = match message {
            ChatMessage::User { text } => ("user", text_part(text, None).into_iter().collect()),
            ChatMessage::Image { image } => {
                let mime_type = image.media_type.as_str();
                let part = match &image.source {
                    ImageSource::Base64(data) => Part {
                        inline_data: Some(InlineData { mime_type, data }),
                        ..Part::default()
                    },
                    ImageSource::Url(file_uri) => Part {
                        file_data: Some(FileData {
                            mime_type,
                            file_uri,
                        }),
                        ..Part::default()
                    },
                };
                ("user", vec![part])
            }
            ChatMessage::Assistant {
                text,
                tool_calls,
                thinking,
            } => {
                let signature_of = |call: Option<&str>| {
                    thinking.iter().find_map(|block| match block {
                        ThinkingBlock::ThoughtSignature {
                            call: of,
                            signature,
                        } if of.as_deref() == call => Some(signature.as_str()),
                        _ => None,
                    })
                };
                let mut parts: Vec<Part> =
                    text_part(text, signature_of(None)).into_iter().collect();
                parts.extend(tool_calls.iter().map(|c| Part {
                    function_call: Some(FunctionCall {
                        id: &c.id,
                        name: &c.name,
                        // The API only accepts object arguments; invalid ones go back empty.
                        args: if c.arguments.is_object() {
                            &c.arguments
                        } else {
                            &NO_ARGUMENTS
                        },
                    }),
                    thought_signature: signature_of(Some(&c.id)),
                    ..Part::default()
                }));
                ("model", parts)
            }
            ChatMessage::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => (
                "user",
                vec![Part {
                    function_response: Some(FunctionResponse {
                        id: call_id,
                        name,
                        response: if *is_error {
                            ToolOutput::Error(content)
                        } else {
                            ToolOutput::Output(content)
                        },
                    }),
                    ..Part::default()
                }],
            ),
        };
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some(last) if last.role == role => last.parts.extend(parts),
            _ => contents.push(Content { role, parts }),
        }
    }
    contents
}

/// Empty text adds no part.
fn text_part<'a>(text: &'a str, signature: Option<&'a str>) -> Option<Part<'a>> {
    (!text.is_empty()).then_some(Part {
        text: Some(text),
        thought_signature: signature,
        ..Part::default()
    })
}

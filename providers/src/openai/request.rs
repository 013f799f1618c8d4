//! The Chat Completions request body as typed serde structs that **borrow** the engine's
//! [`ChatRequest`]: the system prompt, the conversation, the tool schemas and the response
//! schema are serialized straight from the caller's data, never copied into owned wire structs
//! first. The agent loop re-sends the whole conversation every turn, so copying it into
//! async-openai's owned request types cost a clone of every string and schema per turn.
//!
//! The shape is exactly async-openai's `CreateChatCompletionRequest` for the fields we set
//! (same names, same tags, same omissions); the tests below serialize both from the same
//! request and compare them, so a drift from async-openai's model fails here.
//!
//! Not here: responses and stream chunks (async-openai's types, decoded in `response.rs` and
//! `stream.rs`).

use std::fmt;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::modes::{ANSWER_TOOL, OutputMode, TurnPlan};
use crate::types::{ChatMessage, ChatRequest, ToolCall, ToolSpec};
use crate::wire::WireSettings;

/// `POST /chat/completions` body, borrowing everything it sends.
#[derive(Serialize)]
pub(crate) struct ChatCompletionBody<'a> {
    messages: Messages<'a>,
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Tools<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ToolChoice>,
}

/// `tool_choice`: `"required"`, or one named function (OpenAI itself only).
enum ToolChoice {
    Required,
    Answer,
}

impl Serialize for ToolChoice {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolChoice::Required => serializer.serialize_str("required"),
            ToolChoice::Answer => TypedFunction {
                id: None,
                function: NamedFunction { name: ANSWER_TOOL },
            }
            .serialize(serializer),
        }
    }
}

#[derive(Serialize)]
struct NamedFunction {
    name: &'static str,
}

impl<'a> ChatCompletionBody<'a> {
    /// The body for `request` to the model of `spec`. OpenAI wants `max_completion_tokens`;
    /// most compatible servers (Ollama `/v1` among them) only read `max_tokens`.
    pub(crate) fn new(
        spec: WireSettings<'a>,
        request: &'a ChatRequest,
        plan: &'a TurnPlan,
        stream: bool,
    ) -> Self {
        let hints = request.hints.or(spec.default_hints);
        let official = spec.official_openai;
        let answer_tool = match (plan.output, &plan.schema) {
            (OutputMode::Tool, Some(schema)) => Some(schema),
            _ => None,
        };
        let offered = if plan.native_tools {
            request.tools.as_slice()
        } else {
            &[]
        };
        let tools = (!offered.is_empty() || answer_tool.is_some()).then_some(Tools {
            offered,
            answer: answer_tool.map(|s| s.schema.json_text()),
        });
        // Only OpenAI itself gets the answer tool by name: llama.cpp reads a named
        // `tool_choice` as `auto` (the model may then answer in prose), while `required` with
        // the answer tool alone forces the same call on every server.
        let tool_choice = answer_tool.map(|_| {
            if offered.is_empty() && official {
                ToolChoice::Answer
            } else {
                ToolChoice::Required
            }
        });
        ChatCompletionBody {
            messages: Messages {
                system: request.system.as_deref(),
                history: &request.messages,
            },
            model: spec.model,
            reasoning_effort: request
                .hints
                .reasoning
                .reasoning_effort
                .as_deref()
                .or(spec.reasoning.reasoning_effort.as_deref()),
            max_completion_tokens: hints.max_tokens.filter(|_| official),
            response_format: ResponseFormat::for_plan(plan),
            stream: stream.then_some(true),
            max_tokens: hints.max_tokens.filter(|_| !official),
            seed: hints.seed,
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
            temperature: hints.temperature,
            top_p: hints.top_p,
            tools,
            tool_choice,
        }
    }
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// The system prompt (when there is one) followed by the conversation.
struct Messages<'a> {
    system: Option<&'a str>,
    history: &'a [ChatMessage],
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let system = self.system.map(|content| Message::System { content });
        serializer.collect_seq(system.into_iter().chain(self.history.iter().map(message)))
    }
}

/// One message, tagged by `role` like async-openai's `ChatCompletionRequestMessage`.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum Message<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    /// A user message holding one image part.
    #[serde(rename = "user")]
    UserImage {
        content: [ImagePart<'a>; 1],
    },
    Assistant {
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_calls: Option<ToolCalls<'a>>,
    },
    Tool {
        content: ToolResultText<'a>,
        tool_call_id: &'a str,
    },
}

fn message(message: &ChatMessage) -> Message<'_> {
    match message {
        ChatMessage::User { text } => Message::User { content: text },
        ChatMessage::Image { image } => Message::UserImage {
            content: [ImagePart {
                kind: "image_url",
                image_url: ImageUrl {
                    url: image.data_url(),
                },
            }],
        },
        ChatMessage::Assistant {
            text, tool_calls, ..
        } => Message::Assistant {
            // An assistant turn with neither text nor calls still says `content: ""`.
            content: (!text.is_empty() || tool_calls.is_empty()).then_some(text.as_str()),
            tool_calls: (!tool_calls.is_empty()).then_some(ToolCalls(tool_calls)),
        },
        ChatMessage::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => Message::Tool {
            content: ToolResultText {
                content,
                is_error: *is_error,
            },
            tool_call_id: call_id,
        },
    }
}

/// `{"type": "image_url", "image_url": {"url": "data:image/png;base64,…" or "https://…"}}`.
#[derive(Serialize)]
struct ImagePart<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    image_url: ImageUrl<'a>,
}

#[derive(Serialize)]
struct ImageUrl<'a> {
    url: std::borrow::Cow<'a, str>,
}

/// A tool result's text; errors go back as `Error: ...` (tool messages have no error flag).
/// Written straight into the body, without building the prefixed string first.
struct ToolResultText<'a> {
    content: &'a str,
    is_error: bool,
}

impl Serialize for ToolResultText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_error {
            serializer.collect_str(&format_args!("Error: {}", self.content))
        } else {
            serializer.serialize_str(self.content)
        }
    }
}

/// An assistant turn's tool calls: `{"type":"function","id":..,"function":{..}}` each.
struct ToolCalls<'a>(&'a [ToolCall]);

impl Serialize for ToolCalls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|call| TypedFunction {
            id: Some(&call.id),
            function: CalledFunction {
                name: &call.name,
                arguments: Arguments(call),
            },
        }))
    }
}

/// `{"type":"function", "id"?: .., "function": ..}`, the shape of a tool call and of a tool.
struct TypedFunction<'a, F> {
    id: Option<&'a str>,
    function: F,
}

impl<F: Serialize> Serialize for TypedFunction<'_, F> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", "function")?;
        if let Some(id) = self.id {
            map.serialize_entry("id", id)?;
        }
        map.serialize_entry("function", &self.function)?;
        map.end()
    }
}

#[derive(Serialize)]
struct CalledFunction<'a> {
    name: &'a str,
    arguments: Arguments<'a>,
}

/// The argument text sent back: the model's own text when it was invalid JSON, else the
/// arguments as compact JSON, written into the body as a JSON string without an interim
/// `String`.
struct Arguments<'a>(&'a ToolCall);

impl Serialize for Arguments<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match (&self.0.invalid_arguments, &self.0.arguments) {
            (Some(_), Value::String(raw)) => serializer.serialize_str(raw),
            (_, value) => serializer.collect_str(&CompactJson(value)),
        }
    }
}

/// A JSON value displayed as compact JSON text.
struct CompactJson<'a>(&'a Value);

impl fmt::Display for CompactJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.0, f)
    }
}

/// The offered tools: `{"type":"function","function":{"name","description","parameters"}}`,
/// and in `tool` output mode the answer tool after them.
struct Tools<'a> {
    offered: &'a [ToolSpec],
    answer: Option<&'a RawValue>,
}

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let offered = self.offered.iter().map(|tool| TypedFunction {
            id: None,
            function: OfferedFunction {
                name: &tool.name,
                description: &tool.description,
                parameters: tool.parameters.json_text(),
            },
        });
        let answer = self.answer.map(|parameters| TypedFunction {
            id: None,
            function: OfferedFunction {
                name: ANSWER_TOOL,
                description: "Give your final answer by calling this tool; its arguments are \
                              the answer.",
                parameters,
            },
        });
        serializer.collect_seq(offered.chain(answer))
    }
}

#[derive(Serialize)]
struct OfferedFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a RawValue,
}

/// `{"type":"json_schema","json_schema":{"name","schema","strict"?}}`, or
/// `{"type":"json_object","schema"}` (llama-cpp-python enforces `schema` with a grammar).
enum ResponseFormat<'a> {
    JsonSchema {
        name: &'a str,
        schema: &'a RawValue,
        strict: bool,
    },
    JsonObject {
        schema: &'a RawValue,
    },
}

impl<'a> ResponseFormat<'a> {
    fn for_plan(plan: &'a TurnPlan) -> Option<Self> {
        let schema = plan.schema.as_ref()?;
        match plan.output {
            OutputMode::JsonSchema => Some(ResponseFormat::JsonSchema {
                name: &schema.name,
                schema: schema.schema.json_text(),
                strict: plan.strict,
            }),
            OutputMode::JsonObject => Some(ResponseFormat::JsonObject {
                schema: schema.schema.json_text(),
            }),
            _ => None,
        }
    }
}

impl Serialize for ResponseFormat<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct JsonSchema<'a> {
            name: &'a str,
            schema: &'a RawValue,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            strict: bool,
        }
        let mut map = serializer.serialize_map(Some(2))?;
        match self {
            ResponseFormat::JsonSchema {
                name,
                schema,
                strict,
            } => {
                map.serialize_entry("type", "json_schema")?;
                map.serialize_entry(
                    "json_schema",
                    &JsonSchema {
                        name,
                        schema,
                        strict: *strict,
                    },
                )?;
            }
            ResponseFormat::JsonObject { schema } => {
                map.serialize_entry("type", "json_object")?;
                map.serialize_entry("schema", schema)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;

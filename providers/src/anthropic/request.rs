//! The Anthropic Messages request body (`/v1/messages`) as typed serde structs that borrow
//! the [`ChatRequest`], and the mapping to it: the system prompt as one text block, tool calls as
//! `tool_use` and their results as `tool_result` blocks inside a `user` turn, images, extended
//! thinking (`thinking` / `redacted_thinking` blocks echoed unchanged), the forced answer tool,
//! and the prompt-cache breakpoints.
//!
//! What is not here: the `Wire` impl and its headers (`mod.rs`), answers (`response.rs`,
//! `stream.rs`).

use std::sync::LazyLock;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::DEFAULT_MAX_TOKENS;
use super::response::AnswerShape;
use crate::modes::{ANSWER_TOOL, OutputMode, TurnPlan};
use crate::types::{ChatMessage, ChatRequest, ImageSource, ThinkingBlock};
use crate::wire::WireSettings;

/// The `/v1/messages` request body. It borrows the conversation, tool schemas and response
/// schema from the [`ChatRequest`]: the loop re-sends them every turn, and nothing is copied.
#[derive(Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    messages: Vec<WireTurn<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<System<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
}

/// `{"type": "enabled", "budget_tokens": N}`: extended thinking (`thinking_budget_tokens`).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Thinking {
    Enabled { budget_tokens: u32 },
}

#[derive(Serialize)]
struct WireTurn<'a> {
    role: &'static str,
    content: Vec<WireRequestBlock<'a>>,
}

/// The system prompt: a plain string, or one text block when it carries a cache breakpoint.
#[derive(Serialize)]
#[serde(untagged)]
enum System<'a> {
    Text(&'a str),
    Cached([SystemBlock<'a>; 1]),
}

#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

/// `{"type": "ephemeral"}`: a prompt-cache breakpoint (the API's default five-minute cache).
#[derive(Serialize, Clone, Copy)]
#[serde(tag = "type", rename_all = "snake_case")]
enum CacheControl {
    Ephemeral,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireRequestBlock<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    Image {
        source: ImageBlockSource<'a>,
    },
}

/// `{"type": "base64", "media_type", "data"}` or `{"type": "url", "url"}`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ImageBlockSource<'a> {
    Base64 { media_type: &'a str, data: &'a str },
    Url { url: &'a str },
}

impl<'a> WireRequestBlock<'a> {
    /// Marks a cache breakpoint (thinking blocks take none; they are never a turn's last block).
    fn mark_cached(&mut self) {
        match self {
            WireRequestBlock::Text { cache_control, .. }
            | WireRequestBlock::ToolUse { cache_control, .. }
            | WireRequestBlock::ToolResult { cache_control, .. } => {
                *cache_control = Some(CacheControl::Ephemeral);
            }
            WireRequestBlock::Thinking { .. }
            | WireRequestBlock::RedactedThinking { .. }
            | WireRequestBlock::Image { .. } => {}
        }
    }

    /// A reasoning block as the API sent it (`None`: another API's block).
    fn echo(block: &'a ThinkingBlock) -> Option<Self> {
        match block {
            ThinkingBlock::Thinking {
                thinking,
                signature,
            } => Some(WireRequestBlock::Thinking {
                thinking,
                signature,
            }),
            ThinkingBlock::RedactedThinking { data } => {
                Some(WireRequestBlock::RedactedThinking { data })
            }
            ThinkingBlock::ThoughtSignature { .. } => None,
        }
    }
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: InputSchema<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// The input sent back for a call whose own was not a JSON object.
static NO_INPUT: LazyLock<Value> = LazyLock::new(|| Value::Object(Map::new()));

#[derive(Serialize)]
#[serde(untagged)]
enum InputSchema<'a> {
    Given(&'a RawValue),
    /// `{"type": "object", "properties": {"value": schema}, "required": ["value"]}`.
    Wrapped {
        #[serde(rename = "type")]
        kind: &'static str,
        properties: WrappedValue<'a>,
        required: [&'static str; 1],
    },
}

#[derive(Serialize)]
struct WrappedValue<'a> {
    value: &'a RawValue,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ToolChoice {
    Tool { name: &'static str },
    Any,
    Auto,
}

pub(super) fn to_wire_request<'a>(
    spec: WireSettings<'a>,
    request: &'a ChatRequest,
    plan: &'a TurnPlan,
    stream: bool,
) -> (WireRequest<'a>, AnswerShape) {
    let hints = request.hints.or(spec.default_hints);
    let offered = if plan.native_tools {
        request.tools.as_slice()
    } else {
        &[]
    };
    let mut tools: Vec<WireTool> = offered
        .iter()
        .map(|t| WireTool {
            name: &t.name,
            description: &t.description,
            input_schema: InputSchema::Given(t.parameters.json_text()),
            cache_control: None,
        })
        .collect();
    let mut shape = AnswerShape::None;
    let mut tool_choice = None;
    if let (OutputMode::Tool, Some(schema)) = (plan.output, &plan.schema) {
        let is_object = schema.schema.get("type").and_then(Value::as_str) == Some("object");
        let input_schema = if is_object {
            shape = AnswerShape::Object;
            InputSchema::Given(schema.schema.json_text())
        } else {
            shape = AnswerShape::Wrapped;
            InputSchema::Wrapped {
                kind: "object",
                properties: WrappedValue {
                    value: schema.schema.json_text(),
                },
                required: ["value"],
            }
        };
        tools.push(WireTool {
            name: ANSWER_TOOL,
            description: "Give your final answer by calling this tool; its input is the answer.",
            input_schema,
            cache_control: None,
        });
        // Without other tools the answer tool is forced; with them the model must call some
        // tool, so it can still use the real ones before answering.
        tool_choice = Some(if offered.is_empty() {
            ToolChoice::Tool { name: ANSWER_TOOL }
        } else {
            ToolChoice::Any
        });
    }
    let mut messages = to_wire_messages(&request.messages);
    let system = request.system.as_deref().filter(|s| !s.is_empty());
    let system = if spec.prompt_cache {
        mark_cache_breakpoints(&mut tools, &mut messages);
        system.map(|text| {
            System::Cached([SystemBlock {
                kind: "text",
                text,
                cache_control: CacheControl::Ephemeral,
            }])
        })
    } else {
        system.map(System::Text)
    };
    let mut max_tokens = hints.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let budget = hints.reasoning.thinking_budget_tokens;
    let thinking = budget
        .or(spec.reasoning.thinking_budget_tokens)
        .map(|budget_tokens| {
            // The API wants room for the answer beyond the budget.
            if max_tokens <= budget_tokens {
                max_tokens = budget_tokens.saturating_add(DEFAULT_MAX_TOKENS);
            }
            // Thinking allows no forced tool (`tool` or `any`): the model must be free to think
            // first, so the answer tool is offered, not forced.
            if tool_choice.is_some() {
                tool_choice = Some(ToolChoice::Auto);
            }
            Thinking::Enabled { budget_tokens }
        });
    let body = WireRequest {
        model: spec.model,
        max_tokens,
        messages,
        system,
        temperature: hints.temperature,
        top_p: hints.top_p,
        stream,
        tools,
        tool_choice,
        thinking,
    };
    (body, shape)
}

/// The breakpoints besides the system prompt's: the last tool, and once the conversation has
/// an answer of the model in it (a later turn), its last block.
fn mark_cache_breakpoints(tools: &mut [WireTool<'_>], messages: &mut [WireTurn<'_>]) {
    if let Some(last) = tools.last_mut() {
        last.cache_control = Some(CacheControl::Ephemeral);
    }
    let later_turn = messages.iter().any(|m| m.role == "assistant");
    if later_turn && let Some(block) = messages.last_mut().and_then(|m| m.content.last_mut()) {
        block.mark_cached();
    }
}

/// Maps messages to alternating user/assistant turns: consecutive messages of the same role
/// merge (several tool results become one user message, as the API requires).
fn to_wire_messages(messages: &[ChatMessage]) -> Vec<WireTurn<'_>> {
    let mut turns: Vec<WireTurn> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            ChatMessage::User { text } => ("user", text_block(text).into_iter().collect()),
            ChatMessage::Image { image } => {
                let source = match &image.source {
                    ImageSource::Base64(data) => ImageBlockSource::Base64 {
                        media_type: &image.media_type,
                        data,
                    },
                    ImageSource::Url(url) => ImageBlockSource::Url { url },
                };
                ("user", vec![WireRequestBlock::Image { source }])
            }
            ChatMessage::Assistant {
                text,
                tool_calls,
                thinking,
            } => {
                // The turn's reasoning goes back first and unchanged, as the API requires of
                // a tool-use turn with thinking on.
                let mut blocks: Vec<WireRequestBlock> =
                    thinking.iter().filter_map(WireRequestBlock::echo).collect();
                blocks.extend(text_block(text));
                blocks.extend(tool_calls.iter().map(|c| WireRequestBlock::ToolUse {
                    id: &c.id,
                    name: &c.name,
                    // The API only accepts object input; invalid arguments go back empty.
                    input: if c.arguments.is_object() {
                        &c.arguments
                    } else {
                        &NO_INPUT
                    },
                    cache_control: None,
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
                vec![WireRequestBlock::ToolResult {
                    tool_use_id: call_id,
                    content,
                    is_error: *is_error,
                    cache_control: None,
                }],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => turns.push(WireTurn {
                role,
                content: blocks,
            }),
        }
    }
    turns
}

/// The API rejects empty text blocks, so empty text adds none.
fn text_block(text: &str) -> Option<WireRequestBlock<'_>> {
    (!text.is_empty()).then_some(WireRequestBlock::Text {
        text,
        cache_control: None,
    })
}

//! Anthropic Messages answers: the whole-body message, its content blocks and usage, its
//! decoding, and the assembly of a [`ChatResponse`] (an answer-tool call becomes the response
//! text), shared by the whole-body decode here and the event decoder (`stream.rs`).
//!
//! What is not here: the request body (`request.rs`), the `Wire` impl (`mod.rs`), stream events
//! (`stream.rs`).

use serde::Deserialize;
use serde_json::Value;

use crate::error::ProviderError;
use crate::modes::ANSWER_TOOL;
use crate::types::{ChatResponse, FinishReason, ThinkingBlock, ToolCall, Usage};

/// Decodes a whole (non-streamed) `/v1/messages` body.
pub(super) fn decode_whole(
    body: &[u8],
    answer: &AnswerShape,
) -> Result<ChatResponse, ProviderError> {
    let message: WireMessage = serde_json::from_slice(body).map_err(|e| {
        ProviderError::malformed(format!("the body is not an Anthropic message: {e}"))
    })?;
    Ok(from_wire_message(message, answer))
}

/// How the answer tool's input maps back to the answer: the schema is used as `input_schema`
/// directly when it describes an object; otherwise it is wrapped as `{"value": schema}`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) enum AnswerShape {
    #[default]
    None,
    Object,
    Wrapped,
}

// ---------------------------------------------------------------------------------------------
// Response mapping
// ---------------------------------------------------------------------------------------------

#[derive(Deserialize)]
pub(crate) struct WireMessage {
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
pub(crate) enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        input: Value,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default, Clone, Copy)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub(crate) input_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) output_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub(crate) cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Cached prompt tokens are still prompt tokens.
    pub(crate) fn input(&self) -> Option<u64> {
        self.input_tokens.map(|n| {
            n + self.cache_creation_input_tokens.unwrap_or(0)
                + self.cache_read_input_tokens.unwrap_or(0)
        })
    }

    /// The normalized usage (Anthropic reports no reasoning breakdown).
    pub(crate) fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.input().unwrap_or(0),
            output_tokens: self.output_tokens.unwrap_or(0),
            cached_input_tokens: self.cache_read_input_tokens,
            cache_creation_input_tokens: self.cache_creation_input_tokens,
            reasoning_tokens: None,
        }
    }
}

pub(crate) fn from_wire_message(message: WireMessage, answer: &AnswerShape) -> ChatResponse {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut thinking = Vec::new();
    for block in message.content {
        match block {
            WireBlock::Text { text: t } => text.push_str(&t),
            WireBlock::ToolUse { id, name, input } => {
                calls.push(ToolCall::from_value(id, name, input))
            }
            WireBlock::Thinking {
                thinking: t,
                signature,
            } => thinking.push(ThinkingBlock::Thinking {
                thinking: t,
                signature,
            }),
            WireBlock::RedactedThinking { data } => {
                thinking.push(ThinkingBlock::RedactedThinking { data })
            }
            WireBlock::Other => {}
        }
    }
    let response = assemble(
        text,
        calls,
        message.stop_reason.as_deref(),
        Some(message.usage.usage()),
        message.id,
        answer,
    );
    with_thinking(response, thinking)
}

/// The response with its reasoning blocks (kept to echo) and their text (its `reasoning`).
pub(crate) fn with_thinking(
    mut response: ChatResponse,
    thinking: Vec<ThinkingBlock>,
) -> ChatResponse {
    let text: Vec<&str> = thinking
        .iter()
        .filter_map(|b| match b {
            ThinkingBlock::Thinking { thinking, .. } if !thinking.is_empty() => {
                Some(thinking.as_str())
            }
            _ => None,
        })
        .collect();
    if !text.is_empty() {
        response.reasoning = Some(text.join("\n"));
    }
    response.thinking = thinking;
    response
}

/// Builds the response; an answer-tool call becomes the response text.
pub(crate) fn assemble(
    mut text: String,
    calls: Vec<ToolCall>,
    stop_reason: Option<&str>,
    usage: Option<Usage>,
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
        reasoning: None,
        thinking: Vec::new(),
    }
}

//! Anthropic Messages streaming: the SSE events (`message_start`, `content_block_start`,
//! `content_block_delta`, `message_delta`, `message_stop`, `error`) as typed structs, and the
//! [`EventDecoder`] that assembles them into a response.
//!
//! What is not here: the request (`request.rs`), the whole-body decode and the response assembly
//! both share (`response.rs`).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::response::{AnswerShape, WireBlock, WireUsage, assemble, with_thinking};
use crate::error::{ProviderError, ProviderErrorKind};
use crate::modes::ANSWER_TOOL;
use crate::transport::TrackingSink;
use crate::types::{ChatResponse, ThinkingBlock, ToolCall};
use crate::wire::{Flow, StreamDecoder, StreamEvent};

#[derive(Deserialize)]
struct MessageStart {
    message: StartedMessage,
}

#[derive(Deserialize)]
struct StartedMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    usage: WireUsage,
}

#[derive(Deserialize)]
struct BlockStart {
    #[serde(default)]
    index: u64,
    content_block: WireBlock,
}

#[derive(Deserialize)]
struct BlockDelta {
    #[serde(default)]
    index: u64,
    delta: Delta,
}

/// A `content_block_delta`'s delta, by its `type` (`text_delta`, `input_json_delta`).
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text {
        #[serde(default)]
        text: String,
    },
    #[serde(rename = "input_json_delta")]
    InputJson {
        #[serde(default)]
        partial_json: String,
    },
    #[serde(rename = "thinking_delta")]
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    #[serde(rename = "signature_delta")]
    Signature {
        #[serde(default)]
        signature: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    #[serde(default)]
    delta: MessageDeltaBody,
    #[serde(default)]
    usage: WireUsage,
}

#[derive(Deserialize, Default)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct StreamError {
    error: StreamErrorBody,
}

#[derive(Deserialize)]
struct StreamErrorBody {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    message: Option<String>,
}

/// One content block being assembled from deltas.
enum PartialBlock {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// Reasoning, kept whole to send back (never streamed to the sink: it is not the answer).
    Thinking(ThinkingBlock),
}

/// Assembles a streamed message from its events until `message_stop`.
#[derive(Default)]
pub(crate) struct EventDecoder {
    answer: AnswerShape,
    text: String,
    blocks: BTreeMap<u64, PartialBlock>,
    usage: WireUsage,
    stop_reason: Option<String>,
    message_id: Option<String>,
    stopped: bool,
}

impl EventDecoder {
    /// A decoder for a request whose answer tool (if any) has this shape.
    pub(crate) fn new(answer: AnswerShape) -> Self {
        EventDecoder {
            answer,
            ..EventDecoder::default()
        }
    }
}

fn parse<'a, T: Deserialize<'a>>(event: &StreamEvent<'a>) -> Result<T, ProviderError> {
    serde_json::from_slice(event.data).map_err(|e| {
        ProviderError::malformed(format!("a `{}` event is not valid: {e}", event.name))
    })
}

impl StreamDecoder for EventDecoder {
    fn event(
        &mut self,
        event: StreamEvent<'_>,
        sink: &TrackingSink<'_>,
    ) -> Result<Flow, ProviderError> {
        match event.name {
            "message_start" => {
                let start: MessageStart = parse(&event)?;
                self.message_id = start.message.id;
                self.usage = start.message.usage;
            }
            "content_block_start" => {
                let start: BlockStart = parse(&event)?;
                match start.content_block {
                    WireBlock::Text { text } => {
                        sink.text(&text);
                        self.text.push_str(&text);
                        self.blocks.insert(start.index, PartialBlock::Text);
                    }
                    WireBlock::ToolUse { id, name, .. } => {
                        let json = String::new();
                        let block = PartialBlock::ToolUse { id, name, json };
                        self.blocks.insert(start.index, block);
                    }
                    WireBlock::Thinking {
                        thinking,
                        signature,
                    } => {
                        let block = ThinkingBlock::Thinking {
                            thinking,
                            signature,
                        };
                        self.blocks
                            .insert(start.index, PartialBlock::Thinking(block));
                    }
                    WireBlock::RedactedThinking { data } => {
                        let block = ThinkingBlock::RedactedThinking { data };
                        self.blocks
                            .insert(start.index, PartialBlock::Thinking(block));
                    }
                    WireBlock::Other => {}
                }
            }
            "content_block_delta" => {
                let delta: BlockDelta = parse(&event)?;
                match (self.blocks.get_mut(&delta.index), delta.delta) {
                    (Some(PartialBlock::Text), Delta::Text { text }) => {
                        sink.text(&text);
                        self.text.push_str(&text);
                    }
                    (
                        Some(PartialBlock::ToolUse { name, json, .. }),
                        Delta::InputJson { partial_json },
                    ) => {
                        // The structured answer streams like text would on other providers.
                        if name == ANSWER_TOOL && self.answer == AnswerShape::Object {
                            sink.text(&partial_json);
                        }
                        json.push_str(&partial_json);
                    }
                    (
                        Some(PartialBlock::Thinking(ThinkingBlock::Thinking { thinking, .. })),
                        Delta::Thinking { thinking: more },
                    ) => thinking.push_str(&more),
                    (
                        Some(PartialBlock::Thinking(ThinkingBlock::Thinking { signature, .. })),
                        Delta::Signature { signature: more },
                    ) => signature.push_str(&more),
                    _ => {}
                }
            }
            "message_delta" => {
                let delta: MessageDelta = parse(&event)?;
                if delta.delta.stop_reason.is_some() {
                    self.stop_reason = delta.delta.stop_reason;
                }
                if delta.usage.output_tokens.is_some() {
                    self.usage.output_tokens = delta.usage.output_tokens;
                }
                if delta.usage.input_tokens.is_some() {
                    self.usage.input_tokens = delta.usage.input_tokens;
                }
                // The final counts, when the delta repeats them (cumulative, as the API sends).
                if delta.usage.cache_read_input_tokens.is_some() {
                    self.usage.cache_read_input_tokens = delta.usage.cache_read_input_tokens;
                }
                if delta.usage.cache_creation_input_tokens.is_some() {
                    self.usage.cache_creation_input_tokens =
                        delta.usage.cache_creation_input_tokens;
                }
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(Flow::Done);
            }
            "error" => {
                let error: StreamError = parse(&event)?;
                let message = error
                    .error
                    .message
                    .unwrap_or_else(|| "stream error".to_owned());
                return Err(match error.error.kind.as_str() {
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
        Ok(Flow::More)
    }

    fn finish(self, sink: &TrackingSink<'_>) -> Result<ChatResponse, ProviderError> {
        if !self.stopped {
            return Err(ProviderError::truncated(
                "the stream ended before message_stop",
                sink.delivered(),
            ));
        }
        let mut calls = Vec::new();
        let mut thinking = Vec::new();
        for block in self.blocks.into_values() {
            match block {
                PartialBlock::ToolUse { id, name, json } => {
                    calls.push(ToolCall::from_raw_arguments(id, name, &json));
                }
                PartialBlock::Thinking(block) => thinking.push(block),
                PartialBlock::Text => {}
            }
        }
        let response = assemble(
            self.text,
            calls,
            self.stop_reason.as_deref(),
            Some(self.usage.usage()),
            self.message_id,
            &self.answer,
        );
        Ok(with_thinking(response, thinking))
    }
}

//! Chat Completions streaming: the chunks (async-openai's `CreateChatCompletionStreamResponse`)
//! assembled into a response by [`ChunkDecoder`]: text deltas to the sink, tool calls from
//! fragments sharing an `index`, the `data: [DONE]` end marker, and a stream that ends without a
//! `finish_reason` read as a truncation.
//!
//! What is not here: the request (`request.rs`), the whole completion and the usage and
//! finish-reason mapping both share (`response.rs`).

use std::collections::BTreeMap;

use async_openai::types::chat::{CreateChatCompletionStreamResponse, FinishReason as WireFinish};

use super::response::{finish_reason, llama_cpp_timings, reasoning_content, usage};
use crate::error::ProviderError;
use crate::transport::{TrackingSink, in_band_error};
use crate::types::{ChatResponse, ToolCall, Usage};
use crate::wire::{Flow, StreamDecoder, StreamEvent};

/// One tool call being assembled from fragments that share an `index`.
#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl PartialCall {
    /// Whether a fragment carrying `id` and `name` starts another call rather than continuing
    /// this one: some servers (llama.cpp builds, vLLM-style routers) stream parallel calls all
    /// at `index` 0, each opened by its own id, or by its name once this one's arguments are
    /// whole.
    fn is_followed_by(&self, id: Option<&str>, name: Option<&str>) -> bool {
        if self.name.is_empty() {
            return false;
        }
        match id {
            Some(id) if !id.is_empty() && !self.id.is_empty() => id != self.id,
            _ => {
                name.is_some_and(|n| !n.is_empty())
                    && serde_json::from_str::<serde::de::IgnoredAny>(&self.arguments).is_ok()
            }
        }
    }
}

/// Assembles a streamed completion from its chunks.
#[derive(Default)]
pub(crate) struct ChunkDecoder {
    text: String,
    /// The calls in the order they were opened.
    calls: Vec<PartialCall>,
    /// The call each wire `index` is adding to now.
    open: BTreeMap<u32, usize>,
    finish: Option<WireFinish>,
    usage: Option<Usage>,
    response_id: Option<String>,
    reasoning: String,
}

impl StreamDecoder for ChunkDecoder {
    fn event(
        &mut self,
        event: StreamEvent<'_>,
        sink: &TrackingSink<'_>,
    ) -> Result<Flow, ProviderError> {
        if event.data == b"[DONE]" {
            return Ok(Flow::Done);
        }
        let chunk: CreateChatCompletionStreamResponse = match serde_json::from_slice(event.data) {
            Ok(chunk) => chunk,
            Err(e) => {
                return Err(match in_band_error(event.data) {
                    Some(error) => {
                        ProviderError::from_stream_error(error.message, sink.delivered())
                    }
                    None => ProviderError::malformed(format!("a stream chunk is not valid: {e}")),
                });
            }
        };
        self.response_id.get_or_insert(chunk.id);
        if let Some(piece) = reasoning_content(event.data, "delta") {
            self.reasoning.push_str(&piece);
        }
        if let Some(u) = chunk.usage {
            self.usage = Some(usage(u));
        }
        let finishing = chunk.choices.iter().any(|c| c.finish_reason.is_some());
        if finishing && self.usage.is_none() {
            // llama.cpp's last chunk carries `timings` even without `include_usage`.
            self.usage = llama_cpp_timings(event.data);
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta.content {
                sink.text(&delta);
                self.text.push_str(&delta);
            }
            for fragment in choice.delta.tool_calls.unwrap_or_default() {
                let name = fragment.function.as_ref().and_then(|f| f.name.as_deref());
                let at = match self.open.get(&fragment.index) {
                    Some(&at) if !self.calls[at].is_followed_by(fragment.id.as_deref(), name) => at,
                    _ => {
                        self.calls.push(PartialCall::default());
                        self.open.insert(fragment.index, self.calls.len() - 1);
                        self.calls.len() - 1
                    }
                };
                let call = &mut self.calls[at];
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
                self.finish = choice.finish_reason;
            }
        }
        Ok(Flow::More)
    }

    fn finish(self, sink: &TrackingSink<'_>) -> Result<ChatResponse, ProviderError> {
        if self.finish.is_none() {
            return Err(ProviderError::truncated(
                "the stream ended before the model finished (no finish_reason)",
                sink.delivered(),
            ));
        }
        let tool_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .enumerate()
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
            finish_reason: finish_reason(self.finish, !tool_calls.is_empty()),
            text: self.text,
            tool_calls,
            usage: self.usage,
            request_id: self.response_id,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            thinking: Vec::new(),
        })
    }
}

//! Ollama streaming: [`LineDecoder`] assembles NDJSON lines into a response — text deltas to the
//! sink, `message.thinking` as the reasoning, each tool call whole, usage and the finish reason
//! from the `done` line, an `{"error": ...}` line under status 200 as a failed attempt, and a
//! body without a `done` line as a truncation.
//!
//! What is not here: the request (`request.rs`), the line's typed shape (`response.rs`).

use super::response::WireLine;
use crate::error::ProviderError;
use crate::transport::{ErrorBody, TrackingSink};
use crate::types::{ChatResponse, FinishReason, ToolCall, Usage};
use crate::wire::{Flow, StreamDecoder, StreamEvent};

/// The reply being assembled from lines.
#[derive(Default)]
pub(crate) struct LineDecoder {
    text: String,
    reasoning: String,
    tool_calls: Vec<ToolCall>,
    done_reason: Option<String>,
    done: bool,
    usage: Option<Usage>,
}

impl StreamDecoder for LineDecoder {
    /// Takes in one line; an `error` line fails the attempt.
    fn event(
        &mut self,
        event: StreamEvent<'_>,
        sink: &TrackingSink<'_>,
    ) -> Result<Flow, ProviderError> {
        let line: WireLine = serde_json::from_slice(event.data).map_err(|e| {
            ProviderError::malformed(format!("the body is not an Ollama chat line: {e}"))
        })?;
        if let Some(error) = line.error {
            let error = ErrorBody::from(error);
            return Err(ProviderError::from_stream_error(
                error.message,
                sink.delivered(),
            ));
        }
        if let Some(message) = line.message {
            sink.text(&message.content);
            self.text.push_str(&message.content);
            self.reasoning.push_str(&message.thinking);
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
        if !line.done {
            return Ok(Flow::More);
        }
        self.done = true;
        self.done_reason = line.done_reason;
        // Counts the server did not send are unknown, not zero.
        self.usage =
            (line.prompt_eval_count.is_some() || line.eval_count.is_some()).then(|| Usage {
                input_tokens: line.prompt_eval_count.unwrap_or(0),
                output_tokens: line.eval_count.unwrap_or(0),
                // Ollama reports no cache or reasoning breakdown.
                ..Usage::default()
            });
        Ok(Flow::Done)
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
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            thinking: Vec::new(),
        })
    }
}

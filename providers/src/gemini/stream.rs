//! Gemini answers assembled: [`ResponseDecoder`] reads a series of `GenerateContentResponse`s
//! (each SSE `data:` one, or the whole non-streamed body as the only one) into a response —
//! text and thought parts, each `functionCall` whole, `thoughtSignature`s kept, the last
//! chunk's usage, the `finishReason` as the end marker.
//!
//! What is not here: the typed response and error body (`response.rs`), the request
//! (`request.rs`).

use super::response::{UsageMetadata, WirePart, WireResponse};
use crate::error::ProviderError;
use crate::transport::{ErrorBody, TrackingSink};
use crate::types::{ChatResponse, FinishReason, ThinkingBlock, ToolCall, Usage};
use crate::wire::{Flow, StreamDecoder, StreamEvent};

/// The answer being assembled from one or more responses.
#[derive(Default)]
pub(crate) struct ResponseDecoder {
    text: String,
    reasoning: String,
    tool_calls: Vec<ToolCall>,
    signatures: Vec<ThinkingBlock>,
    finish: Option<String>,
    blocked: bool,
    usage: Option<Usage>,
    response_id: Option<String>,
}

impl StreamDecoder for ResponseDecoder {
    fn event(
        &mut self,
        event: StreamEvent<'_>,
        sink: &TrackingSink<'_>,
    ) -> Result<Flow, ProviderError> {
        let response: WireResponse = serde_json::from_slice(event.data).map_err(|e| {
            ProviderError::malformed(format!("the body is not a Gemini response: {e}"))
        })?;
        if let Some(error) = response.error {
            let error = ErrorBody::from(error);
            let message = match error.codes.first() {
                Some(status) => format!("{status}: {}", error.message),
                None => error.message,
            };
            return Err(ProviderError::from_stream_error(message, sink.delivered()));
        }
        if let Some(id) = response.response_id {
            self.response_id = Some(id);
        }
        if let Some(usage) = response.usage_metadata.and_then(UsageMetadata::usage) {
            self.usage = Some(usage);
        }
        if response
            .prompt_feedback
            .is_some_and(|f| f.block_reason.is_some())
            && response.candidates.is_empty()
        {
            self.blocked = true;
            return Ok(Flow::Done);
        }
        // One candidate is asked for; others, if any, are ignored.
        let Some(candidate) = response.candidates.into_iter().next() else {
            return Ok(Flow::More);
        };
        for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
            self.part(part, sink);
        }
        if candidate.finish_reason.is_none() {
            return Ok(Flow::More);
        }
        // The stream's only end marker: the last chunk carries the finish reason, with the
        // final usage (every chunk carries the usage so far).
        self.finish = candidate.finish_reason;
        Ok(Flow::Done)
    }

    fn finish(self, sink: &TrackingSink<'_>) -> Result<ChatResponse, ProviderError> {
        let finish_reason = match self.finish.as_deref() {
            _ if !self.tool_calls.is_empty() => FinishReason::ToolCalls,
            _ if self.blocked => FinishReason::ContentFilter,
            None => {
                return Err(ProviderError::truncated(
                    "the reply ended before the model finished (no finishReason)",
                    sink.delivered(),
                ));
            }
            Some("STOP") => FinishReason::Stop,
            Some("MAX_TOKENS") => FinishReason::Length,
            Some(
                "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
                | "IMAGE_SAFETY",
            ) => FinishReason::ContentFilter,
            Some(_) => FinishReason::Other,
        };
        Ok(ChatResponse {
            text: self.text,
            tool_calls: self.tool_calls,
            finish_reason,
            usage: self.usage,
            request_id: self.response_id,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            thinking: self.signatures,
        })
    }
}

impl ResponseDecoder {
    fn part(&mut self, part: WirePart, sink: &TrackingSink<'_>) {
        let mut call_id = None;
        if let Some(call) = part.function_call {
            let id = call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| format!("call_{}", self.tool_calls.len()));
            call_id = Some(id.clone());
            self.tool_calls
                .push(ToolCall::from_value(id, call.name, call.args));
        } else if let Some(text) = part.text {
            if part.thought {
                self.reasoning.push_str(&text);
            } else {
                sink.text(&text);
                self.text.push_str(&text);
            }
        }
        if let Some(signature) = part.thought_signature.filter(|s| !s.is_empty()) {
            // A text turn's signature may come on any of its text parts; the last one is kept.
            self.signatures.retain(|block| {
                !matches!(block, ThinkingBlock::ThoughtSignature { call, .. } if *call == call_id)
            });
            self.signatures.push(ThinkingBlock::ThoughtSignature {
                call: call_id,
                signature,
            });
        }
    }
}

//! Gemini answers: a `GenerateContentResponse` read as typed structs, whole or as the series of
//! them a stream is (each SSE `data:` one response holding the next parts), and Gemini's error
//! body (`{"error": {"code", "message", "status", "details"}}`: a `RetryInfo.retryDelay` is the
//! wait a 429 asks for; a `QuotaFailure` on a per-day quota makes it a quota refusal).
//!
//! Text parts are answer text; parts marked `thought` are the thought summary (the response's
//! `reasoning`, never its text); `functionCall` parts are tool calls, each whole; a part's
//! `thoughtSignature` is kept to go back with it. Usage is `usageMetadata`: the prompt
//! (`promptTokenCount` + `toolUsePromptTokenCount`) with `cachedContentTokenCount` in it, the
//! output (`candidatesTokenCount` + `thoughtsTokenCount`) with the thoughts in it; each chunk's
//! counts are cumulative, so the last one is kept. The answer is complete when a candidate has
//! a `finishReason` (the stream's only end marker: reading stops there); a stream that ends
//! before one is a truncation. A prompt blocked before any
//! candidate (`promptFeedback.blockReason`) is a complete, content-filtered answer.
//!
//! What is not here: the request (`gemini.rs`).

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::error::ProviderError;
use crate::transport::{ErrorBody, TrackingSink, lossy_text};
use crate::types::{ChatResponse, FinishReason, ThinkingBlock, ToolCall, Usage};
use crate::wire::{Flow, StreamDecoder, StreamEvent};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse {
    #[serde(default)]
    candidates: Vec<Candidate>,
    #[serde(default)]
    usage_metadata: Option<UsageMetadata>,
    #[serde(default)]
    response_id: Option<String>,
    #[serde(default)]
    prompt_feedback: Option<PromptFeedback>,
    /// An error where a chunk should be (mid-stream).
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    #[serde(default)]
    content: Option<CandidateContent>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct CandidateContent {
    #[serde(default)]
    parts: Vec<WirePart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePart {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    #[serde(default)]
    function_call: Option<WireFunctionCall>,
    #[serde(default)]
    thought_signature: Option<String>,
}

#[derive(Deserialize)]
struct WireFunctionCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    args: Value,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
    #[serde(default)]
    cached_content_token_count: Option<u64>,
    #[serde(default)]
    thoughts_token_count: Option<u64>,
    #[serde(default)]
    tool_use_prompt_token_count: Option<u64>,
}

impl UsageMetadata {
    /// The counts as [`Usage`]; `None` when the server sent neither prompt nor output counts.
    fn usage(self) -> Option<Usage> {
        if self.prompt_token_count.is_none() && self.candidates_token_count.is_none() {
            return None;
        }
        let thoughts = self.thoughts_token_count;
        Some(Usage {
            input_tokens: self.prompt_token_count.unwrap_or(0)
                + self.tool_use_prompt_token_count.unwrap_or(0),
            output_tokens: self.candidates_token_count.unwrap_or(0) + thoughts.unwrap_or(0),
            cached_input_tokens: self.cached_content_token_count,
            cache_creation_input_tokens: None,
            reasoning_tokens: thoughts,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
}

/// `{"code": 429, "message": "...", "status": "RESOURCE_EXHAUSTED", "details": [...]}`.
#[derive(Deserialize)]
struct WireError {
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    status: Option<String>,
    /// `google.rpc` detail messages, each with an `@type`: `RetryInfo` (`retryDelay`) and
    /// `QuotaFailure` (`violations[].quotaId`) are read.
    #[serde(default)]
    details: Vec<Value>,
}

/// The code a per-day quota refusal is reported with: the one [`ProviderError::from_http`]
/// reads as a quota that waiting a few seconds does not restore.
const QUOTA_CODE: &str = "insufficient_quota";

impl From<WireError> for ErrorBody {
    fn from(error: WireError) -> Self {
        let code = error.code.map(|c| match c {
            Value::String(s) => s,
            other => other.to_string(),
        });
        let detail = |name: &'static str| details_of(&error.details, name);
        // "GenerateRequestsPerDayPerProjectPerModel-FreeTier": the wait is until tomorrow.
        let per_day = detail("google.rpc.QuotaFailure")
            .filter_map(|d| d.get("violations")?.as_array())
            .flatten()
            .filter_map(|v| v.get("quotaId")?.as_str())
            .any(|id| id.contains("PerDay"));
        let retry_after = detail("google.rpc.RetryInfo")
            .find_map(|d| protobuf_duration(d.get("retryDelay")?.as_str()?))
            .filter(|_| !per_day);
        let quota = per_day.then(|| QUOTA_CODE.to_owned());
        ErrorBody {
            codes: error.status.into_iter().chain(code).chain(quota).collect(),
            message: error.message.unwrap_or_default(),
            retry_after,
        }
    }
}

/// The `google.rpc` details whose `@type` ends with `name`.
fn details_of<'a>(details: &'a [Value], name: &'static str) -> impl Iterator<Item = &'a Value> {
    details.iter().filter(move |d| {
        d.get("@type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.ends_with(name))
    })
}

/// A protobuf JSON `Duration`: decimal seconds with an `s` suffix (`"37s"`, `"0.5s"`).
fn protobuf_duration(text: &str) -> Option<Duration> {
    let seconds: f64 = text.strip_suffix('s')?.parse().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// Reads a non-2xx body: the error's `status` and `code`, and its message; a body that is not
/// Gemini's envelope (a proxy's page) as text.
pub(crate) fn parse_error(body: &[u8]) -> ErrorBody {
    #[derive(Deserialize)]
    struct Envelope {
        error: WireError,
    }
    // Some front ends wrap the envelope in a one-element array.
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Shape {
        One(Envelope),
        List([Envelope; 1]),
    }
    match serde_json::from_slice::<Shape>(body) {
        Ok(Shape::One(e)) | Ok(Shape::List([e])) => e.error.into(),
        Err(_) => ErrorBody {
            message: lossy_text(body),
            ..ErrorBody::default()
        },
    }
}

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

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
//! What is not here: the request (`request.rs`), assembling responses into an answer
//! (`stream.rs`).

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::stream::ResponseDecoder;
use crate::error::ProviderError;
use crate::transport::{ErrorBody, lossy_text};
use crate::types::{ChatResponse, Usage};
use crate::wire::decode_single;

/// Decodes a whole (non-streamed) 2xx body: one response, read by the stream's decoder.
pub(super) fn decode_whole(body: &[u8]) -> Result<ChatResponse, ProviderError> {
    decode_single(ResponseDecoder::default(), body)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireResponse {
    #[serde(default)]
    pub(super) candidates: Vec<Candidate>,
    #[serde(default)]
    pub(super) usage_metadata: Option<UsageMetadata>,
    #[serde(default)]
    pub(super) response_id: Option<String>,
    #[serde(default)]
    pub(super) prompt_feedback: Option<PromptFeedback>,
    /// An error where a chunk should be (mid-stream).
    #[serde(default)]
    pub(super) error: Option<WireError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Candidate {
    #[serde(default)]
    pub(super) content: Option<CandidateContent>,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct CandidateContent {
    #[serde(default)]
    pub(super) parts: Vec<WirePart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WirePart {
    #[serde(default)]
    pub(super) text: Option<String>,
    #[serde(default)]
    pub(super) thought: bool,
    #[serde(default)]
    pub(super) function_call: Option<WireFunctionCall>,
    #[serde(default)]
    pub(super) thought_signature: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireFunctionCall {
    #[serde(default)]
    pub(super) id: Option<String>,
    pub(super) name: String,
    #[serde(default)]
    pub(super) args: Value,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub(super) struct UsageMetadata {
    #[serde(default)]
    pub(super) prompt_token_count: Option<u64>,
    #[serde(default)]
    pub(super) candidates_token_count: Option<u64>,
    #[serde(default)]
    pub(super) cached_content_token_count: Option<u64>,
    #[serde(default)]
    pub(super) thoughts_token_count: Option<u64>,
    #[serde(default)]
    pub(super) tool_use_prompt_token_count: Option<u64>,
}

impl UsageMetadata {
    /// The counts as [`Usage`]; `None` when the server sent neither prompt nor output counts.
    pub(super) fn usage(self) -> Option<Usage> {
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
pub(super) struct PromptFeedback {
    #[serde(default)]
    pub(super) block_reason: Option<String>,
}

/// `{"code": 429, "message": "...", "status": "RESOURCE_EXHAUSTED", "details": [...]}`.
#[derive(Deserialize)]
pub(super) struct WireError {
    #[serde(default)]
    pub(super) code: Option<Value>,
    #[serde(default)]
    pub(super) message: Option<String>,
    #[serde(default)]
    pub(super) status: Option<String>,
    /// `google.rpc` detail messages, each with an `@type`: `RetryInfo` (`retryDelay`) and
    /// `QuotaFailure` (`violations[].quotaId`) are read.
    #[serde(default)]
    pub(super) details: Vec<Value>,
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
pub(super) fn parse_error(body: &[u8]) -> ErrorBody {
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

//! Chat Completions answers: a whole completion (async-openai's `CreateChatCompletionResponse`)
//! decoded into a [`ChatResponse`], and the pieces the chunk decoder (`stream.rs`) shares with it:
//! usage, the finish reason, llama.cpp/DeepSeek `reasoning_content`.
//!
//! What is not here: the request (`request.rs`), the stream's chunks (`stream.rs`).

use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, CompletionUsage, CreateChatCompletionResponse,
    FinishReason as WireFinish,
};

use crate::error::ProviderError;
use crate::transport::in_band_error;
use crate::types::{ChatResponse, FinishReason, ToolCall, Usage};

/// Decodes a whole (non-streamed) 2xx body: a completion, or an error object sent under 200.
pub(super) fn decode_whole(body: &[u8]) -> Result<ChatResponse, ProviderError> {
    match serde_json::from_slice::<CreateChatCompletionResponse>(body) {
        Ok(response) => {
            let mut reply = from_wire_response(response)?;
            if reply.usage.is_none() {
                reply.usage = llama_cpp_timings(body);
            }
            reply.reasoning = reasoning_content(body, "message");
            Ok(reply)
        }
        // A 200 carrying an error object instead of a completion.
        Err(_) if in_band_error(body).is_some() => {
            let error = in_band_error(body).unwrap_or_default();
            Err(ProviderError::from_stream_error(error.message, false))
        }
        Err(e) => Err(ProviderError::malformed(format!(
            "the body is not a chat completion: {e}"
        ))),
    }
}

fn from_wire_response(
    response: CreateChatCompletionResponse,
) -> Result<ChatResponse, ProviderError> {
    let choice = response
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| ProviderError::malformed("the response has no choices"))?;
    let message = choice.message;
    let tool_calls: Vec<ToolCall> = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .filter_map(|call| match call {
            ChatCompletionMessageToolCalls::Function(f) => Some(ToolCall::from_raw_arguments(
                f.id,
                f.function.name,
                &f.function.arguments,
            )),
            ChatCompletionMessageToolCalls::Custom(_) => None,
        })
        .collect();
    let text = message.content.or(message.refusal).unwrap_or_default();
    Ok(ChatResponse {
        finish_reason: finish_reason(choice.finish_reason, !tool_calls.is_empty()),
        text,
        tool_calls,
        usage: response.usage.map(usage),
        request_id: Some(response.id),
        reasoning: None,
        thinking: Vec::new(),
    })
}

/// The `reasoning_content` of choice 0's `message` (whole) or `delta` (a chunk), as llama.cpp
/// and DeepSeek send a reasoning model's thinking (async-openai's types have no such field).
/// Parsed a second time only when the bytes name the field, so other answers cost one scan
/// (`memmem`: a window-by-window compare of every answer was ~1 % of a server's CPU).
pub(super) fn reasoning_content(body: &[u8], within: &str) -> Option<String> {
    const FIELD: &[u8] = b"\"reasoning_content\"";
    memchr::memmem::find(body, FIELD)?;
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let text = value.pointer(&format!("/choices/0/{within}/reasoning_content"))?;
    text.as_str().filter(|t| !t.is_empty()).map(str::to_owned)
}

/// Token counts from llama.cpp's `timings` (`prompt_n`, `predicted_n`), for an answer that
/// carries no `usage`; `None` when there are none either.
pub(super) fn llama_cpp_timings(body: &[u8]) -> Option<Usage> {
    #[derive(serde::Deserialize)]
    struct WithTimings {
        timings: Option<Timings>,
    }
    #[derive(serde::Deserialize)]
    struct Timings {
        prompt_n: Option<u64>,
        predicted_n: Option<u64>,
        cache_n: Option<u64>,
    }
    let timings = serde_json::from_slice::<WithTimings>(body).ok()?.timings?;
    let (prompt, predicted) = (timings.prompt_n?, timings.predicted_n?);
    let cached = timings.cache_n.unwrap_or(0);
    Some(Usage {
        // `prompt_n` counts the prompt tokens evaluated; `cache_n` those reused from the cache.
        input_tokens: prompt + cached,
        output_tokens: predicted,
        cached_input_tokens: (cached > 0).then_some(cached),
        ..Usage::default()
    })
}

pub(super) fn usage(u: CompletionUsage) -> Usage {
    Usage {
        input_tokens: u.prompt_tokens.into(),
        output_tokens: u.completion_tokens.into(),
        cached_input_tokens: u
            .prompt_tokens_details
            .and_then(|d| d.cached_tokens)
            .map(u64::from),
        cache_creation_input_tokens: None,
        reasoning_tokens: u
            .completion_tokens_details
            .and_then(|d| d.reasoning_tokens)
            .map(u64::from),
    }
}

/// Normalizes the finish reason; tool calls always mean `ToolCalls` (some compatible servers
/// say `stop` while calling tools).
pub(super) fn finish_reason(reason: Option<WireFinish>, has_tool_calls: bool) -> FinishReason {
    match reason {
        _ if has_tool_calls => FinishReason::ToolCalls,
        Some(WireFinish::Stop) | None => FinishReason::Stop,
        Some(WireFinish::Length) => FinishReason::Length,
        Some(WireFinish::ToolCalls) | Some(WireFinish::FunctionCall) => FinishReason::ToolCalls,
        Some(WireFinish::ContentFilter) => FinishReason::ContentFilter,
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_cpp_timings_stand_in_for_missing_usage() {
        let body = br#"{"id":"c","object":"chat.completion","created":1,"model":"m",
            "choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],
            "timings":{"cache_n":4,"prompt_n":40,"predicted_n":18}}"#;
        let reply = decode_whole(body).unwrap();
        let usage = reply.usage.expect("read from timings");
        assert_eq!((usage.input_tokens, usage.output_tokens), (44, 18));
        assert_eq!(usage.cached_input_tokens, Some(4));
        let bare = br#"{"id":"c","object":"chat.completion","created":1,"model":"m",
            "choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}]}"#;
        assert_eq!(decode_whole(bare).unwrap().usage, None);
    }
}

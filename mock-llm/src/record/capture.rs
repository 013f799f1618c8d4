//! Reading a real server's answer back into a neutral [`Captured`] reply: the text, the tool
//! calls (ids, names, arguments), the thinking, the stop reason and the usage — from a whole JSON
//! body or from the stream (OpenAI SSE chunks, Anthropic SSE events, Ollama NDJSON lines).
//!
//! This is the inverse of the provider modules' rendering, for the fields a scenario reply can
//! express; everything else the server sent (ids of the response, timings, logprobs) is dropped.
//! Not here: forwarding (`proxy`) and the scenario file (`recording`).

use serde_json::Value;

use crate::reply::{Finish, Usage};
use crate::request::Endpoint;

/// One tool call as the server sent it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CapturedCall {
    pub id: Option<String>,
    pub name: String,
    /// The argument text (OpenAI sends a string; object wires are serialized compactly).
    pub arguments: String,
}

/// What one answer said, in the terms a scenario reply can express.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Captured {
    pub text: String,
    pub thinking: String,
    pub tool_calls: Vec<CapturedCall>,
    pub finish: Option<Finish>,
    pub usage: Option<Usage>,
}

/// Why an answer could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct CaptureError(pub String);

/// Reads a complete answer body; `stream` says how it is framed.
pub(crate) fn capture(
    endpoint: Endpoint,
    stream: bool,
    body: &[u8],
) -> Result<Captured, CaptureError> {
    let text = std::str::from_utf8(body)
        .map_err(|_| CaptureError("the upstream answer is not UTF-8".into()))?;
    let mut out = Captured::default();
    match (endpoint, stream) {
        (Endpoint::AnthropicMessages, false) => anthropic_whole(&mut out, &json(text)?),
        (Endpoint::AnthropicMessages, true) => {
            let mut blocks = Vec::new();
            for data in sse_data(text) {
                anthropic_event(&mut out, &mut blocks, &json(data)?);
            }
            finish_blocks(&mut out, blocks);
        }
        (Endpoint::OllamaChat, false) => ollama_line(&mut out, &json(text)?),
        (Endpoint::OllamaChat, true) => {
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                ollama_line(&mut out, &json(line)?);
            }
        }
        (_, false) => openai_whole(&mut out, &json(text)?),
        (_, true) => {
            let mut calls: Vec<CapturedCall> = Vec::new();
            for data in sse_data(text).filter(|d| d.trim() != "[DONE]") {
                openai_chunk(&mut out, &mut calls, &json(data)?);
            }
            out.tool_calls = calls;
        }
    }
    Ok(out)
}

fn json(text: &str) -> Result<Value, CaptureError> {
    serde_json::from_str(text)
        .map_err(|e| CaptureError(format!("the upstream answer is not JSON: {e}")))
}

/// The `data:` payloads of an SSE body (multi-line data joined with newlines).
fn sse_data(body: &str) -> impl Iterator<Item = &str> {
    body.split("\n\n")
        .flat_map(|frame| frame.split("\r\n\r\n"))
        .filter_map(|frame| {
            frame
                .lines()
                .find_map(|l| l.strip_prefix("data:").map(str::trim_start))
        })
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

fn count(v: &Value, pointer: &str) -> Option<u32> {
    v.pointer(pointer)
        .and_then(Value::as_u64)
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}

fn openai_finish(reason: &str) -> Option<Finish> {
    match reason {
        "stop" | "end_turn" => Some(Finish::Stop),
        "length" => Some(Finish::Length),
        "tool_calls" | "function_call" => Some(Finish::ToolCalls),
        "content_filter" => Some(Finish::ContentFilter),
        _ => None,
    }
}

fn openai_usage(usage: &Value) -> Option<Usage> {
    Some(Usage {
        input: count(usage, "/prompt_tokens")?,
        output: count(usage, "/completion_tokens")?,
        cached: count(usage, "/prompt_tokens_details/cached_tokens"),
        cache_write: None,
        reasoning: count(usage, "/completion_tokens_details/reasoning_tokens"),
    })
}

fn arguments_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn openai_whole(out: &mut Captured, body: &Value) {
    let message = body.pointer("/choices/0/message").unwrap_or(&Value::Null);
    out.text = str_at(message, "/content").unwrap_or_default().to_owned();
    out.thinking = str_at(message, "/reasoning_content")
        .unwrap_or_default()
        .to_owned();
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.tool_calls.push(CapturedCall {
            id: str_at(call, "/id").map(str::to_owned),
            name: str_at(call, "/function/name")
                .unwrap_or_default()
                .to_owned(),
            arguments: arguments_text(call.pointer("/function/arguments")),
        });
    }
    out.finish = str_at(body, "/choices/0/finish_reason").and_then(openai_finish);
    out.usage = body.get("usage").and_then(openai_usage);
}

fn openai_chunk(out: &mut Captured, calls: &mut Vec<CapturedCall>, chunk: &Value) {
    if let Some(usage) = chunk.get("usage").and_then(openai_usage) {
        out.usage = Some(usage);
    }
    let Some(choice) = chunk.pointer("/choices/0") else {
        return;
    };
    let delta = choice.get("delta").unwrap_or(&Value::Null);
    out.text
        .push_str(str_at(delta, "/content").unwrap_or_default());
    out.thinking
        .push_str(str_at(delta, "/reasoning_content").unwrap_or_default());
    for part in delta
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let index = part
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok())
            .unwrap_or(calls.len());
        while calls.len() <= index {
            calls.push(CapturedCall {
                id: None,
                name: String::new(),
                arguments: String::new(),
            });
        }
        let call = &mut calls[index];
        if let Some(id) = str_at(part, "/id").filter(|id| !id.is_empty()) {
            call.id = Some(id.to_owned());
        }
        call.name
            .push_str(str_at(part, "/function/name").unwrap_or_default());
        call.arguments
            .push_str(str_at(part, "/function/arguments").unwrap_or_default());
    }
    if let Some(reason) = str_at(choice, "/finish_reason") {
        out.finish = openai_finish(reason);
    }
}

fn anthropic_finish(reason: &str) -> Option<Finish> {
    match reason {
        "end_turn" | "stop_sequence" => Some(Finish::Stop),
        "max_tokens" => Some(Finish::Length),
        "tool_use" => Some(Finish::ToolCalls),
        "refusal" => Some(Finish::ContentFilter),
        _ => None,
    }
}

/// Anthropic counts cache reads and writes apart from `input_tokens`; a scenario's `input` is
/// their sum (see `anthropic::input_usage`).
fn anthropic_usage(usage: &Value, output: Option<u32>) -> Option<Usage> {
    let cached = count(usage, "/cache_read_input_tokens");
    let written = count(usage, "/cache_creation_input_tokens");
    let input = count(usage, "/input_tokens")?
        .saturating_add(cached.unwrap_or(0))
        .saturating_add(written.unwrap_or(0));
    Some(Usage {
        input,
        output: output.or_else(|| count(usage, "/output_tokens"))?,
        cached,
        cache_write: written,
        reasoning: None,
    })
}

/// One content block: `(type, text, tool id, tool name, argument text)`.
type Block = (String, String, Option<String>, String, String);

fn anthropic_block(block: &Value) -> Block {
    let kind = str_at(block, "/type").unwrap_or_default().to_owned();
    let text = match kind.as_str() {
        "thinking" => str_at(block, "/thinking"),
        _ => str_at(block, "/text"),
    }
    .unwrap_or_default()
    .to_owned();
    let input = block
        .get("input")
        .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
        .map(Value::to_string)
        .unwrap_or_default();
    (
        kind,
        text,
        str_at(block, "/id").map(str::to_owned),
        str_at(block, "/name").unwrap_or_default().to_owned(),
        input,
    )
}

fn finish_blocks(out: &mut Captured, blocks: Vec<Block>) {
    for (kind, text, id, name, input) in blocks {
        match kind.as_str() {
            "text" => out.text.push_str(&text),
            "thinking" => out.thinking.push_str(&text),
            "tool_use" => out.tool_calls.push(CapturedCall {
                id,
                name,
                arguments: if input.is_empty() { "{}".into() } else { input },
            }),
            _ => {}
        }
    }
}

fn anthropic_whole(out: &mut Captured, body: &Value) {
    let blocks = body
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(anthropic_block)
        .collect();
    finish_blocks(out, blocks);
    out.finish = str_at(body, "/stop_reason").and_then(anthropic_finish);
    out.usage = body
        .get("usage")
        .and_then(|u| anthropic_usage(u, count(u, "/output_tokens")));
}

fn anthropic_event(out: &mut Captured, blocks: &mut Vec<Block>, event: &Value) {
    match str_at(event, "/type").unwrap_or_default() {
        "message_start" => {
            out.usage = event
                .pointer("/message/usage")
                .and_then(|u| anthropic_usage(u, Some(0)));
        }
        "content_block_start" => {
            if let Some(block) = event.get("content_block") {
                blocks.push(anthropic_block(block));
            }
        }
        "content_block_delta" => {
            let Some(block) = blocks.last_mut() else {
                return;
            };
            let delta = event.get("delta").unwrap_or(&Value::Null);
            match str_at(delta, "/type").unwrap_or_default() {
                "text_delta" => block.1.push_str(str_at(delta, "/text").unwrap_or_default()),
                "thinking_delta" => block
                    .1
                    .push_str(str_at(delta, "/thinking").unwrap_or_default()),
                "input_json_delta" => block
                    .4
                    .push_str(str_at(delta, "/partial_json").unwrap_or_default()),
                _ => {}
            }
        }
        "message_delta" => {
            if let Some(reason) = str_at(event, "/delta/stop_reason") {
                out.finish = anthropic_finish(reason);
            }
            if let (Some(usage), Some(output)) =
                (out.usage.as_mut(), count(event, "/usage/output_tokens"))
            {
                usage.output = output;
            }
        }
        _ => {}
    }
}

fn ollama_line(out: &mut Captured, line: &Value) {
    let message = line.get("message").unwrap_or(&Value::Null);
    out.text
        .push_str(str_at(message, "/content").unwrap_or_default());
    out.thinking
        .push_str(str_at(message, "/thinking").unwrap_or_default());
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.tool_calls.push(CapturedCall {
            id: str_at(call, "/id").map(str::to_owned),
            name: str_at(call, "/function/name")
                .unwrap_or_default()
                .to_owned(),
            arguments: arguments_text(call.pointer("/function/arguments")),
        });
    }
    if line.get("done").and_then(Value::as_bool) == Some(true) {
        out.finish = str_at(line, "/done_reason").and_then(openai_finish);
        if let (Some(input), Some(output)) = (
            count(line, "/prompt_eval_count"),
            count(line, "/eval_count"),
        ) {
            out.usage = Some(Usage {
                input,
                output,
                cached: None,
                cache_write: None,
                reasoning: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_stream_merges_text_and_tool_call_fragments() {
        let body = concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"content\":\"lo\",\"tool_calls\":[{\"index\":0,",
            "\"id\":\"call_1\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":",
            "{\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n",
            "data: [DONE]\n\n"
        );
        let c = capture(Endpoint::OpenAiChat, true, body.as_bytes()).unwrap();
        assert_eq!(c.text, "Hello");
        assert_eq!(c.tool_calls[0].id.as_deref(), Some("call_1"));
        assert_eq!(c.tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(c.finish, Some(Finish::ToolCalls));
        assert_eq!(c.usage.map(|u| (u.input, u.output)), Some((5, 2)));
    }

    #[test]
    fn anthropic_usage_adds_cache_reads_to_the_input() {
        let body = r#"{"content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn",
            "usage":{"input_tokens":3,"output_tokens":1,"cache_read_input_tokens":10,
            "cache_creation_input_tokens":0}}"#;
        let c = capture(Endpoint::AnthropicMessages, false, body.as_bytes()).unwrap();
        let u = c.usage.unwrap();
        assert_eq!((u.input, u.cached, u.cache_write), (13, Some(10), Some(0)));
    }

    #[test]
    fn a_body_that_is_not_json_is_an_error_not_an_empty_reply() {
        assert!(capture(Endpoint::OllamaChat, false, b"<html>").is_err());
    }
}

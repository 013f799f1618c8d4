//! Reading what real models write, after a wire decoded it: `<think>…</think>` reasoning kept
//! out of the answer, tool calls written as text (prompted tools, and models that ignore
//! native `tools` and write the call instead), the prompted `{"final_answer": …}` wrapper,
//! missing or duplicate tool-call ids, and one JSON value found inside prose.
//!
//! Every response of every wire passes through [`finish_response`] once, so the engine sees
//! the same normalized [`ChatResponse`] whatever the server's dialect.
//!
//! Not here: the request side of prompted tools (`toolshim.rs`).

use std::collections::HashSet;

use serde_json::Value;

use crate::modes::ANSWER_TOOL;
use crate::modes::{OutputMode, TurnPlan};
use crate::toolshim::ANSWER_KEY;
use crate::types::{ChatMessage, ChatRequest, ChatResponse, FinishReason, ToolCall};

/// Candidate starts tried when looking for a JSON value inside prose.
const MAX_JSON_STARTS: usize = 64;

/// Normalizes one decoded response for the request and plan it answers.
pub(crate) fn finish_response(
    mut response: ChatResponse,
    plan: &TurnPlan,
    request: &ChatRequest,
) -> ChatResponse {
    if let Some((reasoning, answer)) = split_reasoning(&response.text) {
        response.reasoning = Some(match response.reasoning.take() {
            Some(mut earlier) => {
                earlier.push('\n');
                earlier.push_str(&reasoning);
                earlier
            }
            None => reasoning,
        });
        response.text = answer;
    }
    if response.text.trim().is_empty()
        && response.tool_calls.is_empty()
        && request.response_schema.is_some()
    {
        answer_from_reasoning(&mut response);
    }
    if plan.output == OutputMode::Tool {
        take_answer_tool_call(&mut response, plan.answer_wrapped);
    }
    // Only these two cases read the text for calls (a plain answer turn allocates nothing here).
    let reads_calls = plan.prompted_tools || (plan.native_tools && response.tool_calls.is_empty());
    let offered: Vec<&str> = if reads_calls {
        request.tools.iter().map(|t| t.name.as_str()).collect()
    } else {
        Vec::new()
    };
    if plan.prompted_tools {
        match read_prompted(&response.text, &offered, request.response_schema.is_some()) {
            Prompted::Calls(calls) => {
                response.tool_calls = calls;
                response.text.clear();
            }
            Prompted::Answer(text) => response.text = text,
            Prompted::Text => {}
        }
    } else if plan.native_tools && response.tool_calls.is_empty() {
        // A model that ignored the native tools and wrote its call as text.
        if let Some(calls) = calls_in_text(&response.text, &offered) {
            response.tool_calls = calls;
            response.text.clear();
        }
    }
    normalize_ids(&mut response.tool_calls, &request.messages);
    if !response.tool_calls.is_empty() {
        response.finish_reason = FinishReason::ToolCalls;
    }
    response
}

/// In `tool` output mode: a call of the answer tool is the answer (its arguments, or their
/// `value` when the schema was wrapped), not a tool call.
fn take_answer_tool_call(response: &mut ChatResponse, wrapped: bool) {
    let Some(at) = response
        .tool_calls
        .iter()
        .position(|c| c.name == ANSWER_TOOL)
    else {
        return;
    };
    let call = response.tool_calls.remove(at);
    response.text = match (call.invalid_arguments, call.arguments) {
        // Invalid JSON: hand the raw text on; output validation reports it.
        (Some(_), Value::String(raw)) => raw,
        (_, arguments) if wrapped => arguments
            .get("value")
            .cloned()
            .unwrap_or(Value::Null)
            .to_string(),
        (_, arguments) => arguments.to_string(),
    };
    if response.tool_calls.is_empty() {
        response.finish_reason = FinishReason::Stop;
    }
}

/// LM Studio's structured output from a reasoning model: the reasoning, this marker and a hex
/// id ending in `__`, then the answer, all in `content`.
const LM_STUDIO_REASONING_END: &str = "__LM_STUDIO_INTERNAL_LSEP_SYNTHETIC_REASONING_END_";

/// A server that put a schema-bound answer in the reasoning and left the text empty (LM Studio
/// and llama.cpp with a thinking model under `response_format`: `content: ""`, the JSON in
/// `reasoning_content`): the one JSON value found in the reasoning becomes the answer, which
/// the engine validates like any other. The reasoning is kept as it was.
fn answer_from_reasoning(response: &mut ChatResponse) {
    let Some(value) = response.reasoning.as_deref().and_then(find_json_value) else {
        return;
    };
    response.text = value.to_string();
}

/// Splits leading `<think>…</think>` blocks (DeepSeek R1, Qwen3, QwQ…), or reasoning ended by
/// LM Studio's synthetic marker, off the answer: `(reasoning, answer)`, or `None` when there
/// are none. An unclosed block is all reasoning.
pub(crate) fn split_reasoning(text: &str) -> Option<(String, String)> {
    if let Some(at) = text.find(LM_STUDIO_REASONING_END) {
        let after = &text[at + LM_STUDIO_REASONING_END.len()..];
        let answer = after.find("__").map_or("", |end| &after[end + 2..]);
        return Some((text[..at].trim().to_owned(), answer.trim().to_owned()));
    }
    let mut rest = text.trim_start();
    if !rest.starts_with("<think>") {
        return None;
    }
    let mut reasoning = Vec::new();
    while let Some(after) = rest.strip_prefix("<think>") {
        match after.find("</think>") {
            Some(end) => {
                reasoning.push(after[..end].trim().to_owned());
                rest = after[end + "</think>".len()..].trim_start();
            }
            None => {
                reasoning.push(after.trim().to_owned());
                rest = "";
            }
        }
    }
    Some((reasoning.join("\n"), rest.to_owned()))
}

/// What a prompted-tools reply turned out to be.
enum Prompted {
    Calls(Vec<ToolCall>),
    /// The unwrapped final answer, as the text the engine judges.
    Answer(String),
    /// Neither: the text is the answer as it is.
    Text,
}

fn read_prompted(text: &str, offered: &[&str], structured: bool) -> Prompted {
    if let Some(calls) = tagged_calls(text) {
        return Prompted::Calls(calls);
    }
    let Some(value) = find_json_value(text) else {
        return Prompted::Text;
    };
    if let Some(calls) = calls_in_value(&value, offered, true) {
        return Prompted::Calls(calls);
    }
    match value {
        Value::Object(mut object) if object.len() == 1 && object.contains_key(ANSWER_KEY) => {
            let answer = object.remove(ANSWER_KEY).unwrap_or(Value::Null);
            Prompted::Answer(match answer {
                Value::String(text) if !structured => text,
                other => other.to_string(),
            })
        }
        _ => Prompted::Text,
    }
}

/// Calls a model wrote as text although native tools were offered: `<tool_call>` blocks, or
/// the whole answer being one call object naming an offered tool.
fn calls_in_text(text: &str, offered: &[&str]) -> Option<Vec<ToolCall>> {
    if offered.is_empty() {
        return None;
    }
    if let Some(calls) = tagged_calls(text) {
        return Some(calls);
    }
    // Most answers are not calls: look for the keys a call has before parsing anything (the
    // final answer is parsed once, by the engine's judge, not here as well).
    let trimmed = text.trim();
    let could_be_call = trimmed.starts_with('{')
        && (trimmed.contains("\"arguments\"")
            || trimmed.contains("\"parameters\"")
            || trimmed.contains("\"tool_calls\""));
    if !could_be_call {
        return None;
    }
    let value = serde_json::from_str::<Value>(trimmed).ok()?;
    calls_in_value(&value, offered, false)
}

/// `<tool_call>{"name": .., "arguments": ..}</tool_call>` blocks (Hermes, Qwen).
fn tagged_calls(text: &str) -> Option<Vec<ToolCall>> {
    if !text.contains("<tool_call>") {
        return None;
    }
    let mut calls = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<tool_call>") {
        let body = &rest[start + "<tool_call>".len()..];
        let (inner, next) = match body.find("</tool_call>") {
            Some(end) => (&body[..end], &body[end + "</tool_call>".len()..]),
            None => (body, ""),
        };
        if let Ok(value) = serde_json::from_str::<Value>(inner.trim())
            && let Some(call) = call_from_object(&value, None)
        {
            calls.push(call);
        }
        rest = next;
    }
    (!calls.is_empty()).then_some(calls)
}

/// Calls in a JSON value: `{"tool": N, "arguments": ..}`, `{"name": N, "arguments": ..}` with
/// an offered `N`, or `{"tool_calls": [..]}` of those. With `any_tool`, a `tool` naming
/// something not offered is still a call (the engine answers it with an unknown-tool error the
/// model can learn from).
fn calls_in_value(value: &Value, offered: &[&str], any_tool: bool) -> Option<Vec<ToolCall>> {
    let object = value.as_object()?;
    if let Some(Value::Array(list)) = object.get("tool_calls") {
        let calls: Vec<ToolCall> = list
            .iter()
            .filter_map(|v| call_from_object(v, (!any_tool).then_some(offered)))
            .collect();
        return (!calls.is_empty()).then_some(calls);
    }
    let name_ok = |name: &str| any_tool || offered.contains(&name);
    match object.get("tool").and_then(Value::as_str) {
        Some(name) if name_ok(name) => call_from_object(value, None).map(|c| vec![c]),
        _ => {
            let call = call_from_object(value, Some(offered))?;
            Some(vec![call])
        }
    }
}

/// One call object; `offered`, when given, must contain its name (for the `name` spelling,
/// which ordinary answers may also use).
fn call_from_object(value: &Value, offered: Option<&[&str]>) -> Option<ToolCall> {
    let object = value.as_object()?;
    let (name, by_tool_key) = match (object.get("tool"), object.get("name")) {
        (Some(Value::String(name)), _) => (name.clone(), true),
        (_, Some(Value::String(name))) => (name.clone(), false),
        _ => return None,
    };
    let arguments = object
        .get("arguments")
        .or_else(|| object.get("parameters"))
        .cloned();
    if !by_tool_key {
        // `{"name": .., ...}` is a call only with its arguments and an offered name.
        arguments.as_ref()?;
        if let Some(offered) = offered
            && !offered.contains(&name.as_str())
        {
            return None;
        }
    }
    Some(ToolCall::from_value(
        String::new(),
        name,
        arguments.unwrap_or(Value::Null),
    ))
}

/// Gives every call an id unique in the conversation: servers omit them (Ollama, prompted
/// calls) or repeat them (some llama.cpp builds answer `call_0` every turn).
fn normalize_ids(calls: &mut [ToolCall], history: &[ChatMessage]) {
    if calls.is_empty() {
        return;
    }
    let mut used: HashSet<String> = history
        .iter()
        .flat_map(|m| match m {
            ChatMessage::Assistant { tool_calls, .. } => {
                tool_calls.iter().map(|c| c.id.clone()).collect()
            }
            _ => Vec::new(),
        })
        .collect();
    let mut next = used.len();
    for call in calls.iter_mut() {
        if call.id.is_empty() || used.contains(&call.id) {
            while used.contains(&format!("call_{next}")) {
                next += 1;
            }
            call.id = format!("call_{next}");
        }
        used.insert(call.id.clone());
    }
}

/// The one JSON value in `text`: the whole text, else the first complete object or array that
/// starts at a `{` or `[` (prose before and after it is ignored). `None` when there is none.
pub fn find_json_value(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
        return Some(value);
    }
    let starts = trimmed
        .char_indices()
        .filter(|(_, c)| *c == '{' || *c == '[')
        .map(|(i, _)| i)
        .take(MAX_JSON_STARTS);
    for start in starts {
        let mut values = serde_json::Deserializer::from_str(&trimmed[start..]).into_iter::<Value>();
        if let Some(Ok(value)) = values.next()
            && (value.is_object() || value.as_array().is_some_and(|a| !a.is_empty()))
        {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
#[path = "text_reply_tests.rs"]
mod tests;

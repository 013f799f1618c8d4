//! Anthropic Messages (`POST /v1/messages`): request parsing (string or block content,
//! `tool_result` blocks, `tool_choice`, structured `output_format`), text/tool_use blocks, SSE
//! with `event:` lines (`message_start`, `ping`, block start/delta/stop with `text_delta`,
//! `input_json_delta`, and for a scripted `thinking` block `thinking_delta` +
//! `signature_delta`; `message_delta` usage, `message_stop`) and Anthropic-shaped errors.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::delivery::{Frames, sse_event};
use crate::reply::{Finish, Reply, argument_chunks, text_chunks};
use crate::request::{
    BadRequest, ChatRequest, Endpoint, Message, OutputShape, Role, ToolSpec, content_text,
};
use crate::wire::{Wire, optional_bool, required_array, required_str};

/// The Anthropic wire.
pub(crate) struct Anthropic;

fn stop_reason(f: Finish) -> &'static str {
    match f {
        Finish::Stop => "end_turn",
        Finish::Length => "max_tokens",
        Finish::ToolCalls => "tool_use",
        Finish::ContentFilter => "refusal",
    }
}

fn parse_message(m: &Value) -> Result<Message, BadRequest> {
    let role = match m.get("role").and_then(Value::as_str) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some(other) => {
            return Err(BadRequest(format!(
                "messages: unexpected role `{other}` (user or assistant; system goes in `system`)"
            )));
        }
        None => return Err(BadRequest("every message needs a `role`".into())),
    };
    let content = m
        .get("content")
        .ok_or_else(|| BadRequest("every message needs `content`".into()))?;
    let text = content_text(content);
    let blocks = content.as_array().map(Vec::as_slice).unwrap_or_default();
    let of_type = |t: &'static str| {
        blocks
            .iter()
            .filter(move |b| b.get("type").and_then(Value::as_str) == Some(t))
    };
    let tool_calls = of_type("tool_use")
        .filter_map(|b| b.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let tool_results = of_type("tool_result")
        .map(|b| b.get("content").map(content_text).unwrap_or_default())
        .collect();
    Ok(Message {
        role,
        text,
        tool_calls,
        tool_results,
    })
}

fn parse_tools(body: &Value) -> Result<Vec<ToolSpec>, BadRequest> {
    let Some(tools) = body.get("tools").filter(|t| !t.is_null()) else {
        return Ok(Vec::new());
    };
    let tools = tools
        .as_array()
        .ok_or_else(|| BadRequest("`tools` must be an array".into()))?;
    tools
        .iter()
        .map(|t| {
            let name = t
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| BadRequest("every tool needs a `name`".into()))?;
            let parameters = t.get("input_schema").cloned().unwrap_or_else(|| json!({}));
            Ok(ToolSpec {
                name: name.to_owned(),
                parameters,
            })
        })
        .collect()
}

fn output_shape(body: &Value, tools: &[ToolSpec]) -> OutputShape {
    let choice = body.get("tool_choice");
    match choice.and_then(|c| c.get("type")).and_then(Value::as_str) {
        Some("tool") => {
            if let Some(name) = choice.and_then(|c| c.get("name")).and_then(Value::as_str) {
                return OutputShape::ForcedTool(name.to_owned());
            }
        }
        Some("any") => {
            if let Some(t) = tools.first() {
                return OutputShape::ForcedTool(t.name.clone());
            }
        }
        _ => {}
    }
    match body.pointer("/output_format/schema") {
        Some(schema) => OutputShape::Schema(schema.clone()),
        None => OutputShape::Text,
    }
}

fn blocks(reply: &Reply) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(thinking) = &reply.thinking {
        out.push(
            json!({ "type": "thinking", "thinking": thinking, "signature": signature(reply) }),
        );
    }
    if !reply.text.is_empty() || reply.tool_calls.is_empty() {
        out.push(json!({ "type": "text", "text": reply.text }));
    }
    for c in &reply.tool_calls {
        out.push(json!({ "type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments.to_wire_value() }));
    }
    out
}

/// The `usage` object of a message: Anthropic counts cache reads and cache writes apart from
/// `input_tokens` (their sum is the prompt); both fields appear when the scenario sets either.
fn input_usage(reply: &Reply, output_tokens: u32) -> Value {
    let cached = reply.usage.cached.unwrap_or(0).min(reply.usage.input);
    let written = reply
        .usage
        .cache_write
        .unwrap_or(0)
        .min(reply.usage.input - cached);
    let mut usage = json!({
        "input_tokens": reply.usage.input - cached - written,
        "output_tokens": output_tokens,
    });
    if reply.usage.cached.is_some() || reply.usage.cache_write.is_some() {
        usage["cache_read_input_tokens"] = json!(cached);
        usage["cache_creation_input_tokens"] = json!(written);
    }
    usage
}

/// The deterministic signature of a reply's thinking block (a real API's is opaque and must come
/// back unchanged; tests check that it does).
fn signature(reply: &Reply) -> String {
    format!("sig_mock_{:04}", reply.seq)
}

fn message_id(reply: &Reply) -> String {
    format!("msg_mock_{:04}", reply.seq)
}

impl Wire for Anthropic {
    const ENDPOINT: Endpoint = Endpoint::AnthropicMessages;
    const STREAM_CONTENT_TYPE: &'static str = "text/event-stream";

    fn parse(body: &Value, headers: Vec<(String, String)>) -> Result<ChatRequest, BadRequest> {
        let model = required_str(body, "model")?.to_owned();
        if !body.get("max_tokens").is_some_and(Value::is_u64) {
            return Err(BadRequest(
                "`max_tokens` is required and must be a positive integer".into(),
            ));
        }
        let messages = required_array(body, "messages")?
            .iter()
            .map(parse_message)
            .collect::<Result<Vec<_>, _>>()?;
        let tools = parse_tools(body)?;
        let output = output_shape(body, &tools);
        Ok(ChatRequest {
            endpoint: Self::ENDPOINT,
            model,
            system: body.get("system").map(content_text).unwrap_or_default(),
            messages,
            tools,
            output,
            stream: optional_bool(body, "stream")?.unwrap_or(false),
            include_usage: false,
            headers,
        })
    }

    fn whole(reply: &Reply, _req: &ChatRequest) -> Value {
        json!({
            "id": message_id(reply),
            "type": "message",
            "role": "assistant",
            "model": reply.model,
            "content": blocks(reply),
            "stop_reason": stop_reason(reply.finish),
            "stop_sequence": null,
            "usage": input_usage(reply, reply.usage.output),
        })
    }

    fn frames(reply: &Reply, _req: &ChatRequest) -> Frames {
        let start = json!({ "type": "message_start", "message": {
            "id": message_id(reply), "type": "message", "role": "assistant", "model": reply.model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": input_usage(reply, 1),
        }});
        let mut body = vec![
            sse_event("message_start", &start),
            sse_event("ping", &json!({"type": "ping"})),
        ];
        for (index, block) in blocks(reply).into_iter().enumerate() {
            let (opening, deltas): (Value, Vec<Value>) = if block["type"] == "thinking" {
                let mut deltas: Vec<Value> = text_chunks(reply.thinking.as_deref().unwrap_or(""))
                    .into_iter()
                    .map(|t| json!({ "type": "thinking_delta", "thinking": t }))
                    .collect();
                deltas.push(json!({ "type": "signature_delta", "signature": signature(reply) }));
                (
                    json!({ "type": "thinking", "thinking": "", "signature": "" }),
                    deltas,
                )
            } else if block["type"] == "text" {
                let deltas = text_chunks(&reply.text)
                    .into_iter()
                    .map(|t| json!({ "type": "text_delta", "text": t }))
                    .collect();
                (json!({ "type": "text", "text": "" }), deltas)
            } else {
                let input = block["input"].to_string();
                let raw = reply
                    .tool_calls
                    .iter()
                    .find(|c| block["id"] == json!(c.id))
                    .map_or(input, |c| c.arguments.to_wire_string());
                let deltas = argument_chunks(&raw, 3)
                    .into_iter()
                    .map(|p| json!({ "type": "input_json_delta", "partial_json": p }))
                    .collect();
                (
                    json!({ "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} }),
                    deltas,
                )
            };
            body.push(sse_event(
                "content_block_start",
                &json!({ "type": "content_block_start", "index": index, "content_block": opening }),
            ));
            for delta in deltas {
                body.push(sse_event(
                    "content_block_delta",
                    &json!({ "type": "content_block_delta", "index": index, "delta": delta }),
                ));
            }
            body.push(sse_event(
                "content_block_stop",
                &json!({ "type": "content_block_stop", "index": index }),
            ));
        }
        let delta = json!({
            "type": "message_delta",
            "delta": { "stop_reason": stop_reason(reply.finish), "stop_sequence": null },
            "usage": { "output_tokens": reply.usage.output },
        });
        let tail = vec![
            sse_event("message_delta", &delta),
            sse_event("message_stop", &json!({ "type": "message_stop" })),
        ];
        Frames { body, tail }
    }

    fn error(status: u16, code: Option<&str>, message: &str) -> Value {
        let kind = code.unwrap_or(match status {
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            s if s >= 500 => "api_error",
            _ => "invalid_request_error",
        });
        json!({ "type": "error", "error": { "type": kind, "message": message } })
    }

    fn stream_error_frame(status: u16, code: Option<&str>, message: &str) -> Bytes {
        sse_event("error", &Self::error(status, code, message))
    }

    fn malformed_frame() -> Bytes {
        Bytes::from_static(
            b"event: message_start\ndata: {\"type\": \"message_start\", \"message\": \n\n",
        )
    }
}

//! Ollama native chat (`POST /api/chat`): request parsing (`stream` defaults to true, `format` is
//! `"json"` or a schema), NDJSON lines with whole tool calls whose arguments are objects, the final
//! stats object, and `{"error": ...}` bodies. `GET /api/tags` and `/api/version` are rendered by
//! [`tags`] and [`version`].

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::delivery::{Frames, ndjson};
use crate::openai::parse_tools;
use crate::reply::{Finish, Reply, text_chunks};
use crate::request::{BadRequest, ChatRequest, Endpoint, Message, OutputShape, Role};
use crate::wire::{Wire, optional_bool, required_array, required_str};

/// The Ollama wire.
pub(crate) struct Ollama;

/// RFC 3339 form of a Unix time (`2024-01-01T00:00:00Z`).
pub(crate) fn rfc3339(secs: u64) -> String {
    let t = i64::try_from(secs)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_owned())
}

fn parse_message(m: &Value) -> Result<Message, BadRequest> {
    let role = match m.get("role").and_then(Value::as_str) {
        Some("system") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => Role::Tool,
        Some(other) => return Err(BadRequest(format!("unknown message role `{other}`"))),
        None => return Err(BadRequest("every message needs a `role`".into())),
    };
    let text = m
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let tool_calls = m
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| c.pointer("/function/name").and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok(if role == Role::Tool {
        Message {
            role,
            text: String::new(),
            tool_calls,
            tool_results: vec![text],
        }
    } else {
        Message {
            role,
            text,
            tool_calls,
            tool_results: Vec::new(),
        }
    })
}

fn done_reason(f: Finish) -> &'static str {
    match f {
        Finish::Length => "length",
        Finish::Stop | Finish::ToolCalls | Finish::ContentFilter => "stop",
    }
}

fn line(reply: &Reply, message: Value, done: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("model".into(), json!(reply.model));
    m.insert("created_at".into(), json!(rfc3339(reply.created)));
    m.insert("message".into(), message);
    m.insert("done".into(), json!(done));
    m
}

/// Adds `done_reason` and the (deterministic, token-derived) timing stats of a final object.
fn finish_line(reply: &Reply, mut m: Map<String, Value>) -> Value {
    let ms = 1_000_000_u64;
    let prompt = u64::from(reply.usage.input);
    let eval = u64::from(reply.usage.output);
    m.insert("done_reason".into(), json!(done_reason(reply.finish)));
    m.insert("total_duration".into(), json!(ms * (1 + prompt + eval)));
    m.insert("load_duration".into(), json!(ms));
    if reply.report_usage {
        m.insert("prompt_eval_count".into(), json!(prompt));
        m.insert("prompt_eval_duration".into(), json!(ms * prompt));
        m.insert("eval_count".into(), json!(eval));
        m.insert("eval_duration".into(), json!(ms * eval));
    }
    Value::Object(m)
}

fn tool_calls(reply: &Reply) -> Value {
    reply
        .tool_calls
        .iter()
        .map(
            |c| json!({ "function": { "name": c.name, "arguments": c.arguments.to_wire_value() } }),
        )
        .collect()
}

impl Wire for Ollama {
    const ENDPOINT: Endpoint = Endpoint::OllamaChat;
    const STREAM_CONTENT_TYPE: &'static str = "application/x-ndjson";

    fn parse(body: &Value, headers: Vec<(String, String)>) -> Result<ChatRequest, BadRequest> {
        let model = required_str(body, "model")?.to_owned();
        let mut system = Vec::new();
        let mut messages = Vec::new();
        for m in required_array(body, "messages")? {
            let m = parse_message(m)?;
            if m.role == Role::System {
                system.push(m.text);
            } else {
                messages.push(m);
            }
        }
        let output = match body.get("format") {
            Some(Value::String(s)) if s == "json" => OutputShape::Json,
            Some(schema @ Value::Object(_)) => OutputShape::Schema(schema.clone()),
            None | Some(Value::Null) => OutputShape::Text,
            Some(Value::String(s)) if s.is_empty() => OutputShape::Text,
            Some(other) => {
                return Err(BadRequest(format!(
                    "`format` must be \"json\" or a JSON Schema object, got {other}"
                )));
            }
        };
        Ok(ChatRequest {
            endpoint: Self::ENDPOINT,
            model,
            system: system.join("\n"),
            messages,
            tools: parse_tools(body)?,
            output,
            stream: optional_bool(body, "stream")?.unwrap_or(true),
            include_usage: false,
            headers,
        })
    }

    fn whole(reply: &Reply, _req: &ChatRequest) -> Value {
        let mut message = json!({ "role": "assistant", "content": reply.text });
        if let Some(thinking) = &reply.thinking {
            message["thinking"] = json!(thinking);
        }
        if !reply.tool_calls.is_empty() {
            message["tool_calls"] = tool_calls(reply);
        }
        finish_line(reply, line(reply, message, true))
    }

    fn frames(reply: &Reply, _req: &ChatRequest) -> Frames {
        // Scripted thinking comes first, as `think: true` models send it.
        let thinking = reply.thinking.iter().map(|thinking| {
            let message = json!({ "role": "assistant", "content": "", "thinking": thinking });
            ndjson(&Value::Object(line(reply, message, false)))
        });
        let mut body: Vec<Bytes> = thinking
            .chain(text_chunks(&reply.text).into_iter().map(|piece| {
                let message = json!({ "role": "assistant", "content": piece });
                ndjson(&Value::Object(line(reply, message, false)))
            }))
            .collect();
        if !reply.tool_calls.is_empty() {
            let message =
                json!({ "role": "assistant", "content": "", "tool_calls": tool_calls(reply) });
            body.push(ndjson(&Value::Object(line(reply, message, false))));
        }
        let last = line(reply, json!({ "role": "assistant", "content": "" }), true);
        Frames {
            body,
            tail: vec![ndjson(&finish_line(reply, last))],
        }
    }

    fn error(_status: u16, _code: Option<&str>, message: &str) -> Value {
        json!({ "error": message })
    }

    fn stream_error_frame(_status: u16, _code: Option<&str>, message: &str) -> Bytes {
        ndjson(&json!({ "error": message }))
    }

    fn malformed_frame() -> Bytes {
        Bytes::from_static(b"{\"model\": \"mock\", \"message\": {\"role\": \n")
    }
}

/// A stable fake digest for a model name (FNV-1a, repeated to 64 hex digits).
fn digest(name: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}").repeat(4)
}

/// `GET /api/tags`.
pub(crate) fn tags(names: &[String], created: u64) -> Value {
    let models: Vec<Value> = names
        .iter()
        .map(|n| {
            json!({
                "name": n,
                "model": n,
                "modified_at": rfc3339(created),
                "size": 1_000_000,
                "digest": digest(n),
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": "mock",
                    "families": ["mock"],
                    "parameter_size": "1B",
                    "quantization_level": "Q4_0",
                },
            })
        })
        .collect();
    json!({ "models": models })
}

/// `GET /api/version`.
pub(crate) fn version() -> Value {
    json!({ "version": "0.12.0" })
}

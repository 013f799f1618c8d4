//! OpenAI Chat Completions (`POST /v1/chat/completions`): request parsing, whole responses, SSE
//! chunks with tool-call deltas, `include_usage` and `[DONE]`, and OpenAI-shaped errors.
//! `GET /v1/models` is rendered by [`models`].

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::delivery::{Frames, sse_data};
use crate::reply::{Finish, Reply, argument_chunks, text_chunks};
use crate::request::{
    BadRequest, ChatRequest, Endpoint, Message, OutputShape, Role, ToolSpec, content_text,
};
use crate::wire::{Wire, optional_bool, required_array, required_str};

/// The OpenAI wire.
pub(crate) struct OpenAi;

fn finish_reason(f: Finish) -> &'static str {
    match f {
        Finish::Stop => "stop",
        Finish::Length => "length",
        Finish::ToolCalls => "tool_calls",
        Finish::ContentFilter => "content_filter",
    }
}

fn parse_message(m: &Value) -> Result<Message, BadRequest> {
    let role = match m.get("role").and_then(Value::as_str) {
        Some("system" | "developer") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool" | "function") => Role::Tool,
        Some(other) => return Err(BadRequest(format!("unknown message role `{other}`"))),
        None => return Err(BadRequest("every message needs a `role`".into())),
    };
    let text = m.get("content").map(content_text).unwrap_or_default();
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
    let (text, tool_results) = if role == Role::Tool {
        (String::new(), vec![text])
    } else {
        (text, Vec::new())
    };
    Ok(Message {
        role,
        text,
        tool_calls,
        tool_results,
    })
}

/// Parses the OpenAI `tools` array (shared with Ollama, whose tools have the same shape).
pub(crate) fn parse_tools(body: &Value) -> Result<Vec<ToolSpec>, BadRequest> {
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
                .pointer("/function/name")
                .and_then(Value::as_str)
                .ok_or_else(|| BadRequest("every tool needs `function.name`".into()))?;
            let parameters = t
                .pointer("/function/parameters")
                .cloned()
                .unwrap_or_else(|| json!({}));
            Ok(ToolSpec {
                name: name.to_owned(),
                parameters,
            })
        })
        .collect()
}

fn output_shape(body: &Value, tools: &[ToolSpec]) -> OutputShape {
    match body.get("tool_choice") {
        Some(Value::String(s)) if s == "required" => {
            if let Some(t) = tools.first() {
                return OutputShape::ForcedTool(t.name.clone());
            }
        }
        Some(choice @ Value::Object(_)) => {
            if let Some(name) = choice.pointer("/function/name").and_then(Value::as_str) {
                return OutputShape::ForcedTool(name.to_owned());
            }
        }
        _ => {}
    }
    let format = body.get("response_format");
    match format.and_then(|f| f.get("type")).and_then(Value::as_str) {
        Some("json_schema") => format
            .and_then(|f| f.pointer("/json_schema/schema"))
            .map_or(OutputShape::Json, |s| OutputShape::Schema(s.clone())),
        // llama-cpp-python enforces a `schema` given beside `json_object` (a grammar).
        Some("json_object") => format
            .and_then(|f| f.get("schema"))
            .map_or(OutputShape::Json, |s| OutputShape::Schema(s.clone())),
        _ => OutputShape::Text,
    }
}

fn usage(reply: &Reply) -> Value {
    let mut usage = json!({
        "prompt_tokens": reply.usage.input,
        "completion_tokens": reply.usage.output,
        "total_tokens": reply.usage.input.saturating_add(reply.usage.output),
    });
    if let Some(cached) = reply.usage.cached {
        usage["prompt_tokens_details"] = json!({ "cached_tokens": cached });
    }
    if let Some(reasoning) = reply.usage.reasoning {
        usage["completion_tokens_details"] = json!({ "reasoning_tokens": reasoning });
    }
    usage
}

impl OpenAi {
    fn chunk(reply: &Reply, req: &ChatRequest, delta: Value, finish: Option<Finish>) -> Value {
        let mut chunk = json!({
            "id": format!("chatcmpl-mock-{}", reply.seq),
            "object": "chat.completion.chunk",
            "created": reply.created,
            "model": reply.model,
            "system_fingerprint": "fp_mock",
            "choices": [{
                "index": 0,
                "delta": delta,
                "logprobs": null,
                "finish_reason": finish.map(finish_reason),
            }],
        });
        if req.include_usage {
            chunk["usage"] = Value::Null;
        }
        chunk
    }
}

impl Wire for OpenAi {
    const ENDPOINT: Endpoint = Endpoint::OpenAiChat;
    const STREAM_CONTENT_TYPE: &'static str = "text/event-stream";

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
        let tools = parse_tools(body)?;
        let output = output_shape(body, &tools);
        let include_usage = body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ok(ChatRequest {
            endpoint: Self::ENDPOINT,
            model,
            system: system.join("\n"),
            messages,
            tools,
            output,
            stream: optional_bool(body, "stream")?.unwrap_or(false),
            include_usage,
            headers,
        })
    }

    fn whole(reply: &Reply, _req: &ChatRequest) -> Value {
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        let content = if reply.text.is_empty() && !reply.tool_calls.is_empty() {
            Value::Null
        } else {
            json!(reply.text)
        };
        message.insert("content".into(), content);
        message.insert("refusal".into(), Value::Null);
        if let Some(thinking) = &reply.thinking {
            // As llama.cpp and DeepSeek send a reasoning model's thinking.
            message.insert("reasoning_content".into(), json!(thinking));
        }
        if !reply.tool_calls.is_empty() {
            let calls: Vec<Value> = reply
                .tool_calls
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "type": "function",
                        "function": { "name": c.name, "arguments": c.arguments.to_wire_string() },
                    })
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        json!({
            "id": format!("chatcmpl-mock-{}", reply.seq),
            "object": "chat.completion",
            "created": reply.created,
            "model": reply.model,
            "system_fingerprint": "fp_mock",
            "choices": [{
                "index": 0,
                "message": message,
                "logprobs": null,
                "finish_reason": finish_reason(reply.finish),
            }],
        })
        .as_object()
        .cloned()
        .map(|mut body| {
            if reply.report_usage {
                body.insert("usage".into(), usage(reply));
            }
            Value::Object(body)
        })
        .unwrap_or_default()
    }

    fn frames(reply: &Reply, req: &ChatRequest) -> Frames {
        let mut body = vec![sse_data(&Self::chunk(
            reply,
            req,
            json!({"role": "assistant", "content": "", "refusal": null}),
            None,
        ))];
        for piece in text_chunks(reply.thinking.as_deref().unwrap_or("")) {
            let delta = json!({ "reasoning_content": piece });
            body.push(sse_data(&Self::chunk(reply, req, delta, None)));
        }
        for piece in text_chunks(&reply.text) {
            body.push(sse_data(&Self::chunk(
                reply,
                req,
                json!({ "content": piece }),
                None,
            )));
        }
        for (index, call) in reply.tool_calls.iter().enumerate() {
            let index = if reply.tool_calls_at_index_zero {
                0
            } else {
                index
            };
            let opening = json!({ "tool_calls": [{
                "index": index,
                "id": call.id,
                "type": "function",
                "function": { "name": call.name, "arguments": "" },
            }]});
            body.push(sse_data(&Self::chunk(reply, req, opening, None)));
            let arguments = call.arguments.to_wire_string();
            for piece in argument_chunks(&arguments, 3) {
                let delta = json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] });
                body.push(sse_data(&Self::chunk(reply, req, delta, None)));
            }
        }
        let mut tail = vec![sse_data(&Self::chunk(
            reply,
            req,
            json!({}),
            Some(reply.finish),
        ))];
        if req.include_usage && reply.report_usage {
            tail.push(sse_data(&json!({
                "id": format!("chatcmpl-mock-{}", reply.seq),
                "object": "chat.completion.chunk",
                "created": reply.created,
                "model": reply.model,
                "system_fingerprint": "fp_mock",
                "choices": [],
                "usage": usage(reply),
            })));
        }
        tail.push(Bytes::from_static(b"data: [DONE]\n\n"));
        Frames { body, tail }
    }

    fn error(status: u16, code: Option<&str>, message: &str) -> Value {
        let (kind, default_code) = match status {
            401 => ("invalid_request_error", Some("invalid_api_key")),
            403 => ("permission_error", None),
            404 => ("invalid_request_error", Some("model_not_found")),
            429 => ("requests", Some("rate_limit_exceeded")),
            s if s >= 500 => ("server_error", None),
            _ => ("invalid_request_error", None),
        };
        if code == Some(crate::faults::LOADING_CODE) {
            // llama.cpp's shape: the status as `code`, the kind as `type`.
            return json!({ "error": { "code": status, "message": message, "type": code } });
        }
        let code = code.or(default_code);
        // OpenAI reports quota exhaustion with type and code both `insufficient_quota`.
        let kind = if code == Some("insufficient_quota") {
            "insufficient_quota"
        } else {
            kind
        };
        json!({ "error": { "message": message, "type": kind, "param": null, "code": code } })
    }

    fn stream_error_frame(status: u16, code: Option<&str>, message: &str) -> Bytes {
        sse_data(&Self::error(status, code, message))
    }

    fn malformed_frame() -> Bytes {
        Bytes::from_static(b"data: {\"id\": \"chatcmpl-mock\", \"choices\": [{\"delta\": \n\n")
    }
}

/// `GET /v1/models`.
pub(crate) fn models(names: &[String], created: u64) -> Value {
    let data: Vec<Value> = names
        .iter()
        .map(|n| json!({ "id": n, "object": "model", "created": created, "owned_by": "mock-llm" }))
        .collect();
    json!({ "object": "list", "data": data })
}

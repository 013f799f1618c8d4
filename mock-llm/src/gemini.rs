//! Google Gemini (`POST /v1beta/models/{model}:generateContent`, and
//! `:streamGenerateContent?alt=sse`; the same under `/v1`, where the `google-genai` SDK goes
//! unless told `api_version`): the model and the streaming come from the path
//! ([`Wire::at_path`]); request parsing (`contents` of `user`/`model` turns with `text`,
//! `functionCall` and `functionResponse` parts, `systemInstruction`, `functionDeclarations` with
//! `parameters` or `parametersJsonSchema`, `toolConfig` mode `ANY` as a forced call,
//! `generationConfig.responseMimeType` with `responseJsonSchema` or `responseSchema`);
//! `GenerateContentResponse` bodies, whole or as SSE `data:` chunks (text a word a chunk, each
//! call whole, the finish reason and `usageMetadata` in the last chunk; a scripted `thinking`
//! as a `thought` part with a `thoughtSignature`, the signature also on the first call); and
//! Gemini-shaped errors (`{"error": {"code", "message", "status"}}`).

use bytes::Bytes;
use serde_json::{Value, json};

use crate::delivery::{Frames, sse_data};
use crate::reply::{Finish, Reply, text_chunks};
use crate::request::{BadRequest, ChatRequest, Endpoint, Message, OutputShape, Role, ToolSpec};
use crate::wire::{Wire, required_array};

/// The Gemini wire.
pub(crate) struct Gemini;

fn finish_reason(f: Finish) -> &'static str {
    match f {
        Finish::Stop | Finish::ToolCalls => "STOP",
        Finish::Length => "MAX_TOKENS",
        Finish::ContentFilter => "SAFETY",
    }
}

/// The status name Google's APIs give an HTTP status.
fn status_name(status: u16) -> &'static str {
    match status {
        400 | 413 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 | 529 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

/// The text of all `text` parts of a content (thought parts are not the conversation's text).
fn parts_text(parts: &[Value]) -> String {
    parts
        .iter()
        .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

fn parse_content(content: &Value) -> Result<Message, BadRequest> {
    let role = match content.get("role").and_then(Value::as_str) {
        None | Some("user") => Role::User,
        Some("model") => Role::Assistant,
        Some(other) => {
            return Err(BadRequest(format!(
                "contents: unexpected role `{other}` (user or model)"
            )));
        }
    };
    let parts = required_array(content, "parts")?;
    let tool_calls = parts
        .iter()
        .filter_map(|p| p.pointer("/functionCall/name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    let tool_results = parts
        .iter()
        .filter_map(|p| p.pointer("/functionResponse/response"))
        .map(|r| match r.get("output").or_else(|| r.get("error")) {
            Some(Value::String(s)) => s.clone(),
            _ => r.to_string(),
        })
        .collect();
    Ok(Message {
        role,
        text: parts_text(parts),
        tool_calls,
        tool_results,
    })
}

/// An OpenAPI-style schema (`"type": "OBJECT"`, as the Python SDK writes `parameters` and
/// `responseSchema`) as JSON Schema: type names in lower case, everything else as it is.
fn json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("type", Value::String(t)) => Value::String(t.to_ascii_lowercase()),
                        _ => json_schema(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(json_schema).collect()),
        other => other.clone(),
    }
}

fn parse_tools(body: &Value) -> Result<Vec<ToolSpec>, BadRequest> {
    let Some(tools) = body.get("tools").filter(|t| !t.is_null()) else {
        return Ok(Vec::new());
    };
    let tools = tools
        .as_array()
        .ok_or_else(|| BadRequest("`tools` must be an array".into()))?;
    let mut specs = Vec::new();
    for tool in tools {
        let declarations = tool
            .get("functionDeclarations")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for d in declarations {
            let name = d
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| BadRequest("every function declaration needs a `name`".into()))?;
            let parameters = d
                .get("parametersJsonSchema")
                .cloned()
                .or_else(|| d.get("parameters").map(json_schema))
                .unwrap_or_else(|| json!({}));
            specs.push(ToolSpec {
                name: name.to_owned(),
                parameters,
            });
        }
    }
    Ok(specs)
}

fn output_shape(body: &Value, tools: &[ToolSpec]) -> OutputShape {
    let calling = body.pointer("/toolConfig/functionCallingConfig");
    if calling.and_then(|c| c.get("mode")).and_then(Value::as_str) == Some("ANY") {
        let allowed = calling
            .and_then(|c| c.pointer("/allowedFunctionNames/0"))
            .and_then(Value::as_str);
        if let Some(name) = allowed.or_else(|| tools.first().map(|t| t.name.as_str())) {
            return OutputShape::ForcedTool(name.to_owned());
        }
    }
    let config = body.get("generationConfig");
    let mime = config
        .and_then(|c| c.get("responseMimeType"))
        .and_then(Value::as_str);
    if mime != Some("application/json") {
        return OutputShape::Text;
    }
    match config.and_then(|c| c.get("responseJsonSchema")) {
        Some(schema) => OutputShape::Schema(schema.clone()),
        None => config
            .and_then(|c| c.get("responseSchema"))
            .map_or(OutputShape::Json, |s| OutputShape::Schema(json_schema(s))),
    }
}

/// The deterministic thought signature of a reply (a real API's is opaque base64 and must come
/// back unchanged on its part; tests check that it does): `c2lnbW9jaw` (base64 of `sigmock`)
/// and six digits of the reply's number, valid base64 as the SDK insists.
fn signature(reply: &Reply) -> String {
    format!("c2lnbW9jaw{:06}", reply.seq % 1_000_000)
}

fn usage_metadata(reply: &Reply) -> Value {
    let thoughts = reply.usage.reasoning.unwrap_or(0).min(reply.usage.output);
    let mut usage = json!({
        "promptTokenCount": reply.usage.input,
        "candidatesTokenCount": reply.usage.output - thoughts,
        "totalTokenCount": reply.usage.input.saturating_add(reply.usage.output),
    });
    if let Some(cached) = reply.usage.cached {
        usage["cachedContentTokenCount"] = json!(cached.min(reply.usage.input));
    }
    if reply.usage.reasoning.is_some() {
        usage["thoughtsTokenCount"] = json!(thoughts);
    }
    usage
}

/// The reply's parts: the thought summary, the text, the calls (each whole).
fn parts(reply: &Reply) -> Vec<Value> {
    let mut parts = Vec::new();
    if let Some(thinking) = &reply.thinking {
        parts
            .push(json!({"text": thinking, "thought": true, "thoughtSignature": signature(reply)}));
    }
    if !reply.text.is_empty() || reply.tool_calls.is_empty() {
        parts.push(json!({"text": reply.text}));
    }
    for (i, call) in reply.tool_calls.iter().enumerate() {
        let mut part = json!({"functionCall": {
            "id": call.id, "name": call.name, "args": call.arguments.to_wire_value(),
        }});
        if i == 0 && reply.thinking.is_some() {
            part["thoughtSignature"] = json!(signature(reply));
        }
        parts.push(part);
    }
    parts
}

/// One `GenerateContentResponse` holding `parts`, with the finish reason and usage when given.
fn response(reply: &Reply, parts: Vec<Value>, last: bool) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut body = json!({
        "modelVersion": reply.model,
        "responseId": format!("resp_mock_{:04}", reply.seq),
    });
    if last {
        candidate["finishReason"] = json!(finish_reason(reply.finish));
        if reply.report_usage {
            body["usageMetadata"] = usage_metadata(reply);
        }
    }
    body["candidates"] = json!([candidate]);
    body
}

impl Wire for Gemini {
    const ENDPOINT: Endpoint = Endpoint::GeminiGenerateContent;
    const STREAM_CONTENT_TYPE: &'static str = "text/event-stream";

    fn parse(body: &Value, headers: Vec<(String, String)>) -> Result<ChatRequest, BadRequest> {
        let messages = required_array(body, "contents")?
            .iter()
            .map(parse_content)
            .collect::<Result<Vec<_>, _>>()?;
        let system = body
            .pointer("/systemInstruction/parts")
            .and_then(Value::as_array)
            .map(|p| parts_text(p))
            .unwrap_or_default();
        let tools = parse_tools(body)?;
        let output = output_shape(body, &tools);
        Ok(ChatRequest {
            endpoint: Self::ENDPOINT,
            // Both come from the path (`at_path`).
            model: String::new(),
            system,
            messages,
            tools,
            output,
            stream: false,
            include_usage: false,
            headers,
        })
    }

    fn at_path(mut request: ChatRequest, path: &str) -> Result<ChatRequest, BadRequest> {
        let target = path.rsplit('/').next().unwrap_or_default();
        let (model, action) = target
            .rsplit_once(':')
            .ok_or_else(|| BadRequest(format!("`{path}` names no method (`:generateContent`)")))?;
        request.stream = match action {
            "generateContent" => false,
            "streamGenerateContent" => true,
            other => {
                return Err(BadRequest(format!(
                    "mock-llm does not serve `:{other}` (generateContent, streamGenerateContent)"
                )));
            }
        };
        model.clone_into(&mut request.model);
        Ok(request)
    }

    fn whole(reply: &Reply, _req: &ChatRequest) -> Value {
        response(reply, parts(reply), true)
    }

    fn frames(reply: &Reply, _req: &ChatRequest) -> Frames {
        let mut body = Vec::new();
        if let Some(thinking) = &reply.thinking {
            let chunk =
                json!({"text": thinking, "thought": true, "thoughtSignature": signature(reply)});
            body.push(sse_data(&response(reply, vec![chunk], false)));
        }
        for piece in text_chunks(&reply.text) {
            body.push(sse_data(&response(
                reply,
                vec![json!({"text": piece})],
                false,
            )));
        }
        let thought = usize::from(reply.thinking.is_some());
        for call in parts(reply).into_iter().skip(thought) {
            if call.get("functionCall").is_some() {
                body.push(sse_data(&response(reply, vec![call], false)));
            }
        }
        let tail = vec![sse_data(&response(reply, vec![json!({"text": ""})], true))];
        Frames { body, tail }
    }

    fn error(status: u16, code: Option<&str>, message: &str) -> Value {
        json!({"error": {
            "code": status,
            "message": message,
            "status": code.unwrap_or(status_name(status)),
        }})
    }

    fn stream_error_frame(status: u16, code: Option<&str>, message: &str) -> Bytes {
        sse_data(&Self::error(status, code, message))
    }

    fn malformed_frame() -> Bytes {
        Bytes::from_static(b"data: {\"candidates\": [{\"content\": \n\n")
    }
}

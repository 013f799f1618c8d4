//! Tests of the borrowed Chat Completions body: for every kind of message, tool call and option
//! it serializes to the same JSON as async-openai's own `CreateChatCompletionRequest` built from
//! the same request (the owned mapping the wire used before, kept here as the reference).

use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls,
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestAssistantMessageContent,
    ChatCompletionRequestMessage, ChatCompletionRequestMessageContentPartImage,
    ChatCompletionRequestSystemMessage, ChatCompletionRequestSystemMessageContent,
    ChatCompletionRequestToolMessage, ChatCompletionRequestToolMessageContent,
    ChatCompletionRequestUserMessage, ChatCompletionRequestUserMessageContent,
    ChatCompletionRequestUserMessageContentPart, ChatCompletionStreamOptions, ChatCompletionTool,
    ChatCompletionTools, CreateChatCompletionRequest, FunctionCall, FunctionObject, ImageUrl,
    ResponseFormat, ResponseFormatJsonSchema,
};
use serde_json::{Value, json};

use super::ChatCompletionBody;
use crate::kind::ProviderKind;
use crate::spec::ProviderSpec;
use crate::types::{ChatMessage, ChatRequest, Hints, ResponseSchema, ToolCall, ToolSpec};

#[allow(deprecated)] // `max_tokens` and `seed` are deprecated by OpenAI but read by compatibles.
fn async_openai_request(
    spec: &ProviderSpec,
    request: &ChatRequest,
    stream: bool,
) -> CreateChatCompletionRequest {
    let hints = request.hints.or(&spec.default_hints);
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(ChatCompletionRequestMessage::System(
            ChatCompletionRequestSystemMessage {
                content: ChatCompletionRequestSystemMessageContent::Text(system.clone()),
                name: None,
            },
        ));
    }
    messages.extend(request.messages.iter().map(to_wire_message));

    let tools = (!request.tools.is_empty()).then(|| {
        request
            .tools
            .iter()
            .map(|t| {
                ChatCompletionTools::Function(ChatCompletionTool {
                    function: FunctionObject {
                        name: t.name.clone(),
                        description: Some(t.description.clone()),
                        parameters: Some((*t.parameters).clone()),
                        strict: None,
                    },
                })
            })
            .collect()
    });
    let response_format = request
        .response_schema
        .as_ref()
        .map(|s| ResponseFormat::JsonSchema {
            json_schema: ResponseFormatJsonSchema {
                description: None,
                name: s.name.clone(),
                schema: (*s.schema).clone(),
                strict: None,
            },
        });

    let mut wire = CreateChatCompletionRequest {
        model: spec.model.clone(),
        messages,
        tools,
        response_format,
        temperature: hints.temperature,
        top_p: hints.top_p,
        seed: hints.seed,
        ..Default::default()
    };
    // OpenAI wants `max_completion_tokens`; most compatible servers (Ollama /v1 among them)
    // only read `max_tokens`.
    match spec.kind {
        ProviderKind::Openai => wire.max_completion_tokens = hints.max_tokens,
        _ => wire.max_tokens = hints.max_tokens,
    }
    if stream {
        wire.stream = Some(true);
        wire.stream_options = Some(ChatCompletionStreamOptions {
            include_usage: Some(true),
            include_obfuscation: None,
        });
    }
    wire
}

#[allow(deprecated)] // the struct has a deprecated `function_call` field we leave unset
fn to_wire_message(message: &ChatMessage) -> ChatCompletionRequestMessage {
    match message {
        ChatMessage::User { text } => {
            ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
                content: ChatCompletionRequestUserMessageContent::Text(text.clone()),
                name: None,
            })
        }
        ChatMessage::Image { image } => {
            ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
                content: ChatCompletionRequestUserMessageContent::Array(vec![
                    ChatCompletionRequestUserMessageContentPart::ImageUrl(
                        ChatCompletionRequestMessageContentPartImage {
                            image_url: ImageUrl {
                                url: image.data_url().into_owned(),
                                detail: None,
                            },
                            prompt_cache_breakpoint: None,
                        },
                    ),
                ]),
                name: None,
            })
        }
        ChatMessage::Assistant {
            text, tool_calls, ..
        } => {
            let calls: Vec<ChatCompletionMessageToolCalls> = tool_calls
                .iter()
                .map(|c| {
                    ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
                        id: c.id.clone(),
                        function: FunctionCall {
                            name: c.name.clone(),
                            arguments: raw_arguments(c),
                        },
                    })
                })
                .collect();
            ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
                content: (!text.is_empty() || calls.is_empty())
                    .then(|| ChatCompletionRequestAssistantMessageContent::Text(text.clone())),
                tool_calls: (!calls.is_empty()).then_some(calls),
                ..Default::default()
            })
        }
        ChatMessage::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
            content: ChatCompletionRequestToolMessageContent::Text(
                crate::wire::tool_result_text(content, *is_error).into_owned(),
            ),
            tool_call_id: call_id.clone(),
        }),
    }
}

/// The argument text to send back: the model's own text when it was invalid JSON.
fn raw_arguments(call: &ToolCall) -> String {
    match (&call.invalid_arguments, &call.arguments) {
        (Some(_), serde_json::Value::String(raw)) => raw.clone(),
        (_, value) => value.to_string(),
    }
}

fn rich_request() -> ChatRequest {
    let call = |id: &str, raw: &str| ToolCall::from_raw_arguments(id.into(), "calc".into(), raw);
    ChatRequest {
        system: Some("You are \"exact\".\nLine two \u{2014} ünïcode \u{1F600}".into()),
        messages: vec![
            ChatMessage::user("compute <6 * 7> + 1\t\u{0001}"),
            ChatMessage::Assistant {
                thinking: Vec::new(),
                text: String::new(),
                tool_calls: vec![call("c1", r#"{"op":"mul","a":6,"b":7.5,"s":"q\"x"}"#)],
            },
            ChatMessage::tool_result("c1", "calc", "42"),
            ChatMessage::Assistant {
                thinking: Vec::new(),
                text: "thinking aloud".into(),
                tool_calls: vec![call("c2", "{not json"), call("c3", "[1,2]"), call("c4", "")],
            },
            ChatMessage::tool_error("c2", "calc", "bad \"args\"\n: {not json"),
            ChatMessage::tool_result("c3", "calc", ""),
            ChatMessage::tool_result("c4", "calc", "ok"),
            ChatMessage::assistant(""),
            ChatMessage::assistant("{\"result\": 43}"),
            ChatMessage::user("fix it"),
            ChatMessage::Image {
                image: crate::types::ImageInput {
                    media_type: "image/png".into(),
                    source: crate::types::ImageSource::Base64("iVBORw0KGgo=".into()),
                },
            },
            ChatMessage::Image {
                image: crate::types::ImageInput {
                    media_type: "image/jpeg".into(),
                    source: crate::types::ImageSource::Url("https://example.com/a.jpg".into()),
                },
            },
        ],
        tools: vec![
            ToolSpec {
                name: "calc".into(),
                description: "Does \"math\".".into(),
                parameters: json!({"type": "object", "properties": {"a": {"type": "number"}},
                    "required": ["a"], "additionalProperties": false})
                .into(),
            },
            ToolSpec {
                name: "empty".into(),
                description: String::new(),
                parameters: json!({}).into(),
            },
        ],
        response_schema: Some(ResponseSchema {
            name: "bench-calc".into(),
            schema: json!({"type": "object", "properties": {"result": {"type": "integer"}}}).into(),
        }),
        hints: Hints {
            max_tokens: Some(256),
            temperature: Some(0.25),
            top_p: Some(0.5),
            seed: Some(-7),
            ..Hints::default()
        },
        ..Default::default()
    }
}

fn spec(kind: ProviderKind) -> ProviderSpec {
    ProviderSpec::new(kind, "model-x", Some("http://127.0.0.1:1/v1")).unwrap()
}

fn both(spec: &ProviderSpec, request: &ChatRequest, stream: bool) -> (Value, Value) {
    let plan = crate::modes::TurnPlan::enforcing(request);
    let ours = serde_json::to_vec(&ChatCompletionBody::new(
        spec.wire_settings(),
        request,
        &plan,
        stream,
    ))
    .unwrap();
    let reference = serde_json::to_vec(&async_openai_request(spec, request, stream)).unwrap();
    (
        serde_json::from_slice(&ours).unwrap(),
        serde_json::from_slice(&reference).unwrap(),
    )
}

#[test]
fn the_borrowed_body_equals_async_openais_for_every_message_kind_and_option() {
    let request = rich_request();
    for kind in [ProviderKind::Openai, ProviderKind::OpenaiCompatible] {
        for stream in [false, true] {
            let (ours, reference) = both(&spec(kind), &request, stream);
            assert_eq!(ours, reference, "{kind:?} stream={stream}");
        }
    }
    // The token hint goes to the field each kind reads.
    let (official, _) = both(&spec(ProviderKind::Openai), &request, false);
    assert_eq!(official["max_completion_tokens"], 256);
    assert!(official.get("max_tokens").is_none());
    let (compatible, _) = both(&spec(ProviderKind::OpenaiCompatible), &request, true);
    assert_eq!(compatible["max_tokens"], 256);
    assert_eq!(compatible["stream_options"], json!({"include_usage": true}));
}

#[test]
fn a_bare_request_omits_every_optional_field_like_async_openai() {
    let request = ChatRequest {
        messages: vec![ChatMessage::user("hi")],
        ..Default::default()
    };
    let (ours, reference) = both(&spec(ProviderKind::OpenaiCompatible), &request, false);
    assert_eq!(ours, reference);
    assert_eq!(
        ours,
        json!({"model": "model-x", "messages": [{"role": "user", "content": "hi"}]})
    );
}

#[test]
fn spec_default_hints_fill_what_the_request_leaves_unset() {
    let mut spec = spec(ProviderKind::OpenaiCompatible);
    spec.default_hints.temperature = Some(0.75);
    spec.default_hints.max_tokens = Some(9);
    let mut request = rich_request();
    request.hints.max_tokens = None;
    let (ours, reference) = both(&spec, &request, false);
    assert_eq!(ours, reference);
    assert_eq!(ours["max_tokens"], 9);
    assert_eq!(ours["temperature"], 0.25);
}

#[test]
fn invalid_arguments_go_back_as_the_models_own_text_and_errors_get_a_prefix() {
    let (ours, _) = both(
        &spec(ProviderKind::OpenaiCompatible),
        &rich_request(),
        false,
    );
    let messages = ours["messages"].as_array().unwrap();
    assert_eq!(
        messages[4]["tool_calls"][0]["function"]["arguments"],
        "{not json"
    );
    assert_eq!(messages[5]["content"], "Error: bad \"args\"\n: {not json");
    assert_eq!(messages[5]["tool_call_id"], "c2");
    // Arguments that parsed are re-encoded as compact JSON text.
    let sent: Value = serde_json::from_str(
        messages[2]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(sent, json!({"op": "mul", "a": 6, "b": 7.5, "s": "q\"x"}));
}

/// The body's `tool_choice` when the answer tool is the only tool, for `kind`.
fn answer_tool_choice(kind: ProviderKind) -> Value {
    let request = ChatRequest {
        messages: vec![ChatMessage::user("hi")],
        response_schema: Some(ResponseSchema {
            name: "answer".into(),
            schema: json!({"type": "object", "properties": {"n": {"type": "integer"}}}).into(),
        }),
        ..Default::default()
    };
    let mut plan = crate::modes::TurnPlan::enforcing(&request);
    plan.output = crate::modes::OutputMode::Tool;
    let spec = spec(kind);
    let body = serde_json::to_vec(&ChatCompletionBody::new(
        spec.wire_settings(),
        &request,
        &plan,
        false,
    ))
    .unwrap();
    serde_json::from_slice::<Value>(&body).unwrap()["tool_choice"].clone()
}

#[test]
fn an_openai_compatible_server_is_never_sent_a_named_tool_choice() {
    // llama.cpp reads a named choice as `auto`; `required` with one tool forces the same call.
    assert_eq!(
        answer_tool_choice(ProviderKind::OpenaiCompatible),
        json!("required")
    );
    assert_eq!(
        answer_tool_choice(ProviderKind::Openai)["function"]["name"],
        json!(crate::modes::ANSWER_TOOL)
    );
}

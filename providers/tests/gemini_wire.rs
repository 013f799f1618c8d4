//! The Gemini wire's bytes: the request line (model and method in the path, `alt=sse` when
//! streaming, never the key), the `x-goog-api-key` header, the body (system instruction,
//! function declarations with their JSON Schema, function call and response parts, the
//! response schema, the thinking config), and what comes back from mock-llm's Gemini dialect
//! (thought summary as reasoning, thought signatures echoed on their parts, cached and thought
//! token counts). The rest of the contract is the shared suite (`conformance.rs`, `gemini`).

mod support;

use serde_json::{Value, json};
use skillet_providers::{
    CallOptions, ChatMessage, ChatRequest, FinishReason, ProviderKind, ProviderPool, ProviderSpec,
    ResponseSchema, ThinkingBlock, ToolCall, ToolSpec, Usage,
};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A server that answers every request with `answer` (SSE when `sse`), and hands back the raw
/// bytes of the first request it read (head and body).
async fn capturing_server(
    answer: &'static str,
    sse: bool,
) -> (String, tokio::sync::oneshot::Receiver<Vec<u8>>) {
    answering_server("200 OK", answer, sse).await
}

/// [`capturing_server`] with the status line's code and reason (`"429 Too Many Requests"`).
async fn answering_server(
    status: &'static str,
    answer: &'static str,
    sse: bool,
) -> (String, tokio::sync::oneshot::Receiver<Vec<u8>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buffer = [0u8; 16 * 1024];
        // Read the head, then the body its content-length announces.
        loop {
            let n = socket.read(&mut buffer).await.unwrap();
            request.extend_from_slice(&buffer[..n]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        let (content_type, body) = if sse {
            ("text/event-stream", format!("data: {answer}\n\n"))
        } else {
            ("application/json", answer.to_owned())
        };
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        socket.write_all(head.as_bytes()).await.unwrap();
        socket.write_all(body.as_bytes()).await.unwrap();
        let _ = tx.send(request);
    });
    (format!("http://{address}"), rx)
}

fn gemini_spec(base: &str, extra: Value) -> ProviderSpec {
    let mut config = json!({"model": "gemini-2.5-flash", "base_url": base, "max_attempts": 1});
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        config[k] = v;
    }
    let credentials = |key: &str| (key == "api_key").then(|| secrecy::SecretString::from(TEST_KEY));
    ProviderSpec::from_llm_config("gemini", config.as_object(), &credentials).unwrap()
}

fn weather_tool() -> ToolSpec {
    ToolSpec {
        name: "get_weather".into(),
        description: "Weather for a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"], "additionalProperties": false})
        .into(),
    }
}

fn split(raw: &[u8]) -> (String, Value) {
    let text = String::from_utf8(raw.to_vec()).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.to_owned(), serde_json::from_str(body).unwrap())
}

const ANSWER: &str = r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}],"responseId":"r1"}"#;

#[tokio::test]
async fn streamed_request_names_model_and_method_in_the_path_and_the_key_only_in_its_header() {
    let (base, captured) = capturing_server(ANSWER, true).await;
    let provider = ProviderPool::new()
        .provider(&gemini_spec(&base, json!({})))
        .unwrap();
    let sink = |_: &str| {};
    let reply = provider
        .chat(ask("hi"), CallOptions::default().with_stream(&sink))
        .await
        .unwrap();
    assert_eq!(reply.text, "ok");
    assert_eq!(reply.request_id.as_deref(), Some("r1"));
    let (head, body) = split(&captured.await.unwrap());
    let request_line = head.lines().next().unwrap();
    assert_eq!(
        request_line,
        "POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse HTTP/1.1"
    );
    let lower = head.to_ascii_lowercase();
    assert!(
        lower.contains(&format!(
            "x-goog-api-key: {}",
            TEST_KEY.to_ascii_lowercase()
        )),
        "{head}"
    );
    assert!(
        !request_line.contains(TEST_KEY) && !request_line.contains("key="),
        "{request_line}"
    );
    assert!(!lower.contains("authorization:"), "{head}");
    assert_eq!(
        body,
        json!({
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "systemInstruction": {"parts": [{"text": "You are a test."}]},
        })
    );
}

#[tokio::test]
async fn tools_calls_results_schema_and_thinking_are_the_documented_shapes() {
    let (base, captured) = capturing_server(ANSWER, false).await;
    let spec = gemini_spec(&base, json!({"thinking_budget_tokens": 1024}));
    let provider = ProviderPool::new().provider(&spec).unwrap();
    let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}},
                        "required": ["answer"]});
    let request = ChatRequest {
        system: Some("Be brief.".into()),
        messages: vec![
            ChatMessage::user("weather in Oslo?"),
            ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "get_weather".into(),
                    arguments: json!({"city": "Oslo"}),
                    invalid_arguments: None,
                }],
                thinking: vec![ThinkingBlock::ThoughtSignature {
                    call: Some("call_1".into()),
                    signature: "c2lnbmF0dXJl".into(),
                }],
            },
            ChatMessage::tool_result("call_1", "get_weather", "rain, 8C"),
        ],
        tools: vec![weather_tool()],
        response_schema: Some(ResponseSchema {
            name: "answer".into(),
            schema: schema.clone().into(),
        }),
        phase: skillet_providers::TurnPhase::Answer,
        ..Default::default()
    };
    let reply = provider
        .chat(request, CallOptions::default())
        .await
        .unwrap();
    assert_eq!(reply.finish_reason, FinishReason::Stop);
    let (head, body) = split(&captured.await.unwrap());
    assert!(
        head.starts_with("POST /v1beta/models/gemini-2.5-flash:generateContent HTTP/1.1\r\n"),
        "{head}"
    );
    assert_eq!(
        body,
        json!({
            "contents": [
                {"role": "user", "parts": [{"text": "weather in Oslo?"}]},
                {"role": "model", "parts": [{
                    "functionCall": {"id": "call_1", "name": "get_weather", "args": {"city": "Oslo"}},
                    "thoughtSignature": "c2lnbmF0dXJl",
                }]},
                {"role": "user", "parts": [{
                    "functionResponse": {"id": "call_1", "name": "get_weather",
                                         "response": {"output": "rain, 8C"}},
                }]},
            ],
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "tools": [{"functionDeclarations": [{
                "name": "get_weather",
                "description": "Weather for a city",
                "parametersJsonSchema": weather_tool().parameters.value(),
            }]}],
            "generationConfig": {
                "responseMimeType": "application/json",
                "responseJsonSchema": schema,
                "thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": true},
            },
        })
    );
}

#[tokio::test]
async fn a_turn_with_tools_open_sends_no_response_schema_beside_them() {
    // Gemini before 3 refuses a JSON response type with function calling: the schema waits for
    // the answer turn.
    let (base, captured) = capturing_server(ANSWER, false).await;
    let provider = ProviderPool::new()
        .provider(&gemini_spec(&base, json!({})))
        .unwrap();
    let mut request = ask("weather?");
    request.tools = vec![weather_tool()];
    request.response_schema = Some(ResponseSchema {
        name: "a".into(),
        schema: json!({"type": "object"}).into(),
    });
    provider
        .chat(request, CallOptions::default())
        .await
        .unwrap();
    let (_, body) = split(&captured.await.unwrap());
    assert!(body.get("generationConfig").is_none(), "{body}");
    assert!(
        body["tools"][0]["functionDeclarations"].is_array(),
        "{body}"
    );
}

#[tokio::test]
async fn reasoning_effort_is_a_thinking_level_and_none_turns_thinking_off() {
    for (effort, expected) in [
        (
            "low",
            json!({"thinkingLevel": "low", "includeThoughts": true}),
        ),
        (
            "xhigh",
            json!({"thinkingLevel": "high", "includeThoughts": true}),
        ),
        ("none", json!({"thinkingBudget": 0})),
    ] {
        let (base, captured) = capturing_server(ANSWER, false).await;
        let spec = gemini_spec(&base, json!({"reasoning_effort": effort}));
        let provider = ProviderPool::new().provider(&spec).unwrap();
        provider
            .chat(ask("hi"), CallOptions::default())
            .await
            .unwrap();
        let (_, body) = split(&captured.await.unwrap());
        assert_eq!(
            body["generationConfig"]["thinkingConfig"], expected,
            "{effort}"
        );
    }
}

const THINKING_SCENARIO: &str = r#"
rules:
  - name: call
    when: {tool_results: false}
    reply:
      thinking: "The user wants Oslo's weather."
      tool_calls: [{name: get_weather, arguments: {city: Oslo}}]
      usage: {input: 100, output: 40, cached: 30, reasoning: 10}
  - name: answer
    when: {tool_result_contains: rain}
    reply: {text: "Rainy."}
"#;

#[tokio::test]
async fn thought_summary_is_reasoning_and_signatures_go_back_on_their_parts() {
    for stream in [false, true] {
        let server = server(THINKING_SCENARIO).await;
        let p = provider(
            ProviderKind::Gemini,
            &server,
            json!({"thinking_budget_tokens": 2048}),
        );
        let sink = |_: &str| {};
        let options = if stream {
            CallOptions::default().with_stream(&sink)
        } else {
            CallOptions::default()
        };
        let mut request = ask("weather in Oslo?");
        request.tools = vec![weather_tool()];
        let first = p.chat(request.clone(), options).await.unwrap();
        assert_eq!(
            first.finish_reason,
            FinishReason::ToolCalls,
            "stream={stream}"
        );
        assert_eq!(
            first.reasoning.as_deref(),
            Some("The user wants Oslo's weather.")
        );
        assert_eq!(first.text, "", "the thought summary is not the answer");
        assert_eq!(
            first.usage,
            Some(Usage {
                input_tokens: 100,
                output_tokens: 40,
                cached_input_tokens: Some(30),
                cache_creation_input_tokens: None,
                reasoning_tokens: Some(10),
            }),
            "stream={stream}"
        );
        let call = first.tool_calls[0].clone();
        assert!(
            first.thinking.contains(&ThinkingBlock::ThoughtSignature {
                call: Some(call.id.clone()),
                signature: "c2lnbW9jaw000001".into(),
            }),
            "{:?}",
            first.thinking
        );
        request.messages.push(ChatMessage::Assistant {
            text: first.text,
            tool_calls: first.tool_calls,
            thinking: first.thinking,
        });
        request
            .messages
            .push(ChatMessage::tool_result(call.id, "get_weather", "rain"));
        let second = p.chat(request, options).await.unwrap();
        assert_eq!(second.text, "Rainy.");
        let sent = chat_requests(&server);
        let model_turn = &sent[1].body["contents"][1];
        assert_eq!(model_turn["role"], "model");
        let call_part = model_turn["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p.get("functionCall").is_some())
            .unwrap();
        assert_eq!(
            call_part["thoughtSignature"], "c2lnbW9jaw000001",
            "{model_turn}"
        );
        // The key reached the server in its header (the journal redacts it).
        assert!(
            sent[0]
                .headers
                .iter()
                .any(|(n, v)| n == "x-goog-api-key" && v == mock_llm::REDACTED),
            "{:?}",
            sent[0].headers
        );
    }
}

#[tokio::test]
async fn a_blocked_prompt_is_a_content_filtered_answer_and_an_error_names_its_status() {
    let blocked = r#"{"promptFeedback":{"blockReason":"SAFETY"},"responseId":"r2"}"#;
    let (base, _captured) = capturing_server(blocked, false).await;
    let provider = ProviderPool::new()
        .provider(&gemini_spec(&base, json!({})))
        .unwrap();
    let reply = provider
        .chat(ask("hi"), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(reply.finish_reason, FinishReason::ContentFilter);

    let server = server("rules: []\n").await;
    server.push_fault(mock_llm::Fault::status(400).code("context_length_exceeded"));
    let p = provider_for(&server);
    let e = p.chat(ask("hi"), CallOptions::default()).await.unwrap_err();
    assert_eq!(
        e.kind,
        skillet_providers::ProviderErrorKind::ContextTooLong,
        "{e}"
    );
    assert!(!e.to_string().contains(TEST_KEY));
}

fn provider_for(server: &mock_llm::MockServer) -> std::sync::Arc<dyn skillet_providers::Provider> {
    provider(ProviderKind::Gemini, server, json!({"max_attempts": 1}))
}

/// Gemini's answer to a per-minute limit: the quota wording of a billing refusal, with the wait
/// in a `RetryInfo` detail.
const PER_MINUTE_429: &str = r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}"#;

/// The same refusal for the day's quota: waiting seconds does not help.
const PER_DAY_429: &str = r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}"#;

async fn refusal(body: &'static str) -> skillet_providers::ProviderError {
    let (base, _captured) = answering_server("429 Too Many Requests", body, false).await;
    let provider = ProviderPool::new()
        .provider(&gemini_spec(&base, json!({})))
        .unwrap();
    provider
        .chat(ask("hi"), CallOptions::default())
        .await
        .expect_err("a 429 is an error")
}

#[tokio::test]
async fn a_per_minute_429_is_a_retryable_rate_limit_with_the_bodys_retry_delay() {
    let error = refusal(PER_MINUTE_429).await;
    assert!(
        matches!(
            error.kind,
            skillet_providers::ProviderErrorKind::RateLimited { .. }
        ),
        "{error:?}"
    );
    assert!(error.retryable, "{error:?}");
    assert_eq!(
        error.retry_after(),
        Some(std::time::Duration::from_secs(37))
    );
}

#[tokio::test]
async fn a_per_day_429_is_quota_exceeded_and_not_retried() {
    let error = refusal(PER_DAY_429).await;
    assert!(
        matches!(
            error.kind,
            skillet_providers::ProviderErrorKind::QuotaExceeded
        ),
        "{error:?}"
    );
    assert!(!error.retryable, "{error:?}");
    assert_eq!(error.retry_after(), None);
}

//! The same behaviour, checked for every provider against mock-llm over real sockets: text,
//! streaming, tool-call round trips, structured output, usage, every error kind, the one retry
//! policy (Retry-After, deadlines, 500-then-success, attempt counts), truncated streams,
//! malformed bodies, dropped connections, timeouts and cancellation.

mod support;

use std::time::Duration;

use mock_llm::{Fault, ToolCallProblem};
use serde_json::{Value, json};
use skillet_providers::{
    CallOptions, ChatMessage, ChatRequest, FinishReason, ProviderErrorKind, ProviderKind,
    ResponseSchema, ToolSpec, Usage,
};
use support::*;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

fn weather_tool() -> ToolSpec {
    ToolSpec {
        name: "get_weather".into(),
        description: "Current weather for a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]})
        .into(),
    }
}

fn answer_schema() -> ResponseSchema {
    ResponseSchema {
        name: "answer".into(),
        schema: json!({"type": "object", "properties": {"answer": {"type": "string"}},
                       "required": ["answer"], "additionalProperties": false})
        .into(),
    }
}

const TOOL_SCENARIO: &str = r#"
rules:
  - name: call-tool
    when: {tool_results: false}
    reply:
      tool_calls: [{name: get_weather, arguments: {city: Paris}, id: call_w1}]
  - name: after-tool
    when: {tool_result_contains: sunny}
    reply: {text: "It is sunny in Paris."}
"#;

macro_rules! provider_suite {
    ($module:ident, $kind:expr) => {
        mod $module {
            use super::*;

            const KIND: ProviderKind = $kind;

            #[tokio::test]
            async fn text_reply_comes_back_with_stop_and_request_id() {
                let server = server("rules:\n  - reply: {text: \"hello there\"}\n").await;
                let p = provider(KIND, &server, json!({}));
                let r = p.chat(ask("hi"), CallOptions::default()).await.unwrap();
                assert_eq!(r.text, "hello there");
                assert_eq!(r.finish_reason, FinishReason::Stop);
                assert!(r.tool_calls.is_empty());
                // Ollama's API has no request id; the others always send one.
                assert_eq!(r.request_id.is_some(), KIND != ProviderKind::Ollama, "{r:?}");
                let sent = &chat_requests(&server)[0];
                if KIND == ProviderKind::Gemini {
                    // The model is in the path, the key in a header, never in the URL.
                    assert_eq!(sent.path, "/v1beta/models/mock-model:generateContent");
                } else {
                    assert_eq!(sent.body["model"], "mock-model");
                }
            }

            #[tokio::test]
            async fn streamed_text_reaches_the_sink_in_pieces_and_in_order() {
                let server = server("rules:\n  - reply: {text: \"one two three four\"}\n").await;
                let p = provider(KIND, &server, json!({}));
                let deltas = Deltas::default();
                let r = p
                    .chat(ask("count"), CallOptions::default().with_stream(&deltas))
                    .await
                    .unwrap();
                assert_eq!(r.text, "one two three four");
                assert_eq!(deltas.joined(), "one two three four");
                assert!(deltas.count() > 1, "expected several deltas");
                let sent = &chat_requests(&server)[0];
                if KIND == ProviderKind::Gemini {
                    assert_eq!(sent.path, "/v1beta/models/mock-model:streamGenerateContent");
                } else {
                    assert_eq!(sent.body["stream"], json!(true));
                }
            }

            #[tokio::test]
            async fn tool_call_round_trip() {
                for stream in [false, true] {
                    let server = server(TOOL_SCENARIO).await;
                    let p = provider(KIND, &server, json!({}));
                    let deltas = Deltas::default();
                    let options = if stream {
                        CallOptions::default().with_stream(&deltas)
                    } else {
                        CallOptions::default()
                    };
                    let mut request = ask("weather in Paris?");
                    request.tools = vec![weather_tool()];
                    let first = p.chat(request.clone(), options).await.unwrap();
                    assert_eq!(first.finish_reason, FinishReason::ToolCalls, "stream={stream}");
                    assert_eq!(first.tool_calls.len(), 1);
                    let call = &first.tool_calls[0];
                    assert_eq!(call.name, "get_weather");
                    assert_eq!(call.arguments, json!({"city": "Paris"}), "stream={stream}");
                    assert_eq!(call.invalid_arguments, None);

                    request.messages.push(ChatMessage::Assistant {
                        text: first.text.clone(),
                        tool_calls: first.tool_calls.clone(),
                        thinking: Vec::new(),
                    });
                    request.messages.push(ChatMessage::tool_result(
                        call.id.clone(),
                        "get_weather",
                        "sunny, 24C",
                    ));
                    let second = p.chat(request, options).await.unwrap();
                    assert_eq!(second.text, "It is sunny in Paris.");
                    assert_eq!(second.finish_reason, FinishReason::Stop);
                    let sent = chat_requests(&server);
                    assert_eq!(sent.len(), 2);
                    assert_eq!(sent[1].matched_rule.as_deref(), Some("after-tool"));
                    assert!(sent[0].body["tools"].to_string().contains("get_weather"));
                }
            }

            #[tokio::test]
            async fn tool_call_with_invalid_json_arguments_comes_back_flagged() {
                let server = server(
                    "rules:\n  - reply: {tool_calls: [{name: get_weather, arguments: \"{not json\"}]}\n",
                )
                .await;
                let p = provider(KIND, &server, json!({}));
                let mut request = ask("weather?");
                request.tools = vec![weather_tool()];
                let r = p.chat(request.clone(), CallOptions::default()).await.unwrap();
                assert_eq!(r.tool_calls.len(), 1);
                assert!(r.tool_calls[0].invalid_arguments.is_some(), "{:?}", r.tool_calls[0]);

                server.push_fault(Fault::invalid_tool_call(ToolCallProblem::NotJson).times(1));
                let deltas = Deltas::default();
                let r = p.chat(request, CallOptions::default().with_stream(&deltas)).await.unwrap();
                assert_eq!(r.tool_calls.len(), 1);
                assert!(r.tool_calls[0].invalid_arguments.is_some(), "{:?}", r.tool_calls[0]);
            }

            #[tokio::test]
            async fn structured_output_returns_json_text_matching_the_schema() {
                for stream in [false, true] {
                    let server = server("rules: []\n").await;
                    let p = provider(KIND, &server, json!({}));
                    let deltas = Deltas::default();
                    let options = if stream {
                        CallOptions::default().with_stream(&deltas)
                    } else {
                        CallOptions::default()
                    };
                    let mut request = ask("answer in JSON");
                    request.response_schema = Some(answer_schema());
                    let r = p.chat(request, options).await.unwrap();
                    let value: Value = serde_json::from_str(&r.text)
                        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", r.text));
                    assert!(value["answer"].is_string(), "{value}");
                    assert!(r.tool_calls.is_empty());
                    assert_eq!(r.finish_reason, FinishReason::Stop);
                }
            }

            #[tokio::test]
            async fn usage_is_reported_streamed_or_not() {
                for stream in [false, true] {
                    let server =
                        server("rules:\n  - reply: {text: ok, usage: {input: 12, output: 34}}\n")
                            .await;
                    let p = provider(KIND, &server, json!({}));
                    let deltas = Deltas::default();
                    let options = if stream {
                        CallOptions::default().with_stream(&deltas)
                    } else {
                        CallOptions::default()
                    };
                    let r = p.chat(ask("hi"), options).await.unwrap();
                    assert_eq!(r.usage, Some(Usage { input_tokens: 12, output_tokens: 34, ..Usage::default() }), "stream={stream}");
                }
            }

            #[tokio::test]
            async fn hints_reach_the_wire() {
                let server = server("rules: []\n").await;
                let p = provider(KIND, &server, json!({}));
                let mut request = ask("hi");
                request.hints.max_tokens = Some(77);
                request.hints.temperature = Some(0.5);
                p.chat(request, CallOptions::default()).await.unwrap();
                let body = chat_requests(&server)[0].body.to_string();
                assert!(body.contains("77"), "{body}");
                assert!(body.contains("0.5"), "{body}");
            }

            async fn error_for(fault: Fault) -> (skillet_providers::ProviderError, usize) {
                let server = server("rules: []\n").await;
                server.push_fault(fault);
                let p = provider(KIND, &server, json!({"max_attempts": 1}));
                let e = p.chat(ask("hi"), CallOptions::default()).await.unwrap_err();
                (e, chat_requests(&server).len())
            }

            #[tokio::test]
            async fn each_http_failure_maps_to_its_error_kind() {
                let mut cases: Vec<(Fault, ProviderErrorKind, bool)> = vec![
                    (Fault::status(401), ProviderErrorKind::Auth, false),
                    (Fault::status(403), ProviderErrorKind::Auth, false),
                    (Fault::status(400), ProviderErrorKind::BadRequest, false),
                    (Fault::status(404), ProviderErrorKind::NotFound, false),
                    (Fault::status(413), ProviderErrorKind::ContextTooLong, false),
                    (
                        Fault::status(400).code("context_length_exceeded")
                            .message("This model's maximum context length is 8192 tokens"),
                        ProviderErrorKind::ContextTooLong,
                        false,
                    ),
                ];
                // Ollama's error body is a bare string: it has no quota code to tell apart.
                if KIND != ProviderKind::Ollama {
                    cases.push((Fault::insufficient_quota(), ProviderErrorKind::QuotaExceeded, false));
                }
                cases.extend([
                    (
                        Fault::status(429),
                        ProviderErrorKind::RateLimited { retry_after: None },
                        true,
                    ),
                    (Fault::status(500), ProviderErrorKind::Unavailable, true),
                    (Fault::overloaded(), ProviderErrorKind::Unavailable, true),
                    (Fault::malformed_body(), ProviderErrorKind::MalformedResponse, false),
                ]);
                for (fault, kind, retryable) in cases {
                    let label = fault.label();
                    let (e, requests) = error_for(fault).await;
                    assert_eq!(e.kind, kind, "{label}: {e}");
                    assert_eq!(e.retryable, retryable, "{label}: {e}");
                    assert_eq!(requests, 1, "{label}");
                }
            }

            #[tokio::test]
            async fn quota_exhaustion_is_never_retried() {
                if KIND == ProviderKind::Ollama {
                    return; // no quota errors on Ollama's wire
                }
                let server = server("rules: []\n").await;
                server.push_fault(Fault::insufficient_quota().times(5));
                let p = provider(KIND, &server, json!({"max_attempts": 3}));
                let e = p.chat(ask("hi"), CallOptions::default()).await.unwrap_err();
                assert_eq!(e.kind, ProviderErrorKind::QuotaExceeded);
                assert_eq!(chat_requests(&server).len(), 1);
            }

            #[tokio::test]
            async fn retry_after_is_honoured_then_the_call_succeeds() {
                let server = server("rules:\n  - reply: {text: done}\n").await;
                server.push_fault(Fault::rate_limited(1).times(1));
                let p = provider(KIND, &server, json!({}));
                let retries = Retries::default();
                let r = p
                    .chat(ask("hi"), CallOptions::default().with_retry_observer(&retries))
                    .await
                    .unwrap();
                assert_eq!(r.text, "done");
                let notices = retries.0.lock().unwrap();
                assert_eq!(notices.len(), 1);
                assert_eq!(notices[0].wait, Duration::from_secs(1));
                assert_eq!(notices[0].status, Some(429));
                assert_eq!(chat_requests(&server).len(), 2);
            }

            #[tokio::test]
            async fn retry_after_ms_wins_over_retry_after_seconds() {
                let server = server("rules:\n  - reply: {text: done}\n").await;
                server.push_fault(Fault::rate_limited(30).retry_after_ms(40).times(1));
                let p = provider(KIND, &server, json!({}));
                let retries = Retries::default();
                p.chat(ask("hi"), CallOptions::default().with_retry_observer(&retries))
                    .await
                    .unwrap();
                assert_eq!(retries.0.lock().unwrap()[0].wait, Duration::from_millis(40));
            }

            #[tokio::test]
            async fn retry_after_longer_than_the_deadline_fails_fast_with_timeout() {
                let server = server("rules: []\n").await;
                server.push_fault(Fault::rate_limited(30).times(1));
                let p = provider(KIND, &server, json!({}));
                let deadline = Instant::now() + Duration::from_secs(20);
                let e = p
                    .chat(ask("hi"), CallOptions::default().with_deadline(deadline))
                    .await
                    .unwrap_err();
                assert_eq!(e.kind, ProviderErrorKind::Timeout);
                // Failing at once (not by running into the deadline) keeps the 429's status.
                assert_eq!(e.status, Some(429), "{e}");
                assert!(Instant::now() < deadline);
                assert_eq!(chat_requests(&server).len(), 1);
            }

            #[tokio::test]
            async fn one_policy_two_500s_then_success_in_exactly_three_requests() {
                let server = server("rules:\n  - reply: {text: finally}\n").await;
                server.push_fault(Fault::status(500).times(2));
                let p = provider(KIND, &server, json!({"max_attempts": 3}));
                let r = p.chat(ask("hi"), CallOptions::default()).await.unwrap();
                assert_eq!(r.text, "finally");
                assert_eq!(chat_requests(&server).len(), 3);
            }

            #[tokio::test]
            async fn one_policy_five_500s_fail_after_exactly_three_requests() {
                let server = server("rules:\n  - reply: {text: never}\n").await;
                server.push_fault(Fault::status(500).times(5));
                let p = provider(KIND, &server, json!({"max_attempts": 3}));
                let e = p.chat(ask("hi"), CallOptions::default()).await.unwrap_err();
                assert_eq!(e.kind, ProviderErrorKind::Unavailable);
                assert_eq!(e.status, Some(500));
                assert_eq!(chat_requests(&server).len(), 3);
            }

            #[tokio::test]
            async fn truncated_stream_before_any_text_is_retried() {
                let server = server("rules:\n  - reply: {text: \"whole answer\"}\n").await;
                server.push_fault(Fault::truncate_after(0).times(1));
                let p = provider(KIND, &server, json!({}));
                let deltas = Deltas::default();
                let r = p
                    .chat(ask("hi"), CallOptions::default().with_stream(&deltas))
                    .await
                    .unwrap();
                assert_eq!(r.text, "whole answer");
                assert_eq!(deltas.joined(), "whole answer");
                assert_eq!(chat_requests(&server).len(), 2);
            }

            #[tokio::test]
            async fn truncated_stream_after_text_is_an_error_not_a_short_answer() {
                let server =
                    server("rules:\n  - reply: {text: \"a b c d e f g h i j k l\"}\n").await;
                server.push_fault(Fault::truncate_after(5).times(1));
                let p = provider(KIND, &server, json!({"max_attempts": 3}));
                let deltas = Deltas::default();
                let e = p
                    .chat(ask("hi"), CallOptions::default().with_stream(&deltas))
                    .await
                    .unwrap_err();
                assert_eq!(e.kind, ProviderErrorKind::Truncated, "{e}");
                assert!(!e.retryable, "text was already delivered");
                assert!(deltas.count() > 0);
                assert_eq!(chat_requests(&server).len(), 1);
            }

            #[tokio::test]
            async fn mid_stream_error_before_any_text_is_retried() {
                let server = server("rules:\n  - reply: {text: \"after the storm\"}\n").await;
                server.push_fault(Fault::stream_error_after(0, 529).times(1));
                let p = provider(KIND, &server, json!({}));
                let deltas = Deltas::default();
                let r = p
                    .chat(ask("hi"), CallOptions::default().with_stream(&deltas))
                    .await
                    .unwrap();
                assert_eq!(r.text, "after the storm");
                assert_eq!(chat_requests(&server).len(), 2);
            }

            #[tokio::test]
            async fn mid_stream_error_after_text_fails_without_retry() {
                let server =
                    server("rules:\n  - reply: {text: \"a b c d e f g h i j k l\"}\n").await;
                server.push_fault(Fault::stream_error_after(5, 529).times(1));
                let p = provider(KIND, &server, json!({"max_attempts": 3}));
                let deltas = Deltas::default();
                let e = p
                    .chat(ask("hi"), CallOptions::default().with_stream(&deltas))
                    .await
                    .unwrap_err();
                assert_eq!(e.kind, ProviderErrorKind::Unavailable, "{e}");
                assert!(!e.retryable);
                assert!(deltas.count() > 0);
                assert_eq!(chat_requests(&server).len(), 1);
            }

            #[tokio::test]
            async fn truncated_non_streamed_body_is_malformed() {
                let (e, _) = error_for(Fault::truncate_after(1)).await;
                assert_eq!(e.kind, ProviderErrorKind::MalformedResponse, "{e}");
            }

            #[tokio::test]
            async fn dropped_connection_is_unavailable_and_retried() {
                for stream in [false, true] {
                    let server = server("rules:\n  - reply: {text: back}\n").await;
                    server.push_fault(Fault::drop_connection_after(0).times(1));
                    let p = provider(KIND, &server, json!({}));
                    let deltas = Deltas::default();
                    let options = if stream {
                        CallOptions::default().with_stream(&deltas)
                    } else {
                        CallOptions::default()
                    };
                    let r = p.chat(ask("hi"), options).await.unwrap();
                    assert_eq!(r.text, "back", "stream={stream}");
                    assert_eq!(chat_requests(&server).len(), 2, "stream={stream}");
                }
                let (e, _) = error_for(Fault::drop_connection_after(0)).await;
                assert!(
                    matches!(e.kind, ProviderErrorKind::Unavailable | ProviderErrorKind::Truncated),
                    "{e}"
                );
                assert!(e.retryable);
            }

            #[tokio::test]
            async fn stalled_server_hits_the_read_timeout() {
                let server = server("rules: []\n").await;
                server.push_fault(Fault::stall_after(0).times(5));
                let p = provider(KIND, &server, json!({"read_timeout_ms": 300, "max_attempts": 2}));
                let e = p.chat(ask("hi"), CallOptions::default()).await.unwrap_err();
                assert_eq!(e.kind, ProviderErrorKind::Timeout, "{e}");
                assert_eq!(chat_requests(&server).len(), 2, "read timeouts are retried");
            }

            #[tokio::test]
            async fn stalled_stream_ends_at_the_deadline() {
                let server = server("rules: []\n").await;
                server.push_fault(Fault::stall_after(1).times(5));
                let p = provider(KIND, &server, json!({}));
                let deltas = Deltas::default();
                let options = CallOptions::default()
                    .with_stream(&deltas)
                    .with_deadline(Instant::now() + Duration::from_millis(400));
                let e = p.chat(ask("hi"), options).await.unwrap_err();
                assert_eq!(e.kind, ProviderErrorKind::Timeout, "{e}");
            }

            #[tokio::test]
            async fn cancellation_ends_a_hung_call() {
                let server = server("rules: []\n").await;
                server.push_fault(Fault::stall_after(0).times(5));
                let p = provider(KIND, &server, json!({}));
                let token = CancellationToken::new();
                let trigger = token.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    trigger.cancel();
                });
                let e = p
                    .chat(ask("hi"), CallOptions::default().with_cancel(&token))
                    .await
                    .unwrap_err();
                assert_eq!(e.kind, ProviderErrorKind::Cancelled);
            }

            #[tokio::test]
            async fn dropping_the_future_abandons_the_call_and_the_provider_stays_usable() {
                let server = server("rules:\n  - reply: {text: fine}\n").await;
                server.push_fault(Fault::stall_after(0).times(1));
                let p = provider(KIND, &server, json!({}));
                let dropped =
                    tokio::time::timeout(Duration::from_millis(200), p.chat(ask("hi"), CallOptions::default()))
                        .await;
                assert!(dropped.is_err(), "the stalled call should still be pending");
                let r = p.chat(ask("hi"), CallOptions::default()).await.unwrap();
                assert_eq!(r.text, "fine");
            }

            #[tokio::test]
            async fn http2_prior_knowledge_carries_concurrent_calls_over_one_connection() {
                let mock = server("rules:\n  - reply: {text: \"one two three\"}\n").await;
                let p = provider(KIND, &mock, json!({"http2_prior_knowledge": true}));
                let calls = (0..24).map(|i| {
                    let p = p.clone();
                    async move {
                        let deltas = Deltas::default();
                        let options = if i % 2 == 0 {
                            CallOptions::default().with_stream(&deltas)
                        } else {
                            CallOptions::default()
                        };
                        let r = p.chat(ask("count"), options).await.unwrap();
                        (r.text, deltas.joined(), i % 2 == 0)
                    }
                });
                for (text, streamed, stream) in futures::future::join_all(calls).await {
                    assert_eq!(text, "one two three");
                    if stream {
                        assert_eq!(streamed, "one two three");
                    }
                }
                let sent = chat_requests(&mock);
                assert_eq!(sent.len(), 24);
                assert!(sent.iter().all(|e| e.http_version == "HTTP/2.0"), "{sent:?}");
                assert_eq!(mock.connections_accepted(), 1);

                // Without the setting the same provider kind speaks HTTP/1.1.
                let plain = server("rules:\n  - reply: {text: \"hi\"}\n").await;
                provider(KIND, &plain, json!({}))
                    .chat(ask("hi"), CallOptions::default())
                    .await
                    .unwrap();
                assert_eq!(chat_requests(&plain)[0].http_version, "HTTP/1.1");
            }

            #[tokio::test]
            async fn tool_errors_are_sent_back_marked_as_errors() {
                let server = server(TOOL_SCENARIO).await;
                let p = provider(KIND, &server, json!({}));
                let mut request = ChatRequest { tools: vec![weather_tool()], ..ask("weather?") };
                request.messages.push(ChatMessage::Assistant {
                    text: String::new(),
                    tool_calls: vec![skillet_providers::ToolCall {
                        id: "call_x".into(),
                        name: "get_weather".into(),
                        arguments: json!({"city": "Oslo"}),
                        invalid_arguments: None,
                    }],
                    thinking: Vec::new(),
                });
                request
                    .messages
                    .push(ChatMessage::tool_error("call_x", "get_weather", "city not found"));
                p.chat(request, CallOptions::default()).await.unwrap();
                let body = chat_requests(&server)[0].body.to_string();
                assert!(body.contains("city not found"), "{body}");
                let marked = body.contains("\"is_error\":true")
                    || body.contains("Error: city not found")
                    || body.contains("\"response\":{\"error\":\"city not found\"}");
                assert!(marked, "{body}");
            }
        }
    };
}

provider_suite!(openai_compatible, ProviderKind::OpenaiCompatible);
provider_suite!(ollama, ProviderKind::Ollama);
provider_suite!(anthropic, ProviderKind::Anthropic);
provider_suite!(gemini, ProviderKind::Gemini);

//! Local-server quirks read at the provider, against a real mock-llm whose dialect answers as the
//! real server does (issue 54): parallel calls streamed all at index 0 and arguments streamed
//! piece by piece come back as whole, separate calls; a schema-bound answer left in
//! `reasoning_content` with `content` empty, and LM Studio's synthetic reasoning marker, leave the
//! answer's JSON as the text. The engine validates that text against the skill's schema as
//! always; these tests only check what the provider hands it.
//!
//! Not here: the mode ladder after a grammar refusal and the `tool_choice` sent, which run
//! through the `skillet` binary (`cli/tests/run/provider_server_quirks.rs`).

mod support;

use serde_json::{Value, json};
use skillet_providers::{CallOptions, ChatRequest, ProviderKind, ResponseSchema, ToolSpec};
use support::*;

fn weather_tool() -> ToolSpec {
    ToolSpec {
        name: "get_weather".into(),
        description: "Current weather for a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]})
        .into(),
    }
}

fn asking_for_answer() -> ChatRequest {
    ChatRequest {
        response_schema: Some(ResponseSchema {
            name: "answer".into(),
            schema: json!({"type": "object", "properties": {"greeting": {"type": "string"}},
                           "required": ["greeting"]})
            .into(),
        }),
        ..ask("hi")
    }
}

#[tokio::test]
async fn parallel_calls_streamed_all_at_index_zero_come_back_as_separate_whole_calls() {
    let server = server(
        r#"
dialect: { tool_call_index: zero }
rules:
  - reply:
      tool_calls:
        - { id: call_a, name: get_weather, arguments: { city: "Paris, the capital of France" } }
        - { id: call_b, name: get_weather, arguments: { city: "Tokyo" } }
"#,
    )
    .await;
    let p = provider(ProviderKind::OpenaiCompatible, &server, json!({}));
    let request = ChatRequest {
        tools: vec![weather_tool()],
        ..ask("weather in Paris and Tokyo?")
    };
    let deltas = Deltas::default();
    let response = p
        .chat(request, CallOptions::default().with_stream(&deltas))
        .await
        .unwrap();
    let calls: Vec<(&str, &Value)> = response
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), &c.arguments))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a", &json!({"city": "Paris, the capital of France"})),
            ("call_b", &json!({"city": "Tokyo"})),
        ],
        "two calls, each with its arguments reassembled from their pieces"
    );
    assert!(
        response
            .tool_calls
            .iter()
            .all(|c| c.invalid_arguments.is_none())
    );
    server.shutdown().await;
}

#[tokio::test]
async fn json_left_in_reasoning_content_with_content_empty_is_the_answer_whole_and_streamed() {
    let server = server(
        r#"
dialect: { wrap: reasoning_content }
rules:
  - reply: { json: { greeting: "hello" } }
"#,
    )
    .await;
    let p = provider(ProviderKind::OpenaiCompatible, &server, json!({}));
    let whole = p
        .chat(asking_for_answer(), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(whole.text, r#"{"greeting":"hello"}"#);
    let deltas = Deltas::default();
    let streamed = p
        .chat(
            asking_for_answer(),
            CallOptions::default().with_stream(&deltas),
        )
        .await
        .unwrap();
    assert_eq!(streamed.text, r#"{"greeting":"hello"}"#);
    let sent = chat_requests(&server)[0].body.clone();
    assert!(sent.get("response_format").is_some(), "{sent}");
    server.shutdown().await;
}

#[tokio::test]
async fn lm_studios_synthetic_reasoning_marker_is_stripped_before_the_answer() {
    let server = server(
        r#"
dialect: { wrap: lm_studio_marker }
rules:
  - reply: { json: { greeting: "hello" } }
"#,
    )
    .await;
    let p = provider(ProviderKind::OpenaiCompatible, &server, json!({}));
    let response = p
        .chat(asking_for_answer(), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(response.text, r#"{"greeting":"hello"}"#);
    assert_eq!(
        response.reasoning.as_deref(),
        Some("Okay, the user wants an answer. I will give it.")
    );
    server.shutdown().await;
}

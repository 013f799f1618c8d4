//! Prompt caching on the wire, against a real mock-llm: where Anthropic's `cache_control`
//! breakpoints land (the last tool, the system prompt, from the second turn the conversation's
//! last block), that `prompt_cache = false` sends none, that the other APIs get none (they cache
//! unasked), and that every API's cache counts come back in [`Usage`], streamed or not.

mod support;

use serde_json::{Value, json};
use skillet_providers::{CallOptions, ChatMessage, ChatRequest, ProviderKind, ToolSpec, Usage};
use support::*;

const EPHEMERAL: &str = r#"{"type":"ephemeral"}"#;

fn tools() -> Vec<ToolSpec> {
    ["lookup", "get_weather"]
        .map(|name| ToolSpec {
            name: name.into(),
            description: format!("{name} things"),
            parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}).into(),
        })
        .into()
}

/// A second turn: the user's ask, the model's tool call, its result.
fn second_turn() -> ChatRequest {
    let call = skillet_providers::ToolCall {
        id: "toolu_1".into(),
        name: "lookup".into(),
        arguments: json!({"q": "x"}),
        invalid_arguments: None,
    };
    ChatRequest {
        system: Some("You are a test.".into()),
        messages: vec![
            ChatMessage::user("look it up"),
            ChatMessage::Assistant {
                text: "Looking.".into(),
                tool_calls: vec![call],
                thinking: Vec::new(),
            },
            ChatMessage::tool_result("toolu_1", "lookup", "found"),
        ],
        tools: tools(),
        ..Default::default()
    }
}

/// Every `cache_control` in `body`, as the JSON path of the object carrying it.
fn breakpoints(value: &Value, path: String, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(mark) = map.get("cache_control") {
                assert_eq!(mark.to_string(), EPHEMERAL, "at {path}");
                found.push(path.clone());
            }
            for (key, child) in map {
                breakpoints(child, format!("{path}.{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                breakpoints(child, format!("{path}[{i}]"), found);
            }
        }
        _ => {}
    }
}

async fn sent_body(kind: ProviderKind, extra: Value, request: ChatRequest) -> Value {
    let server = server("rules: []\n").await;
    let p = provider(kind, &server, extra);
    p.chat(request, CallOptions::default()).await.unwrap();
    let body = chat_requests(&server)[0].body.clone();
    server.shutdown().await;
    body
}

fn paths(body: &Value) -> Vec<String> {
    let mut found = Vec::new();
    breakpoints(body, String::new(), &mut found);
    found
}

#[tokio::test]
async fn anthropic_first_turn_marks_the_last_tool_and_the_system_prompt() {
    let mut request = ask("look it up");
    request.tools = tools();
    let body = sent_body(ProviderKind::Anthropic, json!({}), request).await;
    assert_eq!(paths(&body), [".system[0]", ".tools[1]"], "{body}");
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}])
    );
}

#[tokio::test]
async fn anthropic_later_turns_also_mark_the_end_of_the_conversation() {
    let body = sent_body(ProviderKind::Anthropic, json!({}), second_turn()).await;
    // The tool result is the last block of the last (user) message.
    assert_eq!(
        paths(&body),
        [".messages[2].content[0]", ".system[0]", ".tools[1]"],
        "{body}"
    );
    assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
    assert!(paths(&body).len() <= 4, "the API allows four breakpoints");
}

#[tokio::test]
async fn anthropic_without_tools_or_system_marks_only_what_there_is() {
    let request = ChatRequest {
        messages: vec![ChatMessage::user("hi")],
        ..Default::default()
    };
    let body = sent_body(ProviderKind::Anthropic, json!({}), request).await;
    assert!(paths(&body).is_empty(), "{body}");
    assert!(body.get("system").is_none());
}

#[tokio::test]
async fn prompt_cache_false_sends_no_breakpoint_and_a_plain_system_string() {
    let body = sent_body(
        ProviderKind::Anthropic,
        json!({"prompt_cache": false}),
        second_turn(),
    )
    .await;
    assert!(!body.to_string().contains("cache_control"), "{body}");
    assert_eq!(body["system"], "You are a test.");
}

#[tokio::test]
async fn the_apis_that_cache_unasked_get_no_breakpoints() {
    for kind in [ProviderKind::OpenaiCompatible, ProviderKind::Ollama] {
        let body = sent_body(kind, json!({}), second_turn()).await;
        assert!(
            !body.to_string().contains("cache_control"),
            "{kind}: {body}"
        );
    }
}

#[tokio::test]
async fn cache_reads_and_writes_come_back_in_usage_on_every_api_that_reports_them() {
    let yaml = "rules:\n  - reply: {text: ok, usage: {input: 1200, output: 8, cached: 1000, \
                cache_write: 150}}\n";
    let cases = [
        // Anthropic counts reads and writes apart from input_tokens; the sum is the prompt.
        (ProviderKind::Anthropic, Some(1000), Some(150)),
        // OpenAI reports reads only (prompt_tokens_details.cached_tokens).
        (ProviderKind::OpenaiCompatible, Some(1000), None),
        // Ollama reports neither: unknown, not zero.
        (ProviderKind::Ollama, None, None),
    ];
    for (kind, read, written) in cases {
        for stream in [false, true] {
            let server = server(yaml).await;
            let p = provider(kind, &server, json!({}));
            let deltas = Deltas::default();
            let options = if stream {
                CallOptions::default().with_stream(&deltas)
            } else {
                CallOptions::default()
            };
            let r = p.chat(ask("hi"), options).await.unwrap();
            assert_eq!(
                r.usage,
                Some(Usage {
                    input_tokens: 1200,
                    output_tokens: 8,
                    cached_input_tokens: read,
                    cache_creation_input_tokens: written,
                    reasoning_tokens: None,
                }),
                "{kind} stream={stream}"
            );
            server.shutdown().await;
        }
    }
}

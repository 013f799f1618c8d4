//! Reasoning settings on the wire, against a real mock-llm: each API gets its own
//! (`reasoning_effort` on OpenAI, `think` on Ollama, `thinking` on Anthropic), only when set,
//! and never another API's; a request's own settings (a skill's) win over the provider's field by
//! field; unusable values are refused when the spec is built. The thinking
//! blocks' echo is tested at the wire (`anthropic/thinking_tests.rs`).

mod support;

use serde_json::{Value, json};
use skillet_providers::{CallOptions, ProviderKind, ProviderSpec, Reasoning};
use support::*;

async fn body(kind: ProviderKind, extra: Value) -> Value {
    let server = server("rules: []\n").await;
    let p = provider(kind, &server, extra);
    p.chat(ask("hi"), CallOptions::default()).await.unwrap();
    let body = chat_requests(&server)[0].body.clone();
    server.shutdown().await;
    body
}

/// The body of one request asking with `reasoning` of its own, to a provider configured `extra`.
async fn body_with(kind: ProviderKind, extra: Value, reasoning: Reasoning) -> Value {
    let server = server("rules: []\n").await;
    let p = provider(kind, &server, extra);
    let mut request = ask("hi");
    request.hints.reasoning = reasoning;
    p.chat(request, CallOptions::default()).await.unwrap();
    let body = chat_requests(&server)[0].body.clone();
    server.shutdown().await;
    body
}

fn every_setting() -> Value {
    json!({"reasoning_effort": "high", "thinking_budget_tokens": 2048, "think": true})
}

#[tokio::test]
async fn each_api_gets_its_own_reasoning_setting_and_no_other() {
    let openai = body(ProviderKind::OpenaiCompatible, every_setting()).await;
    assert_eq!(openai["reasoning_effort"], "high", "{openai}");
    assert!(openai.get("think").is_none() && openai.get("thinking").is_none());

    let ollama = body(ProviderKind::Ollama, every_setting()).await;
    assert_eq!(ollama["think"], true, "{ollama}");
    assert!(ollama.get("reasoning_effort").is_none() && ollama.get("thinking").is_none());

    let anthropic = body(ProviderKind::Anthropic, every_setting()).await;
    assert_eq!(
        anthropic["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048}),
        "{anthropic}"
    );
    assert!(anthropic["max_tokens"].as_u64().unwrap() > 2048);
    assert!(anthropic.get("reasoning_effort").is_none() && anthropic.get("think").is_none());
}

#[tokio::test]
async fn a_requests_reasoning_wins_over_the_providers_field_by_field() {
    let low = Reasoning {
        reasoning_effort: Some("low".into()),
        ..Reasoning::default()
    };
    let openai = body_with(ProviderKind::OpenaiCompatible, every_setting(), low.clone()).await;
    assert_eq!(openai["reasoning_effort"], "low", "{openai}");
    // Unset in the request: the provider's.
    let ollama = body_with(ProviderKind::Ollama, every_setting(), low).await;
    assert_eq!(ollama["think"], true, "{ollama}");

    let budget = Reasoning {
        thinking_budget_tokens: Some(4096),
        ..Reasoning::default()
    };
    let anthropic = body_with(ProviderKind::Anthropic, json!({}), budget).await;
    assert_eq!(
        anthropic["thinking"],
        json!({"type": "enabled", "budget_tokens": 4096}),
        "{anthropic}"
    );
    assert!(
        anthropic["max_tokens"].as_u64().unwrap() > 4096,
        "{anthropic}"
    );
    let off = Reasoning {
        think: Some(false),
        ..Reasoning::default()
    };
    let ollama = body_with(ProviderKind::Ollama, every_setting(), off).await;
    assert_eq!(ollama["think"], false, "{ollama}");
}

#[tokio::test]
async fn nothing_is_sent_unless_configured() {
    for kind in [
        ProviderKind::OpenaiCompatible,
        ProviderKind::Ollama,
        ProviderKind::Anthropic,
    ] {
        let sent = body(kind, json!({})).await.to_string();
        for key in ["reasoning_effort", "\"think\"", "\"thinking\""] {
            assert!(!sent.contains(key), "{kind}: {key} in {sent}");
        }
    }
}

#[test]
fn unusable_reasoning_values_are_refused_naming_the_key() {
    for (key, value) in [
        ("reasoning_effort", json!("maximal")),
        ("thinking_budget_tokens", json!(100)),
        ("thinking_budget_tokens", json!("lots")),
        ("think", json!("yes")),
    ] {
        let config = json!({"model": "m", "base_url": "http://127.0.0.1:1", key: value});
        let error = ProviderSpec::from_llm_config("ollama", config.as_object(), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(error.contains(key), "{key}={value}: {error}");
    }
}

#[tokio::test]
async fn openai_compatible_reasoning_content_is_the_reasoning_never_the_text() {
    // llama.cpp and DeepSeek send a reasoning model's thinking as `reasoning_content`, whole
    // and in stream deltas; mock-llm does so for a scripted `thinking`.
    let scenario = "rules:\n  - reply: {thinking: \"Two and two make four.\", text: \"4\"}\n";
    for stream in [false, true] {
        let server = server(scenario).await;
        let p = provider(ProviderKind::OpenaiCompatible, &server, json!({}));
        let deltas = Deltas::default();
        let options = if stream {
            CallOptions::default().with_stream(&deltas)
        } else {
            CallOptions::default()
        };
        let r = p.chat(ask("2+2?"), options).await.unwrap();
        assert_eq!(r.text, "4", "stream={stream}");
        assert_eq!(
            r.reasoning.as_deref(),
            Some("Two and two make four."),
            "stream={stream}"
        );
        assert!(
            !deltas.joined().contains("Two"),
            "reasoning reached the answer stream"
        );
    }
}

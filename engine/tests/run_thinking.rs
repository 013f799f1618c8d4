//! Reasoning models end to end against mock-llm: the Anthropic thinking block of a tool-use
//! turn (text and signature as the server sent them) goes back unchanged with the tool's result,
//! streamed or not; an Ollama `think: true` model's `message.thinking` is the turn's reasoning
//! (a log event), never the answer.

mod support;

use serde_json::{Value, json};
use skillet_engine::run::Limits;
use skillet_engine::tools::{ToolOutput, ToolRegistry, tool_fn};
use support::*;

const THINK_THEN_CALL: &str = r#"
rules:
  - replies:
      - thinking: "The user wants a lookup. I will call the tool first."
        tool_calls: [{ name: lookup, arguments: { q: "x" } }]
      - text: "done"
"#;

fn lookup() -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    tools
        .register_tool(tool_fn(
            "lookup",
            "Looks something up.",
            json!({"type": "object"}),
            |_, _| async { Ok(ToolOutput::text("found")) },
        ))
        .unwrap();
    tools
}

#[tokio::test]
async fn a_thinking_block_goes_back_unchanged_on_the_tool_use_turn() {
    for streaming in [false, true] {
        let dir = SkillSpec::new("thinker", "Think.")
            .tools(&["lookup"])
            .write();
        let server = start_mock(THINK_THEN_CALL).await;
        let mut config = llm_config_for(&server, "anthropic", MODEL);
        config
            .provider_config
            .as_mut()
            .unwrap()
            .insert("thinking_budget_tokens".into(), json!(1024));
        let h = harness(
            registry([dir.skill.clone()]),
            lookup(),
            Some(config),
            Limits::default(),
        );
        let mut req = request("thinker", json!({}));
        req.streaming = streaming;
        let called = h.call(req).await;
        let result = called.result();
        assert!(result.success, "streaming {streaming}: {result:?}");
        assert_eq!(result.data, Some(json!("done")));
        let bodies = chat_bodies(&server);
        assert_eq!(bodies.len(), 2);
        assert_eq!(bodies[0]["thinking"]["budget_tokens"], 1024);
        let assistant = bodies[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "assistant")
            .cloned()
            .unwrap_or(Value::Null);
        assert_eq!(
            assistant["content"][0],
            json!({
                "type": "thinking",
                "thinking": "The user wants a lookup. I will call the tool first.",
                "signature": "sig_mock_0001",
            }),
            "streaming {streaming}: {assistant}"
        );
        assert_eq!(assistant["content"][1]["type"], "tool_use", "{assistant}");
        server.shutdown().await;
    }
}

/// The `reasoning-N` artifacts of `result`: (name, text).
fn reasoning_artifacts(result: &skillet_engine::protocol::SkillResult) -> Vec<(String, String)> {
    result
        .events
        .iter()
        .filter_map(|e| match &e.payload {
            skillet_engine::protocol::EventPayload::Artifact { name, chunk, .. }
                if name.starts_with("reasoning-") =>
            {
                Some((name.clone(), chunk.clone()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn ollama_thinking_is_reasoning_kept_out_of_the_answer_and_sent_only_when_the_host_says_so() {
    for (streaming, send) in [(false, false), (true, false), (false, true), (true, true)] {
        let dir = SkillSpec::new("thinker", "Think.").write();
        let server =
            start_mock(r#"rules: [{ reply: { thinking: "Hmm, a greeting.", text: "hello" } }]"#)
                .await;
        let mut config = llm_config_for(&server, "ollama", MODEL);
        config
            .provider_config
            .as_mut()
            .unwrap()
            .insert("think".into(), json!(true));
        let h = harness_with(
            registry([dir.skill.clone()]),
            ToolRegistry::new(),
            Some(config),
            Limits::default(),
            |b| b.reasoning_events(send),
        );
        let mut req = request("thinker", json!({}));
        req.streaming = streaming;
        let called = h.call(req).await;
        let result = called.result();
        assert_eq!(result.data, Some(json!("hello")), "streaming {streaming}");
        assert_eq!(chat_bodies(&server)[0]["think"], true);
        let logs = messages_of(result, skillet_engine::protocol::EventKind::Log);
        assert!(
            logs.iter()
                .any(|l| l.starts_with("model reasoning (16 chars, kept out of the answer")),
            "streaming {streaming}: {logs:?}"
        );
        // The text itself is in no log line, and in an artifact only when the host sends it.
        assert!(
            !logs.iter().any(|l| l.contains("Hmm, a greeting.")),
            "{logs:?}"
        );
        let sent = reasoning_artifacts(result);
        if send {
            assert_eq!(
                sent,
                vec![("reasoning-1".to_owned(), "Hmm, a greeting.".to_owned())],
                "streaming {streaming}"
            );
        } else {
            assert!(sent.is_empty(), "{sent:?}");
        }
        assert!(
            !serde_json::to_string(&called.live)
                .unwrap()
                .contains("Hmm, a greeting.")
                || send,
            "the live events carried the reasoning with reasoning_events off"
        );
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_skills_reasoning_keys_go_on_its_requests_over_the_providers_settings() {
    let dir = SkillSpec::new("careful", "Think hard.")
        .meta("a2e-reasoning-effort", "high")
        .write();
    let server = start_mock(r#"rules: [{ reply: { text: "done" } }]"#).await;
    let mut config = llm_config(&server);
    config
        .provider_config
        .as_mut()
        .unwrap()
        .insert("reasoning_effort".into(), json!("low"));
    let h = harness(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(config),
        Limits::default(),
    );
    let result = h.call(request("careful", json!({}))).await;
    assert!(result.result().success, "{:?}", result.result());
    assert_eq!(chat_bodies(&server)[0]["reasoning_effort"], "high");
    server.shutdown().await;
}

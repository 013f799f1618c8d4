//! Final output handling against mock-llm over real sockets: an invalid answer repaired (the
//! bundled code-review skill), output that never validates (`schema_violation` with every
//! violation and the last raw output), `max_turns` exhausted (a result with the turns used and
//! the last output), and the token budget.

mod support;

use serde_json::json;
use skillet_engine::protocol::{ErrorCode, EventKind};
use skillet_engine::run::Limits;
use skillet_engine::tools::{ToolOutput, ToolRegistry, tool_fn};
use support::*;

#[tokio::test]
async fn invalid_final_json_is_repaired_with_every_violation_listed() {
    let scenario =
        std::fs::read_to_string(bundled_dir("code-review").join("mock-scenario.yaml")).unwrap();
    let server = start_mock(&scenario).await;
    let h = harness(
        registry([bundled_skill("code-review")]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h
        .call(request(
            "code-review",
            json!({"code": "def add(a, b): return a - b", "language": "python"}),
        ))
        .await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(
        result.data.as_ref().unwrap()["issues"][0]["severity"],
        "error"
    );
    let logs = messages_of(result, EventKind::Log);
    assert!(
        logs.iter()
            .any(|l| l.contains("asking the model to repair")),
        "{logs:?}"
    );
    assert_eq!(messages_of(result, EventKind::Status).len(), 2);

    // Turn 2 carried the model's first answer and a repair message naming the bad value's path.
    let bodies = chat_bodies(&server);
    assert_eq!(bodies.len(), 2);
    let messages = bodies[1]["messages"].as_array().unwrap();
    let repair = messages.last().unwrap();
    assert_eq!(repair["role"], "user");
    let text = repair["content"].as_str().unwrap();
    assert!(text.contains("/issues/0/severity"), "{text}");
    assert_eq!(messages[messages.len() - 2]["role"], "assistant");
    server.shutdown().await;
}

fn strict_skill(max_turns: u32) -> SkillDir {
    SkillSpec::new("strict", "Give a number.")
        .max_turns(max_turns)
        .output(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "unit": {"type": "string"}},
            "required": ["n", "unit"]
        }))
        .write()
}

#[tokio::test]
async fn output_that_never_validates_ends_in_schema_violation_with_violations_and_last_output() {
    let server = start_mock(
        r#"
rules:
  - replies:
      - { text: "I think it is about seven." }
      - { json: { n: "seven" } }
    times: 2
"#,
    )
    .await;
    let h = harness(
        registry([strict_skill(2).skill]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h.call(request("strict", json!({}))).await;
    let result = called.result();
    assert!(!result.success);
    assert_eq!(result.error_code, Some(ErrorCode::SchemaViolation));
    let data = result.data.as_ref().unwrap();
    assert_eq!(data["last_output"], r#"{"n":"seven"}"#);
    assert_eq!(data["turns_used"], 2);
    let paths: Vec<&str> = data["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["instance_path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{data}");
    assert!(paths.contains(&"/n") && paths.contains(&""), "{paths:?}");
    // The first answer (prose) got a repair message saying it is not JSON.
    let bodies = chat_bodies(&server);
    let repair = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        repair["content"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert!(
        result
            .summary
            .as_ref()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("schema_violation")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn max_turns_exhausted_is_a_result_with_turns_used_and_the_last_output() {
    let dir = SkillSpec::new("busy", "Keep looking things up.")
        .tools(&["lookup"])
        .max_turns(3)
        .write();
    let server = start_mock(
        r#"
rules:
  - replies:
      - { text: "looking 1", tool_calls: [{ name: lookup, arguments: { q: "1" } }] }
      - { text: "looking 2", tool_calls: [{ name: lookup, arguments: { q: "2" } }] }
      - { text: "looking 3", tool_calls: [{ name: lookup, arguments: { q: "3" } }] }
    times: 3
"#,
    )
    .await;
    let mut tools = ToolRegistry::new();
    tools
        .register_tool(tool_fn(
            "lookup",
            "looks up",
            json!({"type": "object"}),
            |_, _| async { Ok(ToolOutput::text("nothing")) },
        ))
        .unwrap();
    let h = harness(
        registry([dir.skill.clone()]),
        tools,
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h.call(request("busy", json!({}))).await;
    let result = called.result();
    assert!(!result.success);
    assert_eq!(result.error_code, Some(ErrorCode::SkillError));
    assert!(
        result
            .error
            .as_deref()
            .unwrap()
            .contains("max_turns (3) exhausted")
    );
    assert_eq!(
        result.data,
        Some(json!({"turns_used": 3, "last_output": "looking 3"}))
    );
    assert_eq!(chat_bodies(&server).len(), 3);
    assert_eq!(
        messages_of(result, EventKind::Status),
        vec![
            format!("turn 1/3 · openai-compatible/{MODEL}"),
            format!("turn 2/3 · openai-compatible/{MODEL}"),
            format!("turn 3/3 · openai-compatible/{MODEL}"),
        ]
    );
    server.shutdown().await;
}

#[tokio::test]
async fn host_cap_bounds_the_skills_max_turns() {
    let server = start_mock(r#"rules: [{ reply: { text: "not json" } }]"#).await;
    let h = harness(
        registry([strict_skill(10).skill]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits {
            max_turns_cap: 2,
            ..Limits::default()
        },
    );
    let called = h.call(request("strict", json!({}))).await;
    assert_eq!(called.result().error_code, Some(ErrorCode::SchemaViolation));
    assert_eq!(chat_bodies(&server).len(), 2);
    server.shutdown().await;
}

#[tokio::test]
async fn token_budget_is_checked_before_each_request() {
    let dir = SkillSpec::new("spender", "Spend.")
        .tools(&["lookup"])
        .write();
    let server = start_mock(
        r#"
rules:
  - reply:
      tool_calls: [{ name: lookup, arguments: {} }]
      usage: { input: 600, output: 100 }
"#,
    )
    .await;
    let mut tools = ToolRegistry::new();
    tools
        .register_tool(tool_fn(
            "lookup",
            "x",
            json!({"type": "object"}),
            |_, _| async { Ok(ToolOutput::text("ok")) },
        ))
        .unwrap();
    let h = harness(
        registry([dir.skill.clone()]),
        tools,
        Some(llm_config(&server)),
        Limits {
            token_budget: Some(1000),
            tool_loop_threshold: 0,
            ..Limits::default()
        },
    );
    let called = h.call(request("spender", json!({}))).await;
    let result = called.result();
    assert_eq!(result.error_code, Some(ErrorCode::SkillError));
    let error = result.error.as_deref().unwrap();
    assert!(
        error.contains("token budget of 1000 exhausted after 2 turns (1400 tokens used)"),
        "{error}"
    );
    assert_eq!(
        chat_bodies(&server).len(),
        2,
        "the third request is never sent"
    );
    let usage = messages_of(result, EventKind::Log).pop().unwrap();
    assert_eq!(
        usage,
        "token usage: 1200 input + 200 output = 1400 tokens over 2 turns"
    );
    server.shutdown().await;
}

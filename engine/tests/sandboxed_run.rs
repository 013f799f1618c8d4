//! Sandboxed tools and plugin skills inside real runs: a manifest skill against mock-llm calls
//! command tools (one well-behaved, one that crashes — the model sees the crash as a tool error
//! and the run goes on), and plugin skills run through the registry and the executor with their
//! events in the result and their crashes as `sandbox_crash`.

mod sandboxed_support;
mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use skillet_engine::protocol::{ErrorCode, EventKind, EventPayload};
use skillet_engine::run::Limits;
use skillet_engine::sandboxed::{CommandTool, CommandToolConfig, PluginConfig, PluginHost};
use skillet_engine::skill::Registry;
use skillet_engine::tools::{Tool, ToolRegistry};
use support::*;

fn child_tool(name: &str, mode: &str) -> Arc<dyn Tool> {
    let mut config = CommandToolConfig::new(
        sandboxed_support::sandbox_child(),
        format!("test child in mode {mode}"),
    );
    config.args = vec![mode.to_owned()];
    config.sandbox = sandboxed_support::test_policy();
    Arc::new(CommandTool::new(name, config, sandboxed_support::backend()).expect("valid tool"))
}

const SCENARIO: &str = r#"
rules:
  - name: plan
    when: { turn: 1 }
    reply:
      tool_calls: [{ name: echo_json, arguments: { text: "hi" } }, { name: crashy, arguments: {} }]
  - name: answer
    when: { turn: 2 }
    reply: { json: { result: "done" } }
"#;

#[tokio::test]
async fn command_tools_run_in_a_skill_and_a_crash_is_a_tool_error_the_run_survives() {
    let dir = SkillSpec::new("calc", "Use the tools.")
        .tools(&["echo_json", "crashy"])
        .max_turns(4)
        .output(json!({"type": "object", "properties": {"result": {}}, "required": ["result"]}))
        .write();
    let mut tools = ToolRegistry::new();
    tools
        .register_tool(child_tool("echo_json", "echo-json"))
        .unwrap();
    tools
        .register_tool(child_tool("crashy", "segfault"))
        .unwrap();
    let server = start_mock(SCENARIO).await;
    let h = harness(
        registry([dir.skill.clone()]),
        tools,
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h.call(request("calc", json!({}))).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.data, Some(json!({"result": "done"})));
    let bodies = chat_bodies(&server);
    let results = tool_results_in(&bodies[1]);
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0], r#"{"echo":{"text":"hi"}}"#);
    assert!(results[1].contains("sandbox_crash"), "{results:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn plugin_skills_run_through_the_executor_and_survive_a_crash() {
    let mut config = PluginConfig::new(sandboxed_support::plugin_child());
    config.sandbox = sandboxed_support::test_policy();
    config.restart_backoff_initial = Duration::from_millis(20);
    let host = PluginHost::start("testplug", config, sandboxed_support::backend())
        .await
        .expect("plugin starts");
    let skills = Arc::new(Registry::new());
    assert!(host.register_into(&skills).is_empty());
    let h = harness(skills, ToolRegistry::new(), None, Limits::default());

    let called = h.call(request("echo", json!({"events": 3}))).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.data.as_ref().unwrap()["echo"], json!({"events": 3}));
    let steps: Vec<String> = result
        .events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Progress { message, .. } if message.starts_with("step") => {
                Some(message.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        steps,
        ["step 0", "step 1", "step 2"],
        "the plugin's events, in order"
    );

    let crashed = h.call(request("crash", json!({}))).await;
    let result = crashed.result();
    assert!(!result.success);
    assert_eq!(
        result.error_code,
        Some(ErrorCode::SandboxCrash),
        "{result:?}"
    );
    assert!(
        messages_of(result, EventKind::Status)
            .iter()
            .any(|m| m == "about to crash"),
        "events before the crash are kept"
    );

    let again = h.call(request("echo", json!({"events": 0}))).await;
    assert!(
        again.result().success,
        "the next call gets a restarted plugin"
    );
}

//! Skills that declare an MCP toolkit, run end to end by the `Executor` against mock-llm over
//! real sockets, with the toolkit's tools served by a real `mcp-test-server` child process.

use crate::mcp_support;
#[path = "../../../engine/tests/support/mod.rs"]
mod support;

use std::sync::Arc;

use serde_json::json;
use skillet_engine::run::Limits;
use skillet_engine::tools::{ToolRegistry, ToolkitStatus};
use skillet_toolkits::mcp::{self, McpToolkitConfig};
use support::*;

const ANSWER_SCHEMA: &str =
    r#"{"type": "object", "properties": {"result": {}}, "required": ["result"]}"#;

/// A skill `use-mcp` declaring toolkit `testkit`.
fn mcp_skill() -> SkillDir {
    SkillSpec::new("use-mcp", "Use the testkit tools, then answer.")
        .meta("a2e-toolkits", r#"["testkit"]"#)
        .max_turns(6)
        .output(serde_json::from_str(ANSWER_SCHEMA).unwrap())
        .write()
}

/// A tool registry with the test server as toolkit `testkit`, started.
async fn testkit() -> (ToolRegistry, Arc<dyn skillet_engine::tools::Toolkit>) {
    let config: McpToolkitConfig = toml::from_str(&format!(
        "command = {:?}",
        mcp_support::test_server().display().to_string()
    ))
    .unwrap();
    let toolkit = mcp::build("testkit", config);
    let mut tools = ToolRegistry::new();
    tools.register_toolkit(toolkit.clone()).unwrap();
    assert!(tools.start_toolkits().await.is_empty());
    (tools, toolkit)
}

#[tokio::test]
async fn model_calls_an_mcp_tool_and_the_run_ends_with_validated_output() {
    let dir = mcp_skill();
    let (tools, toolkit) = testkit().await;
    let server = start_mock(
        r#"
rules:
  - name: plan
    when: { turn: 1 }
    reply:
      tool_calls: [{ name: add, arguments: { a: 2, b: 3 } }]
  - name: answer
    when: { turn: 2 }
    reply: { json: { result: "five" } }
"#,
    )
    .await;
    let h = harness(
        registry([dir.skill.clone()]),
        tools,
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h.call(request("use-mcp", json!({}))).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.data, Some(json!({"result": "five"})));

    let bodies = chat_bodies(&server);
    // The model was offered the server's tools, and saw the MCP result.
    let offered: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        offered.contains(&"add") && offered.contains(&"echo"),
        "{offered:?}"
    );
    assert_eq!(tool_results_in(&bodies[1]), vec![r#"{"sum":5}"#]);
    server.shutdown().await;
    toolkit.shutdown().await;
}

#[tokio::test]
async fn server_crash_mid_run_is_a_tool_error_the_run_survives_and_the_server_restarts() {
    let dir = mcp_skill();
    let (tools, toolkit) = testkit().await;
    let server = start_mock(
        r#"
rules:
  - name: crash
    when: { turn: 1 }
    reply:
      tool_calls: [{ name: crash, arguments: {} }]
  - name: retry
    when: { turn: 2 }
    reply:
      tool_calls: [{ name: echo, arguments: { text: "back" } }]
  - name: answer
    when: { turn: 3 }
    reply: { json: { result: "recovered" } }
"#,
    )
    .await;
    let h = harness(
        registry([dir.skill.clone()]),
        tools,
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h.call(request("use-mcp", json!({}))).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.data, Some(json!({"result": "recovered"})));

    let bodies = chat_bodies(&server);
    let crashed = tool_results_in(&bodies[1]);
    assert!(
        crashed.len() == 1 && crashed[0].contains("stopped during the call"),
        "{crashed:?}"
    );
    assert!(tool_results_in(&bodies[2]).contains(&"back".to_owned()));
    assert_eq!(toolkit.status(), ToolkitStatus::Ready);
    server.shutdown().await;
    toolkit.shutdown().await;
}

#[tokio::test]
async fn a_first_use_toolkit_is_connected_before_the_first_turn_and_its_tools_offered() {
    let dir = mcp_skill();
    let config: McpToolkitConfig = toml::from_str(&format!(
        "command = {:?}\nconnect = \"first-use\"",
        mcp_support::test_server().display().to_string()
    ))
    .unwrap();
    let toolkit = mcp::build("testkit", config);
    let mut tools = ToolRegistry::new();
    tools.register_toolkit(toolkit.clone()).unwrap();
    assert!(tools.start_toolkits().await.is_empty());
    assert_eq!(toolkit.status(), ToolkitStatus::Idle, "not started at boot");
    let server = start_mock(
        r#"
rules:
  - name: plan
    when: { turn: 1, tool: add }
    reply:
      tool_calls: [{ name: add, arguments: { a: 20, b: 22 } }]
  - name: answer
    when: { turn: 2 }
    reply: { json: { result: "forty-two" } }
"#,
    )
    .await;
    let h = harness(
        registry([dir.skill.clone()]),
        tools,
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h.call(request("use-mcp", json!({}))).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(toolkit.status(), ToolkitStatus::Ready);
    let bodies = chat_bodies(&server);
    assert_eq!(tool_results_in(&bodies[1]), vec![r#"{"sum":42}"#]);
    server.shutdown().await;
    toolkit.shutdown().await;
}

/// The images the chat request `body` shows the model, as OpenAI data URLs.
fn image_urls(body: &serde_json::Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|part| part["type"] == "image_url")
        .filter_map(|part| part["image_url"]["url"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn an_image_an_mcp_tool_returns_is_shown_to_the_model_after_the_results_unless_it_takes_none()
{
    const IMAGE_TURNS: &str = r#"
rules:
  - name: draw
    when: { turn: 1 }
    reply:
      tool_calls: [{ name: image, arguments: {} }]
  - name: answer
    when: { turn: 2 }
    reply: { json: { result: "a pixel" } }
"#;
    for vision in [true, false] {
        let dir = mcp_skill();
        let (tools, toolkit) = testkit().await;
        let server = start_mock(IMAGE_TURNS).await;
        let mut config = serde_json::to_value(llm_config(&server)).unwrap();
        config["provider_config"]["vision"] = json!(vision);
        let h = harness(
            registry([dir.skill.clone()]),
            tools,
            Some(serde_json::from_value(config).unwrap()),
            Limits::default(),
        );
        let called = h.call(request("use-mcp", json!({}))).await;
        let result = called.result();
        assert!(result.success, "{result:?}");
        let bodies = chat_bodies(&server);
        // The result's note still names the artifact the caller got.
        let results = tool_results_in(&bodies[1]);
        assert!(results[0].contains("artifact"), "{results:?}");
        let urls = image_urls(&bodies[1]);
        if vision {
            assert_eq!(urls.len(), 1, "{}", bodies[1]);
            assert!(
                urls[0].starts_with("data:image/png;base64,iVBOR"),
                "{urls:?}"
            );
            // After the tool's result, not before it.
            let messages = bodies[1]["messages"].as_array().unwrap();
            let tool_at = messages.iter().position(|m| m["role"] == "tool").unwrap();
            let image_at = messages
                .iter()
                .position(|m| m.to_string().contains("image_url"))
                .unwrap();
            assert!(tool_at < image_at, "{}", bodies[1]);
        } else {
            assert!(urls.is_empty(), "{}", bodies[1]);
            let logs = messages_of(result, skillet_engine::protocol::EventKind::Log);
            assert!(
                logs.iter()
                    .any(|l| l.contains("image from tool image") && l.contains("vision = false")),
                "{logs:?}"
            );
        }
        server.shutdown().await;
        toolkit.shutdown().await;
    }
}

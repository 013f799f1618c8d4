//! Real servers' dialects, offline: mock-llm answers as llama-cpp-python, Ollama, llama.cpp
//! chat formats without function calling and small local models do, and each test asserts the
//! wire bytes that matter (what `response_format` / `format` / `tools` was sent after a
//! refusal, the prompted-tool format) and the guarantees (validated data, one answer, honest
//! usage).

mod support;

use serde_json::{Value, json};
use skillet_engine::protocol::{ErrorCode, EventKind, LLMConfig};
use skillet_engine::run::Limits;
use skillet_engine::tools::{ToolRegistry, builtin};
use support::*;

/// An `LLMConfig` for `provider` at `server` with extra `provider_config` keys.
fn config_with(server: &mock_llm::MockServer, provider: &str, extra: Value) -> LLMConfig {
    let mut config = serde_json::to_value(llm_config_for(server, provider, MODEL)).unwrap();
    let options = config["provider_config"].as_object_mut().unwrap();
    for (k, v) in extra.as_object().unwrap() {
        options.insert(k.clone(), v.clone());
    }
    // The key is redacted on encode: put it back.
    config["provider_credentials"] = json!({"api_key": "test-key"});
    serde_json::from_value(config).unwrap()
}

fn calculator_registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in builtin::all() {
        registry.register_tool(tool).unwrap();
    }
    registry
}

fn total_skill(tools: bool) -> SkillDir {
    let spec = SkillSpec::new("total", "Add the amounts with the calculator.")
        .max_turns(4)
        .output(json!({
            "type": "object",
            "properties": {"total": {"type": "number"}},
            "required": ["total"]
        }));
    if tools {
        spec.tools(&["calculator"]).write()
    } else {
        spec.write()
    }
}

/// An executor running `skill` on `config`, with the calculator when `tools`.
fn harness_for(skill: &SkillDir, tools: bool, config: LLMConfig) -> Harness {
    let registry_of_tools = if tools {
        calculator_registry()
    } else {
        ToolRegistry::new()
    };
    harness(
        registry([skill.skill.clone()]),
        registry_of_tools,
        Some(config),
        Limits::default(),
    )
}

fn run_logs(result: &skillet_engine::protocol::SkillResult) -> String {
    messages_of(result, EventKind::Log).join("\n")
}

#[tokio::test]
async fn llama_cpp_python_refusing_json_schema_is_answered_in_json_object_once_and_remembered() {
    let server = start_mock(
        "dialect: { refuse_output: [json_schema] }\nrules:\n  - reply: { json: { total: 3 } }\n",
    )
    .await;
    let skill = total_skill(false);
    let h = harness_for(&skill, false, llm_config(&server));
    let first = h.call(request("total", json!({}))).await;
    let result = first.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.data, Some(json!({"total": 3})));
    let bodies = chat_bodies(&server);
    // One refusal (a 500 that is not retried as an outage), then json_object + schema.
    assert_eq!(bodies.len(), 2, "{bodies:#?}");
    assert_eq!(bodies[0]["response_format"]["type"], "json_schema");
    assert_eq!(bodies[1]["response_format"]["type"], "json_object");
    assert_eq!(
        bodies[1]["response_format"]["schema"]["required"],
        json!(["total"])
    );
    let logs = run_logs(result);
    assert!(
        logs.contains("refused structured output mode json_schema")
            && logs.contains("using json_object"),
        "{logs}"
    );
    // Remembered for the server+model: the next call goes straight to json_object.
    let second = h.call(request("total", json!({}))).await;
    assert!(second.result().success);
    let bodies = chat_bodies(&server);
    assert_eq!(bodies.len(), 3);
    assert_eq!(bodies[2]["response_format"]["type"], "json_object");
    server.shutdown().await;
}

#[tokio::test]
async fn a_mode_set_by_hand_is_not_stepped_down_and_a_refusal_fails_at_once() {
    let server = start_mock(
        "dialect: { refuse_output: [json_schema] }\nrules:\n  - reply: { json: { total: 3 } }\n",
    )
    .await;
    let skill = total_skill(false);
    let config = config_with(
        &server,
        "openai-compatible",
        json!({"structured_output": "json_schema"}),
    );
    let h = harness_for(&skill, false, config);
    let called = h.call(request("total", json!({}))).await;
    let result = called.result();
    assert!(!result.success);
    assert_eq!(
        result.error_code,
        Some(ErrorCode::RuntimeError),
        "{result:?}"
    );
    assert!(
        result
            .error
            .as_deref()
            .unwrap()
            .contains("bad_request (HTTP 500)"),
        "{result:?}"
    );
    assert_eq!(chat_bodies(&server).len(), 1, "a refusal is not retried");
    server.shutdown().await;
}

#[tokio::test]
async fn ollama_without_tools_gets_prompted_tools_constrained_to_one_call_or_the_answer() {
    let server = start_mock(
        r#"
dialect: { tools: refuse }
rules:
  - when: { turn: 1 }
    reply: { text: '{"tool": "calculator", "arguments": {"expression": "1.5 + 1.5"}}' }
  - when: { turn: 2, user_contains: "returned" }
    reply: { json: { final_answer: { total: 3 } } }
"#,
    )
    .await;
    let skill = total_skill(true);
    let h = harness_for(&skill, true, llm_config_for(&server, "ollama", MODEL));
    let called = h.call(request("total", json!({}))).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.data, Some(json!({"total": 3})));
    let bodies = chat_bodies(&server);
    assert_eq!(bodies.len(), 3, "refused once, then two prompted turns");
    assert!(bodies[0]["tools"].is_array());
    for body in &bodies[1..] {
        assert!(
            body.get("tools").is_none(),
            "no native tools after the refusal"
        );
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(
            system.contains("## Tools") && system.contains("`calculator`"),
            "{system}"
        );
        // The union: one calculator call, or the final answer.
        let variants = body["format"]["oneOf"].as_array().unwrap();
        assert_eq!(variants[0]["properties"]["tool"]["const"], "calculator");
        assert!(variants[1]["properties"]["final_answer"].is_object());
    }
    // The call ran: its result went back as text, in a user turn.
    let last = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    let content = last["content"].as_str().unwrap();
    assert!(
        content.starts_with("Tool `calculator` returned:\n") && content.contains("\"result\":3"),
        "{last}"
    );
    let logs = run_logs(result);
    assert!(
        logs.contains("refused tool calling mode native") && logs.contains("using prompted"),
        "{logs}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_server_that_ignores_tools_still_gets_the_call_the_model_wrote_as_text() {
    let server = start_mock(
        r#"
dialect: { tools: ignore }
rules:
  - when: { turn: 1 }
    reply: { tool_calls: [ { name: calculator, arguments: { expression: "2 * 3" } } ] }
  - reply: { json: { total: 6 } }
"#,
    )
    .await;
    let skill = total_skill(true);
    let h = harness_for(&skill, true, llm_config(&server));
    let called = h.call(request("total", json!({}))).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    let bodies = chat_bodies(&server);
    assert_eq!(bodies.len(), 2);
    // Native tools were offered, and with them no grammar: the schema is not enforced on an
    // open turn, so the model can reach its tools.
    assert!(bodies[0]["tools"].is_array());
    assert!(bodies[0].get("response_format").is_none(), "{}", bodies[0]);
    let results = tool_results_in(&bodies[1]);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("\"result\":6"), "{results:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn after_a_prose_answer_the_repair_turn_enforces_the_schema() {
    let server = start_mock(
        r#"
rules:
  - when: { turn: 1 }
    reply: { text: "The total is three." }
  - reply: { json: { total: 3 } }
"#,
    )
    .await;
    let skill = total_skill(true);
    let h = harness_for(&skill, true, llm_config(&server));
    let called = h.call(request("total", json!({}))).await;
    assert!(called.result().success, "{:?}", called.result());
    let bodies = chat_bodies(&server);
    assert!(bodies[0].get("response_format").is_none());
    assert_eq!(bodies[1]["response_format"]["type"], "json_schema");
    server.shutdown().await;
}

#[tokio::test]
async fn unreported_usage_is_unknown_not_zero() {
    let server =
        start_mock("dialect: { omit_usage: true }\nrules:\n  - reply: { json: { total: 3 } }\n")
            .await;
    let skill = total_skill(false);
    let h = harness_for(&skill, false, llm_config(&server));
    let called = h.call(request("total", json!({}))).await;
    let result = called.result();
    assert!(result.success);
    let usage = serde_json::to_value(result.usage.as_ref().unwrap()).unwrap();
    assert!(
        usage.get("input_tokens").is_none() && usage.get("output_tokens").is_none(),
        "{usage}"
    );
    assert!(usage["turns"][0].get("input_tokens").is_none(), "{usage}");
    assert!(run_logs(result).contains("token usage: unknown"));
    server.shutdown().await;
}

#[tokio::test]
async fn prose_and_think_wrapped_answers_validate_and_reasoning_is_logged() {
    for wrap in ["prose", "think"] {
        let server = start_mock(&format!(
            "dialect: {{ wrap: {wrap} }}\nrules:\n  - reply: {{ json: {{ total: 3 }} }}\n"
        ))
        .await;
        let skill = total_skill(false);
        let h = harness_for(&skill, false, llm_config(&server));
        let called = h.call(request("total", json!({}))).await;
        let result = called.result();
        assert!(result.success, "{wrap}: {result:?}");
        assert_eq!(result.data, Some(json!({"total": 3})));
        assert_eq!(chat_bodies(&server).len(), 1, "{wrap}: no repair needed");
        if wrap == "think" {
            assert!(
                run_logs(result).contains("model reasoning"),
                "{}",
                run_logs(result)
            );
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn missing_and_repeated_tool_call_ids_are_made_unique() {
    for quirk in ["omit", "repeat"] {
        let server = start_mock(&format!(
            r#"
dialect: {{ tool_call_ids: {quirk} }}
rules:
  - when: {{ turn: 1 }}
    reply: {{ tool_calls: [ {{ name: calculator, arguments: {{ expression: "1 + 1" }} }} ] }}
  - when: {{ turn: 2 }}
    reply: {{ tool_calls: [ {{ name: calculator, arguments: {{ expression: "2 + 1" }} }} ] }}
  - reply: {{ json: {{ total: 3 }} }}
"#
        ))
        .await;
        let skill = total_skill(true);
        let h = harness_for(&skill, true, llm_config(&server));
        let called = h.call(request("total", json!({}))).await;
        assert!(called.result().success, "{quirk}: {:?}", called.result());
        let bodies = chat_bodies(&server);
        let ids: Vec<String> = bodies[2]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["tool_call_id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(ids, ["call_0", "call_1"], "{quirk}");
        server.shutdown().await;
    }
}

#[tokio::test]
async fn an_answer_cut_off_by_the_token_limit_on_the_last_turn_is_a_truncated_result() {
    // As llama.cpp says it (`length`), and as llama-cpp-python's chatml-function-calling format
    // does (`stop`, with the JSON left open): both are an answer cut off.
    for finish in ["length", "stop"] {
        answer_cut_off_with_finish_reason(finish).await;
    }
}

async fn answer_cut_off_with_finish_reason(finish: &str) {
    let server = start_mock(&format!(
        "rules:\n  - reply: {{ text: '{{\"summary\": \"Rust 1.0 shipped in', finish: {finish} }}\n"
    ))
    .await;
    let skill = SkillSpec::new("cut", "Give the total.")
        .max_turns(2)
        .output(json!({"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}))
        .write();
    let h = harness_for(&skill, false, llm_config(&server));
    let called = h.call(request("cut", json!({}))).await;
    let result = called.result();
    assert!(!result.success, "{finish}");
    assert!(result.truncated, "{finish}: {result:?}");
    assert!(
        result
            .error
            .as_deref()
            .unwrap()
            .contains("cut off at its token limit"),
        "{result:?}"
    );
    let bodies = chat_bodies(&server);
    let repair = bodies[1]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        repair.contains("cut off by the token limit"),
        "{finish}: {repair}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn openai_strict_only_for_schemas_in_its_subset_and_the_answer_tool_mode() {
    let server = start_mock("rules:\n  - reply: { json: { total: 3 } }\n").await;
    let closed = SkillSpec::new("closed", "Give the total.")
        .output(
            json!({"type": "object", "properties": {"total": {"type": "number"}},
            "required": ["total"], "additionalProperties": false}),
        )
        .write();
    let open = total_skill(false);
    let h = harness(
        registry([closed.skill.clone(), open.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config_for(&server, "openai", MODEL)),
        Limits::default(),
    );
    assert!(h.call(request("closed", json!({}))).await.result().success);
    assert!(h.call(request("total", json!({}))).await.result().success);
    let bodies = chat_bodies(&server);
    assert_eq!(bodies[0]["response_format"]["json_schema"]["strict"], true);
    assert!(
        bodies[1]["response_format"]["json_schema"]
            .get("strict")
            .is_none()
    );
    server.shutdown().await;

    // `structured_output = "tool"`: the answer comes through a forced answer tool.
    let server = start_mock(
        "rules:\n  - reply: { tool_calls: [ { name: skillet_final_answer, arguments: { total: 5 } } ] }\n",
    )
    .await;
    let config = config_with(
        &server,
        "openai-compatible",
        json!({"structured_output": "tool"}),
    );
    let h = harness_for(&open, false, config);
    let called = h.call(request("total", json!({}))).await;
    assert_eq!(
        called.result().data,
        Some(json!({"total": 5})),
        "{:?}",
        called.result()
    );
    let body = &chat_bodies(&server)[0];
    assert!(body.get("response_format").is_none());
    // An OpenAI-compatible server (llama.cpp reads a named choice as `auto`) is told
    // `required` with the answer tool as its only tool: the same choice, said as it reads it.
    assert_eq!(body["tool_choice"], "required");
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["skillet_final_answer"]);
    server.shutdown().await;
}

/// The system message of a chat body.
fn system_of(body: &Value) -> &str {
    body["messages"][0]["content"].as_str().unwrap()
}

#[tokio::test]
async fn the_schema_is_said_once_per_request_and_the_prefix_is_the_same_bytes_on_every_turn() {
    let scenario = "rules:\n  \
        - when: { tool_results: false }\n    \
          reply: { tool_calls: [ { name: calculator, arguments: { expression: \"1 + 2\" } } ] }\n  \
        - reply: { json: { total: 3 } }\n";
    let skill = total_skill(true);
    let schema_text =
        r#"{"type":"object","properties":{"total":{"type":"number"}},"required":["total"]}"#;

    // OpenAI reads `json_schema` on every turn: the instructions do not repeat it.
    let server = start_mock(scenario).await;
    let h = harness_for(&skill, true, config_with(&server, "openai", json!({})));
    for _ in 0..2 {
        let called = h.call(request("total", json!({}))).await;
        assert!(called.result().success, "{:?}", called.result());
    }
    let bodies = chat_bodies(&server);
    assert_eq!(bodies.len(), 4, "two calls of two turns");
    for body in &bodies {
        assert!(
            !system_of(body).contains("Output format"),
            "{}",
            system_of(body)
        );
        assert_eq!(
            body["response_format"]["json_schema"]["schema"]["required"],
            json!(["total"])
        );
    }
    // Byte-stable across turns and calls: what a provider's prompt cache keys on.
    let prefix = |body: &Value| (system_of(body).to_owned(), body["tools"].to_string());
    assert!(bodies.iter().all(|b| prefix(b) == prefix(&bodies[0])));
    server.shutdown().await;

    // A grammar server with tools gets the schema on answer turns only, and its model never
    // reads a grammar: the instructions state it, once, the same on every turn.
    let server = start_mock(scenario).await;
    let config = config_with(&server, "openai-compatible", json!({}));
    let h = harness_for(&skill, true, config);
    for _ in 0..2 {
        assert!(h.call(request("total", json!({}))).await.result().success);
    }
    let bodies = chat_bodies(&server);
    for body in &bodies {
        let system = system_of(body);
        assert_eq!(system.matches(schema_text).count(), 1, "{system}");
        assert!(body.get("response_format").is_none(), "{body}");
    }
    assert!(bodies.iter().all(|b| prefix(b) == prefix(&bodies[0])));
    server.shutdown().await;

    // Without tools a grammar holds every answer: the schema is said only on the wire, unless
    // it has words (descriptions) that a grammar never shows the model.
    let server = start_mock("rules:\n  - reply: { json: { total: 3 } }\n").await;
    let worded = SkillSpec::new("worded", "Give the total.")
        .output(json!({"type": "object", "required": ["total"],
            "properties": {"total": {"type": "number", "description": "in cents"}}}))
        .write();
    let bare = total_skill(false);
    let h = harness(
        registry([worded.skill.clone(), bare.skill.clone()]),
        ToolRegistry::new(),
        Some(config_with(&server, "openai-compatible", json!({}))),
        Limits::default(),
    );
    assert!(h.call(request("worded", json!({}))).await.result().success);
    assert!(h.call(request("total", json!({}))).await.result().success);
    let bodies = chat_bodies(&server);
    assert!(system_of(&bodies[0]).contains("\"description\":\"in cents\""));
    assert!(!system_of(&bodies[1]).contains("Output format"));
    for body in &bodies {
        assert_eq!(body["response_format"]["type"], "json_schema", "{body}");
    }
    server.shutdown().await;
}

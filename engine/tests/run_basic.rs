//! The run loop's basic paths against mock-llm over real sockets: a single-turn success with a
//! bundled skill, streaming on and off, rejections before execution (unknown skill, not
//! published, input violations, missing template variable), free-form output and native skills.

mod support;

use skillet_engine::protocol::LogLevel;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use skillet_engine::handler::{HandlerContext, HandlerError, SkillHandler};
use skillet_engine::protocol::{ErrorCode, EventKind, EventPayload, SkillDefinition};
use skillet_engine::run::Limits;
use skillet_engine::service::SkillService;
use skillet_engine::tools::ToolRegistry;
use support::*;

fn summarize_scenario() -> String {
    std::fs::read_to_string(bundled_dir("summarize").join("mock-scenario.yaml")).unwrap()
}

#[tokio::test]
async fn bundled_summarize_succeeds_in_one_turn_with_validated_output() {
    let server = start_mock(&summarize_scenario()).await;
    let h = harness(
        registry([bundled_skill("summarize")]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h
        .call(request(
            "summarize",
            json!({"text": "Skillet runs skills."}),
        ))
        .await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.error_code, None);
    let data = result.data.as_ref().unwrap();
    assert!(
        data["summary"]
            .as_str()
            .unwrap()
            .starts_with("Skillet runs")
    );
    assert_eq!(data["key_points"].as_array().unwrap().len(), 2);
    assert_eq!(
        result.summary,
        Some(data["summary"].clone()),
        "the output's own summary is the one-line summary"
    );
    let statuses = messages_of(result, EventKind::Status);
    assert_eq!(
        statuses,
        vec![format!("turn 1/3 · openai-compatible/{MODEL}")]
    );
    let logs = messages_of(result, EventKind::Log);
    assert!(
        logs.last().unwrap().starts_with("token usage:"),
        "usage is the final log: {logs:?}"
    );

    // What the model was sent: rendered instructions, the structured-output schema, the
    // sampling hints, and the arguments as the first user message.
    let bodies = chat_bodies(&server);
    assert_eq!(bodies.len(), 1);
    let body = &bodies[0];
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("Text to summarize:\n\nSkillet runs skills."),
        "{system}"
    );
    // A grammar server without tools holds every answer to the schema, which has no words a
    // grammar cannot convey: the schema is said once, on the wire, not in the instructions.
    assert!(!system.contains("## Output format"), "{system}");
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["required"],
        json!(["summary", "key_points"])
    );
    assert!(
        body["response_format"]["json_schema"]["schema"]
            .get("$schema")
            .is_none(),
        "the dialect is for validators, not models"
    );
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(
        body["messages"][1]["content"],
        r#"{"text":"Skillet runs skills."}"#
    );
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["model"], MODEL);
    server.shutdown().await;
}

#[tokio::test]
async fn streaming_pushes_live_events_and_artifact_chunks_ending_with_final() {
    let server = start_mock(&summarize_scenario()).await;
    let h = harness(
        registry([bundled_skill("summarize")]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let mut req = request("summarize", json!({"text": "Some text."}));
    req.streaming = true;
    let called = h.call(req).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert!(!called.live.is_empty());
    let artifacts: Vec<(String, bool)> = result
        .events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Artifact {
                name,
                chunk,
                is_final,
                ..
            } => {
                assert_eq!(name, "turn-1");
                Some((chunk.clone(), *is_final))
            }
            _ => None,
        })
        .collect();
    assert!(artifacts.len() >= 2, "{artifacts:?}");
    assert_eq!(artifacts.iter().filter(|(_, f)| *f).count(), 1);
    assert!(artifacts.last().unwrap().1, "the last chunk is final");
    let streamed: String = artifacts.iter().map(|(c, _)| c.as_str()).collect();
    let streamed: Value = serde_json::from_str(&streamed).unwrap();
    assert_eq!(&streamed, result.data.as_ref().unwrap());
    assert_eq!(chat_bodies(&server)[0]["stream"], true);
    server.shutdown().await;
}

#[tokio::test]
async fn without_streaming_nothing_is_pushed_live_and_events_are_still_collected() {
    let server = start_mock(&summarize_scenario()).await;
    let h = harness(
        registry([bundled_skill("summarize")]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let mut req = request("summarize", json!({"text": "Some text."}));
    req.streaming = false;
    let called = h.call(req).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert!(called.live.is_empty());
    assert!(
        result
            .events
            .iter()
            .all(|e| e.kind() != EventKind::Artifact)
    );
    assert!(!messages_of(result, EventKind::Status).is_empty());
    assert_ne!(chat_bodies(&server)[0]["stream"], true);
    server.shutdown().await;
}

#[tokio::test]
async fn unknown_skill_is_rejected_before_execution() {
    let h = harness(registry([]), ToolRegistry::new(), None, Limits::default());
    let called = h.call(request("nope", json!({}))).await;
    let error = called.response.error.unwrap();
    assert_eq!(error.code, ErrorCode::UnknownSkill);
    assert!(!error.retryable);
    assert!(error.message.contains("nope"));
}

/// Two skills that may not run: `old-skill` (Archived) and `needs-tool` (Blocked: its tool is
/// missing).
fn unpublished_skills() -> (SkillDir, SkillDir) {
    let archived = SkillSpec::new("old-skill", "Old.")
        .meta("a2e-status", "Archived")
        .write();
    let blocked = SkillSpec::new("needs-tool", "Use the tool.")
        .tools(&["missing_tool"])
        .write();
    (archived, blocked)
}

#[tokio::test]
async fn skill_that_is_not_published_does_not_run() {
    let (archived, blocked) = unpublished_skills();
    let h = harness(
        registry([archived.skill.clone(), blocked.skill.clone()]),
        ToolRegistry::new(),
        None,
        Limits::default(),
    );
    let error = h
        .call(request("old-skill", json!({})))
        .await
        .response
        .error
        .unwrap();
    assert_eq!(error.code, ErrorCode::RuntimeError);
    assert!(error.message.contains("Archived"), "{}", error.message);
    let error = h
        .call(request("needs-tool", json!({})))
        .await
        .response
        .error
        .unwrap();
    assert_eq!(error.code, ErrorCode::RuntimeError);
    assert!(
        error.message.contains("missing tools: missing_tool"),
        "{}",
        error.message
    );
    assert!(error.retryable, "a blocked skill may become available");
}

/// What adapters ask per call (`SkillService::is_runnable`): answered from the registry, and the
/// same as what `discover` says of each skill.
#[test]
fn only_published_skills_are_runnable_as_discover_says() {
    use skillet_engine::protocol::{SkillDiscoverRequest, SkillStatus};

    let (archived, blocked) = unpublished_skills();
    let h = harness(
        registry([
            bundled_skill("summarize"),
            archived.skill.clone(),
            blocked.skill.clone(),
        ]),
        ToolRegistry::new(),
        None,
        Limits::default(),
    );
    let listed = h.executor.discover(&SkillDiscoverRequest::default()).skills;
    assert_eq!(listed.len(), 3);
    for skill in &listed {
        assert_eq!(
            h.executor.is_runnable(&skill.name),
            skill.status == SkillStatus::Published,
            "{}",
            skill.name
        );
    }
    assert!(h.executor.is_runnable("summarize"));
    assert!(!h.executor.is_runnable("needs-tool"));
    assert!(!h.executor.is_runnable("old-skill"));
    assert!(!h.executor.is_runnable("no-such-skill"));
}

#[tokio::test]
async fn every_input_violation_is_listed_with_its_instance_path() {
    let server = start_mock(&summarize_scenario()).await;
    let h = harness(
        registry([bundled_skill("summarize")]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h
        .call(request(
            "summarize",
            json!({"text": 5, "max_words": 1, "extra": true}),
        ))
        .await;
    let error = called.response.error.unwrap();
    assert_eq!(error.code, ErrorCode::SchemaViolation);
    for needle in ["/text", "/max_words", "extra", "3 violations"] {
        assert!(
            error.message.contains(needle),
            "{needle}: {}",
            error.message
        );
    }
    assert!(chat_bodies(&server).is_empty(), "nothing ran");
    server.shutdown().await;
}

#[tokio::test]
async fn missing_template_variable_is_rejected_naming_its_path() {
    let dir = SkillSpec::new("greet", "Greet {{ user.name }} warmly.")
        .input(json!({"type": "object", "properties": {"user": {"type": "object"}}}))
        .write();
    let server = start_mock("rules: []").await;
    let h = harness(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h.call(request("greet", json!({"user": {}}))).await;
    let error = called.response.error.unwrap();
    assert_eq!(error.code, ErrorCode::SchemaViolation);
    assert!(error.message.contains("user.name"), "{}", error.message);
    assert!(error.message.contains("line 1"), "{}", error.message);
    assert!(chat_bodies(&server).is_empty(), "nothing ran");
    server.shutdown().await;
}

#[tokio::test]
async fn free_form_output_is_the_text_and_a_single_prompt_is_sent_as_text() {
    let dir = SkillSpec::new("chat", "Answer briefly.").write();
    let server = start_mock(
        r#"
rules:
  - when: { user_contains: "capital of France" }
    reply: { text: "Paris.\nIt has been the capital for centuries." }
"#,
    )
    .await;
    let h = harness(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h
        .call(request(
            "chat",
            json!({"prompt": "What is the capital of France?"}),
        ))
        .await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(
        result.data,
        Some(json!("Paris.\nIt has been the capital for centuries."))
    );
    assert_eq!(result.summary, Some(json!("Paris.")));
    let body = &chat_bodies(&server)[0];
    assert_eq!(
        body["messages"][1]["content"],
        "What is the capital of France?"
    );
    assert!(body.get("response_format").is_none() || body["response_format"].is_null());
    server.shutdown().await;
}

struct Adder;

#[async_trait]
impl SkillHandler for Adder {
    async fn run(&self, arguments: Value, ctx: HandlerContext) -> Result<Value, HandlerError> {
        ctx.events.log(LogLevel::Info, "adding");
        match arguments["mode"].as_str() {
            Some("panic") => panic!("handler bug"),
            Some("bad-output") => Ok(json!({"sum": "not a number"})),
            Some("fail") => Err(HandlerError::Failed("cannot add today".into())),
            _ => {
                let sum = arguments["a"].as_i64().unwrap() + arguments["b"].as_i64().unwrap();
                Ok(json!({"sum": sum}))
            }
        }
    }
}

fn native_registry() -> Arc<skillet_engine::skill::Registry> {
    let definition: SkillDefinition = serde_json::from_value(json!({
        "name": "add",
        "version": "1.0.0",
        "description": "Adds two integers.",
        "triggers": ["add"],
        "status": "Published",
        "input_schema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "mode": {"type": "string"}},
            "required": ["a", "b"]
        },
        "output_schema": {
            "type": "object",
            "properties": {"sum": {"type": "integer"}},
            "required": ["sum"]
        },
        "when_to_use": "When two integers need adding.",
        "argument_hint": "a, b",
        "source": "system"
    }))
    .unwrap();
    let registry = skillet_engine::skill::Registry::new();
    registry
        .register_native(definition, Arc::new(Adder))
        .unwrap();
    Arc::new(registry)
}

#[tokio::test]
async fn native_skill_gets_validation_events_and_result_assembly() {
    let h = harness(
        native_registry(),
        ToolRegistry::new(),
        None,
        Limits::default(),
    );
    let ok = h.call(request("add", json!({"a": 2, "b": 3}))).await;
    let result = ok.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.data, Some(json!({"sum": 5})));
    assert!(messages_of(result, EventKind::Log).contains(&"adding".to_owned()));

    let invalid = h.call(request("add", json!({"a": "two"}))).await;
    let error = invalid.response.error.unwrap();
    assert_eq!(error.code, ErrorCode::SchemaViolation);
    assert!(
        error.message.contains("/a") && error.message.contains("\"b\""),
        "{}",
        error.message
    );

    let bad = h
        .call(request(
            "add",
            json!({"a": 1, "b": 1, "mode": "bad-output"}),
        ))
        .await;
    let result = bad.result();
    assert_eq!(result.error_code, Some(ErrorCode::SchemaViolation));
    assert_eq!(
        result.data.as_ref().unwrap()["violations"][0]["instance_path"],
        "/sum"
    );

    let failed = h
        .call(request("add", json!({"a": 1, "b": 1, "mode": "fail"})))
        .await;
    let result = failed.result();
    assert_eq!(result.error_code, Some(ErrorCode::SkillError));
    assert_eq!(result.error.as_deref(), Some("cannot add today"));
}

#[tokio::test]
async fn panicking_native_skill_becomes_runtime_error() {
    let h = harness(
        native_registry(),
        ToolRegistry::new(),
        None,
        Limits::default(),
    );
    let called = h
        .call(request("add", json!({"a": 1, "b": 1, "mode": "panic"})))
        .await;
    let result = called.result();
    assert!(!result.success);
    assert_eq!(result.error_code, Some(ErrorCode::RuntimeError));
    assert!(result.error.as_deref().unwrap().contains("panicked"));
}

#[tokio::test]
async fn discover_and_agent_card_come_from_the_registry() {
    let h = harness(
        registry([bundled_skill("summarize"), bundled_skill("code-review")]),
        ToolRegistry::new(),
        None,
        Limits::default(),
    );
    let discover = skillet_engine::protocol::SkillDiscoverRequest {
        filter_tags: vec!["coding".into()],
        ..Default::default()
    };
    let response = h.executor.discover(&discover);
    assert_eq!(response.req_id, discover.id);
    let names: Vec<&str> = response.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["code-review"]);
    let card = serde_json::to_value(h.executor.agent_card().unwrap()).unwrap();
    let ids: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["code-review", "summarize"], "{card}");
}

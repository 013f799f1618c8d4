//! Tool dispatch in the run loop against mock-llm over real sockets: a tool call then an answer,
//! parallel calls answered in call order, and every bad path answered to the model as a tool
//! error (undeclared tool, invalid arguments, failure, panic, timeout, oversized output) while
//! the run goes on; plus the tool-loop stop.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use skillet_engine::protocol::{ErrorCode, EventKind};
use skillet_engine::run::Limits;
use skillet_engine::tools::{
    Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, inline_tool_fn, tool_fn,
};
use support::*;
use tokio_util::sync::CancellationToken;

const ANSWER_SCHEMA: &str =
    r#"{"type": "object", "properties": {"result": {}}, "required": ["result"]}"#;

/// A skill `calc` declaring `tools`, with a `{result}` output schema.
fn calc_skill(tools: &[&str]) -> SkillDir {
    SkillSpec::new("calc", "You are a calculator. Use the tools.")
        .tools(tools)
        .max_turns(6)
        .output(serde_json::from_str(ANSWER_SCHEMA).unwrap())
        .write()
}

/// Turn 1 asks for `calls` (YAML list), turn 2 answers `{"result": "done"}`.
fn scenario(calls: &str) -> String {
    format!(
        r#"
rules:
  - name: plan
    when: {{ turn: 1 }}
    reply:
      tool_calls: {calls}
  - name: answer
    when: {{ turn: 2 }}
    reply: {{ json: {{ result: "done" }} }}
"#
    )
}

fn add_tool(counter: Arc<Counter>) -> Arc<dyn skillet_engine::tools::Tool> {
    tool_fn(
        "add",
        "Adds two integers",
        json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        }),
        move |args, _ctx| {
            let counter = counter.clone();
            async move {
                counter.bump();
                let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
                Ok(ToolOutput::json(json!({"sum": sum})))
            }
        },
    )
}

fn tools_with(list: Vec<Arc<dyn skillet_engine::tools::Tool>>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in list {
        registry.register_tool(tool).unwrap();
    }
    registry
}

/// Runs `calc` once; returns the call and the tool results the model saw in turn 2.
async fn run_calc(
    declared: &[&str],
    tools: ToolRegistry,
    calls: &str,
    limits: Limits,
) -> (Called, Vec<String>) {
    let (called, bodies) = run_calc_bodies(declared, tools, calls, limits).await;
    let results = bodies.get(1).map(tool_results_in).unwrap_or_default();
    (called, results)
}

/// Runs `calc` once; returns the call and every chat request body the mock received.
async fn run_calc_bodies(
    declared: &[&str],
    tools: ToolRegistry,
    calls: &str,
    limits: Limits,
) -> (Called, Vec<Value>) {
    let dir = calc_skill(declared);
    let server = start_mock(&scenario(calls)).await;
    let h = harness(
        registry([dir.skill.clone()]),
        tools,
        Some(llm_config(&server)),
        limits,
    );
    let called = h.call(request("calc", json!({"expression": "2+3"}))).await;
    let bodies = chat_bodies(&server);
    server.shutdown().await;
    (called, bodies)
}

fn assert_succeeded_in_two_turns(called: &Called) {
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.data, Some(json!({"result": "done"})));
    assert_eq!(messages_of(result, EventKind::Status).len(), 2);
}

#[tokio::test]
async fn tool_call_then_answer() {
    let counter = Arc::new(Counter::default());
    let (called, results) = run_calc(
        &["add"],
        tools_with(vec![add_tool(counter.clone())]),
        r#"[{ name: add, arguments: { a: 2, b: 3 } }]"#,
        Limits::default(),
    )
    .await;
    assert_succeeded_in_two_turns(&called);
    assert_eq!(counter.get(), 1);
    assert_eq!(results, vec![r#"{"sum":5}"#]);
    let logs = messages_of(called.result(), EventKind::Log);
    assert!(
        logs.iter().any(|l| l.starts_with("tool call add(")),
        "{logs:?}"
    );
    assert!(
        logs.iter()
            .any(|l| l.contains(r#"tool result add: {"sum":5}"#)),
        "{logs:?}"
    );
}

#[tokio::test]
async fn two_tool_calls_of_one_turn_run_concurrently_and_answer_in_call_order() {
    // Each tool waits at a two-party barrier: they can only both pass if they run at the same
    // time. The first finishes later than the second, yet its result comes first.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let meet = |name: &'static str, linger: u64| {
        let barrier = barrier.clone();
        tool_fn(
            name,
            "meets the other",
            json!({"type": "object"}),
            move |_, _| {
                let barrier = barrier.clone();
                async move {
                    tokio::time::timeout(Duration::from_secs(10), barrier.wait())
                        .await
                        .map_err(|_| ToolError::Failed("ran alone".into()))?;
                    tokio::time::sleep(Duration::from_millis(linger)).await;
                    Ok(ToolOutput::text(format!("{name} met")))
                }
            },
        )
    };
    let (called, results) = run_calc(
        &["first", "second"],
        tools_with(vec![meet("first", 50), meet("second", 0)]),
        r#"[{ name: first, arguments: {} }, { name: second, arguments: {} }]"#,
        Limits::default(),
    )
    .await;
    assert_succeeded_in_two_turns(&called);
    assert_eq!(results, vec!["first met", "second met"]);
}

#[tokio::test]
async fn undeclared_tool_is_answered_as_an_error_and_never_executed() {
    let counter = Arc::new(Counter::default());
    // `add` is registered by the host but the skill declares only `other`.
    let other = tool_fn("other", "x", json!({"type": "object"}), |_, _| async {
        Ok(ToolOutput::text("other"))
    });
    let (called, results) = run_calc(
        &["other"],
        tools_with(vec![add_tool(counter.clone()), other]),
        r#"[{ name: add, arguments: { a: 1, b: 1 } }]"#,
        Limits::default(),
    )
    .await;
    assert_succeeded_in_two_turns(&called);
    assert_eq!(counter.get(), 0, "an undeclared tool never runs");
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("unknown tool `add`") && results[0].contains("only other"),
        "{results:?}"
    );
}

#[tokio::test]
async fn invalid_tool_arguments_are_answered_with_every_problem_and_the_tool_does_not_run() {
    let counter = Arc::new(Counter::default());
    let (called, results) = run_calc(
        &["add"],
        tools_with(vec![add_tool(counter.clone())]),
        r#"[{ name: add, arguments: { a: "two" } }, { name: add, arguments: "{not json" }]"#,
        Limits::default(),
    )
    .await;
    assert_succeeded_in_two_turns(&called);
    assert_eq!(counter.get(), 0);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].contains("2 problems"), "{results:?}");
    assert!(results[0].contains("/a"), "{results:?}");
    assert!(results[0].contains("\"b\""), "{results:?}");
    assert!(results[1].contains("not valid JSON"), "{results:?}");
}

#[tokio::test]
async fn failing_tool_is_answered_as_an_error_and_the_run_goes_on() {
    let failing = tool_fn("fetch", "x", json!({"type": "object"}), |_, _| async {
        Err::<ToolOutput, _>(ToolError::Failed("disk full".into()))
    });
    let flagged = tool_fn("check", "x", json!({"type": "object"}), |_, _| async {
        Ok(ToolOutput::error("not found"))
    });
    let (called, results) = run_calc(
        &["fetch", "check"],
        tools_with(vec![failing, flagged]),
        r#"[{ name: fetch, arguments: {} }, { name: check, arguments: {} }]"#,
        Limits::default(),
    )
    .await;
    assert_succeeded_in_two_turns(&called);
    assert_eq!(results.len(), 2);
    assert!(
        results[0].starts_with("Error:") && results[0].contains("disk full"),
        "{results:?}"
    );
    assert!(
        results[1].starts_with("Error:") && results[1].contains("not found"),
        "{results:?}"
    );
    let logs = messages_of(called.result(), EventKind::Log);
    assert!(
        logs.iter().any(|l| l.starts_with("tool error fetch")),
        "{logs:?}"
    );
}

#[tokio::test]
async fn panicking_tool_becomes_a_tool_error_in_its_own_task_and_inline() {
    let body = |_: Value, _: ToolContext| async {
        if true {
            panic!("tool bug");
        }
        Ok(ToolOutput::text("unreachable"))
    };
    for (panicking, inline) in [
        (tool_fn("boom", "x", json!({"type": "object"}), body), false),
        (
            inline_tool_fn("boom", "x", json!({"type": "object"}), body),
            true,
        ),
    ] {
        assert_eq!(panicking.runs_inline(), inline);
        let (called, results) = run_calc(
            &["boom"],
            tools_with(vec![panicking]),
            r#"[{ name: boom, arguments: {} }]"#,
            Limits::default(),
        )
        .await;
        assert_succeeded_in_two_turns(&called);
        assert!(results[0].contains("tool `boom` panicked"), "{results:?}");
    }
}

#[tokio::test]
async fn an_inline_tool_runs_on_the_calls_own_task_and_is_still_bounded_by_its_timeout() {
    let seen: Arc<Mutex<Option<CancellationToken>>> = Arc::default();
    let slot = seen.clone();
    let slow = inline_tool_fn("slow", "x", json!({"type": "object"}), move |_, ctx| {
        *slot.lock().unwrap() = Some(ctx.cancel.clone());
        async move {
            tokio::time::sleep(Duration::from_secs(600)).await;
            Ok(ToolOutput::text("late"))
        }
    });
    assert!(slow.runs_inline());
    let limits = Limits {
        tool_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let (called, results) = run_calc(
        &["slow"],
        tools_with(vec![slow]),
        r#"[{ name: slow, arguments: {} }]"#,
        limits,
    )
    .await;
    assert_succeeded_in_two_turns(&called);
    assert!(results[0].contains("did not finish within"), "{results:?}");
    let token = seen.lock().unwrap().clone().expect("the tool ran");
    assert!(token.is_cancelled(), "the timed-out tool's token fired");
}

#[tokio::test]
async fn tool_past_its_timeout_is_cancelled_and_answered_as_an_error() {
    let seen: Arc<Mutex<Option<CancellationToken>>> = Arc::default();
    let slot = seen.clone();
    let slow = tool_fn("slow", "x", json!({"type": "object"}), move |_, ctx| {
        *slot.lock().unwrap() = Some(ctx.cancel.clone());
        async move {
            tokio::time::sleep(Duration::from_secs(600)).await;
            Ok(ToolOutput::text("late"))
        }
    });
    let limits = Limits {
        tool_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let (called, results) = run_calc(
        &["slow"],
        tools_with(vec![slow]),
        r#"[{ name: slow, arguments: {} }]"#,
        limits,
    )
    .await;
    assert_succeeded_in_two_turns(&called);
    assert!(
        results[0].contains("did not finish within its 0.2s timeout"),
        "{results:?}"
    );
    let token = seen.lock().unwrap().clone().expect("the tool ran");
    assert!(
        token.is_cancelled(),
        "the tool's token fired at its timeout"
    );
}

#[tokio::test]
async fn oversized_tool_output_is_cut_with_a_marker() {
    let big = tool_fn("dump", "x", json!({"type": "object"}), |_, _| async {
        Ok(ToolOutput::text("x".repeat(10_000)))
    });
    let limits = Limits {
        max_tool_output_bytes: 100,
        ..Limits::default()
    };
    let (called, results) = run_calc(
        &["dump"],
        tools_with(vec![big]),
        r#"[{ name: dump, arguments: {} }]"#,
        limits,
    )
    .await;
    assert_succeeded_in_two_turns(&called);
    assert!(results[0].starts_with(&"x".repeat(100)), "{results:?}");
    assert!(
        results[0].ends_with("[output truncated: 100 of 10000 bytes shown]"),
        "{results:?}"
    );
}

/// Runs `calc` against a model that calls `add(1, 1)` on every turn — and answers
/// `{"result": 2}` once told it repeats itself, when `answers_when_told` — under a tool-loop
/// threshold of 3. Returns the result, the chat bodies sent and how often `add` ran.
async fn call_repeating(answers_when_told: bool) -> (Called, Vec<Value>, usize) {
    let counter = Arc::new(Counter::default());
    let dir = calc_skill(&["add"]);
    let told = if answers_when_told {
        r#"
  - name: answer-when-told
    when: { tool_result_contains: "Do not call tools again" }
    reply: { json: { result: 2 } }"#
    } else {
        ""
    };
    let server = start_mock(&format!(
        "rules:{told}\n  - name: loop\n    reply:\n      tool_calls: [{{ name: add, arguments: {{ a: 1, b: 1 }} }}]\n"
    ))
    .await;
    let h = harness(
        registry([dir.skill.clone()]),
        tools_with(vec![add_tool(counter.clone())]),
        Some(llm_config(&server)),
        Limits {
            tool_loop_threshold: 3,
            ..Limits::default()
        },
    );
    let called = h.call(request("calc", json!({}))).await;
    let bodies = chat_bodies(&server);
    server.shutdown().await;
    (called, bodies, counter.get())
}

/// A model that repeats a call is told once, while a turn remains: the repeated call is not
/// run, its result says to answer now, and only the answer may come next (a grammar server
/// enforces the schema, prompted tools offer no call). One that still repeats it is stopped
/// as a tool loop.
#[tokio::test]
async fn the_same_call_repeated_is_told_to_answer_and_then_stopped_as_a_tool_loop() {
    let (called, bodies, ran) = call_repeating(false).await;
    let result = called.result();
    assert!(!result.success);
    assert_eq!(result.error_code, Some(ErrorCode::SkillError));
    let error = result.error.as_deref().unwrap();
    assert!(
        error.starts_with("tool loop: `add` was called 4 times"),
        "{error}"
    );
    assert_eq!(ran, 2, "neither repeat past the threshold is run");
    assert_eq!(result.data.as_ref().unwrap()["turns_used"], json!(4));
    assert_eq!(bodies.len(), 4);
    let told = tool_results_in(&bodies[3]);
    assert!(
        told.last()
            .unwrap()
            .contains("Not run: `add` was called 3 times in a row"),
        "{told:?}"
    );
}

#[tokio::test]
async fn a_model_told_it_repeats_a_call_can_still_answer() {
    let (called, bodies, ran) = call_repeating(true).await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    assert_eq!(result.data.as_ref().unwrap(), &json!({"result": 2}));
    assert_eq!(ran, 2);
    assert_eq!(bodies.len(), 4);
}

#[tokio::test]
async fn only_declared_tools_are_offered_with_provider_safe_names() {
    let dotted = tool_fn(
        "fs.read",
        "reads",
        json!({"type": "object"}),
        |_, _| async { Ok(ToolOutput::text("content")) },
    );
    let counter = Arc::new(Counter::default());
    let (called, bodies) = run_calc_bodies(
        &["fs.read"],
        tools_with(vec![dotted, add_tool(counter)]),
        r#"[{ name: fs_read, arguments: {} }]"#,
        Limits::default(),
    )
    .await;
    assert_succeeded_in_two_turns(&called);
    let offered: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        offered,
        vec!["fs_read"],
        "only the declared tool, with a provider-safe name"
    );
    assert_eq!(tool_results_in(&bodies[1]), vec!["content"]);
}

#[tokio::test]
async fn tool_round_trip_works_through_every_provider_api() {
    for provider in ["openai-compatible", "ollama", "anthropic"] {
        let counter = Arc::new(Counter::default());
        let dir = calc_skill(&["add"]);
        let server = start_mock(&scenario(r#"[{ name: add, arguments: { a: 2, b: 3 } }]"#)).await;
        let h = harness(
            registry([dir.skill.clone()]),
            tools_with(vec![add_tool(counter.clone())]),
            Some(llm_config_for(&server, provider, MODEL)),
            Limits::default(),
        );
        let called = h.call(request("calc", json!({}))).await;
        assert_succeeded_in_two_turns(&called);
        assert_eq!(counter.get(), 1, "{provider}");
        let statuses = messages_of(called.result(), EventKind::Status);
        assert_eq!(statuses[0], format!("turn 1/6 · {provider}/{MODEL}"));
        let second = &chat_bodies(&server)[1];
        assert!(
            second.to_string().contains(r#"{\"sum\":5}"#),
            "{provider}: {second}"
        );
        server.shutdown().await;
    }
}

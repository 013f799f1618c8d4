//! Limits and failures of the run loop against mock-llm over real sockets: the one deadline
//! hit during a provider call and during a tool (a `timeout` result with the events so far),
//! host cancellation, a 429 retried (visible in the events), and provider failures mapped to
//! A2E codes by kind.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mock_llm::Fault;
use serde_json::json;
use skillet_engine::protocol::{ErrorCode, EventKind, EventPayload};
use skillet_engine::run::Limits;
use skillet_engine::tools::{ToolOutput, ToolRegistry, tool_fn};
use support::*;
use tokio_util::sync::CancellationToken;

const SLOW_MODEL: &str = r#"
rules:
  - name: slow
    timing: { latency_ms: 60000 }
    reply: { text: "too late" }
"#;

#[tokio::test]
async fn deadline_during_a_provider_call_is_a_timeout_with_the_events_so_far() {
    let dir = SkillSpec::new("patient", "Wait.").write();
    let server = start_mock(SLOW_MODEL).await;
    let h = harness(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let mut req = request("patient", json!({}));
    req.timeout = 1;
    let called = h.call(req).await;
    let result = called.result();
    assert!(!result.success);
    assert_eq!(result.error_code, Some(ErrorCode::Timeout));
    let error = result.error.as_deref().unwrap();
    assert!(error.contains("deadline of 1.0s"), "{error}");
    assert!(
        error.contains("waiting for the provider in turn 1"),
        "{error}"
    );
    assert_eq!(
        messages_of(result, EventKind::Status),
        vec![format!("turn 1/8 · openai-compatible/{MODEL}")],
        "the events so far are kept"
    );
    assert!(result.duration_ms >= 1000, "{}", result.duration_ms);
}

#[tokio::test]
async fn skill_timeout_seconds_bounds_a_longer_request_timeout() {
    let dir = SkillSpec::new("quick", "Be quick.")
        .meta("a2e-timeout-seconds", "1")
        .write();
    let server = start_mock(SLOW_MODEL).await;
    let h = harness(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let mut req = request("quick", json!({}));
    req.timeout = 600;
    let called = h.call(req).await;
    assert_eq!(called.result().error_code, Some(ErrorCode::Timeout));
}

#[tokio::test]
async fn deadline_during_a_tool_is_a_timeout_and_cancels_the_tool() {
    let dir = SkillSpec::new("tooling", "Use the tool.")
        .tools(&["forever"])
        .write();
    let server = start_mock(
        r#"
rules:
  - when: { turn: 1 }
    reply: { tool_calls: [{ name: forever, arguments: {} }] }
"#,
    )
    .await;
    let seen: Arc<Mutex<Option<CancellationToken>>> = Arc::default();
    let slot = seen.clone();
    let mut tools = ToolRegistry::new();
    tools
        .register_tool(tool_fn(
            "forever",
            "never ends",
            json!({"type": "object"}),
            move |_, ctx| {
                *slot.lock().unwrap() = Some(ctx.cancel.clone());
                async move {
                    tokio::time::sleep(Duration::from_secs(600)).await;
                    Ok(ToolOutput::text("done"))
                }
            },
        ))
        .unwrap();
    let h = harness(
        registry([dir.skill.clone()]),
        tools,
        Some(llm_config(&server)),
        Limits {
            tool_timeout: Duration::from_secs(300),
            ..Limits::default()
        },
    );
    let mut req = request("tooling", json!({}));
    req.timeout = 1;
    let called = h.call(req).await;
    let result = called.result();
    assert_eq!(result.error_code, Some(ErrorCode::Timeout));
    let error = result.error.as_deref().unwrap();
    assert!(error.contains("running tools in turn 1"), "{error}");
    let logs = messages_of(result, EventKind::Log);
    assert!(
        logs.iter().any(|l| l.starts_with("tool call forever")),
        "{logs:?}"
    );
    let token = seen.lock().unwrap().clone().expect("the tool started");
    assert!(
        token.is_cancelled(),
        "the tool's token fired when the call timed out"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn host_cancellation_stops_the_call_in_flight() {
    let dir = SkillSpec::new("cancellable", "Wait.").write();
    let server = start_mock(SLOW_MODEL).await;
    let h = harness(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let live = Arc::new(LiveEvents::default());
    let cancel = CancellationToken::new();
    let call = tokio::spawn({
        let (h, live, cancel) = (h.clone(), live.clone(), cancel.clone());
        async move {
            h.call_with(request("cancellable", json!({})), live, cancel)
                .await
        }
    });
    // Cancel once the first turn has started (the provider request is under way).
    live.wait_for(|e| e.kind() == EventKind::Status).await;
    cancel.cancel();
    let called = call.await.unwrap();
    let result = called.result();
    assert!(!result.success);
    assert_eq!(result.error_code, Some(ErrorCode::RuntimeError));
    let error = result.error.as_deref().unwrap();
    assert!(error.starts_with("cancelled by the host"), "{error}");
}

#[tokio::test]
async fn rate_limit_then_success_shows_the_retry_in_the_events() {
    let scenario =
        std::fs::read_to_string(bundled_dir("summarize").join("mock-scenario.yaml")).unwrap();
    let server = start_mock(&scenario).await;
    server.push_fault(Fault::rate_limited(0).times(1));
    let h = harness(
        registry([bundled_skill("summarize")]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    let called = h
        .call(request("summarize", json!({"text": "Some text."})))
        .await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    let retries: Vec<(String, String)> = result
        .events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::Log { level, message } if message.contains("retrying") => {
                Some((level.as_str().to_owned(), message.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert_eq!(retries[0].0, "warn");
    assert!(retries[0].1.contains("HTTP 429"), "{retries:?}");
    assert_eq!(server.journal().len(), 2, "one failed attempt, one success");
    server.shutdown().await;
}

#[tokio::test]
async fn provider_errors_map_to_codes_by_kind() {
    let dir = SkillSpec::new("fragile", "Answer.").write();
    let server = start_mock(r#"rules: [{ reply: { text: "fine" } }]"#).await;
    let h = harness(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(llm_config(&server)),
        Limits::default(),
    );
    // Transient and still failing after every retry: skill_error (retryable per the seed).
    server.push_fault(Fault::status(503).times(3));
    let called = h.call(request("fragile", json!({}))).await;
    let result = called.result();
    assert_eq!(result.error_code, Some(ErrorCode::SkillError), "{result:?}");
    assert!(result.error.as_deref().unwrap().contains("unavailable"));
    // A refused credential: runtime_error, not retried.
    let before = server.journal().len();
    server.push_fault(Fault::status(401).times(1));
    let called = h.call(request("fragile", json!({}))).await;
    let result = called.result();
    assert_eq!(
        result.error_code,
        Some(ErrorCode::RuntimeError),
        "{result:?}"
    );
    assert!(result.error.as_deref().unwrap().contains("auth"));
    assert_eq!(
        server.journal().len(),
        before + 1,
        "auth failures are not retried"
    );
    // And the next call is fine again.
    let called = h.call(request("fragile", json!({}))).await;
    assert!(called.result().success);
    server.shutdown().await;
}

//! What a run may spend, against mock-llm over real sockets: the cost cap fails closed (an
//! unpriced model is refused before anything is sent; a priced run stops at the turn that
//! crosses the cap, the skill's cap when it is the smaller), a tool over its per-run call limit
//! is answered with a tool error and not run, and a provider's requests-per-minute limit whose
//! wait would cross the deadline ends the call as a timeout naming the limit.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};
use skillet_engine::protocol::{ErrorCode, EventKind};
use skillet_engine::run::Limits;
use skillet_engine::telemetry::Pricing;
use skillet_engine::tools::{ToolOutput, ToolRegistry, tool_fn};
use support::*;

/// A model that calls `lookup` every turn, reporting 600 + 100 tokens.
const ALWAYS_LOOKUP: &str = r#"
rules:
  - reply:
      tool_calls: [{ name: lookup, arguments: {} }]
      usage: { input: 600, output: 100 }
"#;

/// Each turn of [`ALWAYS_LOOKUP`] costs 0.7 USD at this price.
fn pricing() -> Pricing {
    toml::from_str(&format!(
        "[\"{MODEL}\"]\ninput_per_million = 1000.0\noutput_per_million = 1000.0\n"
    ))
    .unwrap()
}

/// `lookup`, counting how often it really ran.
fn lookup_tools(runs: &Arc<AtomicU32>) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    let runs = Arc::clone(runs);
    tools
        .register_tool(tool_fn(
            "lookup",
            "x",
            json!({"type": "object"}),
            move |_, _| {
                runs.fetch_add(1, Ordering::SeqCst);
                async { Ok(ToolOutput::text("found")) }
            },
        ))
        .unwrap();
    tools
}

fn limits() -> Limits {
    Limits {
        tool_loop_threshold: 0,
        ..Limits::default()
    }
}

#[tokio::test]
async fn a_cost_cap_with_an_unpriced_model_is_refused_before_anything_is_sent() {
    let dir = SkillSpec::new("spender", "Spend.")
        .tools(&["lookup"])
        .write();
    let server = start_mock(ALWAYS_LOOKUP).await;
    let runs = Arc::new(AtomicU32::new(0));
    let h = harness(
        registry([dir.skill.clone()]),
        lookup_tools(&runs),
        Some(llm_config(&server)),
        Limits {
            max_cost_usd: Some(1.0),
            ..limits()
        },
    );
    let called = h.call(request("spender", json!({}))).await;
    let error = called.response.error.as_ref().expect("refused");
    assert_eq!(error.code, ErrorCode::RuntimeError);
    assert!(!error.retryable);
    assert!(error.message.contains("has no price"), "{}", error.message);
    assert!(error.message.contains(MODEL), "{}", error.message);
    assert!(chat_bodies(&server).is_empty(), "nothing was sent");
    server.shutdown().await;
}

#[tokio::test]
async fn a_priced_run_stops_at_the_turn_that_crosses_the_cap() {
    let dir = SkillSpec::new("spender", "Spend.")
        .tools(&["lookup"])
        .write();
    let server = start_mock(ALWAYS_LOOKUP).await;
    let runs = Arc::new(AtomicU32::new(0));
    let h = harness_with(
        registry([dir.skill.clone()]),
        lookup_tools(&runs),
        Some(llm_config(&server)),
        Limits {
            max_cost_usd: Some(1.0),
            ..limits()
        },
        |b| b.pricing(pricing()),
    );
    let called = h.call(request("spender", json!({}))).await;
    let result = called.result();
    assert_eq!(result.error_code, Some(ErrorCode::SkillError));
    let error = result.error.as_deref().unwrap();
    assert!(error.contains("cost cap of 1 USD"), "{error}");
    assert!(
        error.contains("after 2 turns (1.400000 USD spent)"),
        "{error}"
    );
    assert_eq!(
        chat_bodies(&server).len(),
        2,
        "the third request is never sent"
    );
    let cost = result.usage.as_ref().unwrap().cost.as_ref().unwrap();
    assert!((cost.amount - 1.4).abs() < 1e-9, "{cost:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn the_skills_smaller_cap_applies() {
    let dir = SkillSpec::new("frugal", "Spend little.")
        .tools(&["lookup"])
        .meta("a2e-max-cost-usd", "0.5")
        .write();
    let server = start_mock(ALWAYS_LOOKUP).await;
    let runs = Arc::new(AtomicU32::new(0));
    let h = harness_with(
        registry([dir.skill.clone()]),
        lookup_tools(&runs),
        Some(llm_config(&server)),
        Limits {
            max_cost_usd: Some(10.0),
            ..limits()
        },
        |b| b.pricing(pricing()),
    );
    let called = h.call(request("frugal", json!({}))).await;
    let error = called.result().error.as_deref().unwrap();
    assert!(error.contains("cost cap of 0.5 USD"), "{error}");
    assert!(error.contains("a2e-max-cost-usd"), "{error}");
    assert_eq!(chat_bodies(&server).len(), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn a_tool_over_its_call_limit_is_answered_with_a_tool_error_and_not_run() {
    let dir = SkillSpec::new("searcher", "Search.")
        .tools(&["lookup"])
        .max_turns(3)
        .write();
    let server = start_mock(ALWAYS_LOOKUP).await;
    let runs = Arc::new(AtomicU32::new(0));
    let h = harness(
        registry([dir.skill.clone()]),
        lookup_tools(&runs),
        Some(llm_config(&server)),
        Limits {
            max_tool_calls: [("lookup".to_owned(), 1)].into_iter().collect(),
            ..limits()
        },
    );
    let called = h.call(request("searcher", json!({}))).await;
    let result = called.result();
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the tool ran once only");
    let bodies = chat_bodies(&server);
    assert_eq!(bodies.len(), 3);
    let tool_messages = |body: &Value| -> Vec<String> {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let last = tool_messages(&bodies[2]);
    assert_eq!(last.len(), 2, "{last:?}");
    assert_eq!(last[0], "found");
    assert!(
        last[1].contains("may be called at most 1 time per run"),
        "{last:?}"
    );
    let warnings = messages_of(result, EventKind::Log);
    assert!(
        warnings
            .iter()
            .any(|l| l.starts_with("tool error lookup") && l.contains("at most 1 time")),
        "{warnings:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_rate_limit_wait_past_the_deadline_is_a_timeout_naming_the_limit() {
    let dir = SkillSpec::new("busy", "Work.").tools(&["lookup"]).write();
    let server = start_mock(ALWAYS_LOOKUP).await;
    let runs = Arc::new(AtomicU32::new(0));
    let mut config = llm_config(&server);
    config
        .provider_config
        .as_mut()
        .unwrap()
        .insert("requests_per_minute".into(), json!(1));
    let h = harness(
        registry([dir.skill.clone()]),
        lookup_tools(&runs),
        Some(config),
        limits(),
    );
    let mut req = request("busy", json!({}));
    req.timeout = 30;
    let called = h.call(req).await;
    let result = called.result();
    assert_eq!(result.error_code, Some(ErrorCode::Timeout));
    let error = result.error.as_deref().unwrap();
    assert!(error.contains("requests_per_minute = 1"), "{error}");
    assert_eq!(
        chat_bodies(&server).len(),
        1,
        "the second request waits, never sent"
    );
    server.shutdown().await;
}

//! Cached-input and reasoning tokens from the provider APIs to every place usage is shown: a
//! real mock-llm reports them in each API's own fields (OpenAI `prompt_tokens_details` /
//! `completion_tokens_details`, Anthropic `cache_read_input_tokens`), the real
//! `skillet serve --http` runs the 3-turn tally skill, and the test reads them back from the
//! `SkillResult.usage`, the exported `chat`/`invoke_agent` spans (a real OTLP/HTTP receiver
//! decoding the official protobuf) and `GET /metrics`.

use crate::telemetry_support;

use serde_json::{Value, json};

use telemetry_support::*;

/// (cached input, reasoning) tokens mock-llm reports per turn.
const BREAKDOWN: [(i64, i64); 3] = [(40, 5), (80, 10), (120, 15)];

/// Cache writes mock-llm reports per turn where the API has the field (Anthropic).
const CACHE_WRITES: [i64; 3] = [30, 20, 10];

/// The `usage` extras of each scenario turn; `reasoning` on OpenAI, cache writes on Anthropic
/// (each only where the API has the field).
fn usage_extras(with_reasoning: bool) -> [String; 3] {
    let mut turn = 0;
    BREAKDOWN.map(|(cached, reasoning)| {
        turn += 1;
        if with_reasoning {
            format!(", cached: {cached}, reasoning: {reasoning}")
        } else {
            format!(
                ", cached: {cached}, cache_write: {}",
                CACHE_WRITES[turn - 1]
            )
        }
    })
}

/// Runs one tally call through `kind` and checks the result, spans and metrics.
async fn breakdown_reaches_result_spans_and_metrics(kind: &str, reports_reasoning: bool) {
    let (otlp, received) = start_collector().await;
    let extras = usage_extras(reports_reasoning);
    let scenario = scenario_with_usage([&extras[0], &extras[1], &extras[2]].map(String::as_str));
    let server = serve_with_provider(&otlp, kind, scenario, "").await;
    let trace = "7bf92f3577b34da6a3ce929d0e0e4739";
    let metadata = json!({"traceparent": format!("00-{trace}-00f067aa0ba902b7-01")});
    let response = post_call(&server.base, tally_call("u1", metadata), None).await;
    let usage = &response["data"]["usage"];
    assert_eq!(response["data"]["success"], true, "{response}");

    let cached_total: i64 = BREAKDOWN.iter().map(|b| b.0).sum();
    let reasoning_total: i64 = BREAKDOWN.iter().map(|b| b.1).sum();
    // Cached tokens are part of the input tokens on every API (Anthropic counts them apart;
    // the provider adds them back).
    assert_eq!(usage["input_tokens"], 606, "{usage}");
    assert_eq!(usage["cached_input_tokens"], cached_total, "{usage}");
    let expected_reasoning = if reports_reasoning {
        json!(reasoning_total)
    } else {
        Value::Null
    };
    assert_eq!(usage["reasoning_tokens"], expected_reasoning, "{usage}");
    let writes_total: i64 = CACHE_WRITES.iter().sum();
    let expected_writes = if reports_reasoning {
        Value::Null
    } else {
        json!(writes_total)
    };
    assert_eq!(
        usage["cache_creation_input_tokens"], expected_writes,
        "{usage}"
    );
    let turns = usage["turns"].as_array().unwrap();
    for (turn, (cached, reasoning)) in turns.iter().zip(BREAKDOWN) {
        assert_eq!(turn["cached_input_tokens"], cached, "{turn}");
        let expected = if reports_reasoning {
            json!(reasoning)
        } else {
            Value::Null
        };
        assert_eq!(turn["reasoning_tokens"], expected, "{turn}");
    }

    let spans = wait_for_spans(&received, trace, 6).await;
    let mut chats: Vec<_> = spans
        .iter()
        .filter(|s| s.name.starts_with("chat "))
        .collect();
    chats.sort_by_key(|s| int_attr(s, "skillet.turn"));
    assert_eq!(chats.len(), 3);
    for (chat, (cached, reasoning)) in chats.iter().zip(BREAKDOWN) {
        assert_eq!(
            int_attr(chat, "gen_ai.usage.cache_read.input_tokens"),
            cached
        );
        if reports_reasoning {
            assert_eq!(
                int_attr(chat, "gen_ai.usage.reasoning.output_tokens"),
                reasoning
            );
        } else {
            assert!(attr(&chat.attributes, "gen_ai.usage.reasoning.output_tokens").is_none());
        }
    }
    let agent = spans
        .iter()
        .find(|s| s.name == "invoke_agent tally")
        .unwrap();
    assert_eq!(
        int_attr(agent, "gen_ai.usage.cache_read.input_tokens"),
        cached_total
    );
    if !reports_reasoning {
        assert_eq!(
            int_attr(agent, "gen_ai.usage.cache_creation.input_tokens"),
            writes_total
        );
    }

    let metrics = metrics_text(&server.base).await;
    let line = format!(
        r#"skillet_tokens_total{{model="{MODEL}",direction="cached_input"}} {cached_total}"#
    );
    assert!(metrics.lines().any(|l| l == line), "{line} in {metrics}");
    let writes_line = format!(
        r#"skillet_tokens_total{{model="{MODEL}",direction="cache_creation_input"}} {writes_total}"#
    );
    assert_eq!(
        metrics.lines().any(|l| l == writes_line),
        !reports_reasoning,
        "{metrics}"
    );
    let reasoning_line = format!(
        r#"skillet_tokens_total{{model="{MODEL}",direction="reasoning"}} {reasoning_total}"#
    );
    assert_eq!(
        metrics.lines().any(|l| l == reasoning_line),
        reports_reasoning,
        "{metrics}"
    );
}

#[tokio::test]
async fn openai_cached_and_reasoning_tokens_reach_the_result_spans_and_metrics() {
    breakdown_reaches_result_spans_and_metrics("openai", true).await;
}

#[tokio::test]
async fn anthropic_cache_reads_reach_the_result_spans_and_metrics() {
    breakdown_reaches_result_spans_and_metrics("anthropic", false).await;
}

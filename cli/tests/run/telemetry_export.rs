//! Telemetry of the real `skillet serve --http` binary, seen from outside: a real OTLP/HTTP
//! receiver on 127.0.0.1 decodes the exported protobuf with the official OpenTelemetry proto
//! definitions (`opentelemetry-proto`), a real mock-llm answers a 3-turn skill with two tool
//! calls, and `GET /metrics` is parsed with the official Python Prometheus client's OpenMetrics
//! parser (`$SKILLET_PYTHON`; without one the metrics check fails under `CI` and is skipped
//! loudly otherwise).
//!
//! Checked: the span tree (one `invoke_agent`, three `chat`, two `execute_tool`, parents), the
//! GenAI attributes, token counts equal to what mock-llm reported, a caller's `traceparent`
//! (header and A2E `metadata`) honoured, the resource from `OTEL_*` variables, no credential
//! and no message content anywhere in the export, usage and cost in the result, metrics that
//! match the calls made — and, with the collector down, calls that still succeed while the lost
//! spans are counted.

use crate::telemetry_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::{Span, span, status};
use serde_json::json;

use telemetry_support::*;
const HEADER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const HEADER_PARENT: &str = "00f067aa0ba902b7";
const META_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const META_PARENT: &str = "b7ad6b7169203331";

/// Asserts the tree and attributes of one tally call's trace; returns the tool call ids.
fn assert_tally_trace(spans: &[Span], parent: &str) {
    let named = |prefix: &str| -> Vec<&Span> {
        spans
            .iter()
            .filter(|s| s.name.starts_with(prefix))
            .collect()
    };
    let agents = named("invoke_agent");
    assert_eq!(agents.len(), 1, "one invoke_agent span");
    let agent = agents[0];
    assert_eq!(agent.name, "invoke_agent tally");
    assert_eq!(
        hex(&agent.parent_span_id),
        parent,
        "the caller's span is the parent"
    );
    assert_eq!(agent.kind, span::SpanKind::Internal as i32);
    assert_eq!(str_attr(agent, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(str_attr(agent, "gen_ai.agent.name"), "tally");
    assert_eq!(str_attr(agent, "gen_ai.provider.name"), "openai-compatible");
    assert_eq!(str_attr(agent, "gen_ai.request.model"), MODEL);
    let (input, output): (i64, i64) = (
        TURN_TOKENS.iter().map(|t| t.0).sum(),
        TURN_TOKENS.iter().map(|t| t.1).sum(),
    );
    assert_eq!(int_attr(agent, "gen_ai.usage.input_tokens"), input);
    assert_eq!(int_attr(agent, "gen_ai.usage.output_tokens"), output);
    assert_eq!(str_attr(agent, "skillet.outcome"), "success");
    assert_ne!(status_code(agent), status::StatusCode::Error as i32);

    let mut chats = named("chat ");
    assert_eq!(chats.len(), 3, "three chat spans");
    chats.sort_by_key(|s| int_attr(s, "skillet.turn"));
    let finish = [["tool_calls"], ["tool_calls"], ["stop"]];
    for ((chat, (input, output)), finish) in chats.iter().zip(TURN_TOKENS).zip(finish) {
        assert_eq!(chat.name, format!("chat {MODEL}"));
        assert_eq!(
            chat.parent_span_id, agent.span_id,
            "chat under invoke_agent"
        );
        assert_eq!(chat.kind, span::SpanKind::Client as i32);
        assert_eq!(str_attr(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(str_attr(chat, "gen_ai.provider.name"), "openai-compatible");
        assert_eq!(str_attr(chat, "gen_ai.request.model"), MODEL);
        assert_eq!(str_attr(chat, "gen_ai.response.model"), MODEL);
        assert!(!str_attr(chat, "gen_ai.response.id").is_empty());
        assert_eq!(
            string_array_attr(chat, "gen_ai.response.finish_reasons"),
            finish
        );
        assert_eq!(int_attr(chat, "gen_ai.usage.input_tokens"), input);
        assert_eq!(int_attr(chat, "gen_ai.usage.output_tokens"), output);
    }

    let mut tools = named("execute_tool");
    assert_eq!(tools.len(), 2, "two execute_tool spans");
    tools.sort_by_key(|s| int_attr(s, "skillet.turn"));
    for tool in &tools {
        assert_eq!(tool.name, "execute_tool calculator");
        assert_eq!(
            tool.parent_span_id, agent.span_id,
            "tool under invoke_agent"
        );
        assert_eq!(str_attr(tool, "gen_ai.operation.name"), "execute_tool");
        assert_eq!(str_attr(tool, "gen_ai.tool.name"), "calculator");
        assert!(!str_attr(tool, "gen_ai.tool.call.id").is_empty());
        assert!(attr(&tool.attributes, "gen_ai.tool.call.arguments").is_none());
        assert!(attr(&tool.attributes, "gen_ai.tool.call.result").is_none());
    }
    assert_ne!(
        str_attr(tools[0], "gen_ai.tool.call.id"),
        str_attr(tools[1], "gen_ai.tool.call.id")
    );
    assert_ne!(status_code(tools[0]), status::StatusCode::Error as i32);
    assert!(attr(&tools[0].attributes, "error.type").is_none());
    assert_eq!(status_code(tools[1]), status::StatusCode::Error as i32);
    // The calculator's schema admits only arithmetic, so the bad expression is rejected before
    // the tool runs.
    assert_eq!(str_attr(tools[1], "error.type"), "rejected");
}

// ---------------------------------------------------------------- metrics via Python

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SKILLET_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
    venv.exists().then_some(venv)
}

const PARSE_METRICS: &str = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
samples = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        key = s.name + "{" + ",".join(f"{k}={v}" for k, v in sorted(s.labels.items())) + "}"
        samples[key] = s.value
print(json.dumps(samples))
"#;

/// `/metrics` parsed by the official Python parser: `name{k=v,...}` (labels sorted) → value.
fn parse_metrics(text: &str) -> Option<HashMap<String, f64>> {
    let Some(python) = python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but no Python found: set SKILLET_PYTHON (see .ci/run)"
        );
        eprintln!(
            "\n==== SKIPPED the /metrics parse: no $SKILLET_PYTHON and no .venv ====\n\
             ==== python3 -m venv .venv && .venv/bin/pip install -r mock-llm/tests/python/requirements.txt ====\n"
        );
        return None;
    };
    let mut child = std::process::Command::new(python)
        .args(["-c", PARSE_METRICS])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "the parser accepted /metrics");
    Some(serde_json::from_slice(&output.stdout).unwrap())
}

/// Calls the tally skill as an MCP tool with the official Python SDK over streamable HTTP,
/// `_meta` = {traceparent, tracestate}; prints whether the result was an error.
const MCP_CALL_WITH_META: &str = r#"
import sys, anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
url, traceparent, tracestate, text = sys.argv[1:5]
async def main():
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            result = await session.call_tool("tally", {"text": text},
                meta={"traceparent": traceparent, "tracestate": tracestate})
            print("is_error" if result.is_error else "ok", flush=True)
anyio.run(main)
"#;

/// A Python that can `import {modules}`, or `None` (a loud skip) outside `CI`.
fn python_with(modules: &str) -> Option<PathBuf> {
    let python = python().filter(|p| {
        std::process::Command::new(p)
            .args(["-c", &format!("import {modules}")])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    if python.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but no Python with `{modules}`: set SKILLET_PYTHON (see .ci/run)"
        );
        eprintln!(
            "\n==== SKIPPED: no Python with `{modules}` \
             (pip install -r mock-llm/tests/python/requirements.txt) ====\n"
        );
    }
    python
}

// ---------------------------------------------------------------- tests

#[tokio::test]
async fn serve_exports_genai_spans_over_otlp_and_metrics_match_the_calls() {
    let (otlp, received) = start_collector().await;
    let server = serve_with_telemetry(&otlp, "").await;

    // One provider failure, retried inside the first chat span.
    server.mock.push_fault(mock_llm::Fault::status(503));
    // A caller's trace continues into Skillet: over the HTTP header...
    let via_header = post_call(
        &server.base,
        tally_call("c1", json!({})),
        Some(format!("00-{HEADER_TRACE}-{HEADER_PARENT}-01")),
    )
    .await;
    // ... and in the A2E call's metadata.
    let via_metadata = post_call(
        &server.base,
        tally_call(
            "c2",
            json!({"traceparent": format!("00-{META_TRACE}-{META_PARENT}-01")}),
        ),
        None,
    )
    .await;
    // A rejected call: its span is an error; its metric label is not the caller's text.
    let unknown = post_call(
        &server.base,
        json!({"type": "skill/call/req", "id": "u1", "name": "no-such-skill-xyz"}),
        None,
    )
    .await;
    assert_eq!(unknown["error"]["code"], "unknown_skill");

    for response in [&via_header, &via_metadata] {
        let result = &response["data"];
        assert_eq!(result["success"], true, "{response}");
        let usage = &result["usage"];
        assert_eq!(usage["input_tokens"], 606, "{usage}");
        assert_eq!(usage["output_tokens"], 66);
        let turns = usage["turns"].as_array().unwrap();
        assert_eq!(turns.len(), 3);
        for (turn, (input, output)) in turns.iter().zip(TURN_TOKENS) {
            assert_eq!(turn["model"], MODEL);
            assert_eq!(turn["input_tokens"], input);
            assert_eq!(turn["output_tokens"], output);
        }
        assert_eq!(usage["cost"]["currency"], "EUR");
        let amount = usage["cost"]["amount"].as_f64().unwrap();
        assert!(
            (amount - (606.0 + 66.0 * 2.0) / 1e6).abs() < 1e-12,
            "{amount}"
        );
    }

    let header_spans = wait_for_spans(&received, HEADER_TRACE, 6).await;
    assert_tally_trace(&header_spans, HEADER_PARENT);
    let metadata_spans = wait_for_spans(&received, META_TRACE, 6).await;
    assert_tally_trace(&metadata_spans, META_PARENT);
    let rejected = loop {
        if let Some(span) = received
            .spans()
            .into_iter()
            .find(|s| s.name == "invoke_agent no-such-skill-xyz")
        {
            break span;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status_code(&rejected), status::StatusCode::Error as i32);
    assert_eq!(str_attr(&rejected, "error.type"), "unknown_skill");

    let resource = received.resource_attributes();
    let resource_value = |key: &str| match attr(&resource, key) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        other => panic!("resource {key}: {other:?}"),
    };
    assert_eq!(resource_value("service.name"), "skillet-under-test");
    assert_eq!(resource_value("deployment.environment.name"), "test");

    // Nothing secret and no content anywhere in what was exported.
    for raw in received.raw() {
        let text = String::from_utf8_lossy(&raw);
        assert!(
            !text.contains(CANARY_KEY),
            "the credential leaked into spans"
        );
        assert!(!text.contains("CANARY"), "content or credential in spans");
        assert!(!text.contains("two and three"), "arguments in spans");
        assert!(!text.contains("You tally"), "instructions in spans");
    }

    let metrics = metrics_text(&server.base).await;
    let Some(samples) = parse_metrics(&metrics) else {
        return;
    };
    let value = |key: &str| {
        *samples
            .get(key)
            .unwrap_or_else(|| panic!("{key} in /metrics:\n{metrics}"))
    };
    assert_eq!(
        value("skillet_calls_total{outcome=success,skill=tally}"),
        2.0
    );
    assert_eq!(
        value("skillet_calls_total{outcome=unknown_skill,skill=unknown}"),
        1.0
    );
    assert_eq!(value("skillet_calls_in_flight{}"), 0.0);
    assert_eq!(
        value("skillet_call_duration_seconds_count{skill=tally}"),
        2.0
    );
    assert_eq!(
        value("skillet_turn_duration_seconds_count{skill=tally}"),
        6.0
    );
    assert_eq!(
        value("skillet_tokens_total{direction=input,model=tally-model}"),
        1212.0
    );
    assert_eq!(
        value("skillet_tokens_total{direction=output,model=tally-model}"),
        132.0
    );
    assert_eq!(value("skillet_tool_calls_total{tool=calculator}"), 4.0);
    assert_eq!(value("skillet_tool_errors_total{tool=calculator}"), 2.0);
    assert_eq!(
        value("skillet_provider_retries_total{provider=openai-compatible,reason=unavailable}"),
        1.0
    );
    assert_eq!(value("skillet_admission_refusals_total{}"), 0.0);
    assert_eq!(value("skillet_otel_spans_dropped_total{}"), 0.0);
    assert!(
        !metrics.contains("no-such-skill-xyz"),
        "caller text is no label"
    );
}

/// `skillet_otel_spans_dropped_total` of `base`.
async fn spans_dropped(base: &str) -> f64 {
    metrics_text(base)
        .await
        .lines()
        .find_map(|l| l.strip_prefix("skillet_otel_spans_dropped_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn with_the_collector_down_calls_succeed_lost_spans_are_counted_and_export_resumes() {
    // A port nothing listens on yet: connections are refused.
    let (port, address) = refusing_port();
    let server = serve_with_telemetry(&format!("http://{address}"), "").await;
    for id in ["d1", "d2"] {
        let response = post_call(&server.base, tally_call(id, json!({})), None).await;
        assert_eq!(response["data"]["success"], true, "{response}");
    }
    let dropped = async {
        loop {
            let dropped = spans_dropped(&server.base).await;
            if dropped > 0.0 {
                return dropped;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let dropped = tokio::time::timeout(Duration::from_secs(30), dropped)
        .await
        .expect("the failed export is counted");
    assert!(dropped >= 1.0);

    // The collector comes up: after the back-off pause a probe call is traced, its export
    // succeeds and calls are traced again (pauses so far: 1 s, 2 s, ... — bounded here).
    let (_, received) = start_collector_on(port.listen(128).unwrap()).await;
    let resumed = async {
        for n in 0u32.. {
            let trace = format!("{n:032x}");
            let metadata = json!({"traceparent": format!("00-{trace}-00f067aa0ba902b7-01")});
            let response =
                post_call(&server.base, tally_call(&format!("r{n}"), metadata), None).await;
            assert_eq!(response["data"]["success"], true, "{response}");
            if !received.spans().is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), resumed)
        .await
        .expect("export resumes once the collector is back");
    // The first trace that arrived is a whole call's tree.
    let trace = hex(&received.spans()[0].trace_id);
    assert_tally_trace(
        &wait_for_spans(&received, &trace, 6).await,
        "00f067aa0ba902b7",
    );
}

#[tokio::test]
async fn a_call_refused_at_the_concurrency_limit_is_counted() {
    let (otlp, _received) = start_collector().await;
    let server = serve_with_telemetry(&otlp, "[server]\nmax_concurrent_calls = 1\n").await;
    // The first call holds the only slot while its model answer is delayed.
    server
        .mock
        .push_fault(mock_llm::Fault::latency(Duration::from_secs(2)));
    let base = server.base.clone();
    let first =
        tokio::spawn(async move { post_call(&base, tally_call("slow", json!({})), None).await });
    let health = format!("{}/healthz", server.base);
    let mut in_flight = 0;
    for _ in 0..100 {
        let body: serde_json::Value = reqwest::get(&health).await.unwrap().json().await.unwrap();
        in_flight = body["in_flight"].as_u64().unwrap();
        if in_flight == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(in_flight, 1, "the first call is in flight");
    let refused = post_call(&server.base, tally_call("busy", json!({})), None).await;
    assert_eq!(refused["error"]["code"], "runtime_error", "{refused}");
    assert_eq!(refused["error"]["retryable"], true);
    assert_eq!(first.await.unwrap()["data"]["success"], true);

    let metrics = metrics_text(&server.base).await;
    assert!(
        metrics
            .lines()
            .any(|l| l == "skillet_admission_refusals_total 1"),
        "{metrics}"
    );
    assert!(
        metrics
            .lines()
            .any(|l| l == r#"skillet_calls_total{skill="tally",outcome="success"} 1"#),
        "the refused call never ran: {metrics}"
    );
}

#[tokio::test]
async fn a_provider_failure_marks_the_chat_and_call_spans_and_counts_its_code() {
    let (otlp, received) = start_collector().await;
    let server = serve_with_telemetry(&otlp, "").await;
    server.mock.push_fault(mock_llm::Fault::status(401));
    let trace = "6bf92f3577b34da6a3ce929d0e0e4738";
    let metadata = json!({"traceparent": format!("00-{trace}-00f067aa0ba902b7-01")});
    let response = post_call(&server.base, tally_call("f1", metadata), None).await;
    let result = &response["data"];
    assert_eq!(result["success"], false, "{response}");
    let code = result["error_code"].as_str().unwrap().to_owned();

    let spans = wait_for_spans(&received, trace, 2).await;
    let agent = spans
        .iter()
        .find(|s| s.name == "invoke_agent tally")
        .unwrap();
    let chat = spans.iter().find(|s| s.name.starts_with("chat ")).unwrap();
    for span in [agent, chat] {
        assert_eq!(
            status_code(span),
            status::StatusCode::Error as i32,
            "{}",
            span.name
        );
        assert_eq!(str_attr(span, "error.type"), code, "{}", span.name);
    }
    assert_eq!(chat.parent_span_id, agent.span_id);
    assert!(spans.iter().all(|s| !s.name.starts_with("execute_tool")));

    let metrics = metrics_text(&server.base).await;
    let line = format!(r#"skillet_calls_total{{skill="tally",outcome="{code}"}} 1"#);
    assert!(metrics.lines().any(|l| l == line), "{line} in {metrics}");
}

#[tokio::test]
async fn an_mcp_tools_call_with_trace_context_in_meta_continues_the_callers_trace() {
    let Some(python) = python_with("mcp") else {
        return;
    };
    let (otlp, received) = start_collector().await;
    let server = serve_with_telemetry(&otlp, "").await;
    let trace = "5bf92f3577b34da6a3ce929d0e0e4737";
    let parent = "a1f067aa0ba902b7";
    let output = tokio::process::Command::new(python)
        .args([
            "-c",
            MCP_CALL_WITH_META,
            &format!("{}/mcp", server.base),
            &format!("00-{trace}-{parent}-01"),
            "vendor=opaque",
            &format!("{CONTENT_CANARY} two and three"),
        ])
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "ok");
    let spans = wait_for_spans(&received, trace, 6).await;
    assert_tally_trace(&spans, parent);
    assert!(
        spans.iter().all(|s| s.trace_state == "vendor=opaque"),
        "the caller's tracestate is carried"
    );
}

#[tokio::test]
async fn serve_exports_the_same_span_tree_over_otlp_grpc() {
    let Some(python) =
        python_with("grpc, opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc")
    else {
        return;
    };
    let (otlp, received, _collector) = start_grpc_collector(&python).await;
    let server = serve_with_telemetry(&otlp, "[telemetry]\nprotocol = \"grpc\"\n").await;
    let trace = "8bf92f3577b34da6a3ce929d0e0e4730";
    let metadata = json!({"traceparent": format!("00-{trace}-{META_PARENT}-01")});
    let response = post_call(&server.base, tally_call("g1", metadata), None).await;
    assert_eq!(response["data"]["success"], true, "{response}");
    assert_tally_trace(&wait_for_spans(&received, trace, 6).await, META_PARENT);
    let raw = received.raw().concat();
    assert!(!String::from_utf8_lossy(&raw).contains(CANARY_KEY));
    assert!(!String::from_utf8_lossy(&raw).contains(CONTENT_CANARY));
}

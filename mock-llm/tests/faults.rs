//! Every fault kind, seen from a client: status codes with retry headers in each provider's
//! error shape, malformed bodies, truncated / stalled / dropped streams, in-stream errors, latency,
//! broken tool calls, `times` and seeded `probability`.

mod common;

use std::time::{Duration, Instant};

use futures::StreamExt;
use mock_llm::{Fault, Match, ToolCallProblem};
use serde_json::{Value, json};

fn openai_body(stream: bool) -> Value {
    json!({"model":"m","stream":stream,"messages":[{"role":"user","content":"one two three four five"}]})
}

fn chat_url(server: &mock_llm::MockServer) -> String {
    format!("{}/v1/chat/completions", server.base_url())
}

#[tokio::test]
async fn rate_limit_sends_retry_headers_then_recovers_after_times() {
    let server = common::start("rules:\n  - reply: {text: ok}\n").await;
    server.push_fault(Fault::rate_limited(2).retry_after_ms(1500).times(2));
    for _ in 0..2 {
        let (status, headers, body) = common::post(&chat_url(&server), &openai_body(false)).await;
        assert_eq!(status, 429);
        assert_eq!(headers["retry-after"], "2");
        assert_eq!(headers["retry-after-ms"], "1500");
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"]["code"], "rate_limit_exceeded");
        assert_eq!(body["error"]["param"], Value::Null);
        assert!(body["error"]["message"].is_string());
    }
    let (status, _, _) = common::post(&chat_url(&server), &openai_body(false)).await;
    assert_eq!(status, 200);
    let faults: Vec<Option<String>> = server.journal().into_iter().map(|e| e.fault).collect();
    assert_eq!(
        faults,
        vec![Some("status 429".into()), Some("status 429".into()), None]
    );
    server.shutdown().await;
}

#[tokio::test]
async fn insufficient_quota_is_a_429_with_its_own_type_and_code() {
    let server = common::start("rules: []\n").await;
    server.push_fault(Fault::insufficient_quota());
    let (status, headers, body) = common::post(&chat_url(&server), &openai_body(false)).await;
    assert_eq!(status, 429);
    assert!(headers.get("retry-after").is_none());
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["type"], "insufficient_quota");
    assert_eq!(body["error"]["code"], "insufficient_quota");
    server.shutdown().await;
}

#[tokio::test]
async fn server_errors_use_each_providers_error_shape() {
    let server = common::start("rules: []\n").await;
    let base = server.base_url();
    server.push_fault(Fault::status(500));
    let (s, _, b) = common::post(&chat_url(&server), &openai_body(false)).await;
    assert_eq!(s, 500);
    assert_eq!(
        serde_json::from_str::<Value>(&b).unwrap()["error"]["type"],
        "server_error"
    );
    server.push_fault(Fault::status(503));
    let (s, _, b) = common::post(
        &format!("{base}/api/chat"),
        &json!({"model":"m","messages":[]}),
    )
    .await;
    assert_eq!(s, 503);
    assert!(serde_json::from_str::<Value>(&b).unwrap()["error"].is_string());
    server.push_fault(Fault::overloaded());
    let (s, _, b) = common::post(
        &format!("{base}/v1/messages"),
        &json!({"model":"m","max_tokens":5,"messages":[]}),
    )
    .await;
    assert_eq!(s, 529);
    let b: Value = serde_json::from_str(&b).unwrap();
    assert_eq!(b["type"], "error");
    assert_eq!(b["error"]["type"], "overloaded_error");
    server.shutdown().await;
}

#[tokio::test]
async fn malformed_body_fails_strict_parsing_streamed_or_not() {
    let server = common::start("rules: []\n").await;
    server.push_fault(Fault::malformed_body().times(2));
    let (status, _, body) = common::post(&chat_url(&server), &openai_body(false)).await;
    assert_eq!(status, 200);
    assert!(serde_json::from_str::<Value>(&body).is_err());
    let (_, _, body) = common::post(&chat_url(&server), &openai_body(true)).await;
    let events = common::sse_events(&body);
    assert_eq!(events.len(), 1);
    assert!(serde_json::from_str::<Value>(&events[0].1).is_err());
    server.shutdown().await;
}

#[tokio::test]
async fn truncated_stream_ends_without_finish_or_done() {
    let server = common::start("rules:\n  - reply: {text: a b c d e f}\n").await;
    server.push_fault(Fault::truncate_after(3));
    let (status, _, body) = common::post(&chat_url(&server), &openai_body(true)).await;
    assert_eq!(status, 200);
    let events = common::sse_events(&body);
    assert_eq!(events.len(), 3);
    assert!(events.iter().all(|(_, d)| d != "[DONE]"));
    assert!(events.iter().all(|(_, d)| {
        serde_json::from_str::<Value>(d).unwrap()["choices"][0]["finish_reason"].is_null()
    }));

    server.push_fault(Fault::truncate_after(2));
    let (_, _, body) = common::post(&format!("{}/v1/messages", server.base_url()),
        &json!({"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"x"}]})).await;
    let names: Vec<String> = common::sse_events(&body)
        .into_iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(names, vec!["message_start", "ping"]);

    server.push_fault(Fault::truncate_after(0));
    let (status, _, body) = common::post(&chat_url(&server), &openai_body(false)).await;
    assert_eq!(status, 200);
    assert!(
        serde_json::from_str::<Value>(&body).is_err(),
        "non-streamed truncation cuts the JSON"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn stalled_stream_sends_n_chunks_then_silence_until_shutdown() {
    let server = common::start("rules:\n  - reply: {text: a b c d}\n").await;
    server.push_fault(Fault::stall_after(2));
    let r = common::http()
        .post(chat_url(&server))
        .json(&openai_body(true))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let mut body = r.bytes_stream();
    let mut received = String::new();
    while common::sse_events(&received).len() < 2 {
        let chunk = body.next().await.expect("stream open").expect("chunk");
        received.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert_eq!(common::sse_events(&received).len(), 2);
    let waited = tokio::time::timeout(Duration::from_millis(300), body.next()).await;
    assert!(waited.is_err(), "nothing arrives during a stall");
    server.shutdown().await;
    let after = tokio::time::timeout(Duration::from_secs(10), body.next())
        .await
        .expect("shutdown ends the stall");
    assert!(
        !matches!(after, Some(Ok(_))),
        "no more data after shutdown: {after:?}"
    );
}

#[tokio::test]
async fn dropped_connection_is_a_body_error_after_n_chunks() {
    let server = common::start("rules:\n  - reply: {text: a b c d}\n").await;
    server.push_fault(Fault::drop_connection_after(1));
    let r = common::http()
        .post(chat_url(&server))
        .json(&openai_body(true))
        .send()
        .await
        .unwrap();
    let mut body = r.bytes_stream();
    let mut data = Vec::new();
    let mut error = None;
    while let Some(item) = body.next().await {
        match item {
            Ok(b) => data.extend_from_slice(&b),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    assert!(error.is_some(), "the client sees a broken body");
    assert_eq!(common::sse_events(&String::from_utf8_lossy(&data)).len(), 1);

    server.push_fault(Fault::drop_connection_after(0));
    let r = common::http()
        .post(chat_url(&server))
        .json(&openai_body(false))
        .send()
        .await;
    let outcome = match r {
        Ok(resp) => resp.bytes().await.map(|_| ()),
        Err(e) => Err(e),
    };
    assert!(outcome.is_err(), "a non-streamed drop fails too");
    server.shutdown().await;
}

#[tokio::test]
async fn stream_error_is_an_in_band_error_frame_per_provider() {
    let server = common::start("rules:\n  - reply: {text: a b c}\n").await;
    server.push_fault(Fault::stream_error_after(1, 529));
    let (status, _, body) = common::post(&format!("{}/v1/messages", server.base_url()),
        &json!({"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"x"}]})).await;
    assert_eq!(status, 200);
    let events = common::sse_events(&body);
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].0, "error");
    assert_eq!(
        serde_json::from_str::<Value>(&events[1].1).unwrap()["error"]["type"],
        "overloaded_error"
    );

    server.push_fault(Fault::stream_error_after(1, 500).message("model crashed"));
    let (_, _, body) = common::post(
        &format!("{}/api/chat", server.base_url()),
        &json!({"model":"m","messages":[{"role":"user","content":"x"}]}),
    )
    .await;
    let lines: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1], json!({"error": "model crashed"}));
    server.shutdown().await;
}

#[tokio::test]
async fn latency_delays_the_response_but_not_its_content() {
    let server = common::start("rules:\n  - reply: {text: slow}\n").await;
    server.push_fault(Fault::latency(Duration::from_millis(250)));
    let started = Instant::now();
    let (status, _, body) = common::post(&chat_url(&server), &openai_body(false)).await;
    assert!(started.elapsed() >= Duration::from_millis(250));
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["choices"][0]["message"]["content"],
        "slow"
    );
    assert_eq!(server.journal()[0].fault.as_deref(), Some("latency"));
    server.shutdown().await;
}

#[tokio::test]
async fn invalid_tool_calls_break_name_schema_or_json() {
    let server = common::start("rules: []\n").await;
    let schema = json!({"type":"object","properties":{"q":{"type":"string"}},"required":["q"]});
    let body = json!({"model":"m","messages":[{"role":"user","content":"x"}],
        "tools":[{"type":"function","function":{"name":"search","parameters":schema}}]});
    let call = |b: &str| -> Value {
        let v: Value = serde_json::from_str(b).unwrap();
        v["choices"][0]["message"]["tool_calls"][0]["function"].clone()
    };
    server.push_fault(Fault::invalid_tool_call(ToolCallProblem::UnknownTool));
    let (_, _, b) = common::post(&chat_url(&server), &body).await;
    assert_eq!(call(&b)["name"], "no_such_tool");
    server.push_fault(Fault::invalid_tool_call(ToolCallProblem::SchemaViolation));
    let (_, _, b) = common::post(&chat_url(&server), &body).await;
    let f = call(&b);
    assert_eq!(f["name"], "search");
    let args: Value = serde_json::from_str(f["arguments"].as_str().unwrap()).unwrap();
    assert!(
        !jsonschema::validator_for(&schema).unwrap().is_valid(&args),
        "{args}"
    );
    server.push_fault(Fault::invalid_tool_call(ToolCallProblem::NotJson));
    let (_, _, b) = common::post(&chat_url(&server), &body).await;
    assert!(serde_json::from_str::<Value>(call(&b)["arguments"].as_str().unwrap()).is_err());
    server.shutdown().await;
}

#[tokio::test]
async fn queued_fault_waits_for_a_matching_request() {
    let server = common::start("rules: []\n").await;
    server.push_fault(Fault::status(503).when(Match::any().endpoint("anthropic")));
    let (s, _, _) = common::post(&chat_url(&server), &openai_body(false)).await;
    assert_eq!(s, 200);
    let (s, _, _) = common::post(
        &format!("{}/v1/messages", server.base_url()),
        &json!({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}),
    )
    .await;
    assert_eq!(s, 503);
    server.shutdown().await;
}

#[tokio::test]
async fn rule_fault_with_times_fails_then_answers() {
    let yaml = "rules:\n  - name: flaky\n    fault: {kind: status, status: 500, times: 2}\n    reply: {text: finally}\n";
    let server = common::start(yaml).await;
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(
            common::post(&chat_url(&server), &openai_body(false))
                .await
                .0,
        );
    }
    assert_eq!(statuses, vec![500, 500, 200]);
    server.shutdown().await;
}

#[tokio::test]
async fn seeded_probability_gives_the_same_pattern_for_the_same_seed() {
    let yaml = "seed: 42\nrules:\n  - fault: {kind: status, status: 503, probability: 0.5}\n    reply: {text: ok}\n";
    let mut patterns = Vec::new();
    for _ in 0..2 {
        let server = common::start(yaml).await;
        let mut p = Vec::new();
        for _ in 0..16 {
            p.push(
                common::post(&chat_url(&server), &openai_body(false))
                    .await
                    .0,
            );
        }
        server.shutdown().await;
        patterns.push(p);
    }
    assert_eq!(patterns[0], patterns[1]);
    assert!(
        patterns[0].contains(&503) && patterns[0].contains(&200),
        "{:?}",
        patterns[0]
    );
}

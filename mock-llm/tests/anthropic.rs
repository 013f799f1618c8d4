//! Anthropic Messages over a real socket, checked field by field: blocks, `tool_result` input,
//! forced tools, SSE with `event:` lines in the documented order, auth headers and errors.

mod common;

use serde_json::{Value, json};

const TOOL: &str = r#"{"name":"record","description":"store a result","input_schema":
  {"type":"object","properties":{"label":{"type":"string","enum":["good","bad"]},"score":{"type":"number","exclusiveMinimum":0,"maximum":1}},"required":["label","score"]}}"#;

fn url(server: &mock_llm::MockServer) -> String {
    format!("{}/v1/messages", server.base_url())
}

#[tokio::test]
async fn text_reply_has_message_shape_and_usage() {
    let server =
        common::start("rules:\n  - when: {system_contains: pirate}\n    reply: {text: Arr}\n")
            .await;
    let (status, _, body) = common::post(&url(&server), &json!({"model":"claude-x","max_tokens":64,
        "system":[{"type":"text","text":"You are a pirate."}],"messages":[{"role":"user","content":"hi"}]})).await;
    assert_eq!(status, 200);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["id"], "msg_mock_0001");
    assert_eq!(body["type"], "message");
    assert_eq!(body["role"], "assistant");
    assert_eq!(body["model"], "claude-x");
    assert_eq!(body["content"], json!([{"type":"text","text":"Arr"}]));
    assert_eq!(body["stop_reason"], "end_turn");
    assert_eq!(body["stop_sequence"], Value::Null);
    assert!(body["usage"]["input_tokens"].is_u64() && body["usage"]["output_tokens"].is_u64());
    server.shutdown().await;
}

#[tokio::test]
async fn forced_tool_choice_without_rules_synthesizes_valid_input() {
    let server = common::start("rules: []\n").await;
    let tool: Value = serde_json::from_str(TOOL).unwrap();
    let (_, _, body) = common::post(&url(&server), &json!({"model":"m","max_tokens":64,"tools":[tool.clone()],
        "tool_choice":{"type":"tool","name":"record"},"messages":[{"role":"user","content":"judge"}]})).await;
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["stop_reason"], "tool_use");
    let block = &body["content"][0];
    assert_eq!(block["type"], "tool_use");
    assert_eq!(block["id"], "toolu_mock_0001");
    assert_eq!(block["name"], "record");
    assert!(
        jsonschema::validator_for(&tool["input_schema"])
            .unwrap()
            .is_valid(&block["input"]),
        "{block}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn stream_events_come_in_documented_order_with_input_json_deltas() {
    let server = common::start("rules:\n  - reply:\n      text: Let me check.\n      tool_calls: [{name: record, arguments: {label: good, score: 0.5}}]\n").await;
    let (_, headers, body) = common::post(
        &url(&server),
        &json!({"model":"m","max_tokens":64,"stream":true,
        "messages":[{"role":"user","content":"go"}]}),
    )
    .await;
    assert_eq!(headers["content-type"], "text/event-stream");
    let events = common::sse_events(&body);
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
    assert!(names.contains(&"ping"));
    assert!(events.iter().all(
        |(e, d)| !e.is_empty() && serde_json::from_str::<Value>(d).unwrap()["type"] == json!(e)
    ));
    let data: Vec<Value> = events
        .iter()
        .map(|(_, d)| serde_json::from_str(d).unwrap())
        .collect();
    let text: String = data
        .iter()
        .filter(|d| d["delta"]["type"] == "text_delta")
        .map(|d| d["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Let me check.");
    let starts: Vec<&Value> = data
        .iter()
        .filter(|d| d["type"] == "content_block_start")
        .collect();
    assert_eq!(starts[1]["content_block"]["type"], "tool_use");
    assert_eq!(starts[1]["index"], 1);
    let partial: String = data
        .iter()
        .filter(|d| d["delta"]["type"] == "input_json_delta")
        .map(|d| d["delta"]["partial_json"].as_str().unwrap())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&partial).unwrap(),
        json!({"label":"good","score":0.5})
    );
    let delta = data.iter().find(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert!(delta["usage"]["output_tokens"].is_u64());
    server.shutdown().await;
}

#[tokio::test]
async fn tool_result_blocks_count_as_tool_results_and_advance_the_turn() {
    let yaml = "rules:\n  - name: second\n    when: {turn: 2, tool_results: true, tool_result_contains: stored}\n    reply: {json: {ok: true}}\n";
    let server = common::start(yaml).await;
    let (_, _, body) = common::post(&url(&server), &json!({"model":"m","max_tokens":64,"messages":[
        {"role":"user","content":"go"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"record","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"stored"}]}]}]})).await;
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["content"][0]["text"], "{\"ok\":true}");
    server.shutdown().await;
}

#[tokio::test]
async fn missing_max_tokens_is_an_invalid_request_error() {
    let server = common::start("rules: []\n").await;
    let (status, _, body) = common::post(
        &url(&server),
        &json!({"model":"m","messages":[{"role":"user","content":"x"}]}),
    )
    .await;
    assert_eq!(status, 400);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    server.shutdown().await;
}

#[tokio::test]
async fn required_auth_accepts_x_api_key_or_bearer_and_rejects_neither() {
    let config = mock_llm::MockConfig::default().with_required_auth(true);
    let server = mock_llm::MockServer::start(config).await.unwrap();
    let body = json!({"model":"m","max_tokens":8,"messages":[{"role":"user","content":"x"}]});
    let send = |h: Option<(&'static str, &'static str)>| {
        let mut r = common::http()
            .post(url(&server))
            .header("anthropic-version", "2023-06-01")
            .json(&body);
        if let Some((n, v)) = h {
            r = r.header(n, v);
        }
        r.send()
    };
    assert_eq!(
        send(Some(("x-api-key", "sk-ant-1")))
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        send(Some(("authorization", "Bearer sk-ant-2")))
            .await
            .unwrap()
            .status(),
        200
    );
    let denied = send(None).await.unwrap();
    assert_eq!(denied.status(), 401);
    let err: Value = denied.json().await.unwrap();
    assert_eq!(err["error"]["type"], "authentication_error");
    let journal = server.journal();
    assert!(
        journal
            .iter()
            .all(|e| e.headers.iter().all(|(_, v)| !v.contains("sk-ant")))
    );
    server.shutdown().await;
}

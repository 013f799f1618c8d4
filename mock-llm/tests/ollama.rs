//! Ollama native endpoints over a real socket, checked field by field: NDJSON streaming (the
//! default), object tool arguments, `format` schemas, the final stats object, tags and version.

mod common;

use serde_json::{Value, json};

fn lines(body: &str) -> Vec<Value> {
    body.lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

const TOOL: &str = r#"{"type":"function","function":{"name":"lookup","parameters":
  {"type":"object","properties":{"term":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["term","limit"]}}}"#;

#[tokio::test]
async fn stream_defaults_to_true_and_ends_with_a_stats_object() {
    let server = common::start("rules:\n  - reply: {text: alpha beta}\n").await;
    let url = format!("{}/api/chat", server.base_url());
    let r = common::http()
        .post(&url)
        .json(&json!({"model":"llama3","messages":[{"role":"user","content":"hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/x-ndjson");
    let lines = lines(&r.text().await.unwrap());
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0]["message"],
        json!({"role":"assistant","content":"alpha "})
    );
    assert_eq!(lines[0]["done"], false);
    assert_eq!(lines[0]["created_at"], "2024-01-01T00:00:00Z");
    assert_eq!(lines[0]["model"], "llama3");
    let last = &lines[2];
    assert_eq!(last["done"], true);
    assert_eq!(last["done_reason"], "stop");
    for field in [
        "total_duration",
        "load_duration",
        "prompt_eval_count",
        "prompt_eval_duration",
        "eval_count",
        "eval_duration",
    ] {
        assert!(last[field].is_u64(), "{field} missing in {last}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn non_streamed_tool_call_has_object_arguments() {
    let server = common::start(
        "rules:\n  - when: {tool: lookup}\n    reply:\n      tool_calls: [{name: lookup}]\n",
    )
    .await;
    let url = format!("{}/api/chat", server.base_url());
    let tool: Value = serde_json::from_str(TOOL).unwrap();
    let (status, _, body) = common::post(
        &url,
        &json!({"model":"m","stream":false,"tools":[tool],"messages":[{"role":"user","content":"find"}]}),
    )
    .await;
    assert_eq!(status, 200);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["done"], true);
    let call = &body["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "lookup");
    // Arguments were left out of the rule, so they are synthesized from the tool's schema.
    assert!(call["arguments"].is_object(), "{call}");
    assert!(call["arguments"]["term"].is_string());
    assert!(call["arguments"]["limit"].as_u64().unwrap() >= 1);
    server.shutdown().await;
}

#[tokio::test]
async fn streamed_tool_call_arrives_whole_in_one_line() {
    let server = common::start(
        "rules:\n  - reply:\n      tool_calls: [{name: lookup, arguments: {term: x, limit: 2}}]\n",
    )
    .await;
    let url = format!("{}/api/chat", server.base_url());
    let (_, _, body) = common::post(
        &url,
        &json!({"model":"m","messages":[{"role":"user","content":"find"}]}),
    )
    .await;
    let lines = lines(&body);
    let with_calls: Vec<&Value> = lines
        .iter()
        .filter(|l| l["message"].get("tool_calls").is_some())
        .collect();
    assert_eq!(with_calls.len(), 1);
    assert_eq!(
        with_calls[0]["message"]["tool_calls"][0]["function"]["arguments"],
        json!({"term":"x","limit":2})
    );
    server.shutdown().await;
}

#[tokio::test]
async fn format_schema_gets_a_valid_instance_and_format_json_gets_json() {
    let server = common::start("rules: []\n").await;
    let url = format!("{}/api/chat", server.base_url());
    let schema = json!({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":18}},"required":["name","age"]});
    let (_, _, body) = common::post(&url, &json!({"model":"m","stream":false,"format":schema,"messages":[{"role":"user","content":"who"}]})).await;
    let body: Value = serde_json::from_str(&body).unwrap();
    let instance: Value =
        serde_json::from_str(body["message"]["content"].as_str().unwrap()).unwrap();
    assert!(
        jsonschema::validator_for(&schema)
            .unwrap()
            .is_valid(&instance),
        "{instance}"
    );
    let (_, _, body) = common::post(&url, &json!({"model":"m","stream":false,"format":"json","messages":[{"role":"user","content":"who"}]})).await;
    let body: Value = serde_json::from_str(&body).unwrap();
    assert!(
        serde_json::from_str::<Value>(body["message"]["content"].as_str().unwrap())
            .unwrap()
            .is_object()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn tool_results_match_rules_by_content() {
    let yaml = "rules:\n  - name: after-tool\n    when: {tool_result_contains: '42 rows', turn: 2}\n    reply: {text: done}\n";
    let server = common::start(yaml).await;
    let url = format!("{}/api/chat", server.base_url());
    let (_, _, body) = common::post(
        &url,
        &json!({"model":"m","stream":false,"messages":[
        {"role":"user","content":"count"},
        {"role":"assistant","content":"","tool_calls":[{"function":{"name":"sql","arguments":{}}}]},
        {"role":"tool","tool_name":"sql","content":"42 rows"}]}),
    )
    .await;
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["message"]["content"], "done");
    assert_eq!(
        server.journal()[0].matched_rule.as_deref(),
        Some("after-tool")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn tags_and_version_answer_in_ollama_shape() {
    let server = common::start("models: ['llama3:latest']\nrules: []\n").await;
    let tags: Value = common::http()
        .get(format!("{}/api/tags", server.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let models = tags["models"].as_array().unwrap();
    assert_eq!(models[1]["name"], "llama3:latest");
    assert_eq!(models[1]["digest"].as_str().unwrap().len(), 64);
    assert_eq!(models[1]["details"]["format"], "gguf");
    let version: Value = common::http()
        .get(format!("{}/api/version", server.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(version["version"].is_string());
    let endpoints: Vec<String> = server.journal().into_iter().map(|e| e.endpoint).collect();
    assert_eq!(endpoints, vec!["ollama.tags", "ollama.version"]);
    server.shutdown().await;
}

#[tokio::test]
async fn bad_format_is_an_ollama_shaped_400() {
    let server = common::start("rules: []\n").await;
    let (status, _, body) = common::post(
        &format!("{}/api/chat", server.base_url()),
        &json!({"model":"m","format":5,"messages":[]}),
    )
    .await;
    assert_eq!(status, 400);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert!(body["error"].as_str().unwrap().contains("format"));
    server.shutdown().await;
}

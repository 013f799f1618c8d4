//! The control API (`/_mock/...`), the in-process API (`set_scenario`, `reset`), scripted
//! multi-turn runs, and byte-for-byte determinism across two runs.

mod common;

use mock_llm::{Match, MockConfig, MockServer, ReplySpec, Rule, Scenario};
use serde_json::{Value, json};

/// The two-turn script documented in the README: tool call first, final JSON after the result.
const TWO_TURN: &str = r#"
rules:
  - name: plan
    when: { turn: 1, tool: search }
    reply:
      tool_calls:
        - name: search
          arguments: { query: "rust mock servers" }
  - name: answer
    when: { turn: 2, tool_result_contains: "results" }
    reply:
      json: { summary: "3 results found", confidence: 0.9 }
"#;

fn search_tool() -> Value {
    json!({"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}})
}

#[tokio::test]
async fn two_turn_script_answers_tool_call_then_final_json() {
    let server = common::start(TWO_TURN).await;
    let url = format!("{}/v1/chat/completions", server.base_url());
    let mut messages = vec![json!({"role":"user","content":"find mock servers"})];
    let (_, _, first) = common::post(
        &url,
        &json!({"model":"m","messages":messages,"tools":[search_tool()]}),
    )
    .await;
    let first: Value = serde_json::from_str(&first).unwrap();
    let assistant = first["choices"][0]["message"].clone();
    let call_id = assistant["tool_calls"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    messages.push(assistant);
    messages.push(json!({"role":"tool","tool_call_id":call_id,"content":"3 results"}));
    let (_, _, second) = common::post(
        &url,
        &json!({"model":"m","messages":messages,"tools":[search_tool()]}),
    )
    .await;
    let second: Value = serde_json::from_str(&second).unwrap();
    let content: Value =
        serde_json::from_str(second["choices"][0]["message"]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        content,
        json!({"summary":"3 results found","confidence":0.9})
    );
    let rules: Vec<Option<String>> = server
        .journal()
        .into_iter()
        .map(|e| e.matched_rule)
        .collect();
    assert_eq!(rules, vec![Some("plan".into()), Some("answer".into())]);
    server.shutdown().await;
}

#[tokio::test]
async fn replies_sequence_hands_out_one_reply_per_request_then_falls_through() {
    let scenario = Scenario::new()
        .rule(
            Rule::new("seq")
                .reply(ReplySpec::text("first"))
                .reply(ReplySpec::text("second")),
        )
        .default_rule(Rule::new("fallback").reply(ReplySpec::text("no more")));
    let server = MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .unwrap();
    let url = format!("{}/api/chat", server.base_url());
    let mut texts = Vec::new();
    for _ in 0..3 {
        let (_, _, b) = common::post(
            &url,
            &json!({"model":"m","stream":false,"messages":[{"role":"user","content":"x"}]}),
        )
        .await;
        texts.push(
            serde_json::from_str::<Value>(&b).unwrap()["message"]["content"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert_eq!(texts, vec!["first", "second", "no more"]);
    server.reset();
    assert!(server.journal().is_empty());
    let (_, _, b) = common::post(
        &url,
        &json!({"model":"m","stream":false,"messages":[{"role":"user","content":"x"}]}),
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(&b).unwrap()["message"]["content"],
        "first"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn control_api_replaces_scenario_queues_faults_lists_and_resets() {
    let server = common::start("rules: []\n").await;
    let base = server.base_url();
    let http = common::http();
    let r = http
        .post(format!("{base}/_mock/scenario"))
        .body("rules:\n  - when: {model: 'gpt-*'}\n    reply: {text: swapped}\n")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let bad = http
        .post(format!("{base}/_mock/scenario"))
        .body("rules: [{when: {turn: x}}]")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert!(bad.text().await.unwrap().contains("scenario YAML"));
    let r = http
        .post(format!("{base}/_mock/faults"))
        .json(&json!([{"kind":"rate_limit","retry_after":1}]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["queued"], 1);
    let bad = http
        .post(format!("{base}/_mock/faults"))
        .json(&json!({"kind":"nope"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);

    let url = format!("{base}/v1/chat/completions");
    let body = json!({"model":"gpt-4o","messages":[{"role":"user","content":"x"}]});
    assert_eq!(common::post(&url, &body).await.0, 429);
    let (s, _, b) = common::post(&url, &body).await;
    assert_eq!(s, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&b).unwrap()["choices"][0]["message"]["content"],
        "swapped"
    );

    let journal: Value = http
        .get(format!("{base}/_mock/requests"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let journal = journal.as_array().unwrap();
    assert_eq!(journal.len(), 2);
    assert_eq!(journal[0]["endpoint"], "openai.chat");
    assert_eq!(journal[0]["fault"], "status 429");
    assert_eq!(journal[1]["matched_rule"], "rule[0]");
    assert_eq!(journal[1]["body"]["model"], "gpt-4o");

    assert_eq!(
        http.post(format!("{base}/_mock/reset"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert!(server.journal().is_empty());
    assert_eq!(
        http.get(format!("{base}/nope"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    server.shutdown().await;
}

#[tokio::test]
async fn set_scenario_from_rust_builder_takes_effect() {
    let server = common::start("rules: []\n").await;
    server.set_scenario(
        Scenario::new().rule(
            Rule::new("anthropic-only")
                .when(
                    Match::any()
                        .endpoint("anthropic")
                        .user_regex("^he(llo|y)")
                        .unwrap(),
                )
                .reply(ReplySpec::text("matched")),
        ),
    );
    let (_, _, b) = common::post(
        &format!("{}/v1/messages", server.base_url()),
        &json!({"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hey you"}]}),
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(&b).unwrap()["content"][0]["text"],
        "matched"
    );
    server.shutdown().await;
}

#[test]
fn readme_scenario_example_parses_and_matches_the_tested_script() {
    let readme = include_str!("../README.md");
    let start = readme.find("```yaml\n").expect("yaml block") + "```yaml\n".len();
    let yaml = &readme[start..start + readme[start..].find("```").expect("block end")];
    let scenario = Scenario::from_yaml_str(yaml).expect("README example parses");
    let tested = Scenario::from_yaml_str(TWO_TURN).unwrap();
    assert_eq!(scenario.rules, tested.rules);
    assert!(scenario.default.is_some());
}

#[tokio::test]
async fn journal_keeps_only_the_newest_entries_up_to_its_limit() {
    let config = MockConfig::default().with_journal_limit(2);
    let server = MockServer::start(config).await.unwrap();
    for _ in 0..3 {
        common::http()
            .get(format!("{}/api/version", server.base_url()))
            .send()
            .await
            .unwrap();
    }
    let seqs: Vec<u64> = server.journal().into_iter().map(|e| e.seq).collect();
    assert_eq!(seqs, vec![2, 3]);
    server.shutdown().await;
}

/// Runs a fixed mix of requests (all providers, streamed and not, with and without schema) and
/// returns every response body.
async fn run_once() -> Vec<String> {
    let scenario = Scenario::from_yaml_str(TWO_TURN).unwrap();
    let server = MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .unwrap();
    let base = server.base_url();
    let schema = json!({"type":"object","properties":{"a":{"type":"string","format":"date-time"},"b":{"type":"array","items":{"type":"number"},"minItems":2}},"required":["a","b"]});
    let requests = [
        (
            "/v1/chat/completions",
            json!({"model":"m","messages":[{"role":"user","content":"find"}],"tools":[search_tool()]}),
        ),
        (
            "/v1/chat/completions",
            json!({"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"find"}],"tools":[search_tool()]}),
        ),
        (
            "/v1/chat/completions",
            json!({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"o","schema":schema}}}),
        ),
        (
            "/api/chat",
            json!({"model":"m","messages":[{"role":"user","content":"hello there"}]}),
        ),
        (
            "/api/chat",
            json!({"model":"m","stream":false,"format":schema,"messages":[{"role":"user","content":"x"}]}),
        ),
        (
            "/v1/messages",
            json!({"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"hi"}]}),
        ),
        (
            "/v1/messages",
            json!({"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}),
        ),
    ];
    let mut bodies = Vec::new();
    for (path, body) in requests {
        bodies.push(common::post(&format!("{base}{path}"), &body).await.2);
    }
    server.shutdown().await;
    bodies
}

#[tokio::test]
async fn same_scenario_and_requests_give_identical_bytes_across_runs() {
    let first = run_once().await;
    let second = run_once().await;
    assert_eq!(first.len(), 7);
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(a, b);
    }
    // Ids are counters: distinct within a run, equal across runs.
    assert!(first[0].contains("chatcmpl-mock-1") && first[1].contains("chatcmpl-mock-2"));
}

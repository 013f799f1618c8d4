//! OpenAI endpoint over a real socket, parsed by async-openai's strict types: text, tool calls and
//! structured output, streamed and not.

mod common;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, CreateChatCompletionRequest,
    CreateChatCompletionStreamResponse, FinishReason,
};
use futures::StreamExt;
use serde_json::{Value, json};

fn client(server: &mock_llm::MockServer) -> Client<OpenAIConfig> {
    let config = OpenAIConfig::new()
        .with_api_base(format!("{}/v1", server.base_url()))
        .with_api_key("sk-test-secret");
    Client::with_config(config)
}

fn request(body: Value) -> CreateChatCompletionRequest {
    serde_json::from_value(body).expect("valid request")
}

const WEATHER_TOOL: &str = r#"{"type":"function","function":{"name":"get_weather","parameters":
  {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}"#;

async fn collect(
    client: &Client<OpenAIConfig>,
    req: CreateChatCompletionRequest,
) -> Vec<CreateChatCompletionStreamResponse> {
    let mut stream = client
        .chat()
        .create_stream(req)
        .await
        .expect("stream opens");
    let mut chunks = Vec::new();
    while let Some(chunk) = stream.next().await {
        chunks.push(chunk.expect("chunk parses"));
    }
    chunks
}

#[tokio::test]
async fn text_reply_parses_with_strict_types_and_journal_redacts_the_key() {
    let server = common::start(
        "rules:\n  - name: hi\n    when: {user_contains: hello}\n    reply: {text: Hello there!}\n",
    )
    .await;
    let resp = client(&server)
        .chat()
        .create(request(
            json!({"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}),
        ))
        .await
        .expect("response parses");
    assert_eq!(resp.id, "chatcmpl-mock-1");
    assert_eq!(
        resp.created,
        u32::try_from(mock_llm::DEFAULT_EPOCH_SECS).unwrap()
    );
    assert_eq!(
        resp.choices[0].message.content.as_deref(),
        Some("Hello there!")
    );
    assert_eq!(resp.choices[0].finish_reason, Some(FinishReason::Stop));
    let usage = resp.usage.expect("usage");
    assert_eq!(
        usage.total_tokens,
        usage.prompt_tokens + usage.completion_tokens
    );

    let journal = server.journal();
    assert_eq!(journal.len(), 1);
    assert_eq!(journal[0].endpoint, "openai.chat");
    assert_eq!(journal[0].path, "/v1/chat/completions");
    assert_eq!(journal[0].matched_rule.as_deref(), Some("hi"));
    assert_eq!(journal[0].body["model"], "gpt-4o-mini");
    let auth = journal[0]
        .headers
        .iter()
        .find(|(n, _)| n == "authorization")
        .expect("auth header");
    assert_eq!(auth.1, mock_llm::REDACTED);
    assert!(!format!("{journal:?}").contains("sk-test-secret"));
    server.shutdown().await;
}

#[tokio::test]
async fn tool_call_reply_has_string_arguments_and_tool_calls_finish() {
    let server = common::start(
        "rules:\n  - when: {tool: get_weather}\n    reply:\n      tool_calls:\n        - {name: get_weather, arguments: {city: Paris}}\n",
    )
    .await;
    let tool: Value = serde_json::from_str(WEATHER_TOOL).unwrap();
    let resp = client(&server)
        .chat()
        .create(request(
            json!({"model":"m","messages":[{"role":"user","content":"weather?"}],"tools":[tool]}),
        ))
        .await
        .expect("response parses");
    let choice = &resp.choices[0];
    assert_eq!(choice.finish_reason, Some(FinishReason::ToolCalls));
    let calls = choice.message.tool_calls.as_ref().expect("tool calls");
    let ChatCompletionMessageToolCalls::Function(call) = &calls[0] else {
        panic!("not a function call")
    };
    assert_eq!(call.id, "call_mock_0001");
    assert_eq!(call.function.name, "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(&call.function.arguments).unwrap(),
        json!({"city":"Paris"})
    );
    server.shutdown().await;
}

#[tokio::test]
async fn structured_output_without_rules_synthesizes_a_schema_instance() {
    let server = common::start("rules: []\n").await;
    let schema = json!({"type":"object","properties":{"title":{"type":"string","minLength":3},
        "score":{"type":"integer","minimum":1,"maximum":5},"tags":{"type":"array","items":{"enum":["a","b"]}}},
        "required":["title","score","tags"],"additionalProperties":false});
    let resp = client(&server)
        .chat()
        .create(request(json!({"model":"m","messages":[{"role":"user","content":"rate it"}],
            "response_format":{"type":"json_schema","json_schema":{"name":"out","schema":schema,"strict":true}}})))
        .await
        .expect("response parses");
    let text = resp.choices[0].message.content.clone().expect("content");
    let instance: Value = serde_json::from_str(&text).expect("content is JSON");
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&instance), "{instance}");
    assert_eq!(server.journal()[0].matched_rule.as_deref(), Some("default"));
    server.shutdown().await;
}

#[tokio::test]
async fn streamed_text_reassembles_and_ends_with_finish_and_usage() {
    let server = common::start("rules:\n  - reply: {text: one two three}\n").await;
    let req = request(
        json!({"model":"m","stream":true,"stream_options":{"include_usage":true},
        "messages":[{"role":"user","content":"count"}]}),
    );
    let chunks = collect(&client(&server), req).await;
    let text: String = chunks
        .iter()
        .flat_map(|c| c.choices.iter())
        .filter_map(|c| c.delta.content.clone())
        .collect();
    assert_eq!(text, "one two three");
    let finishes: Vec<_> = chunks
        .iter()
        .flat_map(|c| c.choices.iter())
        .filter_map(|c| c.finish_reason)
        .collect();
    assert_eq!(finishes, vec![FinishReason::Stop]);
    let last = chunks.last().expect("chunks");
    assert!(last.choices.is_empty());
    assert!(last.usage.is_some());
    server.shutdown().await;
}

#[tokio::test]
async fn streamed_tool_call_fragments_merge_by_index() {
    let server = common::start(
        "rules:\n  - reply:\n      tool_calls:\n        - {name: get_weather, arguments: {city: Paris, unit: celsius}}\n        - {name: get_time, arguments: {zone: CET}}\n",
    )
    .await;
    let chunks = collect(
        &client(&server),
        request(json!({"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]})),
    )
    .await;
    let mut merged: Vec<(String, String, String)> = Vec::new();
    for delta in chunks
        .iter()
        .flat_map(|c| c.choices.iter())
        .filter_map(|c| c.delta.tool_calls.clone())
    {
        for part in delta {
            let i = part.index as usize;
            if merged.len() <= i {
                merged.resize(i + 1, Default::default());
            }
            if let Some(id) = part.id {
                merged[i].0 = id;
            }
            if let Some(f) = part.function {
                if let Some(n) = f.name {
                    merged[i].1.push_str(&n);
                }
                if let Some(a) = f.arguments {
                    merged[i].2.push_str(&a);
                }
            }
        }
    }
    assert_eq!(merged.len(), 2);
    assert_eq!(merged[0].1, "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(&merged[0].2).unwrap(),
        json!({"city":"Paris","unit":"celsius"})
    );
    assert_eq!(merged[1].0, "call_mock_0002");
    assert_eq!(
        serde_json::from_str::<Value>(&merged[1].2).unwrap(),
        json!({"zone":"CET"})
    );
    let finish = chunks
        .iter()
        .flat_map(|c| c.choices.iter())
        .find_map(|c| c.finish_reason);
    assert_eq!(finish, Some(FinishReason::ToolCalls));
    server.shutdown().await;
}

#[tokio::test]
async fn models_lists_config_and_scenario_models() {
    let server = common::start("models: [gpt-4o-mini]\nrules: []\n").await;
    let body: Value = common::http()
        .get(format!("{}/v1/models", server.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert_eq!(ids, vec!["mock-model", "gpt-4o-mini"]);
    server.shutdown().await;
}

#[tokio::test]
async fn invalid_request_gets_openai_shaped_400() {
    let server = common::start("rules: []\n").await;
    let url = format!("{}/v1/chat/completions", server.base_url());
    let (status, _, body) = common::post(&url, &json!({"messages": []})).await;
    assert_eq!(status, 400);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`model`")
    );
    let r = common::http()
        .post(&url)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    assert_eq!(server.journal().len(), 2);
    server.shutdown().await;
}

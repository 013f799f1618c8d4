//! Images a run shows its model, end to end on mock-llm over real sockets: an input file that
//! is an image (`_files`, which A2A file parts become) goes beside the first user message in
//! each API's image content — an OpenAI `image_url` data URL, an Anthropic `image` block —
//! while a file that only has an image's name does not; a provider declared without vision
//! (`vision = false`) is shown none, the run goes on and a log line says why. (Images MCP
//! tools return: `cli/tests/mcp/mcp_run.rs`.)

mod support;

use base64::Engine as _;
use serde_json::{Value, json};
use skillet_engine::protocol::EventKind;
use skillet_engine::run::Limits;
use skillet_engine::tools::ToolRegistry;
use support::*;

/// A 1×1 PNG.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

const ANSWER: &str = "rules:\n  - reply: { text: \"a small square\" }\n";

fn looker() -> SkillDir {
    SkillSpec::new("looker", "Describe the picture you are given.").write()
}

fn with_option(
    config: skillet_engine::protocol::LLMConfig,
    key: &str,
    value: Value,
) -> skillet_engine::protocol::LLMConfig {
    let mut json = serde_json::to_value(&config).unwrap();
    json["provider_config"][key] = value;
    serde_json::from_value(json).unwrap()
}

/// Runs `looker` with a PNG input, a text file named like an image, and `config`; the first
/// chat request's body and the run's log lines.
async fn run_with_files(
    server: &mock_llm::MockServer,
    config: skillet_engine::protocol::LLMConfig,
) -> (Value, Vec<String>) {
    let dir = looker();
    let h = harness(
        registry([dir.skill.clone()]),
        ToolRegistry::new(),
        Some(config),
        Limits::default(),
    );
    let files = json!([
        {"name": "pixel.png", "base64": PIXEL_PNG},
        {"name": "fake.png", "text": "no image, only the name of one"},
    ]);
    let called = h
        .call(request(
            "looker",
            json!({"prompt": "what is it?", "_files": files}),
        ))
        .await;
    let result = called.result();
    assert!(result.success, "{result:?}");
    let body = chat_bodies(server).remove(0);
    (body, messages_of(result, EventKind::Log))
}

#[tokio::test]
async fn an_image_input_goes_beside_the_first_message_as_an_openai_data_url() {
    let server = start_mock(ANSWER).await;
    let (body, _) = run_with_files(&server, llm_config(&server)).await;
    let urls: Vec<String> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|part| part["type"] == "image_url")
        .map(|part| {
            part["image_url"]["url"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(
        urls,
        vec![format!("data:image/png;base64,{PIXEL_PNG}")],
        "{body}"
    );
    // The user's text is still the first message.
    let first = &body["messages"][1];
    assert_eq!(first["role"], "user", "{body}");
    assert_eq!(first["content"], "what is it?", "{body}");
    server.shutdown().await;
}

#[tokio::test]
async fn an_image_input_is_an_anthropic_image_block_in_the_first_user_turn() {
    let server = start_mock(ANSWER).await;
    let config = llm_config_for(&server, "anthropic", "claude-test");
    let (body, _) = run_with_files(&server, config).await;
    let turn = &body["messages"][0];
    assert_eq!(turn["role"], "user", "{body}");
    let blocks = turn["content"].as_array().expect("blocks");
    assert_eq!(blocks[0]["type"], "text", "{body}");
    let images: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "image").collect();
    assert_eq!(images.len(), 1, "{body}");
    assert_eq!(images[0]["source"]["type"], "base64");
    assert_eq!(images[0]["source"]["media_type"], "image/png");
    let data = images[0]["source"]["data"].as_str().unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap(),
        base64::engine::general_purpose::STANDARD
            .decode(PIXEL_PNG)
            .unwrap()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_provider_without_vision_is_shown_no_image_and_the_run_says_why() {
    let server = start_mock(ANSWER).await;
    let config = with_option(llm_config(&server), "vision", json!(false));
    let (body, logs) = run_with_files(&server, config).await;
    assert!(!body.to_string().contains("image_url"), "{body}");
    assert!(
        logs.iter()
            .any(|l| l.contains("input file pixel.png") && l.contains("vision = false")),
        "{logs:?}"
    );
    server.shutdown().await;
}

//! Successful runs: a bundled skill on mock-llm, typed input and output, the default model from
//! environment variables.

use serde::{Deserialize, Serialize};
use serde_json::json;
use skillet_engine::protocol::{EventKind, EventPayload};
use skillet_engine::{SkillError, Skillet};

use crate::common::*;

#[tokio::test]
async fn bundled_summarize_runs_on_mock_llm_to_its_validated_output() {
    let server = start_mock(&summarize_scenario()).await;
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .default_spec(mock_spec(&server))
        .build()
        .expect("builds");
    assert!(skillet.skill_names().contains(&"summarize".to_owned()));

    let output = skillet
        .run("summarize", json!({"text": "Skillet runs skills."}))
        .await
        .expect("runs");

    assert_eq!(output.skill, "summarize");
    assert!(
        output.data["summary"]
            .as_str()
            .unwrap()
            .starts_with("Skillet runs")
    );
    assert_eq!(output.data["key_points"].as_array().unwrap().len(), 2);
    assert_eq!(output.summary.as_deref(), output.data["summary"].as_str());
    assert_eq!(output.turns, 1);
    assert!(!output.truncated);
    let usage = output
        .usage
        .as_ref()
        .expect("usage of a model-backed skill");
    assert_eq!(usage.turns.len(), 1);
    assert_eq!(usage.turns[0].model, MODEL);
    assert!(usage.input_tokens.is_some_and(|n| n > 0));
    let seqs: Vec<u64> = output.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..output.events.len() as u64).collect::<Vec<_>>());
    assert!(output.events.iter().all(|e| e.req_id == output.request_id));
    assert!(output.events.iter().any(|e| e.kind() == EventKind::Status));
    assert!(matches!(
        output.events.last().map(|e| &e.payload),
        Some(EventPayload::Log { .. } | EventPayload::Progress { .. })
    ));
    assert_eq!(chat_bodies(&server).len(), 1, "one model turn");
    server.shutdown().await;
}

#[derive(Serialize)]
struct SummarizeInput<'a> {
    text: &'a str,
    max_words: u32,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Summary {
    summary: String,
    key_points: Vec<String>,
}

#[tokio::test]
async fn run_typed_serializes_the_input_and_decodes_the_output() {
    let server = start_mock(&summarize_scenario()).await;
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .default_spec(mock_spec(&server))
        .build()
        .unwrap();

    let summary: Summary = skillet
        .run_typed(
            "summarize",
            &SummarizeInput {
                text: "Typed text.",
                max_words: 40,
            },
        )
        .await
        .expect("typed run");

    assert_eq!(summary.key_points.len(), 2);
    assert!(summary.summary.starts_with("Skillet runs"));
    let body = &chat_bodies(&server)[0];
    assert_eq!(
        body["messages"][1]["content"], r#"{"text":"Typed text.","max_words":40}"#,
        "the model saw the serialized input"
    );
    server.shutdown().await;
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct NotASummary {
    total: f64,
}

#[tokio::test]
async fn an_output_that_does_not_decode_is_a_decode_error_with_the_data() {
    let server = start_mock(&summarize_scenario()).await;
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .default_spec(mock_spec(&server))
        .build()
        .unwrap();

    let error = skillet
        .run_typed::<_, NotASummary>("summarize", &json!({"text": "x"}))
        .await
        .unwrap_err();

    match &error {
        SkillError::Decode {
            skill,
            type_name,
            error: why,
            data,
        } => {
            assert_eq!(skill, "summarize");
            assert!(type_name.ends_with("NotASummary"), "{type_name}");
            assert!(why.contains("total"), "{why}");
            assert!(data["summary"].is_string(), "the validated data is kept");
        }
        other => panic!("expected Decode, got {other:?}"),
    }
    assert!(error.to_string().contains("does not decode as"), "{error}");
    server.shutdown().await;
}

#[tokio::test]
async fn the_default_model_can_come_from_environment_variables() {
    let server = start_mock(&summarize_scenario()).await;
    let url = format!("{}/v1", server.base_url());
    let skillet = Skillet::builder()
        .skills_dir(bundled_root())
        .provider_from_vars(move |var| match var {
            "OPENAI_BASE_URL" => Some(url.clone()),
            "SKILLET_MODEL" => Some("env-model".to_owned()),
            _ => None,
        })
        .default_model("ignored-when-SKILLET_MODEL-is-set")
        .build()
        .expect("builds from the variables");

    let output = skillet
        .run("summarize", json!({"text": "From the environment."}))
        .await
        .expect("runs");

    assert_eq!(output.usage.unwrap().turns[0].model, "env-model");
    assert_eq!(chat_bodies(&server)[0]["model"], "env-model");
    server.shutdown().await;
}

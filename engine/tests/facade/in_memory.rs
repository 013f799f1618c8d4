//! One source of truth in Rust: a skill defined in memory (`skill_md`, `skill`), its output
//! schema derived from the Rust output type (`output_type`), and offline runs on a scripted
//! `MockModel` — no folder, no server, no environment variable.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use skillet_engine::skill::SkillMd;
use skillet_engine::{BuildError, MockModel, SkillError, Skillet, tool_fn};
use skillet_providers::ChatMessage;

const NOTES: &str = "---
name: notes
description: Summarizes meeting notes.
metadata:
  a2a-tags: '[\"notes\"]'
---
Summarize these notes: {{ text }}";

#[derive(Serialize)]
struct Notes<'a> {
    text: &'a str,
}

/// The one Rust type the output is.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Summary {
    /// One sentence.
    summary: String,
    /// The points, in order.
    key_points: Vec<String>,
}

fn notes_skill() -> SkillMd {
    SkillMd::new(NOTES).input_schema(json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    }))
}

#[tokio::test]
async fn a_skill_in_memory_runs_on_the_mock_model_rendered_from_its_arguments() {
    let model = MockModel::new().text("Ship it.");
    let skillet = Skillet::builder()
        .skill(notes_skill())
        .mock(model.clone())
        .build()
        .unwrap();
    assert_eq!(skillet.skill_names(), ["notes"]);
    let output = skillet
        .run("notes", json!({"text": "we ship friday"}))
        .await
        .unwrap();
    assert_eq!(
        output.text(),
        Some("Ship it."),
        "free-form: no output schema"
    );
    let sent = model.requests();
    assert_eq!(sent.len(), 1);
    let system = sent[0].system.clone().unwrap_or_default();
    assert!(
        system.contains("Summarize these notes: we ship friday"),
        "{system}"
    );
}

#[tokio::test]
async fn output_type_derives_the_schema_the_answer_is_repaired_against_and_decoded_as() {
    let model = MockModel::new()
        .json(json!({"summary": "Ship it."})) // no key_points: rejected, repaired
        .json(json!({"summary": "Ship it.", "key_points": ["ship", "friday"]}));
    let skillet = Skillet::builder()
        .skill(notes_skill())
        .output_type::<Summary>("notes")
        .mock(model.clone())
        .build()
        .unwrap();
    let summary: Summary = skillet
        .run_typed(
            "notes",
            &Notes {
                text: "we ship friday",
            },
        )
        .await
        .unwrap();
    assert_eq!(summary.key_points, ["ship", "friday"]);
    let sent = model.requests();
    assert_eq!(sent.len(), 2, "one repair turn");
    let schema = &sent[0]
        .response_schema
        .as_ref()
        .expect("a response schema")
        .schema;
    assert_eq!(schema["required"], json!(["summary", "key_points"]));
    let repair = sent[1]
        .messages
        .iter()
        .rev()
        .find_map(|m| match m {
            ChatMessage::User { text } => Some(text.as_str()),
            _ => None,
        })
        .unwrap_or_default();
    assert!(repair.contains("key_points"), "{repair}");
}

#[tokio::test]
async fn output_type_keeps_the_output_schema_a_skill_declares() {
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Other {
        other: bool,
    }
    let bundled = concat!(env!("CARGO_MANIFEST_DIR"), "/../skills");
    let skillet = Skillet::builder()
        .skills_dir(bundled)
        .output_type::<Other>("summarize")
        .build()
        .unwrap();
    let registered = skillet.executor().skills().get("summarize").unwrap();
    let schema = registered.compiled.output_schema.as_ref().unwrap().source();
    assert!(schema["properties"].get("key_points").is_some(), "{schema}");
    assert!(schema["properties"].get("other").is_none(), "{schema}");
}

#[test]
fn output_type_for_a_skill_that_is_not_loaded_fails_the_build() {
    let error = Skillet::builder()
        .skill(notes_skill())
        .output_type::<Summary>("nots")
        .build()
        .unwrap_err();
    let BuildError::Skills { problems } = &error else {
        panic!("{error}");
    };
    assert_eq!(problems.len(), 1, "{error}");
    assert!(
        error.to_string().contains("no skill named \"nots\""),
        "{error}"
    );
}

#[test]
fn a_skill_md_with_a_problem_fails_the_build_naming_it_in_memory() {
    let error = Skillet::builder()
        .skill_md("---\nname: notes\n---\nHi.")
        .build()
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("<in memory>/notes/SKILL.md"), "{text}");
    assert!(text.contains("description"), "{text}");
}

#[test]
fn a_skill_md_with_the_name_of_a_folder_skill_is_refused() {
    let bundled = concat!(env!("CARGO_MANIFEST_DIR"), "/../skills");
    let error = Skillet::builder()
        .skills_dir(bundled)
        .skill_md("---\nname: summarize\ndescription: Mine.\n---\nSummarize.")
        .build()
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("<in memory>/summarize/SKILL.md"), "{text}");
}

#[tokio::test]
async fn a_tool_call_scripted_on_the_mock_runs_the_tool_fn_and_its_result_is_sent_back() {
    #[derive(Deserialize, JsonSchema)]
    struct City {
        city: String,
    }
    let weather = tool_fn("weather", "Today's weather", |c: City| async move {
        Ok(format!("sunny in {}", c.city))
    });
    let model = MockModel::new()
        .tool_call("weather", json!({"city": "Lisbon"}))
        .text("Sunny.");
    let skillet = Skillet::builder()
        .skill_md(
            "---\nname: forecast\ndescription: Says the weather.\nmetadata:\n  \
             a2e-tools: '[\"weather\"]'\n  a2a-tags: '[\"weather\"]'\n---\nSay the weather.",
        )
        .tool(weather)
        .mock(model.clone())
        .build()
        .unwrap();
    let output = skillet.run("forecast", json!({})).await.unwrap();
    assert_eq!(output.text(), Some("Sunny."));
    let results: Vec<String> = model.requests()[1]
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::ToolResult { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("sunny in Lisbon"), "{results:?}");
}

#[tokio::test]
async fn a_mock_model_out_of_answers_fails_the_run_saying_to_script_one_more() {
    let skillet = Skillet::builder()
        .skill(notes_skill())
        .mock(MockModel::new())
        .build()
        .unwrap();
    let error = skillet
        .run("notes", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(matches!(error, SkillError::Provider { .. }), "{error:?}");
    assert!(error.to_string().contains("MockModel::json"), "{error}");
}

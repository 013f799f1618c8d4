//! The README's library section, run as it is written: a skill defined in memory, its output
//! schema derived from the Rust type the caller decodes, on a scripted model.
//!
//! `cargo run -p skillet-engine --example facade` runs offline: `.mock(...)` is the model. For a
//! real one, `.provider_from_env()` instead reads OPENAI_API_KEY, ANTHROPIC_API_KEY,
//! OLLAMA_HOST, ... and SKILLET_MODEL (`docs/LIBRARY.md`).

use serde_json::json;
use skillet_engine::{MockModel, Skillet};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Summary {
    summary: String,
    key_points: Vec<String>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let skill_md = "---\nname: summarize\ndescription: Summarizes a text.\n---\nSummarize it.";
    let model = MockModel::new().json(json!({"summary": "Short.", "key_points": ["a"]}));
    let skillet = Skillet::builder()
        .skill_md(skill_md) // or .skills_dir("skills"): SKILL.md folders
        .output_type::<Summary>("summarize") // its output schema, derived from Summary
        .mock(model) // or .provider_from_env(): OPENAI_API_KEY, OLLAMA_HOST, ... + SKILLET_MODEL
        .build()?; // every skill that fails to load is listed in the error, with its file
    let input = json!({"prompt": "Skillet runs SKILL.md skills."});
    let summary: Summary = skillet.run_typed("summarize", &input).await?;
    println!("{}: {:?}", summary.summary, summary.key_points);
    Ok(())
}

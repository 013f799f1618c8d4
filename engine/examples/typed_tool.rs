//! A typed tool: arguments decoded into a Rust struct whose `schemars` schema is what the model
//! sees, the output any `Serialize` value. The mock LLM (`mock-llm`, in process) plays a model
//! that calls the tool once and then answers with the tool's result.
//!
//! `cargo run -p skillet-engine --example typed_tool` (offline).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use skillet_engine::{Skillet, tool_fn};

/// What the model passes to `convert`.
#[derive(Deserialize, JsonSchema)]
struct Convert {
    /// The amount, in `from` units.
    amount: f64,
    /// The unit of `amount`.
    from: Unit,
}

/// A length unit.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    /// Miles.
    Miles,
    /// Kilometres.
    Km,
}

/// What `convert` answers.
#[derive(Serialize)]
struct Converted {
    km: f64,
}

const SKILL: &str = "---\nname: distance\ndescription: Converts a distance to kilometres.\n\
metadata:\n  a2e-tools: '[\"convert\"]'\n---\nYou convert distances. Use the convert tool.\n";

const SCENARIO: &str = r#"
rules:
  - name: call the tool
    when: { system_contains: "You convert distances", tool_results: false }
    reply:
      tool_calls:
        - name: convert
          arguments: { amount: 26.2, from: miles }
  - name: answer with its result
    when: { system_contains: "You convert distances", tool_result_contains: "km" }
    reply:
      text: "26.2 miles is about 42.2 km."
"#;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let convert = tool_fn(
        "convert",
        "Converts a distance to km",
        |args: Convert| async move {
            let km = match args.from {
                Unit::Miles => args.amount * 1.609_344,
                Unit::Km => args.amount,
            };
            Ok(Converted { km })
        },
    );
    println!(
        "the model sees: {}",
        skillet_engine::tools::Tool::input_schema(&*convert)
    );

    let skills = tempfile::tempdir()?;
    std::fs::create_dir(skills.path().join("distance"))?;
    std::fs::write(skills.path().join("distance/SKILL.md"), SKILL)?;
    let scenario = mock_llm::Scenario::from_yaml_str(SCENARIO)?;
    let mock = mock_llm::MockServer::start(mock_llm::MockConfig::default().with_scenario(scenario))
        .await?;
    let model = skillet_providers::ProviderSpec::new(
        skillet_providers::ProviderKind::OpenaiCompatible,
        "mock-model",
        Some(&format!("{}/v1", mock.base_url())),
    )?;

    let skillet = Skillet::builder()
        .skills_dir(skills.path())
        .default_spec(model)
        .tool(convert)
        .build()?;
    let output = skillet
        .run("distance", json!({"prompt": "How far is a marathon?"}))
        .await?;
    println!("{} ({} turns)", output.data, output.turns);
    assert_eq!(output.turns, 2);
    mock.shutdown().await;
    Ok(())
}

//! The README's library section, run as it is written: the bundled `summarize` skill, the
//! default model from the environment.
//!
//! `cargo run -p skillet-engine --example facade` runs offline: it starts the in-process mock LLM
//! (`mock-llm`) with the skill's scenario and runs itself again with `OPENAI_BASE_URL` pointing at
//! it and `SKILLET_MODEL=mock-model`, so [`readme`] reads them as it would read a real provider's.

use serde_json::json;
use skillet_engine::Skillet;

/// Set in the re-run that executes the README's lines.
const CHILD: &str = "SKILLET_FACADE_EXAMPLE_CHILD";

/// The README's lines.
async fn readme() -> Result<(), Box<dyn std::error::Error>> {
    let skillet = Skillet::builder()
        .skills_dir("skills")
        .provider_from_env() // OPENAI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_HOST, ... + SKILLET_MODEL
        .build()?;
    let output = skillet
        .run("summarize", json!({"text": "Skillet runs skills."}))
        .await?;
    println!("{}", output.summary.unwrap_or_default());
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `skills` as the README means it: the repository's own folder.
    std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))?;
    if std::env::var_os(CHILD).is_some() {
        return readme().await;
    }
    let scenario = std::fs::read_to_string("skills/summarize/mock-scenario.yaml")?;
    let scenario = mock_llm::Scenario::from_yaml_str(&scenario)?;
    let mock = mock_llm::MockServer::start(mock_llm::MockConfig::default().with_scenario(scenario))
        .await?;
    let mut child = tokio::process::Command::new(std::env::current_exe()?);
    for var in [
        "SKILLET_PROVIDER",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OLLAMA_HOST",
    ] {
        child.env_remove(var);
    }
    let status = child
        .env("OPENAI_BASE_URL", format!("{}/v1", mock.base_url()))
        .env("SKILLET_MODEL", "mock-model")
        .env(CHILD, "1")
        .status()
        .await?;
    mock.shutdown().await;
    if !status.success() {
        return Err(format!("the README's lines failed: {status}").into());
    }
    Ok(())
}

//! # skillet-engine
//!
//! Runs *skills* — folders with a `SKILL.md` and JSON Schemas — for agent hosts.
//!
//! The crate is layered so data flows one way: a transport (`host`) decodes an A2E message
//! (`protocol`), looks the skill up (`skill`), and hands the call to the run loop (`run`), which
//! renders the instructions (`template`), validates data (`schema`), talks to a model through
//! `skillet-providers`, and dispatches the tools the skill declared (`tools`, `toolkits`,
//! `sandboxed`). A lower layer never imports a higher one.
//!
//! From Rust, start with [`Skillet`] (the `facade` module): load skills, plug in providers and
//! typed tools ([`tool_fn`]), and run a skill to a [`SkillOutput`] or a [`SkillError`]:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let scenario = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../skills/summarize/mock-scenario.yaml"))?;
//! # let mock = mock_llm::MockServer::start(mock_llm::MockConfig::default().with_scenario(mock_llm::Scenario::from_yaml_str(&scenario)?)).await?;
//! # let url = format!("{}/v1", mock.base_url());
//! let skillet = skillet_engine::Skillet::builder()
//!     .skills_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../skills"))
//!     .provider_from_vars(move |var| (var == "OPENAI_BASE_URL").then(|| url.clone()))
//!     .default_model("mock-model")
//!     .build()?;
//! let output = skillet.run("summarize", serde_json::json!({"text": "Skillet runs skills."})).await?;
//! println!("{}", output.data["summary"]);
//! # Ok(()) }
//! ```

pub mod config;
pub mod deadline;
pub mod eval;
pub mod events;
pub mod facade;
pub mod files;
pub mod handler;
pub mod host;
pub mod protocol;
pub mod run;
pub mod sandboxed;
pub mod schema;
pub mod secrets;
pub mod service;
pub mod skill;
pub mod telemetry;
pub mod template;
pub mod toolkits;
pub mod tools;

pub use facade::{
    ArgumentViolation, BuildError, Call, FailedRun, SkillError, SkillOutput, SkillStream, Skillet,
    SkilletBuilder, input_schema_for, tool_fn, tool_fn_with_context,
};

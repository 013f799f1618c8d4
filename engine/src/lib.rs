//! # skillet-engine
//!
//! Runs *skills* — folders with a `SKILL.md` and JSON Schemas — for agent hosts.
//!
//! The crate is layered so data flows one way: a caller (a transport of `skillet-host`, the
//! `skillet` binary, or a Rust program) hands an A2E call ([`protocol`], re-exported from
//! `skillet-protocol`) to the run loop ([`run`]) through [`service::SkillService`]; the loop looks
//! the skill up ([`skill`]), renders the instructions ([`template`]), validates data
//! ([`schema`]), talks to a model through `skillet-providers`, and dispatches the tools the skill
//! declared ([`tools`], [`files`], [`sandboxed`]). A lower layer never imports a higher one.
//!
//! Not here: transports and their protocols (`skillet-host`), toolkits reached over MCP
//! (`skillet-toolkits`), the command line and `skillet.toml` (`skillet`).
//!
//! The surface: the facade at the root ([`Skillet`] and its types; [`Authoring`], the console's
//! `Workbench`), and the modules that a program wiring the engine itself names (the `skillet`
//! binary builds a [`run::Executor`] over a [`skill::Registry`] and a [`tools::ToolRegistry`]).
//! Inside each module the parts are private and what a user needs is re-exported at its top; the
//! fuzz targets' extra entry points are behind the `fuzzing` feature.
//!
//! From Rust, start with [`Skillet`]: load skills, plug in providers and
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

#![warn(missing_docs)]
#![deny(unreachable_pub)]
#![warn(unnameable_types)]

/// The contracts shared with the doors and toolkits (`skillet-core`), at the paths the engine
/// has always offered them.
pub use skillet_core::{approval, deadline, events, secrets, service};
pub use skillet_protocol as protocol;

mod authoring;
pub mod checkpoint;
pub mod environments;
pub mod eval;
mod facade;
pub mod files;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod handler;
pub mod run;
pub mod sandboxed;
pub mod schema;
pub mod skill;
pub mod telemetry;
pub mod template;
pub mod tools;

pub use authoring::Authoring;
pub use facade::{
    ArgumentViolation, BuildError, Call, FailedRun, MOCK_PROVIDER, MockModel, SkillError,
    SkillOutput, SkillStream, Skillet, SkilletBuilder, input_schema_for, output_schema_for,
    tool_fn,
};

//! The typed Rust API: [`Skillet`] runs skills from Rust code the way the transports run them
//! for agents, with Rust types at both ends.
//!
//! - [`Skillet::builder`] → [`SkilletBuilder`] (`builder`): skills directories or SKILL.md
//!   texts in memory, a skill's output type, the default model (from the environment, a spec,
//!   your own [`Provider`] registered by name, or a scripted [`MockModel`] (`mock`) for offline
//!   tests), tools, limits; [`SkilletBuilder::build`] returns every skill load problem as a
//!   [`BuildError`].
//! - [`Skillet::run`], [`Skillet::run_typed`], [`Skillet::call`] (`skillet`): one call →
//!   [`SkillOutput`] (`output`: validated data, summary, usage, events, duration, turns) or
//!   [`SkillError`] (`error`: one variant per thing a caller handles differently; `answer`
//!   maps the wire answer onto them).
//! - [`Skillet::run_streaming`] → [`SkillStream`] (`streaming`): the events as a
//!   `futures::Stream`, then the output; dropping it cancels the run.
//! - [`tool_fn`] (`typed_tool`): the one way to make a tool of a Rust closure, over a `serde` +
//!   `schemars` argument type, its input schema generated; [`input_schema_for`] and
//!   [`output_schema_for`] (`typed_schema`): the schemas `schemars` derives, made fit for the
//!   engine's 2020-12 check.
//!
//! What is not here: anything a transport needs. The facade is a layer over the wire-level
//! [`Executor`](crate::run::Executor) (which `Skillet::executor` hands out, e.g. to serve the
//! same skills over A2E or MCP); it adds no behaviour to a call, only types around it. It reads
//! no configuration file and imports no host module.
//!
//! # Example: one Rust type, no folder, offline
//!
//! A skill defined in memory, its output schema derived from the type the caller decodes, on a
//! scripted model whose first answer is wrong (the run repairs it, as with a real model):
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use serde_json::json;
//! use skillet_engine::{MockModel, Skillet};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Summary { summary: String, key_points: Vec<String> }
//!
//! let model = MockModel::new()
//!     .json(json!({"summary": "Skillet runs skills."})) // no key_points: rejected
//!     .json(json!({"summary": "Skillet runs skills.", "key_points": ["skills", "runs"]}));
//! let skillet = Skillet::builder()
//!     .skill_md("---\nname: summarize\ndescription: Summarizes a text.\n---\nSummarize the request.")
//!     .output_type::<Summary>("summarize") // the output schema, derived from Summary
//!     .mock(model.clone())
//!     .build()?;
//! let summary: Summary = skillet
//!     .run_typed("summarize", &json!({"prompt": "Skillet runs SKILL.md skills."}))
//!     .await?;
//! assert_eq!(summary.key_points, ["skills", "runs"]);
//! assert_eq!(model.requests().len(), 2); // the answer, and its repair
//! # assert!(!summary.summary.is_empty());
//! # Ok(()) }
//! ```
//!
//! # Example: a bundled skill on the in-process mock LLM
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let scenario = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../skills/summarize/mock-scenario.yaml"))?;
//! # let mock = mock_llm::MockServer::start(mock_llm::MockConfig::default().with_scenario(mock_llm::Scenario::from_yaml_str(&scenario)?)).await?;
//! # let mock_url = format!("{}/v1", mock.base_url());
//! use serde_json::json;
//! use skillet_engine::Skillet;
//!
//! let skillet = Skillet::builder()
//!     .skills_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../skills"))
//!     // `.provider_from_env()` reads OPENAI_BASE_URL and friends; here a given table does.
//!     .provider_from_vars(move |var| (var == "OPENAI_BASE_URL").then(|| mock_url.clone()))
//!     .default_model("mock-model")
//!     .build()?;
//! let output = skillet.run("summarize", json!({"text": "Skillet runs skills."})).await?;
//! assert!(output.data["key_points"].is_array());
//! assert!(output.summary.unwrap_or_default().starts_with("Skillet runs"));
//! assert_eq!(output.turns, 1);
//! # Ok(()) }
//! ```
//!
//! # Example: typed input and output
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let scenario = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../skills/summarize/mock-scenario.yaml"))?;
//! # let mock = mock_llm::MockServer::start(mock_llm::MockConfig::default().with_scenario(mock_llm::Scenario::from_yaml_str(&scenario)?)).await?;
//! # let spec = skillet_providers::ProviderSpec::new(skillet_providers::ProviderKind::OpenaiCompatible, "mock-model", Some(&format!("{}/v1", mock.base_url())))?;
//! # let skillet = skillet_engine::Skillet::builder().skills_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../skills")).default_spec(spec).build()?;
//! #[derive(serde::Serialize)]
//! struct Text<'a> { text: &'a str, max_words: u32 }
//!
//! #[derive(serde::Deserialize)]
//! struct Summary { summary: String, key_points: Vec<String> }
//!
//! let summary: Summary = skillet
//!     .run_typed("summarize", &Text { text: "Skillet runs skills.", max_words: 40 })
//!     .await?;
//! assert_eq!(summary.key_points.len(), 2);
//! # assert!(!summary.summary.is_empty());
//! # Ok(()) }
//! ```
//!
//! # Example: your own provider
//!
//! Any [`Provider`] registered by name is used as the default, by skills that name it in
//! `a2e-provider`, and by calls the host allows to choose it
//! ([`SkilletBuilder::allow_provider_override`]):
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use async_trait::async_trait;
//! use skillet_providers::{CallOptions, ChatMessage, ChatRequest, ChatResponse, FinishReason,
//!     Provider, ProviderError, ProviderKind};
//!
//! /// Answers every prompt with `{"summary": <the prompt>, "key_points": ["echoed"]}`.
//! struct Echo;
//!
//! #[async_trait]
//! impl Provider for Echo {
//!     fn kind(&self) -> ProviderKind { ProviderKind::OpenaiCompatible } // for telemetry labels
//!     fn model(&self) -> &str { "echo-1" }
//!     async fn chat_borrowed(&self, request: &ChatRequest, _: CallOptions<'_>)
//!         -> Result<ChatResponse, ProviderError> {
//!         let prompt = match request.messages.first() {
//!             Some(ChatMessage::User { text }) => text.clone(),
//!             _ => String::new(),
//!         };
//!         let answer = serde_json::json!({"summary": prompt, "key_points": ["echoed"]});
//!         Ok(ChatResponse { text: answer.to_string(), tool_calls: vec![],
//!             finish_reason: FinishReason::Stop, usage: None, request_id: None, reasoning: None,
//!             thinking: vec![] })
//!     }
//! }
//!
//! let skillet = skillet_engine::Skillet::builder()
//!     .skills_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../skills"))
//!     .provider("echo", Arc::new(Echo))
//!     .default_provider("echo")
//!     .build()?;
//! let output = skillet.run("summarize", serde_json::json!({"text": "hi"})).await?;
//! assert_eq!(output.data["key_points"][0], "echoed");
//! # Ok(()) }
//! ```
//!
//! # Example: a typed tool
//!
//! [`tool_fn`] turns an async closure over a `Deserialize + JsonSchema` type into a tool; the
//! model sees the generated schema, the closure gets the decoded arguments:
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use skillet_engine::{Skillet, tool_fn};
//!
//! /// A city.
//! #[derive(Deserialize, JsonSchema)]
//! struct City {
//!     /// Its name, e.g. "Lisbon".
//!     name: String,
//! }
//!
//! let weather = tool_fn("weather", "Today's weather in a city", |city: City| async move {
//!     Ok(format!("sunny in {}", city.name))
//! });
//! let skillet = Skillet::builder().tool(weather).build()?;
//! # let _ = skillet;
//! # Ok::<(), skillet_engine::BuildError>(())
//! ```
//!
//! `examples/typed_tool.rs` runs one against the mock LLM (`cargo run -p skillet-engine
//! --example typed_tool`).
//!
//! [`Provider`]: skillet_providers::Provider

#![warn(missing_docs)]

mod answer;
mod builder;
mod env_provider;
mod error;
mod mock;
mod output;
mod skillet;
mod streaming;
mod typed_schema;
mod typed_tool;

pub use builder::{BuildError, SkilletBuilder};
pub use error::{ArgumentViolation, FailedRun, SkillError};
pub use mock::{MOCK_PROVIDER, MockModel};
pub use output::SkillOutput;
pub use skillet::{Call, Skillet};
pub use streaming::SkillStream;
pub use typed_schema::{input_schema_for, output_schema_for};
pub use typed_tool::tool_fn;

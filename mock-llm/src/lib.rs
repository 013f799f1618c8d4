//! # mock-llm
//!
//! A deterministic LLM server for tests and demos. It speaks the OpenAI Chat Completions, Ollama
//! native, Anthropic Messages and Google Gemini APIs closely enough that their official SDKs accept it, answers
//! from a scripted [`Scenario`] (or synthesizes a JSON-Schema instance / echo text when no rule
//! applies), injects [`Fault`]s on demand, and keeps a [`JournalEntry`] per request.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use mock_llm::{MockConfig, MockServer, Scenario};
//! let scenario = Scenario::from_yaml_str("rules:\n  - reply: {text: hello}\n")?;
//! let server = MockServer::start(MockConfig::default().with_scenario(scenario)).await?;
//! let openai_base = format!("{}/v1", server.base_url());
//! # let _ = openai_base;
//! // ... point a client at it ...
//! assert!(server.journal().is_empty());
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Crate map: `server` (router, state, control API), `accept` (HTTP/1.1 and HTTP/2 `h2c` on
//! one port, graceful stop), `dispatch` (which answer), `scenario` and
//! `matching` (the script), `synth` and `pattern` (schema → instance), `faults`, `journal`,
//! `delivery` (timing, cut streams), `wire` + `openai` / `ollama` / `anthropic` / `gemini` (wire formats),
//! `request` / `reply` (the neutral forms between them), `config` (settings and clock).
//! `record` is the recording proxy (`mock-llm record`): a real server's answers → a scenario.
//! This crate depends on nothing else in the workspace.

mod accept;
mod anthropic;
mod config;
mod delivery;
mod dialect;
mod dispatch;
mod faults;
mod gemini;
mod journal;
mod matching;
mod ollama;
mod openai;
mod pattern;
mod record;
mod reply;
mod request;
mod scenario;
mod scenario_error;
mod server;
mod synth;
mod wire;

pub use accept::MAX_HTTP2_STREAMS;
pub use config::{Clock, DEFAULT_EPOCH_SECS, DEFAULT_MAX_BODY_BYTES, MockConfig};
pub use dialect::{IdQuirk, ToolSupport, Wrap};
pub use faults::{Fault, FaultKind, StatusFault, ToolCallProblem};
pub use journal::{JournalEntry, REDACTED};
pub use record::{RecordConfig, RecordError, Recorder, WriteError};
pub use reply::{Finish, Usage};
pub use request::Endpoint;
pub use scenario::{
    Dialect, Match, ReplySpec, Rule, Scenario, ScenarioError, Timing, ToolCallSpec,
};
pub use server::{MockServer, StartError};
pub use synth::synthesize;

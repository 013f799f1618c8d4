//! The embedded default model: mock-llm started in-process when no provider is configured, so
//! `skillet run` and `skillet serve` work on a fresh machine with no network.
//!
//! The mock answers from a scenario: for `run`, the skill folder's `mock-scenario.yaml` when
//! there is one; for `serve`, the `mock-scenario.yaml` files of every skill merged in skill-name
//! order (rules are tried in order, so a skill's rules should be scoped with `when:`); a
//! configured `scenario = "FILE"` (a `kind = "mock"` provider) replaces both. With no scenario
//! the mock synthesizes an instance of the skill's output schema, or echoes text when the skill
//! has none. The engine reaches it as an `openai-compatible` provider with model `mock-llm`.
//!
//! Not here: deciding *whether* to use the mock (`config::ProviderChoice`).

use std::path::{Path, PathBuf};

use mock_llm::{MockConfig, MockServer, Scenario, ScenarioError};
use serde_json::{Map, Value};

use skillet_protocol::{Credentials, LLMConfig};

/// The scenario file looked for in a skill folder.
pub const SCENARIO_FILE: &str = "mock-scenario.yaml";

/// The model name the embedded mock is addressed with.
pub const MOCK_MODEL: &str = "mock-llm";

/// Why the embedded mock could not start.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    /// A scenario file is unusable.
    #[error("mock scenario {path}: {source}")]
    Scenario {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: ScenarioError,
    },
    /// The server could not bind 127.0.0.1.
    #[error("cannot start the embedded mock-llm: {0}")]
    Start(String),
}

/// A running in-process mock-llm; it stops when dropped.
#[derive(Debug)]
pub struct EmbeddedMock {
    server: MockServer,
    scenario_files: Vec<PathBuf>,
}

impl EmbeddedMock {
    /// Starts the mock on `127.0.0.1:0` with the scenarios in `scenario_files`, merged in order
    /// (none: schema synthesis). `max_message_bytes` is the largest A2E message the host
    /// accepts: the mock takes model requests far larger (see [`body_limit_for`]), so a legal
    /// call never fails on the mock's own limit.
    pub async fn start(
        scenario_files: Vec<PathBuf>,
        max_message_bytes: usize,
    ) -> Result<Self, EmbeddedError> {
        let mut scenario = Scenario::new();
        for path in &scenario_files {
            let loaded = Scenario::from_file(path).map_err(|source| EmbeddedError::Scenario {
                path: path.clone(),
                source,
            })?;
            scenario = scenario.merge(loaded);
        }
        let config = MockConfig::default()
            .with_scenario(scenario)
            .with_max_body_bytes(body_limit_for(max_message_bytes));
        let server = MockServer::start(config)
            .await
            .map_err(|e| EmbeddedError::Start(e.to_string()))?;
        Ok(EmbeddedMock {
            server,
            scenario_files,
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// The scenario files in use (empty: schema synthesis).
    pub fn scenario_files(&self) -> &[PathBuf] {
        &self.scenario_files
    }

    /// The host default `LLMConfig` pointing at this mock.
    pub fn llm_config(&self) -> LLMConfig {
        let mut config = Map::new();
        config.insert("model".into(), Value::String(MOCK_MODEL.into()));
        config.insert(
            "base_url".into(),
            Value::String(format!("{}/v1", self.base_url())),
        );
        LLMConfig {
            provider_name: "openai-compatible".into(),
            provider_credentials: Credentials::new(),
            provider_config: Some(config),
            is_default: true,
        }
    }

    /// One line for stderr saying what runs and how to switch to a real model.
    pub fn notice(&self) -> String {
        let script = if self.scenario_files.is_empty() {
            "answers synthesized from each skill's output schema".to_owned()
        } else {
            let files: Vec<String> = self
                .scenario_files
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            format!("scenario {}", files.join(", "))
        };
        format!(
            "no provider configured: using the embedded mock-llm at {} ({script}); \
             use --provider/--model or skillet.toml for a real model",
            self.base_url()
        )
    }
}

/// The mock's request-body limit for a host accepting `max_message_bytes`: a model request
/// carries the call's arguments at least twice (rendered into the instructions and as the user
/// message), JSON-escaped (up to 6 bytes per byte), and a conversation re-sends them every
/// turn; so 16 times the message, and never below mock-llm's own default.
pub fn body_limit_for(max_message_bytes: usize) -> usize {
    max_message_bytes
        .saturating_mul(16)
        .max(mock_llm::DEFAULT_MAX_BODY_BYTES)
}

/// The skill folder's `mock-scenario.yaml`, when it has one.
pub fn scenario_in(skill_dir: &Path) -> Option<PathBuf> {
    let path = skill_dir.join(SCENARIO_FILE);
    path.is_file().then_some(path)
}

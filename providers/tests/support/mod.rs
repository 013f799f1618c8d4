//! Shared helpers for the provider tests: a mock-llm server per test, specs pointing at it, and
//! sinks/observers that record what they are told.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use mock_llm::{JournalEntry, MockConfig, MockServer, Scenario};
use secrecy::SecretString;
use serde_json::{Value, json};
use skillet_providers::{
    ChatMessage, ChatRequest, Provider, ProviderKind, ProviderPool, ProviderSpec, RetryNotice,
};

/// The key every test spec carries; the canary test looks for it everywhere.
pub const TEST_KEY: &str = "sk-canary-7f3a9d1e-do-not-leak";

/// Starts a mock server with a YAML scenario.
pub async fn server(yaml: &str) -> MockServer {
    let scenario = Scenario::from_yaml_str(yaml).expect("test scenario parses");
    MockServer::start(MockConfig::default().with_scenario(scenario))
        .await
        .expect("mock server starts")
}

/// A spec for `kind` pointing at `server`, with fast retries and `extra` merged into the
/// provider_config.
pub fn spec(kind: ProviderKind, server: &MockServer, extra: Value) -> ProviderSpec {
    let base = match kind {
        ProviderKind::Openai | ProviderKind::OpenaiCompatible => {
            format!("{}/v1", server.base_url())
        }
        ProviderKind::Ollama | ProviderKind::Anthropic | ProviderKind::Gemini => server.base_url(),
    };
    let mut config = json!({
        "model": "mock-model",
        "base_url": base,
        "initial_backoff_ms": 5,
        "max_backoff_ms": 20,
        "connect_timeout_ms": 2000,
        "read_timeout_ms": 10000,
    });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        config[k] = v;
    }
    let credentials = |key: &str| (key == "api_key").then(|| SecretString::from(TEST_KEY));
    ProviderSpec::from_llm_config(kind.as_str(), config.as_object(), &credentials)
        .expect("test spec is valid")
}

/// A provider for `kind` against `server`.
pub fn provider(kind: ProviderKind, server: &MockServer, extra: Value) -> Arc<dyn Provider> {
    ProviderPool::new()
        .provider(&spec(kind, server, extra))
        .expect("provider builds")
}

/// A one-message request.
pub fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        system: Some("You are a test.".into()),
        messages: vec![ChatMessage::user(text)],
        ..Default::default()
    }
}

/// Chat requests the server received (ignores model listings and control calls).
pub fn chat_requests(server: &MockServer) -> Vec<JournalEntry> {
    server
        .journal()
        .into_iter()
        .filter(|e| {
            e.endpoint.ends_with(".chat")
                || e.endpoint.ends_with(".messages")
                || e.endpoint.ends_with(".generate_content")
        })
        .collect()
}

/// Collects streamed deltas.
#[derive(Default)]
pub struct Deltas(pub Mutex<Vec<String>>);

impl Deltas {
    pub fn joined(&self) -> String {
        self.0.lock().unwrap().concat()
    }
    pub fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

impl skillet_providers::StreamSink for Deltas {
    fn text_delta(&self, delta: &str) {
        self.0.lock().unwrap().push(delta.to_owned());
    }
}

/// Collects retry notices.
#[derive(Default)]
pub struct Retries(pub Mutex<Vec<RetryNotice>>);

impl skillet_providers::RetryObserver for Retries {
    fn retrying(&self, notice: &RetryNotice) {
        self.0.lock().unwrap().push(notice.clone());
    }
}

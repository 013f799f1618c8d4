//! Helpers of the facade tests: mock-llm specs, skill folders written on the fly, and a Rust
//! provider that counts its calls and answers as told.

#![allow(dead_code)] // each test module uses a different subset

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use mock_llm::MockServer;
use serde_json::Value;
use skillet_providers::{
    CallOptions, ChatMessage, ChatRequest, ChatResponse, FinishReason, Provider, ProviderError,
    ProviderErrorKind, ProviderKind, ProviderSpec,
};

pub use crate::support::{MODEL, bundled_dir, chat_bodies, start_mock, tool_results_in};

/// The repository's `skills/`.
pub fn bundled_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("skills")
}

/// The `summarize` skill's own mock scenario.
pub fn summarize_scenario() -> String {
    std::fs::read_to_string(bundled_dir("summarize").join("mock-scenario.yaml"))
        .expect("the bundled scenario reads")
}

/// An OpenAI-compatible spec for `server`, with fast retries.
pub fn mock_spec(server: &MockServer) -> ProviderSpec {
    let mut spec = ProviderSpec::new(
        ProviderKind::OpenaiCompatible,
        MODEL,
        Some(&format!("{}/v1", server.base_url())),
    )
    .expect("mock spec");
    spec.retry.initial_backoff = Duration::from_millis(5);
    spec.retry.max_backoff = Duration::from_millis(20);
    spec
}

/// A temp folder of skills: `(name, SKILL.md text)` each in its own folder.
pub fn skills(entries: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    for (name, md) in entries {
        let dir = root.path().join(name);
        std::fs::create_dir_all(&dir).expect("skill dir");
        std::fs::write(dir.join("SKILL.md"), md).expect("SKILL.md");
    }
    root
}

/// A SKILL.md named `name` with these metadata lines and body.
pub fn skill_md(name: &str, metadata: &[(&str, &str)], body: &str) -> String {
    let mut md = format!("---\nname: {name}\ndescription: Test skill {name}.\nmetadata:\n");
    md.push_str("  a2e-template: literal\n");
    for (key, value) in metadata {
        md.push_str(&format!(
            "  {key}: {}\n",
            serde_json::to_string(value).unwrap()
        ));
    }
    md.push_str("---\n");
    md.push_str(body);
    md
}

/// What a [`Scripted`] provider does on each call.
#[derive(Clone)]
pub enum Behavior {
    /// Answers this JSON value.
    Answer(Value),
    /// Never answers (until dropped).
    Hang,
    /// Fails with this kind.
    Fail(ProviderErrorKind),
}

/// A Rust provider that counts its calls and records the first user message of each.
pub struct Scripted {
    model: String,
    behavior: Behavior,
    calls: AtomicUsize,
    /// Hanging calls whose future was dropped (the run stopped waiting).
    dropped: Arc<AtomicUsize>,
    prompts: std::sync::Mutex<Vec<String>>,
}

/// Counts a hanging call as dropped when its future goes away.
struct DropCount(Arc<AtomicUsize>);

impl Drop for DropCount {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Scripted {
    pub fn new(model: &str, behavior: Behavior) -> Arc<Self> {
        Arc::new(Scripted {
            model: model.to_owned(),
            behavior,
            calls: AtomicUsize::new(0),
            dropped: Arc::default(),
            prompts: Default::default(),
        })
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// How many hanging calls were dropped.
    pub fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }

    pub fn prompts(&self) -> Vec<String> {
        self.prompts.lock().unwrap().clone()
    }
}

#[async_trait]
impl Provider for Scripted {
    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenaiCompatible
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn chat_borrowed(
        &self,
        request: &ChatRequest,
        _options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(ChatMessage::User { text }) = request.messages.first() {
            self.prompts.lock().unwrap().push(text.clone());
        }
        match &self.behavior {
            Behavior::Answer(value) => Ok(ChatResponse {
                // A string is the model's plain text; anything else its JSON.
                text: match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                },
                tool_calls: Vec::new(),
                finish_reason: FinishReason::Stop,
                usage: None,
                request_id: None,
                reasoning: None,
                thinking: Vec::new(),
            }),
            Behavior::Hang => {
                let _count_when_dropped = DropCount(self.dropped.clone());
                futures::future::pending().await
            }
            Behavior::Fail(kind) => Err(ProviderError::new(kind.clone(), "scripted failure")),
        }
    }
}

/// A valid `summarize` output.
pub fn summary_json(text: &str) -> Value {
    serde_json::json!({"summary": text, "key_points": ["one point"]})
}

//! Your own model behind Skillet: a Rust [`Provider`] registered by name, used as the default
//! for the bundled `summarize` skill and chosen by name from a skill's `a2e-provider`.
//!
//! `cargo run -p skillet-engine --example custom_provider` (offline: the provider is this file).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::json;
use skillet_engine::Skillet;
use skillet_providers::{
    CallOptions, ChatMessage, ChatRequest, ChatResponse, FinishReason, Provider, ProviderError,
    ProviderKind,
};

/// A "model" that answers every prompt with its first user message as the summary, and counts
/// its calls.
#[derive(Default)]
struct Echo {
    calls: AtomicUsize,
}

#[async_trait]
impl Provider for Echo {
    /// The wire kind closest to it; used only for telemetry labels.
    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenaiCompatible
    }

    fn model(&self) -> &str {
        "echo-1"
    }

    async fn chat_borrowed(
        &self,
        request: &ChatRequest,
        _options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let prompt = match request.messages.first() {
            Some(ChatMessage::User { text }) => text.clone(),
            _ => String::new(),
        };
        let answer = json!({"summary": format!("echo: {prompt}"), "key_points": ["echoed"]});
        Ok(ChatResponse {
            text: answer.to_string(),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: None,
            request_id: None,
            reasoning: None,
            thinking: Vec::new(),
        })
    }
}

/// A skill that names the provider itself (`a2e-provider: echo`).
const NAMED_SKILL: &str = "---\nname: echo-note\ndescription: Notes a text through the echo model.\n\
metadata:\n  a2e-provider: echo\n---\nRepeat the text.\n";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let extra = tempfile::tempdir()?;
    std::fs::create_dir(extra.path().join("echo-note"))?;
    std::fs::write(extra.path().join("echo-note/SKILL.md"), NAMED_SKILL)?;

    let echo = Arc::new(Echo::default());
    let skillet = Skillet::builder()
        .skills_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../skills"))
        .skills_dir(extra.path())
        .provider("echo", echo.clone())
        .default_provider("echo")
        .build()?;

    let output = skillet
        .run("summarize", json!({"text": "Rust 1.0 shipped in 2015."}))
        .await?;
    println!("summarize → {}", output.data["summary"]);
    let note = skillet.run("echo-note", json!({"prompt": "hello"})).await?;
    println!("echo-note → {}", note.data);
    println!(
        "the echo model answered {} calls",
        echo.calls.load(Ordering::SeqCst)
    );
    assert_eq!(echo.calls.load(Ordering::SeqCst), 2);
    Ok(())
}

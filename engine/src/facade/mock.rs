//! [`MockModel`]: a scripted model for offline tests of skills from Rust, given to
//! [`SkilletBuilder::mock`](super::SkilletBuilder::mock) — no server, no process, no environment
//! variable. Each model turn takes the next scripted answer (a JSON answer, text, or tool
//! calls) and the requests it was sent are kept for the test to look at.
//!
//! The answers go through the run exactly as a real model's do: validated against the output
//! schema, repaired (a scripted wrong answer followed by a right one is a repair turn), tool
//! calls dispatched to the registered tools.
//!
//! Not here: the scenario files of `mock-llm` (rules matched on what the model is sent, faults,
//! streaming timing) — that is a server; start one with `mock_llm::MockServer` and point
//! [`SkilletBuilder::provider_from_vars`](super::SkilletBuilder::provider_from_vars) at it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use serde_json::Value;
use skillet_providers::{
    CallOptions, ChatRequest, ChatResponse, FinishReason, Provider, ProviderError,
    ProviderErrorKind, ProviderKind, ToolCall,
};

/// The name a [`MockModel`] is registered under by [`SkilletBuilder::mock`](super::SkilletBuilder::mock).
pub const MOCK_PROVIDER: &str = "mock-model";

/// A scripted model: the answers of its turns, in order. Cloning shares the script and the
/// record of requests, so a test keeps a clone to look at what the model was sent.
///
/// ```
/// use serde_json::json;
/// use skillet_engine::MockModel;
///
/// let model = MockModel::new()
///     .tool_call("weather", json!({"city": "Lisbon"})) // turn 1 calls a tool
///     .json(json!({"forecast": "sunny"}));             // turn 2 answers
/// assert_eq!(model.remaining(), 2);
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct MockModel {
    shared: Arc<Mutex<Script>>,
}

#[derive(Default)]
struct Script {
    answers: VecDeque<Answer>,
    requests: Vec<ChatRequest>,
}

enum Answer {
    Text(String),
    ToolCalls(Vec<(String, Value)>),
}

impl std::fmt::Debug for MockModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockModel")
            .field("remaining", &self.remaining())
            .finish_non_exhaustive()
    }
}

impl MockModel {
    /// A model with no answers yet.
    pub fn new() -> Self {
        MockModel::default()
    }

    /// The next turn answers `value` (as JSON text).
    pub fn json(self, value: Value) -> Self {
        self.push(Answer::Text(value.to_string()))
    }

    /// The next turn answers `text` as written (free-form output, or malformed JSON).
    pub fn text(self, text: impl Into<String>) -> Self {
        self.push(Answer::Text(text.into()))
    }

    /// The next turn calls tool `name` with `arguments`.
    pub fn tool_call(self, name: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls([(name.into(), arguments)])
    }

    /// The next turn calls these tools, in this order.
    pub fn tool_calls(self, calls: impl IntoIterator<Item = (String, Value)>) -> Self {
        self.push(Answer::ToolCalls(calls.into_iter().collect()))
    }

    /// How many scripted answers are left.
    pub fn remaining(&self) -> usize {
        self.lock().answers.len()
    }

    /// Every request the model was sent, oldest first: the system prompt, the messages, the
    /// tools and the response schema of each turn.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.lock().requests.clone()
    }

    fn push(self, answer: Answer) -> Self {
        self.lock().answers.push_back(answer);
        self
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        // A panic while holding the lock leaves the script whole (one push or pop).
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl Provider for MockModel {
    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenaiCompatible
    }

    fn model(&self) -> &str {
        MOCK_PROVIDER
    }

    async fn chat_borrowed(
        &self,
        request: &ChatRequest,
        options: CallOptions<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let (turn, answer) = {
            let mut script = self.lock();
            script.requests.push(request.clone());
            (script.requests.len(), script.answers.pop_front())
        };
        let (text, tool_calls) = match answer {
            Some(Answer::Text(text)) => (text, Vec::new()),
            Some(Answer::ToolCalls(calls)) => (String::new(), calls),
            None => {
                return Err(ProviderError::new(
                    ProviderErrorKind::BadRequest,
                    format!(
                        "the mock model has no answer for turn {turn}: script one more with \
                         MockModel::json, ::text or ::tool_call"
                    ),
                )
                .with_retryable(false));
            }
        };
        if let Some(sink) = options.stream
            && !text.is_empty()
        {
            sink.text_delta(&text);
        }
        let finish_reason = if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        Ok(ChatResponse {
            text,
            tool_calls: tool_calls
                .into_iter()
                .enumerate()
                .map(|(i, (name, arguments))| ToolCall {
                    id: format!("call_{turn}_{i}"),
                    name,
                    arguments,
                    invalid_arguments: None,
                })
                .collect(),
            finish_reason,
            usage: None,
            request_id: None,
            reasoning: None,
            thinking: vec![],
        })
    }
}

//! Ollama's answer: one NDJSON line as typed structs (a streamed answer is a series of them, the
//! non-streamed one a single `done` line), and the whole-body decode, which runs the line
//! decoder over that one line.
//!
//! What is not here: the request (`request.rs`), assembling lines into a response (`stream.rs`).

use serde::Deserialize;
use serde_json::Value;

use super::stream::LineDecoder;
use crate::error::ProviderError;
use crate::transport::ErrorDetail;
use crate::types::ChatResponse;
use crate::wire::decode_single;

/// Decodes a whole (non-streamed) 2xx body: its one `done` line.
pub(super) fn decode_whole(body: &[u8]) -> Result<ChatResponse, ProviderError> {
    decode_single(LineDecoder::default(), body)
}

/// One NDJSON line (or the whole non-streamed body).
#[derive(Deserialize)]
pub(super) struct WireLine {
    #[serde(default)]
    pub(super) message: Option<WireMessage>,
    #[serde(default)]
    pub(super) done: bool,
    #[serde(default)]
    pub(super) done_reason: Option<String>,
    #[serde(default)]
    pub(super) prompt_eval_count: Option<u64>,
    #[serde(default)]
    pub(super) eval_count: Option<u64>,
    #[serde(default)]
    pub(super) error: Option<ErrorDetail>,
}

#[derive(Deserialize)]
pub(super) struct WireMessage {
    #[serde(default)]
    pub(super) content: String,
    /// A thinking model's reasoning (`think: true`), kept out of the answer.
    #[serde(default)]
    pub(super) thinking: String,
    #[serde(default)]
    pub(super) tool_calls: Vec<WireToolCall>,
}

#[derive(Deserialize)]
pub(super) struct WireToolCall {
    #[serde(default)]
    pub(super) id: Option<String>,
    pub(super) function: WireFunction,
}

#[derive(Deserialize)]
pub(super) struct WireFunction {
    pub(super) name: String,
    #[serde(default)]
    pub(super) arguments: Value,
}

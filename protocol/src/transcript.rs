//! [`Transcript`]: what a run sent to its model and what the model answered, turn by turn — the
//! system prompt once, then per turn the messages that turn added (the first user message; tool
//! results; a repair message with the violations it names), the model's answer (text and tool
//! calls), the violations that made an answer be rejected, and the turn's time and tokens.
//!
//! A Skillet extension of `SkillResult` (`transcript`), present only when the call asked for it
//! with `metadata.transcript: true` ([`TRANSCRIPT_METADATA`]) and omitted otherwise, so the
//! seed's wire examples round-trip unchanged. It is bounded (each text at most
//! [`MAX_TRANSCRIPT_TEXT_CHARS`], the whole at most [`MAX_TRANSCRIPT_CHARS`]; past either,
//! `truncated`) and carries no secret the host knows (the engine redacts it as it does logs).
//!
//! Not here: recording it (the engine's `run::transcript`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The request metadata key that asks for the transcript (`"transcript": true`).
pub const TRANSCRIPT_METADATA: &str = "transcript";

/// The longest text one transcript message keeps (characters); the rest is cut and the message
/// marked `truncated`.
pub const MAX_TRANSCRIPT_TEXT_CHARS: usize = 16 * 1024;

/// The most text a whole transcript keeps (characters, over every message); past it, later
/// texts are left out and the transcript is marked `truncated`.
pub const MAX_TRANSCRIPT_CHARS: usize = 1024 * 1024;

/// What a run sent to its model and got back (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The system prompt: the rendered instructions and, with an output schema, the output
    /// format section.
    pub system: String,
    /// The turns, in order.
    #[serde(default)]
    pub turns: Vec<TranscriptTurn>,
    /// Whether some text was cut or left out (see the caps).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// One provider request and its answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TranscriptTurn {
    /// The turn's number (1-based).
    pub turn: u32,
    /// The messages this turn added to the conversation before it was sent.
    #[serde(default)]
    pub sent: Vec<TranscriptMessage>,
    /// The model's answer (absent: the request failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<TranscriptMessage>,
    /// Why the answer was rejected as the final answer (`/path: message`), when it was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<String>,
    /// Milliseconds from sending the request to its answer.
    pub duration_ms: u64,
    /// Prompt tokens the server reported for this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Generated tokens the server reported for this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
}

/// Who a transcript message is from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptRole {
    /// The caller's request, or the engine speaking for it (a repair message).
    #[default]
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// One message of a transcript.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TranscriptMessage {
    /// Who it is from.
    pub role: TranscriptRole,
    /// Its text (a tool result's content; `[image]` for an image).
    #[serde(default)]
    pub text: String,
    /// The tool calls of an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<TranscriptToolCall>,
    /// The tool a result answers (`role: tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The id of the call a result answers (`role: tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Whether a tool result is an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Whether the text was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// A tool call the model made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TranscriptToolCall {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
}

/// Whether `metadata` (a call request's) asks for the transcript.
pub fn transcript_requested(metadata: &serde_json::Map<String, Value>) -> bool {
    metadata.get(TRANSCRIPT_METADATA) == Some(&Value::Bool(true))
}

//! A [`Checkpoint`]'s content and its bytes: compact JSON whose first field names the format and
//! its version, so anything else — another program's value under the same key, a later format,
//! bytes cut short — is refused with a [`CheckpointError`] that says which, never half-read.
//!
//! Not here: which checkpoint fits which call (`run::durable` compares the hashes), storage.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use skillet_providers::{ChatMessage, ToolCall};

use crate::events::EmitterSnapshot;
use crate::protocol::{SkillDefinition, TurnUsage};

/// The value of a checkpoint's `format` field.
pub const FORMAT: &str = "skillet.checkpoint";

/// The checkpoint format this build writes and reads.
pub(crate) const FORMAT_VERSION: u32 = 1;

/// The state of one run after a completed turn (see the module docs of `checkpoint` for what is
/// in it and what never is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    pub(crate) format: String,
    pub(crate) version: u32,
    /// The skill's name.
    pub(crate) skill: String,
    /// SHA-256 (hex) of the skill's definition when the checkpoint was written.
    pub(crate) definition: String,
    /// SHA-256 (hex) of the call: skill name and arguments.
    pub(crate) call: String,
    /// Provider turns completed (their answers are in `messages`).
    pub(crate) turn: u32,
    /// The conversation after the system prompt.
    pub(crate) messages: Vec<ChatMessage>,
    /// Tool calls the last turn asked for whose results are not in `messages`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) in_flight: Vec<ToolCall>,
    /// Whether the next turn must be the answer (after a rejected answer, or the last turn).
    #[serde(default)]
    pub(crate) answer_due: bool,
    /// Each provider response's usage so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) usage: Vec<TurnUsage>,
    /// The events so far.
    pub(crate) events: EmitterSnapshot,
    /// The last model text (for a failure's `data` after turns run out).
    #[serde(default)]
    pub(crate) last_output: String,
    /// What was left of the call's deadline, in milliseconds.
    pub(crate) remaining_ms: u64,
}

/// Why bytes are not a usable checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    /// Not a Skillet checkpoint at all (not JSON, or no `format` naming ours).
    #[error("not a Skillet checkpoint ({0})")]
    Foreign(String),
    /// A Skillet checkpoint of a format version this build does not read.
    #[error("checkpoint format version {found}, this build reads version {FORMAT_VERSION}")]
    Version {
        /// The version found.
        found: u32,
    },
    /// A Skillet checkpoint whose content does not decode (cut short, edited, corrupted).
    #[error("corrupt checkpoint: {0}")]
    Corrupt(String),
    /// A checkpoint of another call (another skill or other arguments under the same id).
    #[error("checkpoint of another call: {0}")]
    OtherCall(String),
}

/// The first field only, read before the rest so a foreign value is told apart from a corrupt
/// checkpoint.
#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u32>,
}

impl Checkpoint {
    /// Turns completed before this checkpoint.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// The skill it belongs to.
    pub fn skill(&self) -> &str {
        &self.skill
    }

    /// How many tool calls were in flight (asked for, not answered) when it was written.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The next event `seq` of the run.
    pub fn next_seq(&self) -> u64 {
        self.events.next_seq
    }

    /// A checkpoint of a typical run after `turns` tool turns, each tool result `result_bytes`
    /// long, with the events such a run emits (for benchmarks and store tests).
    #[doc(hidden)]
    pub fn sample(turns: u32, result_bytes: usize) -> Checkpoint {
        use crate::events::Collected;
        use crate::protocol::{EventPayload, LogLevel};
        let mut messages = vec![ChatMessage::user(
            r#"{"code":"fn main() { println!(\"hello\"); }","language":"rust"}"#,
        )];
        let mut collected = Vec::new();
        let mut event = |payload: EventPayload| {
            let seq = collected.len() as u64;
            collected.push(Collected {
                id: uuid::Uuid::new_v4(),
                ts: 1_764_680_000.0 + seq as f64,
                seq,
                payload,
            });
        };
        let mut usage = Vec::new();
        for turn in 1..=turns {
            let call = ToolCall {
                id: format!("call_{turn}"),
                name: "lookup".into(),
                arguments: serde_json::json!({"query": format!("symbol {turn}"), "limit": 5}),
                invalid_arguments: None,
            };
            messages.push(ChatMessage::Assistant {
                text: String::new(),
                tool_calls: vec![call],
                thinking: Vec::new(),
            });
            messages.push(ChatMessage::tool_result(
                format!("call_{turn}"),
                "lookup",
                "x".repeat(result_bytes),
            ));
            event(EventPayload::status(format!(
                "turn {turn}/8 · openai-compatible/gpt-4o-mini"
            )));
            event(EventPayload::progress(
                5 + 10 * turn as u8,
                format!("turn {turn} of 8"),
            ));
            event(EventPayload::log(
                LogLevel::Info,
                "tool call lookup({\"query\":\"symbol\"})",
            ));
            event(EventPayload::log(
                LogLevel::Info,
                "tool result lookup: xxxxxxxx",
            ));
            usage.push(TurnUsage {
                turn,
                model: "gpt-4o-mini".into(),
                input_tokens: Some(900 * u64::from(turn)),
                output_tokens: Some(40),
                ..TurnUsage::default()
            });
        }
        Checkpoint {
            format: FORMAT.into(),
            version: FORMAT_VERSION,
            skill: "code-review".into(),
            definition: "0".repeat(64),
            call: "1".repeat(64),
            turn: turns.max(1),
            messages,
            in_flight: Vec::new(),
            answer_due: false,
            usage,
            events: EmitterSnapshot {
                next_seq: collected.len() as u64,
                last_pct: 5 + 10 * turns.min(9) as u8,
                collected,
            },
            last_output: String::new(),
            remaining_ms: 25_000,
        }
    }

    /// The compact JSON bytes, with every secret the process knows redacted.
    pub fn encode(&self) -> Vec<u8> {
        let text = serde_json::to_string(self).unwrap_or_default();
        crate::secrets::REDACTOR.redact_owned(text).into_bytes()
    }

    /// Reads bytes a store returned.
    pub fn decode(bytes: &[u8]) -> Result<Checkpoint, CheckpointError> {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| CheckpointError::Foreign("not UTF-8 text".into()))?;
        let header: Header = serde_json::from_str(text).map_err(|e| {
            if e.is_data() {
                CheckpointError::Foreign("a JSON value of another shape".into())
            } else if e.is_eof() {
                CheckpointError::Corrupt(format!("cut short: {e}"))
            } else {
                CheckpointError::Foreign(format!("not JSON: {e}"))
            }
        })?;
        match (header.format.as_deref(), header.version) {
            (Some(FORMAT), Some(FORMAT_VERSION)) => {}
            (Some(FORMAT), Some(found)) => return Err(CheckpointError::Version { found }),
            (Some(FORMAT), None) => return Err(CheckpointError::Corrupt("no version".into())),
            (Some(other), _) => {
                return Err(CheckpointError::Foreign(format!(
                    "format `{}`",
                    other.chars().take(40).collect::<String>()
                )));
            }
            (None, _) => return Err(CheckpointError::Foreign("no `format` field".into())),
        }
        let checkpoint: Checkpoint =
            serde_json::from_str(text).map_err(|e| CheckpointError::Corrupt(e.to_string()))?;
        checkpoint.check_consistent()?;
        Ok(checkpoint)
    }

    /// What decoding alone cannot catch: a checkpoint that contradicts itself.
    fn check_consistent(&self) -> Result<(), CheckpointError> {
        let corrupt = |why: &str| Err(CheckpointError::Corrupt(why.to_owned()));
        if self.turn == 0 {
            return corrupt("no turn completed");
        }
        if !matches!(self.messages.first(), Some(ChatMessage::User { .. })) {
            return corrupt("the conversation does not open with the request");
        }
        let asked = match self.messages.last() {
            Some(ChatMessage::Assistant { tool_calls, .. }) => tool_calls.as_slice(),
            _ => &[],
        };
        if !self.in_flight.is_empty() && asked != self.in_flight.as_slice() {
            return corrupt("tool calls in flight that the last turn did not ask for");
        }
        let seqs = self.events.collected.iter().map(|e| e.seq);
        if seqs.clone().zip(seqs.skip(1)).any(|(a, b)| b <= a)
            || self
                .events
                .collected
                .last()
                .is_some_and(|e| e.seq >= self.events.next_seq)
        {
            return corrupt("event seq out of order");
        }
        Ok(())
    }
}

/// SHA-256 (hex) of a skill's definition (manifest and instructions as loaded).
pub(crate) fn definition_hash(definition: &SkillDefinition) -> String {
    let bytes = serde_json::to_vec(definition).unwrap_or_default();
    hex(&Sha256::digest(&bytes))
}

/// SHA-256 (hex) of a call: its skill and arguments.
pub(crate) fn call_hash(
    skill: &str,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> String {
    let mut hash = Sha256::new();
    hash.update(skill.as_bytes());
    hash.update([0]);
    hash.update(serde_json::to_vec(arguments).unwrap_or_default());
    hex(&hash.finalize())
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A checkpoint as the run loop writes it: the same fields as [`Checkpoint`], borrowed from the
/// run (the conversation is serialized where it lies, not copied per turn).
#[derive(Serialize)]
pub(crate) struct CheckpointParts<'a> {
    pub(crate) format: &'a str,
    pub(crate) version: u32,
    pub(crate) skill: &'a str,
    pub(crate) definition: &'a str,
    pub(crate) call: &'a str,
    pub(crate) turn: u32,
    pub(crate) messages: &'a [ChatMessage],
    #[serde(skip_serializing_if = "<[ToolCall]>::is_empty")]
    pub(crate) in_flight: &'a [ToolCall],
    pub(crate) answer_due: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) usage: Vec<TurnUsage>,
    pub(crate) events: EmitterSnapshot,
    pub(crate) last_output: &'a str,
    pub(crate) remaining_ms: u64,
}

impl CheckpointParts<'_> {
    /// The compact JSON bytes [`Checkpoint::decode`] reads, with every secret the process knows
    /// redacted.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let text = serde_json::to_string(self).unwrap_or_default();
        crate::secrets::REDACTOR.redact_owned(text).into_bytes()
    }
}

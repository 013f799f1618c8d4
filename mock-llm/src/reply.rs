//! The provider-neutral answer that a provider module renders onto its wire format, plus the
//! deterministic ways a reply is cut into stream chunks.
//!
//! Where the answer comes from (scenario rule, schema synthesizer, echo) is `dispatch`'s business;
//! how it looks on the wire is each provider module's.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why the model stopped, in neutral terms; each provider maps it to its own vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// Natural end (`stop`, Anthropic `end_turn`).
    Stop,
    /// Output limit reached (`length`, Anthropic `max_tokens`).
    Length,
    /// The model wants tools run (`tool_calls`, Anthropic `tool_use`; Ollama says `stop`).
    ToolCalls,
    /// Refused or filtered (`content_filter`, Anthropic `refusal`).
    ContentFilter,
}

/// Tool-call arguments as the model "wrote" them.
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    /// A JSON value (normally an object).
    Json(Value),
    /// Verbatim text, possibly not JSON at all (to test clients against broken arguments).
    Raw(String),
}

impl Arguments {
    /// The arguments as the string OpenAI puts on the wire.
    pub fn to_wire_string(&self) -> String {
        match self {
            Arguments::Json(v) => v.to_string(),
            Arguments::Raw(s) => s.clone(),
        }
    }

    /// The arguments as the JSON value Ollama and Anthropic put on the wire. Raw text that parses
    /// becomes that value; raw text that does not stays a string (deliberately broken).
    pub fn to_wire_value(&self) -> Value {
        match self {
            Arguments::Json(v) => v.clone(),
            Arguments::Raw(s) => {
                serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
            }
        }
    }
}

/// One tool call in a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// Call id (counter-based unless the scenario fixed one).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub arguments: Arguments,
}

/// Token counts reported in usage fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input: u32,
    /// Completion tokens.
    pub output: u32,
    /// Prompt tokens read from the prompt cache (part of `input`), when the scenario sets them:
    /// OpenAI `prompt_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<u32>,
    /// Prompt tokens written to the prompt cache (part of `input`), when the scenario sets them:
    /// Anthropic `cache_creation_input_tokens` (OpenAI and Ollama report none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u32>,
    /// Reasoning tokens (part of `output`), when the scenario sets them: OpenAI
    /// `completion_tokens_details.reasoning_tokens` (Anthropic and Ollama report none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u32>,
}

/// A complete answer, ready to render.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Response id number (each provider formats it: `chatcmpl-mock-7`, `msg_mock_7`).
    pub seq: u64,
    /// Model name echoed back.
    pub model: String,
    /// Text content (may be empty when there are tool calls).
    pub text: String,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Stop reason.
    pub finish: Finish,
    /// Token counts.
    pub usage: Usage,
    /// Creation time, Unix seconds, from the server's clock.
    pub created: u64,
    /// Whether the answer carries its usage (a scenario's dialect may omit it).
    pub report_usage: bool,
    /// Reasoning shown ahead of the answer (Anthropic `thinking` blocks), when scripted.
    pub thinking: Option<String>,
    /// Stream every tool call at `index` 0 (OpenAI wire), as some llama.cpp builds and
    /// routers stream parallel calls; each call is still opened by its own id and name.
    pub tool_calls_at_index_zero: bool,
}

/// Cuts text into stream pieces: each word with the whitespace that follows it. Concatenating
/// the pieces gives back the text exactly; empty text gives no pieces.
pub fn text_chunks(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            in_space = true;
        } else if in_space {
            pieces.push(&text[start..i]);
            start = i;
            in_space = false;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Cuts a tool-call argument string into at most `parts` pieces on char boundaries, so clients
/// must merge fragments the way they do with real providers.
pub fn argument_chunks(arguments: &str, parts: usize) -> Vec<&str> {
    if arguments.is_empty() {
        return Vec::new();
    }
    let chars: Vec<usize> = arguments.char_indices().map(|(i, _)| i).collect();
    let per = chars.len().div_ceil(parts.max(1)).max(1);
    let mut pieces = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        let start = chars[k];
        let end = chars.get(k + per).copied().unwrap_or(arguments.len());
        pieces.push(&arguments[start..end]);
        k += per;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_chunks_reassemble_to_the_original_text() {
        let text = "Hello,  wide world!\nBye ";
        let pieces = text_chunks(text);
        assert_eq!(pieces, vec!["Hello,  ", "wide ", "world!\n", "Bye "]);
        assert_eq!(pieces.concat(), text);
        assert!(text_chunks("").is_empty());
    }

    #[test]
    fn argument_chunks_split_on_char_boundaries() {
        let args = r#"{"city":"Zürich"}"#;
        let pieces = argument_chunks(args, 3);
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces.concat(), args);
    }

    #[test]
    fn raw_arguments_that_parse_become_objects_for_object_wires() {
        assert_eq!(
            Arguments::Raw(r#"{"a":1}"#.into()).to_wire_value(),
            serde_json::json!({"a":1})
        );
        assert_eq!(
            Arguments::Raw("{broken".into()).to_wire_value(),
            Value::String("{broken".into())
        );
    }
}

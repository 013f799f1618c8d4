//! Plain data exchanged with a [`Provider`](crate::Provider): the request the engine builds
//! (messages, tool specs, response schema, hints) and the normalized response it gets back
//! (text, tool calls, finish reason, usage).
//!
//! Nothing here knows a wire format; each provider module maps these types to and from its own
//! API. Nothing here knows about skills either: the engine translates its turns into
//! [`ChatMessage`]s.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::shared_json::SharedJson;

/// One chat call: everything a provider needs besides the model, which lives in the
/// [`ProviderSpec`](crate::ProviderSpec). The provider decides how `response_schema` and
/// `tools` go on the wire (its structured-output and tool modes, negotiated per server).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// System instructions (the rendered SKILL.md body, for example).
    pub system: Option<String>,
    /// The conversation so far, oldest first.
    pub messages: Vec<ChatMessage>,
    /// Tools the model may call. Empty means no tools are offered.
    pub tools: Vec<ToolSpec>,
    /// When set, the final answer must be JSON matching this schema.
    pub response_schema: Option<ResponseSchema>,
    /// Sampling and length hints; unset fields are left to the provider's defaults.
    pub hints: Hints,
    /// Whether the model may still call tools this turn or must now give its final answer.
    /// Providers on grammar-constrained servers enforce `response_schema` only on
    /// [`TurnPhase::Answer`] and [`TurnPhase::Final`] turns when native tools are offered, so
    /// that enforcing the schema never locks a model out of its tools (see `modes.rs`).
    #[serde(default)]
    pub phase: TurnPhase,
    /// The skill's preferred structured-output mode, used when the provider's own setting is
    /// `auto` (a hint: a mode the server refuses is still stepped down from).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_mode_hint: Option<crate::mode_names::OutputMode>,
}

/// Where in a run a turn is, as far as the provider needs to know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnPhase {
    /// The model may call tools or answer.
    #[default]
    Open,
    /// The model answered before and that answer was rejected: the answer is due now, so the
    /// response schema is enforced wherever the server can.
    Answer,
    /// Only the answer may come now (the run's last turn, or the model repeated a tool call and
    /// was told to answer): enforced as [`TurnPhase::Answer`], and prompted tools offer no call.
    Final,
}

/// How much the model reasons before it answers, in each API's own terms (`provider_config`
/// keys, or a request's [`Hints::reasoning`] over them; each is sent only to the API that has
/// it, and only when set).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct Reasoning {
    /// OpenAI `reasoning_effort` (`none`, `minimal`, `low`, `medium`, `high`, `xhigh`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Anthropic extended thinking with this budget (`thinking: {type: enabled,
    /// budget_tokens}`; the API's minimum is 1024).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_budget_tokens: Option<u32>,
    /// Ollama `think`: whether a thinking model thinks (its reasoning comes back apart from
    /// the answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<bool>,
}

impl Reasoning {
    /// These settings, with `defaults` filling the ones left unset (a request's over its
    /// provider's).
    pub fn or(&self, defaults: &Reasoning) -> Reasoning {
        Reasoning {
            reasoning_effort: self
                .reasoning_effort
                .clone()
                .or_else(|| defaults.reasoning_effort.clone()),
            thinking_budget_tokens: self
                .thinking_budget_tokens
                .or(defaults.thinking_budget_tokens),
            think: self.think.or(defaults.think),
        }
    }

    /// Whether nothing is set.
    pub fn is_unset(&self) -> bool {
        *self == Reasoning::default()
    }
}

/// The values `reasoning_effort` takes.
pub const REASONING_EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh"];

/// A reasoning block of the model's that goes back to the API exactly as it came (Anthropic
/// extended thinking: the text and its signature, or the encrypted redacted block; Gemini: the
/// thought signature of a part). Each wire sends back only its own API's blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingBlock {
    /// A `thinking` block: the reasoning text and the signature that vouches for it.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// The API's signature of the text (opaque, sent back unchanged).
        signature: String,
    },
    /// A `redacted_thinking` block: reasoning the API encrypted.
    RedactedThinking {
        /// The encrypted reasoning (opaque, sent back unchanged).
        data: String,
    },
    /// A Gemini `thoughtSignature`: the model's encrypted reasoning behind one part of its
    /// turn, sent back on the same part.
    ThoughtSignature {
        /// The id of the tool call whose part carried it; `None`: the turn's text part.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call: Option<String>,
        /// The signature (opaque, sent back unchanged).
        signature: String,
    },
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// Text from the user (or the engine speaking for it, e.g. a repair message).
    User {
        /// The message text.
        text: String,
    },
    /// An earlier model turn: its text and the tool calls it made.
    Assistant {
        /// The text the model produced (may be empty when it only called tools).
        text: String,
        /// The tool calls the model made in that turn.
        tool_calls: Vec<ToolCall>,
        /// The reasoning blocks the API asks to get back unchanged with the turn (Anthropic
        /// extended thinking on tool-use turns); empty elsewhere.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        thinking: Vec<ThinkingBlock>,
    },
    /// An image the user shows the model, part of the user's turn (each wire puts it beside
    /// the turn's text as its API's image content).
    Image {
        /// The image.
        image: ImageInput,
    },
    /// The result of one tool call, answered back to the model.
    ToolResult {
        /// The [`ToolCall::id`] this answers.
        call_id: String,
        /// The tool's name (Ollama matches results by name, not id).
        name: String,
        /// The result (or error text) as the model should read it.
        content: String,
        /// True when `content` describes a failure.
        is_error: bool,
    },
}

impl ChatMessage {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        ChatMessage::User { text: text.into() }
    }

    /// An assistant message with only text.
    pub fn assistant(text: impl Into<String>) -> Self {
        ChatMessage::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
            thinking: Vec::new(),
        }
    }

    /// A successful tool result.
    pub fn tool_result(
        call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        ChatMessage::ToolResult {
            call_id: call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed tool result: the model reads `content` as the error.
    pub fn tool_error(
        call_id: impl Into<String>,
        name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        ChatMessage::ToolResult {
            call_id: call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error: true,
        }
    }
}

/// An image input: its media type and its bytes (base64) or where the API can fetch it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageInput {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp` (the types all four APIs take).
    pub media_type: String,
    /// The bytes or the URL.
    pub source: ImageSource,
}

/// Where an image's bytes are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageSource {
    /// The bytes, base64-encoded (standard alphabet, padded).
    Base64(String),
    /// An `https://` URL the API fetches itself (not every API can: Ollama takes bytes only).
    Url(String),
}

impl ImageInput {
    /// The bytes the image takes once decoded (an estimate from the base64 length; 0 for a
    /// URL, whose size is the API's business).
    pub fn decoded_len(&self) -> usize {
        match &self.source {
            ImageSource::Base64(data) => data.len() / 4 * 3,
            ImageSource::Url(_) => 0,
        }
    }

    /// `data:{media_type};base64,{data}` for a base64 image, the URL for a URL (OpenAI's
    /// `image_url.url`).
    pub(crate) fn data_url(&self) -> std::borrow::Cow<'_, str> {
        match &self.source {
            ImageSource::Base64(data) => {
                std::borrow::Cow::Owned(format!("data:{};base64,{data}", self.media_type))
            }
            ImageSource::Url(url) => std::borrow::Cow::Borrowed(url),
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Name the model uses to call it (the engine makes it valid for every provider).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object, shared: a run offers the same schemas every turn
    /// and every call, so each request holds a reference, not a copy, and the schema's JSON
    /// text is written once, not per request.
    pub parameters: SharedJson,
}

/// The schema the final answer must satisfy (structured output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseSchema {
    /// A short identifier (`[a-zA-Z0-9_-]`, at most 64 characters) some APIs require.
    pub name: String,
    /// The JSON Schema (shared, like [`ToolSpec::parameters`]).
    pub schema: SharedJson,
}

/// Sampling and length hints. `None` leaves the provider's default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hints {
    /// Upper bound on generated tokens. Anthropic requires one; its module supplies a default.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    pub top_p: Option<f32>,
    /// Seed for providers that support reproducible sampling (OpenAI, Ollama).
    pub seed: Option<i64>,
    /// Reasoning settings for this request, over the provider's (a skill's `a2e-reasoning-*`
    /// keys); unset fields leave the provider's.
    #[serde(default, skip_serializing_if = "Reasoning::is_unset")]
    pub reasoning: Reasoning,
}

impl Hints {
    /// These hints, with `defaults` filling the ones left unset.
    pub(crate) fn or(&self, defaults: &Hints) -> Hints {
        Hints {
            max_tokens: self.max_tokens.or(defaults.max_tokens),
            temperature: self.temperature.or(defaults.temperature),
            top_p: self.top_p.or(defaults.top_p),
            seed: self.seed.or(defaults.seed),
            reasoning: self.reasoning.or(&defaults.reasoning),
        }
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned id (synthesized as `call_N` when the API has none, like Ollama).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments. When the model produced text that is not valid JSON, this is that raw
    /// text as a JSON string and [`invalid_arguments`](Self::invalid_arguments) says why.
    pub arguments: Value,
    /// Set when the model's arguments were not valid JSON: the parse error. The engine should
    /// answer the call with a tool error instead of running the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_arguments: Option<String>,
}

impl ToolCall {
    /// Builds a call from the raw argument text a provider returned, keeping invalid JSON as a
    /// string plus the parse error (and flagging JSON that is not an object) rather than failing
    /// the whole chat.
    pub(crate) fn from_raw_arguments(id: String, name: String, raw: &str) -> Self {
        // An empty argument string means "no arguments" for every API we speak.
        if raw.trim().is_empty() {
            return ToolCall {
                id,
                name,
                arguments: Value::Object(Default::default()),
                invalid_arguments: None,
            };
        }
        match serde_json::from_str::<Value>(raw) {
            Ok(arguments @ Value::Object(_)) => ToolCall {
                id,
                name,
                arguments,
                invalid_arguments: None,
            },
            // Arguments encoded twice (a JSON string holding the object), as some servers and
            // small models send them.
            Ok(Value::String(inner))
                if serde_json::from_str::<Value>(&inner).is_ok_and(|v| v.is_object()) =>
            {
                ToolCall::from_raw_arguments(id, name, &inner)
            }
            Ok(other) => ToolCall {
                id,
                name,
                arguments: other,
                invalid_arguments: Some("arguments are not a JSON object".to_owned()),
            },
            Err(e) => ToolCall {
                id,
                name,
                arguments: Value::String(raw.to_owned()),
                invalid_arguments: Some(format!("arguments are not valid JSON: {e}")),
            },
        }
    }

    /// Builds a call from arguments an API sent as a JSON value (Ollama, Anthropic): an object
    /// is used as is, a string is parsed like raw text, `null` means no arguments, anything
    /// else is kept and flagged.
    pub fn from_value(id: String, name: String, arguments: Value) -> Self {
        match arguments {
            Value::Object(_) => ToolCall {
                id,
                name,
                arguments,
                invalid_arguments: None,
            },
            Value::String(raw) => ToolCall::from_raw_arguments(id, name, &raw),
            Value::Null => ToolCall::from_raw_arguments(id, name, ""),
            other => ToolCall {
                id,
                name,
                arguments: other,
                invalid_arguments: Some("arguments are not a JSON object".to_owned()),
            },
        }
    }
}

/// Why the model stopped, normalized across providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// The model wants tool results before it goes on.
    ToolCalls,
    /// The token limit cut the answer short.
    Length,
    /// The provider filtered or the model refused the content.
    ContentFilter,
    /// Anything else the provider reported (e.g. Anthropic `pause_turn`, Ollama `unload`).
    Other,
}

/// Token counts reported by the provider (a response whose server reported none carries no
/// `Usage` at all: unknown, never zero; the breakdowns are `None` when the API does not report
/// them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Generated tokens, reasoning ones included.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's prompt cache (part of `input_tokens`): OpenAI
    /// `prompt_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Prompt tokens written to the prompt cache (part of `input_tokens`): Anthropic
    /// `cache_creation_input_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Reasoning tokens (part of `output_tokens`): OpenAI
    /// `completion_tokens_details.reasoning_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// The normalized result of one chat call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The model's text (for structured output: the JSON text of the answer).
    pub text: String,
    /// Tool calls, in the order the model made them.
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
    /// Token usage; `None` when the server reported none (unknown, not zero).
    pub usage: Option<Usage>,
    /// The provider's id for this request/response, for support tickets and logs.
    pub request_id: Option<String>,
    /// Reasoning the model wrote before its answer (`<think>…</think>` blocks, or an API's
    /// reasoning field), kept out of `text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// The reasoning blocks to send back with this turn when it is continued
    /// ([`ChatMessage::Assistant`]'s `thinking`); empty unless the API has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<ThinkingBlock>,
}

/// Receives text as the model produces it. Called only when the call streams (a sink is set).
/// Must not block: hand the text to a channel or buffer.
pub trait StreamSink: Send + Sync {
    /// A piece of the model's text, in order.
    fn text_delta(&self, delta: &str);
}

impl<F: Fn(&str) + Send + Sync> StreamSink for F {
    fn text_delta(&self, delta: &str) {
        self(delta)
    }
}

//! The provider-neutral view of one chat request: what scenario rules match against and what the
//! default reply is derived from.
//!
//! Each provider module (`openai`, `ollama`, `anthropic`) parses its own wire shape into a
//! [`ChatRequest`]; nothing here knows a wire format. Matching lives in `scenario`, not here.

use serde_json::Value;

/// Which API a request came through, e.g. `openai.chat`. Matched by a rule's `endpoint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `POST /v1/chat/completions`.
    OpenAiChat,
    /// `GET /v1/models`.
    OpenAiModels,
    /// `POST /api/chat`.
    OllamaChat,
    /// `GET /api/tags`.
    OllamaTags,
    /// `GET /api/version`.
    OllamaVersion,
    /// `POST /v1/messages`.
    AnthropicMessages,
    /// `POST /v1beta/models/{model}:generateContent` or `:streamGenerateContent`.
    GeminiGenerateContent,
}

impl Endpoint {
    /// The journal and matching name, `provider.operation`.
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::OpenAiChat => "openai.chat",
            Endpoint::OpenAiModels => "openai.models",
            Endpoint::OllamaChat => "ollama.chat",
            Endpoint::OllamaTags => "ollama.tags",
            Endpoint::OllamaVersion => "ollama.version",
            Endpoint::AnthropicMessages => "anthropic.messages",
            Endpoint::GeminiGenerateContent => "gemini.generate_content",
        }
    }

    /// The provider part of the name: `openai`, `ollama`, `anthropic` or `gemini`.
    pub fn provider(self) -> &'static str {
        let name = self.as_str();
        name.split('.').next().unwrap_or(name)
    }
}

/// Who wrote a message in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// System or developer instructions.
    System,
    /// The user (Anthropic tool results arrive in user messages and are kept there).
    User,
    /// The model.
    Assistant,
    /// A tool result message (OpenAI `tool`, Ollama `tool`).
    Tool,
}

/// One message of the conversation, reduced to what matching needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Author.
    pub role: Role,
    /// All text parts joined with newlines (empty when there are none).
    pub text: String,
    /// Names of the tools the assistant called in this message.
    pub tool_calls: Vec<String>,
    /// Text of each tool result carried by this message.
    pub tool_results: Vec<String>,
}

/// A tool the client offers to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Function name.
    pub name: String,
    /// JSON Schema of the arguments (`{}` when absent).
    pub parameters: Value,
}

/// What the client asked the output to look like.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputShape {
    /// Free text.
    Text,
    /// Any JSON value (OpenAI `json_object`, Ollama `format: "json"`).
    Json,
    /// JSON validating against this schema (OpenAI `json_schema`, Ollama `format: {schema}`).
    Schema(Value),
    /// A call of this tool must be the answer (OpenAI forced function, `required`, Anthropic
    /// `tool_choice` `tool`/`any`); the arguments follow the tool's schema.
    ForcedTool(String),
}

/// A chat request in provider-neutral form.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The API it came through.
    pub endpoint: Endpoint,
    /// Requested model name.
    pub model: String,
    /// System prompt text (all system parts joined).
    pub system: String,
    /// The conversation, in order, without system messages.
    pub messages: Vec<Message>,
    /// Tools offered.
    pub tools: Vec<ToolSpec>,
    /// Requested output shape.
    pub output: OutputShape,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// OpenAI `stream_options.include_usage`.
    pub include_usage: bool,
    /// Request headers, names lowercased, in arrival order (credentials included; the journal
    /// redacts them, matching may look at them).
    pub headers: Vec<(String, String)>,
}

impl ChatRequest {
    /// Text of the last user message that has text (tool-result-only messages are skipped).
    pub fn last_user_text(&self) -> &str {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User && !m.text.is_empty())
            .map_or("", |m| m.text.as_str())
    }

    /// 1-based turn number: one more than the assistant messages already in the conversation.
    pub fn turn(&self) -> u32 {
        let assistants = self
            .messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        u32::try_from(assistants)
            .unwrap_or(u32::MAX)
            .saturating_add(1)
    }

    /// All tool results in the conversation, oldest first.
    pub fn tool_results(&self) -> impl Iterator<Item = &str> {
        self.messages
            .iter()
            .flat_map(|m| m.tool_results.iter().map(String::as_str))
    }

    /// The schema of an offered tool, if offered.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// A header value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Rough token count of the prompt (4 characters a token), for usage fields.
    pub fn prompt_tokens(&self) -> u32 {
        let chars: usize = self.system.chars().count()
            + self
                .messages
                .iter()
                .map(|m| {
                    m.text.chars().count()
                        + m.tool_results
                            .iter()
                            .map(|r| r.chars().count())
                            .sum::<usize>()
                })
                .sum::<usize>();
        estimate_tokens(chars)
    }
}

/// Token estimate for `chars` characters: a quarter, rounded up, at least 1.
pub(crate) fn estimate_tokens(chars: usize) -> u32 {
    u32::try_from(chars.div_ceil(4).max(1)).unwrap_or(u32::MAX)
}

/// Error when a request body is not a valid request of its API. Shown to the client in the
/// provider's error shape with status 400.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct BadRequest(pub String);

/// Joins the text of a content value that is either a string or a list of `{type:"text", text}`
/// parts (OpenAI and Anthropic both allow both).
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

//! The words of structured-output and tool-calling negotiation: the modes a provider may use
//! ([`OutputMode`], [`ToolMode`]), what a server can refuse ([`Feature`]) and the answer tool's
//! name. Plain data, shared by the request types, errors and the negotiation (`modes.rs`),
//! which is where their behaviour lives.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Name of the tool the model is made to call in `tool` output mode (every wire that has the
/// mode uses it); its input is returned as the response text, and it never appears in
/// [`ChatResponse::tool_calls`](crate::ChatResponse::tool_calls).
pub const ANSWER_TOOL: &str = "skillet_final_answer";

/// How the final answer's JSON Schema is put to the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// The best mode the kind supports, stepping down when the server refuses one.
    #[default]
    Auto,
    /// Native JSON Schema (OpenAI `json_schema`, Ollama `format: SCHEMA`).
    JsonSchema,
    /// JSON mode with the schema alongside (`json_object` + `schema`; Ollama `format: "json"`).
    JsonObject,
    /// A forced answer tool whose input is the answer.
    Tool,
    /// The schema only in the instructions; the answer is parsed and repaired.
    Prompted,
    /// Nothing about the answer's shape on the wire.
    None,
}

impl OutputMode {
    /// Every spelling, for error messages and docs.
    pub const NAMES: &'static str = "auto, json_schema, json_object, tool, prompted, none";

    /// How `skillet.toml` and [`ModeNotice`](crate::ModeNotice)s spell this mode, e.g.
    /// `json_schema`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutputMode::Auto => "auto",
            OutputMode::JsonSchema => "json_schema",
            OutputMode::JsonObject => "json_object",
            OutputMode::Tool => "tool",
            OutputMode::Prompted => "prompted",
            OutputMode::None => "none",
        }
    }

    /// Parses a config spelling.
    pub fn parse(text: &str) -> Option<Self> {
        [
            OutputMode::Auto,
            OutputMode::JsonSchema,
            OutputMode::JsonObject,
            OutputMode::Tool,
            OutputMode::Prompted,
            OutputMode::None,
        ]
        .into_iter()
        .find(|m| m.as_str() == text.trim())
    }

    /// Whether this mode constrains the server's decoding with a grammar (or the like).
    pub(crate) fn is_grammar(self) -> bool {
        matches!(self, OutputMode::JsonSchema | OutputMode::JsonObject)
    }
}

impl fmt::Display for OutputMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How tools are offered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolMode {
    /// Native tool calling, prompted when the server refuses it.
    #[default]
    Auto,
    /// The API's own `tools`.
    Native,
    /// The tool list and a JSON call format in the instructions; calls parsed from the text.
    Prompted,
}

impl ToolMode {
    /// Every spelling.
    pub const NAMES: &'static str = "auto, native, prompted";

    /// How `skillet.toml` and [`ModeNotice`](crate::ModeNotice)s spell this mode, e.g.
    /// `native`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolMode::Auto => "auto",
            ToolMode::Native => "native",
            ToolMode::Prompted => "prompted",
        }
    }

    /// Parses a config spelling.
    pub fn parse(text: &str) -> Option<Self> {
        [ToolMode::Auto, ToolMode::Native, ToolMode::Prompted]
            .into_iter()
            .find(|m| m.as_str() == text.trim())
    }
}

impl fmt::Display for ToolMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a server refused, read from its error (`refusal.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// The structured-output parameter (`response_format`, `format`, the answer tool).
    StructuredOutput,
    /// Native tools.
    Tools,
}

impl Feature {
    /// A stable name for logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Feature::StructuredOutput => "structured output",
            Feature::Tools => "tool calling",
        }
    }
}

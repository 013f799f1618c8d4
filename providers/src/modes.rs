//! How a turn's structured output and tools are expressed to one server: the modes a provider
//! may use ([`OutputMode`], [`ToolMode`]), the order `auto` tries them in per kind, the memory
//! of what each server+model accepted (process-wide), and the per-turn plan a wire reads.
//!
//! The engine asks for "an answer valid against this schema, or one of these tool calls"; this
//! module decides how that is said on the wire:
//!
//! | output mode | on the wire |
//! |---|---|
//! | `json_schema` | OpenAI `response_format: {type: json_schema}` (`strict` only when the schema fits OpenAI's strict subset), Ollama `format: SCHEMA` |
//! | `json_object` | `response_format: {type: json_object, schema}` (llama-cpp-python enforces `schema` with a grammar), Ollama `format: "json"` |
//! | `tool` | a forced answer tool (Anthropic; OpenAI-style servers: `tool_choice: required`) |
//! | `prompted`, `none` | nothing: the schema reaches the model only through the instructions |
//!
//! **When the schema is enforced.** A grammar-constrained server (every OpenAI-compatible one
//! and Ollama: llama.cpp, vLLM's guided decoding) can emit only what the grammar allows, so a
//! schema enforced on a turn where native tools are offered locks the model out of its tools.
//! There the schema is enforced only on [`TurnPhase::Answer`] turns (the model answered once
//! and was asked to repair, or the run is on its last turn). OpenAI itself and the answer tool
//! keep tools and the answer apart, so they enforce on every turn. With prompted tools the turn
//! is constrained to the union "one tool call or the final answer" (`toolshim.rs`), so even a
//! small model emits well-formed calls.
//!
//! **Negotiation.** `auto` starts from the first mode of the kind's ladder. A server that
//! refuses a mode (`refusal.rs` reads its error) gets the turn again once in the next mode; the
//! choice is remembered for that kind + base URL + model for the life of the process, and the
//! caller's [`RetryObserver`](crate::RetryObserver) is told. A mode set by hand is never
//! changed.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::kind::ProviderKind;
use crate::types::{ChatRequest, ResponseSchema, TurnPhase};

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

    /// The config spelling.
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
    fn is_grammar(self) -> bool {
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

    /// The config spelling.
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

/// The modes in force for one server+model: concrete, never `Auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Modes {
    /// How the answer's schema is sent.
    pub output: OutputMode,
    /// How tools are offered.
    pub tools: ToolMode,
}

/// What a provider tells its caller when a refusal moved it to another mode.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeNotice {
    /// The provider's kind.
    pub provider: ProviderKind,
    /// The model.
    pub model: String,
    /// What was refused.
    pub feature: Feature,
    /// The mode refused.
    pub from: String,
    /// The mode used from now on.
    pub to: String,
    /// The server's words (status and message, redacted and shortened).
    pub reason: String,
}

impl fmt::Display for ModeNotice {
    /// E.g. `the server refused structured output mode json_schema (HTTP 500: ...); using
    /// json_object for gemma from now on`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the server refused {} mode {} ({}); using {} for {} from now on",
            self.feature.as_str(),
            self.from,
            self.reason,
            self.to,
            self.model
        )
    }
}

/// The order `auto` tries output modes in, per kind (first = best).
pub(crate) fn output_ladder(kind: ProviderKind) -> &'static [OutputMode] {
    match kind {
        ProviderKind::Openai => &[
            OutputMode::JsonSchema,
            OutputMode::Tool,
            OutputMode::Prompted,
        ],
        ProviderKind::OpenaiCompatible => &[
            OutputMode::JsonSchema,
            OutputMode::JsonObject,
            OutputMode::Tool,
            OutputMode::Prompted,
        ],
        ProviderKind::Ollama => &[
            OutputMode::JsonSchema,
            OutputMode::JsonObject,
            OutputMode::Prompted,
        ],
        ProviderKind::Anthropic => &[OutputMode::Tool, OutputMode::Prompted],
    }
}

/// The negotiated modes of one server+model, shared by every provider built for it.
#[derive(Debug)]
pub(crate) struct ModeCell {
    kind: ProviderKind,
    configured: (OutputMode, ToolMode),
    current: Mutex<Modes>,
}

type MemoryKey = (ProviderKind, String, String, OutputMode, ToolMode);

/// The process-wide memory: one cell per kind + base URL + model + configured modes.
static MEMORY: LazyLock<Mutex<HashMap<MemoryKey, Arc<ModeCell>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// At most this many servers+models are remembered; past it the memory starts over (a
/// re-learned refusal costs one extra request).
const MEMORY_CAPACITY: usize = 4096;

impl ModeCell {
    /// The cell for this server+model, created on first use.
    pub(crate) fn shared(
        kind: ProviderKind,
        base_url: &str,
        model: &str,
        output: OutputMode,
        tools: ToolMode,
    ) -> Arc<ModeCell> {
        let key = (kind, base_url.to_owned(), model.to_owned(), output, tools);
        let mut memory = MEMORY.lock().unwrap_or_else(PoisonError::into_inner);
        if memory.len() >= MEMORY_CAPACITY && !memory.contains_key(&key) {
            memory.clear();
        }
        memory
            .entry(key)
            .or_insert_with(|| Arc::new(ModeCell::new(kind, output, tools)))
            .clone()
    }

    fn new(kind: ProviderKind, output: OutputMode, tools: ToolMode) -> Self {
        let start = Modes {
            output: match output {
                OutputMode::Auto => output_ladder(kind)[0],
                chosen => chosen,
            },
            tools: match tools {
                ToolMode::Auto => ToolMode::Native,
                chosen => chosen,
            },
        };
        ModeCell {
            kind,
            configured: (output, tools),
            current: Mutex::new(start),
        }
    }

    /// The modes in force now; a skill's `hint` replaces an `auto` output mode that has not
    /// been stepped down from yet.
    pub(crate) fn current(&self, hint: Option<OutputMode>) -> Modes {
        let mut modes = *self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if self.configured.0 == OutputMode::Auto
            && modes.output == output_ladder(self.kind)[0]
            && let Some(hint) = hint.filter(|h| *h != OutputMode::Auto)
        {
            modes.output = hint;
        }
        modes
    }

    /// After `feature` was refused under `tried`: the next modes, remembered, or `None` when
    /// there is no mode left to try (or the mode was set by hand).
    pub(crate) fn step_down(&self, tried: Modes, feature: Feature) -> Option<Modes> {
        let next = match feature {
            Feature::Tools if self.configured.1 == ToolMode::Auto => {
                (tried.tools == ToolMode::Native).then_some(Modes {
                    // The answer tool needs tools too.
                    output: if tried.output == OutputMode::Tool {
                        OutputMode::Prompted
                    } else {
                        tried.output
                    },
                    tools: ToolMode::Prompted,
                })?
            }
            Feature::StructuredOutput if self.configured.0 == OutputMode::Auto => {
                let ladder = output_ladder(self.kind);
                let at = ladder.iter().position(|m| *m == tried.output);
                let mut rest = ladder[at.map_or(0, |i| i + 1)..].iter().copied();
                // Without native tools the answer tool cannot be used either.
                let output =
                    rest.find(|m| !(*m == OutputMode::Tool && tried.tools == ToolMode::Prompted))?;
                Modes {
                    output,
                    tools: tried.tools,
                }
            }
            _ => return None,
        };
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = next;
        Some(next)
    }
}

/// How one turn goes on the wire; built per turn from the [`Modes`] and the request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TurnPlan {
    /// The structured-output mechanism this turn: `JsonSchema`, `JsonObject`, `Tool`, or
    /// `None` (nothing on the wire).
    pub output: OutputMode,
    /// The schema the mechanism carries: the response schema, or with prompted tools the union
    /// of the calls and the answer. `None` with `output: None`.
    pub schema: Option<ResponseSchema>,
    /// Offer the request's tools natively (`false`: none, or prompted in the instructions).
    pub native_tools: bool,
    /// The tools are described in the instructions and calls read from the text.
    pub prompted_tools: bool,
    /// Mark an OpenAI `json_schema` as `strict` (the schema fits the strict subset).
    pub strict: bool,
    /// In `tool` mode on an OpenAI-style wire: the answer schema is not an object, so the
    /// answer tool's arguments are `{"value": ANSWER}` (function parameters must be objects).
    pub answer_wrapped: bool,
}

impl TurnPlan {
    /// Native JSON Schema enforced on this turn, native tools: what every request carried before
    /// modes existed (tests comparing bodies with reference encodings use it).
    #[cfg(test)]
    pub(crate) fn enforcing(request: &ChatRequest) -> Self {
        TurnPlan {
            output: OutputMode::JsonSchema,
            schema: request.response_schema.clone(),
            native_tools: !request.tools.is_empty(),
            prompted_tools: false,
            strict: false,
            answer_wrapped: false,
        }
    }

    /// The plan of a server that accepts the kind's best modes (the fuzzing entries decode as
    /// such a provider would).
    pub(crate) fn best_for(kind: ProviderKind, request: &ChatRequest) -> Self {
        let modes = ModeCell::new(kind, OutputMode::Auto, ToolMode::Auto).current(None);
        TurnPlan::new(kind, modes, request, || None)
    }

    /// The plan for `request` under `modes` on a server of `kind`. `union` builds the
    /// prompted-tools union schema when it is needed.
    pub(crate) fn new(
        kind: ProviderKind,
        modes: Modes,
        request: &ChatRequest,
        union: impl FnOnce() -> Option<ResponseSchema>,
    ) -> Self {
        let has_tools = !request.tools.is_empty();
        let prompted_tools = has_tools && modes.tools == ToolMode::Prompted;
        // Which mechanisms this kind has (a hand-set mode it lacks falls back to the nearest).
        let output = match (kind, modes.output) {
            (ProviderKind::Anthropic, OutputMode::JsonSchema | OutputMode::JsonObject) => {
                OutputMode::Tool
            }
            (ProviderKind::Ollama, OutputMode::Tool) => OutputMode::Prompted,
            (_, OutputMode::Tool) if prompted_tools => OutputMode::Prompted,
            (_, mode) => mode,
        };
        let mut plan = TurnPlan {
            output: OutputMode::None,
            schema: None,
            native_tools: has_tools && !prompted_tools,
            prompted_tools,
            strict: false,
            answer_wrapped: false,
        };
        if prompted_tools {
            if output.is_grammar()
                && let Some(schema) = union()
            {
                plan.output = output;
                plan.schema = Some(schema);
            }
            return plan;
        }
        let Some(schema) = &request.response_schema else {
            return plan;
        };
        let enforce = match output {
            OutputMode::Tool => true,
            // OpenAI's models choose between tools and the schema; a grammar cannot.
            OutputMode::JsonSchema | OutputMode::JsonObject => {
                kind == ProviderKind::Openai || !has_tools || request.phase == TurnPhase::Answer
            }
            _ => false,
        };
        if enforce {
            plan.output = output;
            plan.strict = kind == ProviderKind::Openai
                && output == OutputMode::JsonSchema
                && crate::strict_schema::fits_strict_subset(&schema.schema);
            plan.schema = Some(schema.clone());
            // Anthropic's wire wraps and unwraps its own answer tool.
            if output == OutputMode::Tool
                && kind != ProviderKind::Anthropic
                && schema
                    .schema
                    .get("type")
                    .and_then(serde_json::Value::as_str)
                    != Some("object")
            {
                plan.answer_wrapped = true;
                plan.schema = Some(ResponseSchema {
                    name: schema.name.clone(),
                    schema: crate::shared_json::SharedJson::new(serde_json::json!({
                        "type": "object",
                        "properties": {"value": schema.schema.value()},
                        "required": ["value"]
                    })),
                });
            }
        }
        plan
    }

    /// Whether the request carries the structured-output parameter (for reading refusals).
    pub(crate) fn sends_structured_output(&self) -> bool {
        self.output != OutputMode::None
    }
}

#[cfg(test)]
#[path = "modes_tests.rs"]
mod tests;

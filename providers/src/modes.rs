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
//! There the schema is enforced only when the answer is due ([`TurnPhase::Answer`]: the model
//! answered once and was asked to repair; [`TurnPhase::Final`]: the run's last turn, or a
//! model told to stop repeating a call). OpenAI itself and the answer tool
//! keep tools and the answer apart, so they enforce on every turn. With prompted tools the turn
//! is constrained to the union "one tool call or the final answer" (`toolshim.rs`), so even a
//! small model emits well-formed calls.
//!
//! **Negotiation.** `auto` starts from the first mode of the kind's ladder. A server that
//! refuses a mode (`refusal.rs` reads its error) gets the turn again once in the next mode; the
//! choice is remembered for that kind + base URL + model for the life of the process and, for a
//! week, in the mode cache file (`mode_cache.rs`) that the next process starts from, and the
//! caller's [`RetryObserver`](crate::RetryObserver) is told. A mode set by hand is never
//! changed.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::mode_cache::CacheKey;
pub use crate::mode_names::{ANSWER_TOOL, Feature, OutputMode, ToolMode};
use crate::types::{ChatRequest, ResponseSchema, TurnPhase};

/// How a provider's wire carries a request's response schema on every turn of a conversation,
/// in the modes it uses now: what a caller needs to decide whether its instructions must also
/// state the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaDelivery {
    /// Not on every turn: a grammar server beside native tools (the schema would lock the
    /// model out of them), `json_object`, prompted modes. The instructions must state it.
    NotEveryTurn,
    /// A grammar holds every answer to the schema's shape (llama.cpp, vLLM, Ollama; Gemini is
    /// treated alike), but the model never reads the schema: not its words (descriptions,
    /// titles, examples).
    Shape,
    /// The model reads the schema on every turn: OpenAI's `json_schema`, an answer tool.
    Read,
}

/// The modes in force for one server+model: concrete, never `Auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Modes {
    /// How the answer's schema is sent.
    pub output: OutputMode,
    /// How tools are offered.
    pub tools: ToolMode,
}

/// What one kind of API can do about structured output, declared by its wire (`KindInfo`), so
/// this module never needs to know which kinds exist.
#[derive(Debug)]
pub(crate) struct Capabilities {
    /// The kind's name, part of the memory's key.
    pub name: &'static str,
    /// The order `auto` tries output modes in (first = best).
    pub output_ladder: &'static [OutputMode],
    /// The server constrains decoding to the schema (llama.cpp, vLLM, Ollama): enforcing it on
    /// a turn with native tools locks the model out of them.
    pub grammar: bool,
    /// `json_schema` may be marked `strict` when the schema fits OpenAI's subset.
    pub strict_subset: bool,
    /// The API has `json_schema`/`json_object`-style modes (else `tool` stands in for them).
    pub json_modes: bool,
    /// The API can force an answer tool.
    pub answer_tool: bool,
    /// The answer tool's call is read back generically (`text_reply.rs`); `false` when the
    /// wire reads it itself (Anthropic).
    pub generic_answer_tool: bool,
}

/// The negotiated modes of one server+model, shared by every provider built for it.
#[derive(Debug)]
pub(crate) struct ModeCell {
    caps: &'static Capabilities,
    configured: (OutputMode, ToolMode),
    current: Mutex<Modes>,
    /// The mode cache file and this cell's key in it, when the cache is on.
    persist: Option<(PathBuf, CacheKey)>,
}

type MemoryKey = (&'static str, String, String, OutputMode, ToolMode);

/// The process-wide memory: one cell per kind + base URL + model + configured modes.
static MEMORY: LazyLock<Mutex<HashMap<MemoryKey, Arc<ModeCell>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// At most this many servers+models are remembered; past it the memory starts over (a
/// re-learned refusal costs one extra request).
const MEMORY_CAPACITY: usize = 4096;

impl ModeCell {
    /// The cell for this server+model, created on first use.
    pub(crate) fn shared(
        caps: &'static Capabilities,
        base_url: &str,
        model: &str,
        output: OutputMode,
        tools: ToolMode,
    ) -> Arc<ModeCell> {
        let key = (
            caps.name,
            base_url.to_owned(),
            model.to_owned(),
            output,
            tools,
        );
        let mut memory = MEMORY.lock().unwrap_or_else(PoisonError::into_inner);
        if memory.len() >= MEMORY_CAPACITY && !memory.contains_key(&key) {
            memory.clear();
        }
        memory
            .entry(key)
            .or_insert_with(|| Arc::new(ModeCell::remembered(caps, base_url, model, output, tools)))
            .clone()
    }

    /// A new cell for this server+model, starting from the modes the mode cache remembers for
    /// it (features on `auto` only), and writing what it learns there.
    fn remembered(
        caps: &'static Capabilities,
        base_url: &str,
        model: &str,
        output: OutputMode,
        tools: ToolMode,
    ) -> Self {
        let mut cell = ModeCell::new(caps, output, tools);
        let negotiated = output == OutputMode::Auto || tools == ToolMode::Auto;
        let Some(path) = negotiated.then(crate::mode_cache::location).flatten() else {
            return cell;
        };
        let key = CacheKey {
            kind: caps.name,
            base_url: base_url.to_owned(),
            model: model.to_owned(),
        };
        if let Some(learned) = crate::mode_cache::load(&path, &key) {
            let current = cell
                .current
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner);
            if output == OutputMode::Auto && caps.output_ladder.contains(&learned.output) {
                current.output = learned.output;
            }
            if tools == ToolMode::Auto {
                current.tools = learned.tools;
            }
        }
        cell.persist = Some((path, key));
        cell
    }

    pub(crate) fn new(caps: &'static Capabilities, output: OutputMode, tools: ToolMode) -> Self {
        let start = Modes {
            output: match output {
                OutputMode::Auto => caps.output_ladder[0],
                chosen => chosen,
            },
            tools: match tools {
                ToolMode::Auto => ToolMode::Native,
                chosen => chosen,
            },
        };
        ModeCell {
            caps,
            configured: (output, tools),
            current: Mutex::new(start),
            persist: None,
        }
    }

    /// The modes in force now; a skill's `hint` replaces an `auto` output mode that has not
    /// been stepped down from yet.
    pub(crate) fn current(&self, hint: Option<OutputMode>) -> Modes {
        let mut modes = *self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if self.configured.0 == OutputMode::Auto
            && modes.output == self.caps.output_ladder[0]
            && let Some(hint) = hint.filter(|h| *h != OutputMode::Auto)
        {
            modes.output = hint;
        }
        modes
    }

    /// After `feature` was refused under `tried`: the next modes, remembered, or `None` when
    /// there is no mode left to try (or the mode was set by hand). `lasting` says whether the
    /// refusal holds for any request to this server and model, so the mode cache may keep it
    /// for the next process; a refusal of one schema (a grammar the server cannot build from
    /// it) does not, and only this process steps down.
    pub(crate) fn step_down(&self, tried: Modes, feature: Feature, lasting: bool) -> Option<Modes> {
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
                let ladder = self.caps.output_ladder;
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
        if let Some((path, key)) = self.persist.as_ref().filter(|_| lasting) {
            crate::mode_cache::store(path, key, next);
        }
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
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn best_for(caps: &'static Capabilities, request: &ChatRequest) -> Self {
        let modes = ModeCell::new(caps, OutputMode::Auto, ToolMode::Auto).current(None);
        TurnPlan::new(caps, modes, request, || None)
    }

    /// The plan for `request` under `modes` on a server with `caps`. `union` builds the
    /// prompted-tools union schema when it is needed.
    pub(crate) fn new(
        caps: &Capabilities,
        modes: Modes,
        request: &ChatRequest,
        union: impl FnOnce() -> Option<ResponseSchema>,
    ) -> Self {
        let has_tools = !request.tools.is_empty();
        let prompted_tools = has_tools && modes.tools == ToolMode::Prompted;
        let output = mechanism(caps, modes, prompted_tools);
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
        if enforced(caps, output, has_tools, request.phase) {
            plan.output = output;
            plan.strict = caps.strict_subset
                && output == OutputMode::JsonSchema
                && crate::strict_schema::fits_strict_subset(&schema.schema);
            plan.schema = Some(schema.clone());
            // Anthropic's wire wraps and unwraps its own answer tool.
            if output == OutputMode::Tool
                && caps.generic_answer_tool
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

    /// How every turn of a conversation (one that offers tools when `with_tools`) carries the
    /// response schema under `modes` (see [`SchemaDelivery`]).
    pub(crate) fn schema_every_turn(
        caps: &Capabilities,
        modes: Modes,
        with_tools: bool,
    ) -> SchemaDelivery {
        if with_tools && modes.tools == ToolMode::Prompted {
            // The calls and the answer are described in the instructions.
            return SchemaDelivery::NotEveryTurn;
        }
        let output = mechanism(caps, modes, false);
        if !enforced(caps, output, with_tools, TurnPhase::Open) {
            return SchemaDelivery::NotEveryTurn;
        }
        match output {
            OutputMode::Tool => SchemaDelivery::Read,
            OutputMode::JsonSchema if !caps.grammar => SchemaDelivery::Read,
            OutputMode::JsonSchema => SchemaDelivery::Shape,
            // Most servers read no schema in `json_object`.
            _ => SchemaDelivery::NotEveryTurn,
        }
    }

    /// Whether the request carries the structured-output parameter (for reading refusals).
    pub(crate) fn sends_structured_output(&self) -> bool {
        self.output != OutputMode::None
    }
}

/// The structured-output mechanism `modes` come to on this kind: a hand-set mode it lacks falls
/// back to the nearest it has.
fn mechanism(caps: &Capabilities, modes: Modes, prompted_tools: bool) -> OutputMode {
    match modes.output {
        OutputMode::JsonSchema | OutputMode::JsonObject if !caps.json_modes => OutputMode::Tool,
        OutputMode::Tool if !caps.answer_tool || prompted_tools => OutputMode::Prompted,
        mode => mode,
    }
}

/// Whether `output` carries the response schema on a turn in `phase`.
fn enforced(caps: &Capabilities, output: OutputMode, has_tools: bool, phase: TurnPhase) -> bool {
    match output {
        OutputMode::Tool => true,
        // OpenAI's models choose between tools and the schema; a grammar cannot.
        OutputMode::JsonSchema | OutputMode::JsonObject => {
            !caps.grammar || !has_tools || phase != TurnPhase::Open
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "modes_tests.rs"]
mod tests;

//! `SkillResult`: the outcome of one skill execution, carried in `skill/call/resp.data`, and its
//! token usage and cost estimate (`usage`, a Skillet extension: optional and omitted when absent,
//! so the seed's wire examples round-trip unchanged), and whether it was resumed from a
//! checkpoint (`resumed`, the same kind of extension), and what it sent to its model
//! (`transcript`, the same again).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ErrorCode, SkillEvent};

/// The result of a skill execution (seed `SkillResult`). Optional fields are omitted when absent,
/// `truncated` when false and `events` when empty, matching the seed's wire example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillResult {
    /// Whether the run produced its answer; when false, `error` and `error_code` say why.
    pub success: bool,
    /// Result data (validated against the skill's output schema when it has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Human-readable summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Value>,
    /// Whether output (or the collected events) was truncated.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// What went wrong, for people (None on success).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The A2E code of the failure, for programs (None on success).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    /// Execution time in milliseconds.
    pub duration_ms: u64,
    /// The call's events in `seq` order, as many as the host's collection cap keeps (past it,
    /// `truncated` is set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<SkillEvent>,
    /// Token usage of the call (model-backed skills), per call and per turn, with a cost
    /// estimate when the host prices the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    /// Set when the run continued from a checkpoint another process wrote (a Skillet
    /// extension, omitted when the run started afresh).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed: Option<Resumed>,
    /// What the run sent to its model and got back, when the call asked for it (a Skillet
    /// extension, omitted otherwise; see [`Transcript`](crate::Transcript)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Box<crate::Transcript>>,
}

/// How a run that continued from a checkpoint was resumed (`SkillResult.resumed`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resumed {
    /// Turns completed before the checkpoint, not sent to the model again.
    pub turns_saved: u32,
}

/// Token usage of a call: the totals, each turn's figures, and a cost estimate. A figure the
/// server did not report is absent (unknown), never 0: the totals are absent when any turn's
/// usage is unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt tokens over all turns (absent: some turn's usage is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Generated tokens over all turns (absent: some turn's usage is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Prompt tokens served from the provider's cache, when the provider reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Prompt tokens written to the provider's cache (Anthropic `cache_creation_input_tokens`),
    /// when the provider reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Reasoning tokens (part of `output_tokens`), when the provider reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// One entry per provider response, in turn order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<TurnUsage>,
    /// The estimated cost, when the host configured a price for every model used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostEstimate>,
}

/// Token usage of one turn's provider response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnUsage {
    /// The turn (1-based).
    pub turn: u32,
    /// The model that answered this turn, as the provider named it.
    pub model: String,
    /// The provider that answered this turn when it was not the call's own: a fallback's
    /// name (absent: the call's provider answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Prompt tokens (absent: the server reported no usage for this turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Generated tokens (absent: the server reported no usage for this turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Cached prompt tokens, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Prompt tokens written to the cache, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Reasoning tokens, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// A cost estimate from the host's price list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostEstimate {
    /// The estimated cost of the call's reported tokens, in `currency` (prices are per million
    /// tokens of each kind; turns whose usage was not reported count nothing).
    pub amount: f64,
    /// The price list's currency.
    pub currency: String,
}

impl SkillResult {
    /// A successful result: `success` true, no error, no events or usage yet (the run loop adds
    /// them), `duration_ms` in milliseconds.
    pub fn success(data: Option<Value>, summary: Option<Value>, duration_ms: u64) -> Self {
        SkillResult {
            success: true,
            data,
            summary,
            truncated: false,
            error: None,
            error_code: None,
            duration_ms,
            events: Vec::new(),
            usage: None,
            resumed: None,
            transcript: None,
        }
    }

    /// A failed result with a code and message.
    pub fn failure(code: ErrorCode, error: impl Into<String>, duration_ms: u64) -> Self {
        SkillResult {
            success: false,
            data: None,
            summary: None,
            truncated: false,
            error: Some(error.into()),
            error_code: Some(code),
            duration_ms,
            events: Vec::new(),
            usage: None,
            resumed: None,
            transcript: None,
        }
    }
}

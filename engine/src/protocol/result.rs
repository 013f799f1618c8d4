//! `SkillResult`: the outcome of one skill execution, carried in `skill/call/resp.data`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ErrorCode, SkillEvent};

/// The result of a skill execution (seed `SkillResult`). Optional fields are omitted when absent,
/// `truncated` when false and `events` when empty, matching the seed's wire example.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillResult {
    /// Whether execution succeeded.
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
    /// Error message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Machine-readable error code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
    /// Execution time in milliseconds.
    pub duration_ms: u64,
    /// Collected streaming events.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<SkillEvent>,
}

impl SkillResult {
    /// A successful result.
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
        }
    }
}

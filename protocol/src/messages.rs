//! The five messages' bodies (`skill/discover/req|resp`, `skill/call/req|resp`; `skill/event`
//! lives in `event`). The `type` tag is added by [`super::Message`]; every other field, default
//! and optionality follows the seed.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{
    LLMConfig, ProtocolError, SkillDefinition, SkillResult, default_version, new_id, now_ts,
};

fn default_timeout() -> u64 {
    60
}

fn default_true() -> bool {
    true
}

/// `skill/discover/req`: Agent → Host, list skills.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillDiscoverRequest {
    /// This message's id: a UUID v4 when the sender leaves it out.
    #[serde(default = "new_id")]
    pub id: String,
    /// The protocol version the message is written in (default [`crate::PROTOCOL_VERSION`]); a
    /// host refuses a request in another version with `version_mismatch`.
    #[serde(default = "default_version")]
    pub version: String,
    /// When the message was written: seconds since the Unix epoch, fractional (default: now).
    #[serde(default = "now_ts")]
    pub ts: f64,
    /// Keep skills having any of these tags (OR); empty keeps all.
    #[serde(default)]
    pub filter_tags: Vec<String>,
    /// Keep skills in any of these categories; empty keeps all.
    #[serde(default)]
    pub filter_categories: Vec<String>,
}

impl Default for SkillDiscoverRequest {
    fn default() -> Self {
        SkillDiscoverRequest {
            id: new_id(),
            version: default_version(),
            ts: now_ts(),
            filter_tags: Vec::new(),
            filter_categories: Vec::new(),
        }
    }
}

/// `skill/discover/resp`: Host → Agent, the matching skill manifests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillDiscoverResponse {
    /// This message's id: a UUID v4 when the sender leaves it out.
    #[serde(default = "new_id")]
    pub id: String,
    /// The protocol version the message is written in (default [`crate::PROTOCOL_VERSION`]); a
    /// host refuses a request in another version with `version_mismatch`.
    #[serde(default = "default_version")]
    pub version: String,
    /// When the message was written: seconds since the Unix epoch, fractional (default: now).
    #[serde(default = "now_ts")]
    pub ts: f64,
    /// Echoes the request's `id`.
    #[serde(default)]
    pub req_id: String,
    /// Available skill definitions.
    #[serde(default)]
    pub skills: Vec<SkillDefinition>,
}

impl SkillDiscoverResponse {
    /// A response to request `req_id`.
    pub fn new(req_id: impl Into<String>, skills: Vec<SkillDefinition>) -> Self {
        SkillDiscoverResponse {
            id: new_id(),
            version: default_version(),
            ts: now_ts(),
            req_id: req_id.into(),
            skills,
        }
    }
}

/// `skill/call/req`: Agent → Host, execute a skill.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillCallRequest {
    /// This message's id: a UUID v4 when the sender leaves it out.
    #[serde(default = "new_id")]
    pub id: String,
    /// The protocol version the message is written in (default [`crate::PROTOCOL_VERSION`]); a
    /// host refuses a request in another version with `version_mismatch`.
    #[serde(default = "default_version")]
    pub version: String,
    /// When the message was written: seconds since the Unix epoch, fractional (default: now).
    #[serde(default = "now_ts")]
    pub ts: f64,
    /// The skill to run; must match a `SkillDefinition.name`. Required: a call without a name
    /// is an `invalid_message`.
    pub name: String,
    /// Input arguments, validated against the skill's `input_schema`.
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// Ties the call to an agent turn or trajectory.
    #[serde(default)]
    pub correlation_id: String,
    /// Per-call wall-clock limit in seconds (default 60).
    #[serde(default = "default_timeout")]
    pub timeout: u64,
    /// Whether to emit `skill/event` messages during execution.
    #[serde(default = "default_true")]
    pub streaming: bool,
    /// Model/provider override for this invocation (subject to the host's policy).
    #[serde(default)]
    pub llm_override: Option<LLMConfig>,
    /// Free-form key/values from the caller; a W3C `traceparent` (and `tracestate`) here
    /// continues the caller's trace.
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

impl SkillCallRequest {
    /// A call of skill `name` with `arguments` and the seed's defaults for everything else.
    pub fn new(name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        SkillCallRequest {
            id: new_id(),
            version: default_version(),
            ts: now_ts(),
            name: name.into(),
            arguments,
            correlation_id: String::new(),
            timeout: default_timeout(),
            streaming: true,
            llm_override: None,
            metadata: Map::new(),
        }
    }
}

/// `skill/call/resp`: Host → Agent, the one final answer to a call.
///
/// Rejections before execution (unknown skill, unauthorized override, invalid input, protocol
/// errors) carry `error`; execution outcomes — success or failure — carry `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillCallResponse {
    /// This message's id: a UUID v4 when the sender leaves it out.
    #[serde(default = "new_id")]
    pub id: String,
    /// The protocol version the message is written in (default [`crate::PROTOCOL_VERSION`]); a
    /// host refuses a request in another version with `version_mismatch`.
    #[serde(default = "default_version")]
    pub version: String,
    /// When the message was written: seconds since the Unix epoch, fractional (default: now).
    #[serde(default = "now_ts")]
    pub ts: f64,
    /// Echoes the request's `id`.
    #[serde(default)]
    pub req_id: String,
    /// The skill the request named (empty when a rejected request carried no recoverable name).
    #[serde(default)]
    pub name: String,
    /// The outcome of the run (success or failure, with data, events and usage); None when the
    /// call was rejected before it ran, in which case `error` says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<SkillResult>,
    /// Why the request was rejected before it ran (None when it ran: its outcome, success or
    /// failure, is in `data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ProtocolError>,
    /// When the answer was made: seconds since the Unix epoch, fractional (default: now).
    #[serde(default = "now_ts")]
    pub created_at: f64,
}

impl SkillCallResponse {
    /// The response carrying an execution result.
    pub fn result(req_id: impl Into<String>, name: impl Into<String>, data: SkillResult) -> Self {
        let ts = now_ts();
        SkillCallResponse {
            id: new_id(),
            version: default_version(),
            ts,
            req_id: req_id.into(),
            name: name.into(),
            data: Some(data),
            error: None,
            created_at: ts,
        }
    }

    /// The response rejecting a request before execution.
    pub fn rejected(
        req_id: impl Into<String>,
        name: impl Into<String>,
        error: ProtocolError,
    ) -> Self {
        let ts = now_ts();
        SkillCallResponse {
            id: new_id(),
            version: default_version(),
            ts,
            req_id: req_id.into(),
            name: name.into(),
            data: None,
            error: Some(error),
            created_at: ts,
        }
    }
}

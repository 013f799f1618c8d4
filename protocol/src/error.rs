//! Error codes of the A2E skills capability and the transport-level error object
//! `{code, message, retryable}` of a `skill/call/resp`.

use serde::{Deserialize, Serialize};

/// Every machine-readable error code of the skills capability: the three `SkillErrorCode`s and
/// the protocol-level `ErrorCode` values of the seed, one enum so a `SkillResult.error_code` and a
/// response's `error.code` share one vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Skill name not found.
    UnknownSkill,
    /// Skill execution failed.
    SkillError,
    /// General runtime failure.
    RuntimeError,
    /// Message could not be parsed.
    ParseError,
    /// Message type not recognized (or a field is missing or ill-typed).
    InvalidMessage,
    /// Input (or output) did not match the skill's schema.
    SchemaViolation,
    /// Skill execution timed out.
    Timeout,
    /// Sandbox ran out of memory.
    OutOfMemory,
    /// Sandbox process crashed.
    SandboxCrash,
    /// Agent not authorized for this skill (or this `llm_override`).
    Unauthorized,
    /// Protocol version mismatch.
    VersionMismatch,
}

impl ErrorCode {
    /// All codes, in the seed's order.
    pub const ALL: [ErrorCode; 11] = [
        ErrorCode::UnknownSkill,
        ErrorCode::SkillError,
        ErrorCode::RuntimeError,
        ErrorCode::ParseError,
        ErrorCode::InvalidMessage,
        ErrorCode::SchemaViolation,
        ErrorCode::Timeout,
        ErrorCode::OutOfMemory,
        ErrorCode::SandboxCrash,
        ErrorCode::Unauthorized,
        ErrorCode::VersionMismatch,
    ];

    /// The wire string, e.g. `"unknown_skill"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownSkill => "unknown_skill",
            ErrorCode::SkillError => "skill_error",
            ErrorCode::RuntimeError => "runtime_error",
            ErrorCode::ParseError => "parse_error",
            ErrorCode::InvalidMessage => "invalid_message",
            ErrorCode::SchemaViolation => "schema_violation",
            ErrorCode::Timeout => "timeout",
            ErrorCode::OutOfMemory => "out_of_memory",
            ErrorCode::SandboxCrash => "sandbox_crash",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::VersionMismatch => "version_mismatch",
        }
    }

    /// Whether retrying the same request may succeed, when nothing more specific is known.
    ///
    /// The seed fixes `unknown_skill` (no) and `skill_error` (yes); `runtime_error` "depends" and
    /// defaults to no here — a caller that knows better (e.g. a full concurrency limit) sets
    /// [`ProtocolError::retryable`] itself. Timeouts and sandbox crashes are transient; the rest
    /// are properties of the request and repeat identically.
    pub fn default_retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::SkillError | ErrorCode::Timeout | ErrorCode::SandboxCrash
        )
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ErrorCode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorCode::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| format!("unknown A2E error code {s:?}"))
    }
}

/// The seed's `SkillErrorCode`: the three codes a skill's own execution reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillErrorCode {
    /// Skill name not found (not retryable).
    UnknownSkill,
    /// Skill execution failed (retryable).
    SkillError,
    /// General runtime failure (retryability depends on the cause).
    RuntimeError,
}

impl From<SkillErrorCode> for ErrorCode {
    fn from(code: SkillErrorCode) -> Self {
        match code {
            SkillErrorCode::UnknownSkill => ErrorCode::UnknownSkill,
            SkillErrorCode::SkillError => ErrorCode::SkillError,
            SkillErrorCode::RuntimeError => ErrorCode::RuntimeError,
        }
    }
}

/// The transport-level `error` object of a `skill/call/resp`: why a request was rejected before
/// (or instead of) execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolError {
    /// Machine-readable code.
    pub code: ErrorCode,
    /// Human-readable explanation, safe to show (never contains credentials).
    pub message: String,
    /// Whether the same request may succeed when retried.
    pub retryable: bool,
}

impl ProtocolError {
    /// An error with the code's default retryability.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ProtocolError {
            code,
            message: message.into(),
            retryable: code.default_retryable(),
        }
    }

    /// The same error with an explicit retryable flag.
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ProtocolError {}

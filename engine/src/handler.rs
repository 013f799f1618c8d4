//! Programmatic skills: the [`SkillHandler`] trait a Rust-native skill implements (seed 003's
//! `SkillHandler`, seed 000's `_execute_skill`), and the context it runs with.
//!
//! A native skill gets the same treatment as a manifest skill — input validation, events,
//! deadline, output validation, result assembly — from the run loop; the handler only computes.

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::deadline::Deadline;
use crate::events::EventEmitter;
use crate::protocol::{ErrorCode, LLMConfig};

/// What a running native skill may use.
#[derive(Debug, Clone)]
pub struct HandlerContext {
    /// Emits `progress`, `status`, `log` and `artifact` events for this call.
    pub events: EventEmitter,
    /// The call's deadline; the executor also enforces it around the handler.
    pub deadline: Deadline,
    /// Cancelled when the host cancels the call.
    pub cancel: CancellationToken,
    /// The call's `correlation_id`.
    pub correlation_id: String,
    /// The call's `metadata`.
    pub metadata: Map<String, Value>,
    /// The call's authorized `llm_override`, if any.
    pub llm_override: Option<LLMConfig>,
}

/// Why a native skill failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HandlerError {
    /// The arguments were acceptable to the schema but not to the skill (`schema_violation`).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The skill failed (`skill_error`).
    #[error("{0}")]
    Failed(String),
    /// The skill failed with a specific A2E code.
    #[error("{message}")]
    Coded {
        /// The A2E code to report.
        code: ErrorCode,
        /// What went wrong.
        message: String,
    },
}

impl HandlerError {
    /// The A2E code this error reports as.
    pub fn code(&self) -> ErrorCode {
        match self {
            HandlerError::InvalidRequest(_) => ErrorCode::SchemaViolation,
            HandlerError::Failed(_) => ErrorCode::SkillError,
            HandlerError::Coded { code, .. } => *code,
        }
    }
}

/// A Rust-native skill. The executor validates `arguments` against the skill's input schema
/// before calling, and the returned value against its output schema after.
#[async_trait]
pub trait SkillHandler: Send + Sync {
    /// Runs the skill once.
    async fn run(&self, arguments: Value, ctx: HandlerContext) -> Result<Value, HandlerError>;
}

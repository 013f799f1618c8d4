//! [`SkillError`]: why a [`Skillet`](super::Skillet) run did not produce a
//! [`SkillOutput`](super::SkillOutput), one variant per thing a caller handles differently, and
//! the pieces the variants carry ([`ArgumentViolation`], [`FailedRun`]).
//!
//! Every message comes from the engine, which never puts a credential in one; `Display` and
//! `Debug` show nothing else of the call.

use std::fmt;
use std::time::Duration;

use serde_json::Value;
use skillet_providers::ProviderErrorKind;

use crate::protocol::{ErrorCode, SkillEvent, TokenUsage};

/// One way the arguments break the skill's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentViolation {
    /// JSON pointer into the arguments (`/items/0/amount`; `""` = the whole object).
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for ArgumentViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// What a run that started and then failed had done: its partial data, events and usage.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FailedRun {
    /// What the run kept (e.g. `{"turns_used", "last_output"}` or the output's violations; see
    /// the `run` module's result docs).
    pub data: Option<Value>,
    /// The events of the call, `seq` from 0.
    pub events: Vec<SkillEvent>,
    /// Token usage so far.
    pub usage: Option<TokenUsage>,
    /// How long the call ran.
    pub duration: Duration,
    /// Whether the events (or the model's last answer) were cut.
    pub truncated: bool,
    /// What the run sent to its model and got back, when the call asked for it: why it failed,
    /// turn by turn.
    pub transcript: Option<crate::protocol::Transcript>,
}

/// Why a run produced no output. Match on the variant; [`SkillError::code`] gives the A2E code
/// a transport would have answered with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// No skill has this name; `closest` lists the nearest names (possibly none).
    #[error("unknown skill `{name}`{}", did_you_mean(closest))]
    UnknownSkill {
        /// The name asked for.
        name: String,
        /// The loaded skills with the nearest names, nearest first.
        closest: Vec<String>,
    },
    /// The skill exists but cannot run here: `Blocked` (missing tools or toolkits, a provider
    /// setting the host does not allow) or not published.
    #[error("{reason}")]
    NotRunnable {
        /// The name of the skill the run was asked for.
        skill: String,
        /// Why, naming what is missing.
        reason: String,
    },
    /// The arguments do not match the skill's input schema (or lack a variable its
    /// instructions need); every violation is listed.
    #[error("invalid arguments for `{skill}`: {}", list(violations))]
    InvalidArguments {
        /// The name of the skill the run was asked for.
        skill: String,
        /// Every violation.
        violations: Vec<ArgumentViolation>,
    },
    /// The host's policy refused the call's provider override.
    #[error("{message}")]
    Unauthorized {
        /// The name of the skill the run was asked for.
        skill: String,
        /// What was refused.
        message: String,
    },
    /// The call itself is unusable (e.g. an override that is not a usable provider config).
    #[error("{message}")]
    InvalidRequest {
        /// The name of the skill the run was asked for.
        skill: String,
        /// What is wrong.
        message: String,
    },
    /// No model to run the skill on: no default provider, or the skill's own provider
    /// settings do not resolve.
    #[error("{message}")]
    NoProvider {
        /// The name of the skill the run was asked for.
        skill: String,
        /// Why no provider resolved (no default configured, or the skill's provider settings
        /// and the host's `[skill_provider]` policy).
        message: String,
    },
    /// The run failed with this A2E code (`max_turns` exhausted, output never valid, a gate
    /// refused it, a tool loop, ...).
    #[error("`{skill}` failed ({code}): {message}")]
    Failed {
        /// The name of the skill the run was asked for.
        skill: String,
        /// The A2E code.
        code: ErrorCode,
        /// What happened.
        message: String,
        /// What the run had done.
        run: Box<FailedRun>,
    },
    /// The call's deadline passed.
    #[error("`{skill}` timed out: {message}")]
    Timeout {
        /// The name of the skill the run was asked for.
        skill: String,
        /// What the run was doing.
        message: String,
        /// What the run had done.
        run: Box<FailedRun>,
    },
    /// The caller cancelled the run.
    #[error("`{skill}` was cancelled: {message}")]
    Cancelled {
        /// The name of the skill the run was asked for.
        skill: String,
        /// What the run was doing.
        message: String,
        /// What the run had done.
        run: Box<FailedRun>,
    },
    /// The model's provider failed (after its retries): `kind` says how.
    #[error("`{skill}`: {message}")]
    Provider {
        /// The name of the skill the run was asked for.
        skill: String,
        /// How the provider failed (rate limit, auth, unavailable, ...).
        kind: ProviderErrorKind,
        /// The provider's error, redacted.
        message: String,
        /// What the run had done.
        run: Box<FailedRun>,
    },
    /// The run succeeded but its data does not decode as the requested type.
    #[error("the output of `{skill}` does not decode as {type_name}: {error}")]
    Decode {
        /// The name of the skill the run was asked for.
        skill: String,
        /// The Rust type the data was to decode as (`std::any::type_name` of `run_typed`'s
        /// output type).
        type_name: &'static str,
        /// serde's message.
        error: String,
        /// The validated data as it is (boxed: it keeps every `SkillError` small).
        data: Box<Value>,
    },
    /// The engine refused or failed the call for a reason not listed above (an internal
    /// error); `code` is its A2E code.
    #[error("`{skill}` ({code}): {message}")]
    Internal {
        /// The name of the skill the run was asked for.
        skill: String,
        /// The A2E code.
        code: ErrorCode,
        /// What happened.
        message: String,
    },
}

impl SkillError {
    /// The A2E error code a transport would have answered with (`Decode` has none of its own
    /// and reports `schema_violation`).
    pub fn code(&self) -> ErrorCode {
        match self {
            SkillError::UnknownSkill { .. } => ErrorCode::UnknownSkill,
            SkillError::NotRunnable { .. }
            | SkillError::NoProvider { .. }
            | SkillError::Cancelled { .. } => ErrorCode::RuntimeError,
            SkillError::InvalidArguments { .. } | SkillError::Decode { .. } => {
                ErrorCode::SchemaViolation
            }
            SkillError::Unauthorized { .. } => ErrorCode::Unauthorized,
            SkillError::InvalidRequest { .. } => ErrorCode::InvalidMessage,
            SkillError::Timeout { .. } => ErrorCode::Timeout,
            SkillError::Failed { code, .. } | SkillError::Internal { code, .. } => *code,
            SkillError::Provider { kind, .. } => match kind {
                ProviderErrorKind::RateLimited { .. }
                | ProviderErrorKind::Unavailable
                | ProviderErrorKind::Truncated
                | ProviderErrorKind::MalformedResponse => ErrorCode::SkillError,
                _ => ErrorCode::RuntimeError,
            },
        }
    }

    /// The run's partial record, for the variants of a run that started.
    pub fn run(&self) -> Option<&FailedRun> {
        match self {
            SkillError::Failed { run, .. }
            | SkillError::Timeout { run, .. }
            | SkillError::Cancelled { run, .. }
            | SkillError::Provider { run, .. } => Some(run),
            _ => None,
        }
    }
}

fn did_you_mean(closest: &[String]) -> String {
    match closest {
        [] => String::new(),
        names => format!(
            " (did you mean {}?)",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn list(violations: &[ArgumentViolation]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

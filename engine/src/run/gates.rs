//! Pre-terminal gates (seed 003 `PreTerminalGate`): host checks that see a call's validated
//! output before it becomes a successful result, and may veto it.
//!
//! Gates run in registration order after the output passed the schema, inside the call's
//! deadline; the first veto ends the call with `skill_error` naming the gate. A gate that panics
//! fails the call with `runtime_error` naming the gate (the panic never escapes the executor).
//!
//! Not here: terminal hooks, which observe outcomes and cannot change them (`hooks`).

use std::panic::AssertUnwindSafe;

use async_trait::async_trait;
use futures::FutureExt;
use serde_json::{Map, Value};

use crate::protocol::ErrorCode;

/// What a gate sees.
#[derive(Debug, Clone, Copy)]
pub struct GateContext<'a> {
    /// The skill's name.
    pub skill: &'a str,
    /// The call's (validated) arguments.
    pub arguments: &'a Map<String, Value>,
    /// The output about to be returned (validated against the output schema).
    pub output: &'a Value,
    /// The call's `correlation_id`.
    pub correlation_id: &'a str,
}

/// A check on a successful output before it is returned.
#[async_trait]
pub trait PreTerminalGate: Send + Sync {
    /// The gate's name, reported when it vetoes.
    fn name(&self) -> &str;

    /// `Ok(())` lets the output through; `Err(reason)` vetoes it.
    async fn check(&self, ctx: GateContext<'_>) -> Result<(), String>;
}

/// Why the gates stopped an output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRejection {
    /// `skill_error` for a veto, `runtime_error` for a panicking gate.
    pub code: ErrorCode,
    /// The gate's name.
    pub gate: String,
    /// The message for `SkillResult.error`, naming the gate.
    pub message: String,
}

/// Runs `gates` in order; the first veto (or panic) is returned.
pub(crate) async fn run_gates(
    gates: &[std::sync::Arc<dyn PreTerminalGate>],
    ctx: GateContext<'_>,
) -> Result<(), GateRejection> {
    for gate in gates {
        let name = gate.name().to_owned();
        let span = tracing::info_span!("skill.gate", gate = %name, outcome = tracing::field::Empty);
        let outcome = AssertUnwindSafe(gate.check(ctx)).catch_unwind().await;
        match outcome {
            Ok(Ok(())) => {
                span.record("outcome", "pass");
            }
            Ok(Err(reason)) => {
                span.record("outcome", "veto");
                return Err(GateRejection {
                    code: ErrorCode::SkillError,
                    message: format!("output rejected by gate `{name}`: {reason}"),
                    gate: name,
                });
            }
            Err(_panic) => {
                span.record("outcome", "panic");
                return Err(GateRejection {
                    code: ErrorCode::RuntimeError,
                    message: format!("gate `{name}` panicked while checking the output"),
                    gate: name,
                });
            }
        }
    }
    Ok(())
}

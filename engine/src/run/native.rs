//! Running a programmatic skill (a [`SkillHandler`]): the handler runs in its own task (a panic
//! becomes `runtime_error`), its output is validated against the skill's output schema like a
//! model's final answer (a mismatch is `schema_violation` with every violation — there is no
//! repair turn for code), and its errors map through [`HandlerError::code`].
//!
//! Input validation, the deadline, host cancellation, gates, hooks and result assembly are the
//! executor's, shared with manifest skills. Not here: the LLM loop (`agent`).

use std::sync::Arc;

use serde_json::Value;

use super::dispatch::AbortOnDrop;
use super::result::Outcome;
use crate::handler::{HandlerContext, SkillHandler};
use crate::protocol::ErrorCode;
use crate::skill::CompiledSkill;

/// Runs `handler` once with `arguments`.
pub(crate) async fn run_native(
    skill: &CompiledSkill,
    handler: Arc<dyn SkillHandler>,
    arguments: Value,
    ctx: HandlerContext,
) -> Outcome {
    ctx.events
        .status(format!("running {} (native)", skill.name()));
    ctx.events.progress(5, "started");
    // Fires the handler's token if the call is dropped (deadline) before it finishes.
    let _cancel_on_drop = ctx.cancel.clone().drop_guard();
    let task = AbortOnDrop(tokio::spawn(
        async move { handler.run(arguments, ctx).await },
    ));
    let joined = task.join().await;
    let output = match joined {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => return Outcome::failure(error.code(), error.to_string(), 1),
        Err(join_error) if join_error.is_panic() => {
            return Outcome::failure(
                ErrorCode::RuntimeError,
                format!("native skill `{}` panicked", skill.name()),
                1,
            );
        }
        Err(_) => {
            return Outcome::failure(
                ErrorCode::RuntimeError,
                format!("native skill `{}` was cancelled", skill.name()),
                1,
            );
        }
    };
    match skill.output_schema.as_ref() {
        Some(schema) => match schema.validate(&output) {
            Ok(()) => Outcome::Success {
                data: output,
                turns: 1,
            },
            Err(violations) => {
                let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
                Outcome::output_invalid(
                    format!(
                        "the native skill's output does not match the output schema: {}",
                        listed.join("; ")
                    ),
                    1,
                    &violations,
                    &output.to_string(),
                )
            }
        },
        None => Outcome::Success {
            data: output,
            turns: 1,
        },
    }
}

//! One call through the executor (`execute`, shared by a plain run and a stream) and how its
//! wire answer (`skill/call/resp`) becomes `Result<SkillOutput, SkillError>`: each
//! rejection and failure code mapped onto the [`SkillError`] variant a caller handles, from what
//! the engine knows structurally (the registry, the input schema, the call's [`CallReport`], the
//! caller's own cancellation) and never from message text.
//!
//! Not here: building the call (`skillet`), streaming its events (`streaming`), the types
//! themselves (`output`, `error`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::error::{ArgumentViolation, FailedRun, SkillError};
use super::output::SkillOutput;
use tokio_util::sync::CancellationToken;

use crate::events::EventSink;
use crate::protocol::{ErrorCode, ProtocolError, SkillCallRequest, SkillCallResponse, SkillResult};
use crate::run::Executor;
use crate::run::call_report::CallReport;
use crate::skill::suggest;

/// What the caller knows about the call besides its answer.
pub(crate) struct CallFacts<'a> {
    /// The skill asked for.
    pub(crate) skill: &'a str,
    /// The call's request id.
    pub(crate) request_id: String,
    /// The arguments sent (read only on the error path).
    pub(crate) arguments: &'a Map<String, Value>,
    /// Whether the call carried an `llm_override`.
    pub(crate) had_override: bool,
    /// Whether the caller's cancellation fired.
    pub(crate) cancelled: bool,
}

/// The output, or the error, of `response`.
pub(crate) fn interpret(
    executor: &Executor,
    facts: CallFacts<'_>,
    response: SkillCallResponse,
    report: &CallReport,
) -> Result<SkillOutput, SkillError> {
    match (response.data, response.error) {
        (Some(result), _) if result.success => Ok(SkillOutput::from_result(
            facts.skill,
            facts.request_id,
            result,
        )),
        (Some(result), _) => Err(failed(&facts, result, report)),
        (None, Some(error)) => Err(rejected(executor, &facts, error)),
        (None, None) => Err(SkillError::Internal {
            skill: facts.skill.to_owned(),
            code: ErrorCode::RuntimeError,
            message: "the engine answered with neither a result nor an error".to_owned(),
        }),
    }
}

/// A call refused before it ran.
fn rejected(executor: &Executor, facts: &CallFacts<'_>, error: ProtocolError) -> SkillError {
    let skill = facts.skill.to_owned();
    let registered = executor.skills().get(facts.skill);
    match error.code {
        ErrorCode::UnknownSkill => {
            let names: Vec<String> = executor
                .skills()
                .skills()
                .iter()
                .map(|s| s.compiled.name().to_owned())
                .collect();
            SkillError::UnknownSkill {
                closest: closest_names(facts.skill, &names),
                name: skill,
            }
        }
        ErrorCode::SchemaViolation => {
            let arguments = Value::Object(facts.arguments.clone());
            let violations = registered
                .as_ref()
                .and_then(|s| s.compiled.input_schema.as_ref())
                .and_then(|schema| schema.validate(&arguments).err())
                .map(|found| {
                    found
                        .into_iter()
                        .map(|v| ArgumentViolation {
                            path: v.instance_path,
                            message: v.message,
                        })
                        .collect()
                })
                // The arguments match the schema: the instructions needed a variable they
                // lack, and the message names it.
                .unwrap_or_else(|| {
                    vec![ArgumentViolation {
                        path: String::new(),
                        message: error.message,
                    }]
                });
            SkillError::InvalidArguments { skill, violations }
        }
        ErrorCode::Unauthorized => SkillError::Unauthorized {
            skill,
            message: error.message,
        },
        ErrorCode::InvalidMessage => SkillError::InvalidRequest {
            skill,
            message: error.message,
        },
        ErrorCode::RuntimeError if registered.as_ref().is_some_and(|s| !s.is_runnable()) => {
            SkillError::NotRunnable {
                skill,
                reason: error.message,
            }
        }
        ErrorCode::RuntimeError
            if !facts.had_override
                && registered
                    .as_ref()
                    .is_some_and(|s| executor.inner.providers.for_skill(&s.compiled).is_err()) =>
        {
            SkillError::NoProvider {
                skill,
                message: error.message,
            }
        }
        code => SkillError::Internal {
            skill,
            code,
            message: error.message,
        },
    }
}

/// A call that ran and failed.
fn failed(facts: &CallFacts<'_>, result: SkillResult, report: &CallReport) -> SkillError {
    let skill = facts.skill.to_owned();
    let code = result.error_code.unwrap_or(ErrorCode::RuntimeError);
    let message = result.error.clone().unwrap_or_default();
    let run = Box::new(FailedRun {
        data: result.data,
        events: result.events,
        usage: result.usage,
        duration: Duration::from_millis(result.duration_ms),
        truncated: result.truncated,
        transcript: result.transcript.map(|t| *t),
    });
    if facts.cancelled {
        return SkillError::Cancelled {
            skill,
            message,
            run,
        };
    }
    if code == ErrorCode::Timeout {
        return SkillError::Timeout {
            skill,
            message,
            run,
        };
    }
    match report.provider_failure() {
        Some(kind) => SkillError::Provider {
            skill,
            kind,
            message,
            run,
        },
        None => SkillError::Failed {
            skill,
            code,
            message,
            run,
        },
    }
}

/// The names nearest to `wanted`, nearest first (the rule of [`crate::skill::suggest`]).
pub(crate) fn closest_names(wanted: &str, names: &[String]) -> Vec<String> {
    suggest::closest_names(wanted, names.iter().map(String::as_str))
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// Runs `request` through `executor` and interprets its answer.
pub(crate) async fn execute(
    executor: &Executor,
    request: SkillCallRequest,
    sink: Option<Arc<dyn EventSink>>,
    cancel: CancellationToken,
) -> Result<SkillOutput, SkillError> {
    // The request stays here, lent to the call, so its arguments are at hand on the error path
    // (the structured violations of a refused call) without a copy.
    // Boxed: `collect` keeps the future it is given in its own state (the task-local scope),
    // so passed by value its 3 KB would be held twice by every call in flight.
    let call = Box::pin(executor.call_borrowed(&request, sink, cancel.clone(), None));
    let (response, report) = CallReport::collect(call).await;
    let facts = CallFacts {
        skill: &request.name,
        request_id: request.id.clone(),
        arguments: &request.arguments,
        had_override: request.llm_override.is_some(),
        cancelled: cancel.is_cancelled(),
    };
    interpret(executor, facts, response, &report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names_are_near_ones_nearest_first() {
        let names: Vec<String> = ["summarize", "code-review", "expense-report", "table-report"]
            .map(String::from)
            .to_vec();
        assert_eq!(closest_names("sumarize", &names), vec!["summarize"]);
        assert_eq!(closest_names("review", &names), vec!["code-review"]);
        assert!(closest_names("zzz", &names).is_empty());
    }
}

//! One call, start to finish: preflight (lookup, status, input, override, instructions,
//! provider), then `execute`: the opening (`call_open`: checkpoint, events, timeout), the run
//! made ready (`call_run`) and raced against one deadline and the host's cancellation, its
//! ending (`ending`: gates, result assembly), and the hooks.
//!
//! # Rejections (`skill/call/resp.error`, nothing ran, no events)
//! | check | code |
//! |---|---|
//! | no skill with that name | `unknown_skill` |
//! | skill not `Published` (`Blocked` names what is missing) | `runtime_error` (retryable only when `Blocked`) |
//! | arguments fail the input schema (every violation listed, with instance paths) | `schema_violation` |
//! | `llm_override` refused by the policy | `unauthorized` |
//! | `llm_override` not a usable config | `invalid_message` |
//! | instructions need a variable the arguments lack (path, line, column) | `schema_violation` |
//! | no model: no override, no skill `llm_config`, no host default | `runtime_error` |
//! | a cost cap applies (`[limits] max_cost_usd`, `a2e-max-cost-usd`) and the model has no USD price (fail closed, see `budget`) | `runtime_error` (not retryable) |
//!
//! # Execution outcomes (`skill/call/resp.data`, a `SkillResult`)
//! The deadline is the smallest of the request's `timeout`, the skill's `timeout_seconds` and
//! [`Limits::timeout_cap`]; when it passes, the run is dropped (in-flight provider request and
//! tools stop) and the result is `timeout` with the events so far. Host cancellation does the
//! same and reports `runtime_error` ("cancelled by the host"). Every executed call ends with a
//! `progress` of 100 and, for manifest skills, a `log` with the token usage.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::budget::RunBudget;
use super::call_open::Opened;
use super::call_run::{ManifestInput, ManifestRun, RunContext, native_run};
use super::durable;
use super::ending::Ended;
use super::executor::ExecutorInner;
use super::hooks::{CallOutcome, TerminalEvent, run_hooks};
use super::opening::{check_input, render_instructions, viewed_as_value};
use super::provider::ResolvedProvider;
use super::result::Outcome;
use super::spans;
use crate::deadline::Deadline;
use crate::events::EventSink;
use crate::files::InputFile;
use crate::handler::SkillHandler;
use crate::protocol::{
    ErrorCode, LLMConfig, ProtocolError, SkillCallRequest, SkillCallResponse, SkillResult,
    SkillStatus,
};
use crate::skill::{Implementation, RegisteredSkill};
use crate::telemetry::{metrics, propagation};
use skillet_core::approval::Approver;

/// What preflight established for a call that will run.
struct Prepared {
    skill: Arc<RegisteredSkill>,
    /// The validated arguments (input files taken out): always an object, as the request's are.
    arguments: Map<String, Value>,
    /// How the skill runs, with what only that way needs: one match on the skill's
    /// implementation, in preflight, instead of one per step.
    run: PreparedRun,
}

/// The two ways a skill runs.
enum PreparedRun {
    /// The SKILL.md instructions on the model loop.
    Manifest {
        /// Input files taken out of the arguments (`files::INPUT_FILES_KEY`).
        inputs: Vec<InputFile>,
        /// The rendered instructions (with the input files' section); the run adds the output
        /// format and owns them from the first turn on.
        instructions: String,
        provider: ResolvedProvider,
    },
    /// A Rust-native handler.
    Native {
        handler: Arc<dyn SkillHandler>,
        /// The authorized override, handed to the handler.
        llm_override: Option<LLMConfig>,
    },
}

impl ExecutorInner {
    /// Runs `request` to its one response (see the module docs).
    pub(crate) async fn call(
        &self,
        request: &SkillCallRequest,
        sink: Option<Arc<dyn EventSink>>,
        cancel: CancellationToken,
        approver: Option<Arc<dyn Approver>>,
    ) -> SkillCallResponse {
        let started = Instant::now();
        let span = spans::invoke_agent(&request.name, &request.id, &request.correlation_id);
        if let Some(caller) = request
            .metadata
            .get(skillet_core::telemetry::CALLER_METADATA_KEY)
            .and_then(serde_json::Value::as_str)
        {
            span.record("enduser.id", caller);
        }
        propagation::continue_trace(&span, &request.metadata);
        let _in_flight = InFlight::enter();
        async {
            let response = match self.preflight(request) {
                Err(error) => {
                    let span = tracing::Span::current();
                    span.record("skillet.outcome", error.code.as_str());
                    spans::record_error(&span, error.code.as_str());
                    SkillCallResponse::rejected(&request.id, &request.name, error)
                }
                Ok(prepared) => {
                    let result = self
                        .execute(prepared, request, sink, &cancel, approver.as_ref(), started)
                        .await;
                    SkillCallResponse::result(&request.id, &request.name, result)
                }
            };
            count_answer(&request.name, &response);
            let outcome = match (&response.data, &response.error) {
                (Some(result), _) => Some(CallOutcome::Completed(result)),
                (None, Some(error)) => Some(CallOutcome::Rejected(error)),
                (None, None) => None,
            };
            if let Some(outcome) = outcome {
                let event = TerminalEvent {
                    skill: &request.name,
                    req_id: &request.id,
                    correlation_id: &request.correlation_id,
                    outcome,
                };
                run_hooks(&self.hooks, event, self.limits.hook_timeout).await;
            }
            response
        }
        .instrument(span)
        .await
    }

    /// The checks before anything runs (the module docs' rejections), and what they established.
    /// Boxed, once per call: an async fn keeps its arguments beside the locals they move into,
    /// so a preparation passed by value would sit twice in every call in flight.
    fn preflight(&self, request: &SkillCallRequest) -> Result<Box<Prepared>, ProtocolError> {
        let skill = self.skills.get(&request.name).ok_or_else(|| {
            ProtocolError::new(
                ErrorCode::UnknownSkill,
                format!("unknown skill `{}`", request.name),
            )
        })?;
        if !skill.is_runnable() {
            return Err(not_runnable(&skill));
        }
        let mut arguments = request.arguments.clone();
        let inputs = match &skill.implementation {
            Implementation::Manifest => self
                .files
                .take_inputs(&mut arguments)
                .map_err(|e| ProtocolError::new(ErrorCode::InvalidMessage, e.to_string()))?,
            Implementation::Native(_) => Vec::new(),
        };
        viewed_as_value(&mut arguments, |value| check_input(&skill.compiled, value))?;
        let override_provider = match &request.llm_override {
            Some(config) => Some(self.providers.authorize_override(config)?),
            None => None,
        };
        let run = match &skill.implementation {
            Implementation::Native(handler) => PreparedRun::Native {
                handler: Arc::clone(handler),
                llm_override: request.llm_override.clone(),
            },
            Implementation::Manifest => {
                let instructions = viewed_as_value(&mut arguments, |value| {
                    render_instructions(&skill.compiled, value)
                })?;
                let instructions = match self.files.prompt_section(&skill.compiled, &inputs) {
                    Some(section) => format!("{}\n\n{section}", instructions.trim_end()),
                    None => instructions,
                };
                let provider = match override_provider {
                    Some(p) => p,
                    None => self
                        .providers
                        .for_skill(&skill.compiled)
                        .map_err(|e| ProtocolError::new(ErrorCode::RuntimeError, e.to_string()))?,
                };
                // A cost cap fails closed: an unpriced model is refused before anything is sent.
                RunBudget::new(
                    &self.limits,
                    skill.compiled.hints.max_cost_usd,
                    &self.pricing,
                )
                .check_priced(provider.provider.model())?;
                PreparedRun::Manifest {
                    inputs,
                    instructions,
                    provider,
                }
            }
        };
        Ok(Box::new(Prepared {
            skill,
            arguments,
            run,
        }))
    }

    /// Runs a call that passed preflight: its opening (`call_open`), the run raced against the
    /// deadline and the host's cancellation (`call_run` makes it ready), its ending (`ending`).
    async fn execute(
        &self,
        prepared: Box<Prepared>,
        request: &SkillCallRequest,
        sink: Option<Arc<dyn EventSink>>,
        cancel: &CancellationToken,
        approver: Option<&Arc<dyn Approver>>,
        started: Instant,
    ) -> SkillResult {
        let Prepared {
            skill,
            arguments,
            run,
        } = *prepared;
        let skill = &skill;
        let Opened {
            durable,
            loaded,
            events,
            state,
            timeout,
            stream,
        } = self.open(skill, request, sink).await;
        if let Some(why) = durable::not_resumed(self.checkpoints.as_ref(), request, &loaded) {
            let outcome = Outcome::failure(ErrorCode::RuntimeError, why, 0);
            return self.finish(skill, &events, &state, outcome, started);
        }
        let deadline = Deadline::after(timeout);
        let cx = RunContext {
            skill,
            request,
            events: &events,
            state: &state,
            durable: durable.as_ref(),
            deadline,
            cancel,
            approver,
            stream,
        };
        let (outcome, call_files, resumed_from) = match run {
            PreparedRun::Native {
                handler,
                llm_override,
            } => {
                let body = std::pin::pin!(native_run(&cx, handler, llm_override, arguments));
                (race(body, &cx, timeout).await, None, None)
            }
            PreparedRun::Manifest {
                inputs,
                instructions,
                provider,
            } => {
                let input = ManifestInput {
                    inputs,
                    instructions,
                    provider,
                    arguments,
                    loaded,
                };
                let ManifestRun {
                    mut turns,
                    call_files,
                    resumed_from,
                } = match self.manifest_run(&cx, input).await {
                    Ok(run) => run,
                    Err(outcome) => return self.finish(skill, &events, &state, outcome, started),
                };
                let body = std::pin::pin!(turns.run());
                let outcome = race(body, &cx, timeout).await;
                (outcome, call_files, resumed_from)
            }
        };
        let ended = Ended {
            outcome,
            call_files,
            resumed_from,
            deadline,
            started,
        };
        self.conclude(skill, request, &events, &state, durable.as_ref(), ended)
            .await
    }
}

/// Polls the run until it ends, the host cancels the call or its deadline passes; after either
/// of the last two the caller drops the run where it is (its provider request and tools stop),
/// and the outcome says what it was doing. The run is pinned by the caller and raced by
/// reference: an async fn keeps its arguments beside the locals they move into, so a run
/// passed by value would sit twice in every call in flight.
async fn race(
    body: Pin<&mut impl Future<Output = Outcome>>,
    cx: &RunContext<'_>,
    timeout: Duration,
) -> Outcome {
    let state = cx.state;
    tokio::select! {
        biased;
        () = cx.cancel.cancelled() => Outcome::failure(
            ErrorCode::RuntimeError,
            format!("cancelled by the host while {}", state.describe()),
            state.turn(),
        ),
        () = tokio::time::sleep_until(cx.deadline.instant()) => Outcome::failure(
            ErrorCode::Timeout,
            format!(
                "the call's deadline of {:.1}s passed while {}",
                timeout.as_secs_f64(),
                state.describe()
            ),
            state.turn(),
        ),
        outcome = body => outcome,
    }
}

/// Holds `skillet_calls_in_flight` up while a call runs, however it ends (a dropped call too).
struct InFlight;

impl InFlight {
    fn enter() -> Self {
        metrics::get().in_flight.inc();
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        metrics::get().in_flight.dec();
    }
}

/// Counts the answer in `skillet_calls_total`. A name that is not a served skill is labelled
/// `unknown`, so callers cannot grow the label space.
fn count_answer(name: &str, response: &SkillCallResponse) {
    let (skill, outcome) = match (&response.data, &response.error) {
        (Some(result), _) if result.success => (name, "success"),
        (Some(result), _) => (
            name,
            result
                .error_code
                .unwrap_or(ErrorCode::RuntimeError)
                .as_str(),
        ),
        (None, Some(error)) if error.code == ErrorCode::UnknownSkill => {
            (metrics::UNKNOWN, error.code.as_str())
        }
        (None, Some(error)) => (name, error.code.as_str()),
        (None, None) => return,
    };
    metrics::get().call_answered(skill, outcome);
}

fn not_runnable(skill: &RegisteredSkill) -> ProtocolError {
    match skill.status {
        SkillStatus::Blocked => ProtocolError::new(
            ErrorCode::RuntimeError,
            format!(
                "skill `{}` is Blocked ({})",
                skill.compiled.name(),
                skill.blockers.reasons().join("; ")
            ),
        )
        // A host's verdict on the skill (provider, environment, system tools) does not change
        // by retrying.
        .with_retryable(skill.blockers.may_clear_by_itself()),
        status => ProtocolError::new(
            ErrorCode::RuntimeError,
            format!(
                "skill `{}` is {status:?}, not Published",
                skill.compiled.name()
            ),
        )
        .with_retryable(false),
    }
}

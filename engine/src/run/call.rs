//! One call, start to finish: preflight (lookup, status, input, override, instructions,
//! provider), execution under one deadline and the host's cancellation, then its ending
//! (`ending`: gates, result assembly) and hooks.
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

use crate::protocol::LogLevel;
use std::sync::Arc;
use std::time::Instant;

use futures::future::Either;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::agent::TurnLoop;
use super::approval::{ApprovalGate, Approver};
use super::budget::RunBudget;
use super::durable::{self, Durable, Loaded};
use super::ending::Ended;
use super::executor::ExecutorInner;
use super::hooks::{CallOutcome, TerminalEvent, run_hooks};
use super::images;
use super::native::run_native;
use super::opening::{check_input, render_instructions};
use super::provider::ResolvedProvider;
use super::result::Outcome;
use super::run_state::RunState;
use super::{messages, spans};
use crate::deadline::Deadline;
use crate::events::EventSink;
use crate::files::InputFile;
use crate::handler::{HandlerContext, SkillHandler};
use crate::protocol::{
    ErrorCode, LLMConfig, ProtocolError, Resumed, SkillCallRequest, SkillCallResponse, SkillResult,
    SkillStatus,
};
use crate::skill::{Implementation, RegisteredSkill};
use crate::telemetry::{metrics, propagation};

/// What preflight established for a call that will run.
struct Prepared {
    skill: Arc<RegisteredSkill>,
    /// The validated arguments (input files taken out).
    arguments: Value,
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
            .get(crate::telemetry::CALLER_METADATA_KEY)
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

    /// Boxed: the call's future holds the answer of preflight while the call runs, and a box is
    /// one pointer in it instead of the whole preparation twice (its own and `execute`'s).
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
        let mut argument_map = request.arguments.clone();
        let inputs = match &skill.implementation {
            Implementation::Manifest => self
                .files
                .take_inputs(&mut argument_map)
                .map_err(|e| ProtocolError::new(ErrorCode::InvalidMessage, e))?,
            Implementation::Native(_) => Vec::new(),
        };
        let arguments = Value::Object(argument_map);
        check_input(&skill.compiled, &arguments)?;
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
                let instructions = render_instructions(&skill.compiled, &arguments)?;
                let instructions = match self.files.prompt_section(&skill.compiled, &inputs) {
                    Some(section) => format!("{}\n\n{section}", instructions.trim_end()),
                    None => instructions,
                };
                let provider = match override_provider {
                    Some(p) => p,
                    None => self
                        .providers
                        .for_skill(&skill.compiled)
                        .map_err(|e| ProtocolError::new(ErrorCode::RuntimeError, e))?,
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
        // What the call's state keeps while the run goes on matters (every call in flight holds
        // it): a local that is borrowed stays in that state until its scope ends, even once
        // moved out of, so what is only needed to start the run is borrowed in blocks below.
        // The model streams when the call asked for it, unless its live sink drops the text.
        let stream = request.streaming && sink.as_ref().is_none_or(|sink| sink.forwards_text());
        let live = if request.streaming { sink } else { None };
        // Boxed, like the call's files below: most calls have neither, and the call's state
        // then holds a pointer for each instead of their room.
        let durable = matches!(skill.implementation, Implementation::Manifest)
            .then(|| Durable::for_call(self.checkpoints.as_ref(), skill, request))
            .flatten()
            .map(Box::new);
        let loaded = match &durable {
            Some(durable) => durable.load().await,
            None => Loaded::Fresh,
        };
        let state = RunState::new(
            crate::protocol::transcript_requested(&request.metadata),
            self.capture_content,
        );
        let (events, timeout, loaded) = {
            let mut loaded = loaded;
            let events = durable::emitter(
                &mut loaded,
                &request.id,
                live,
                self.limits.event_collect_cap,
            );
            let timeout = durable::timeout(
                &loaded,
                self.limits
                    .call_timeout(request.timeout, skill.compiled.spec.timeout_seconds),
            );
            if let Some(why) = durable::not_resumed(self.checkpoints.as_ref(), request, &loaded) {
                let outcome = Outcome::failure(ErrorCode::RuntimeError, why, 0);
                return self.finish(skill, &events, &state, outcome, started);
            }
            (events, timeout, loaded)
        };
        let deadline = Deadline::after(timeout);
        let mut call_files = None;
        let mut resumed_from = None;
        // One future type for both ways, without a box: the run stays inline in the call's state.
        // Built in a block that takes what it consumes (see above).
        let body = {
            let (run, arguments, loaded) = (run, arguments, loaded);
            match run {
                PreparedRun::Native {
                    handler,
                    llm_override,
                } => {
                    let ctx = HandlerContext {
                        events: events.clone(),
                        deadline,
                        cancel: cancel.child_token(),
                        correlation_id: request.correlation_id.clone(),
                        metadata: request.metadata.clone(),
                        llm_override,
                    };
                    state.set_turn(1);
                    Either::Left(run_native(&skill.compiled, handler, arguments, ctx))
                }
                PreparedRun::Manifest {
                    inputs,
                    instructions,
                    provider,
                } => {
                    let span = tracing::Span::current();
                    span.record("gen_ai.provider.name", provider.provider.kind().as_str());
                    span.record("gen_ai.request.model", provider.provider.model());
                    if !skill.compiled.toolkits.is_empty() {
                        // First-use toolkits connect now, so their tools are offered from the
                        // first turn; a toolkit that cannot start leaves the skill without its
                        // tools, said in a log.
                        let starting = self.tools.ensure_started(&skill.compiled.toolkits);
                        if let Ok(failures) =
                            tokio::time::timeout_at(deadline.instant(), starting).await
                        {
                            for failure in failures {
                                events.log(LogLevel::Warn, failure.to_string());
                            }
                        }
                    }
                    let mut tools = self
                        .tools
                        .resolve(&skill.compiled.tools, &skill.compiled.toolkits);
                    // The skill's files, the call's workspace and scripts (see `files`).
                    call_files = match self.files.open(&skill.compiled, &inputs) {
                        Ok(files) => files.map(Box::new),
                        Err(e) => {
                            let outcome = Outcome::failure(ErrorCode::RuntimeError, e, 0);
                            return self.finish(skill, &events, &state, outcome, started);
                        }
                    };
                    for tool in call_files.iter().flat_map(|f| f.tools()) {
                        tools.add_engine_tool(tool.clone());
                    }
                    let first_message = match &arguments {
                        Value::Object(map) => messages::first_user_message(map),
                        _ => messages::first_user_message(&request.arguments),
                    };
                    let image_bytes_limit = provider.provider.image_bytes_limit();
                    let first_images = images::input_images(&inputs, image_bytes_limit, &events);
                    let pricing = &self.pricing;
                    let approvals = ApprovalGate::new(
                        &self.approvals,
                        skill.compiled.name(),
                        &skill.compiled.approval,
                        approver,
                    );
                    let (resume, resumed) = match loaded {
                        Loaded::Resume(checkpoint) => {
                            let turns_saved = checkpoint.turn();
                            (Some(checkpoint), Some(Resumed { turns_saved }))
                        }
                        Loaded::Refused(why) => {
                            events.log(LogLevel::Warn, why);
                            (None, None)
                        }
                        Loaded::Fresh => (None, None),
                    };
                    resumed_from = resumed;
                    // The loop owns what it alone uses and is built here, not in the block
                    // below: a block's captures stay in its state for its whole life, so
                    // building the loop inside it would keep what was moved into the loop twice.
                    let mut turns = TurnLoop {
                        budget: RunBudget::new(
                            &self.limits,
                            skill.compiled.hints.max_cost_usd,
                            pricing,
                        ),
                        skill: &skill.compiled,
                        provider,
                        tools,
                        schemas: &self.tool_schemas,
                        limits: &self.limits,
                        instructions,
                        schema_in_instructions: false,
                        first_message,
                        first_images,
                        image_bytes_limit,
                        max_turns: self.limits.max_turns(skill.compiled.spec.max_turns),
                        deadline,
                        cancel,
                        events: &events,
                        stream,
                        state: &state,
                        capture_content: self.capture_content,
                        reasoning_events: self.reasoning_events,
                        approvals,
                        durable: durable.as_deref(),
                        resume,
                    };
                    Either::Right(async move { turns.run().await })
                }
            }
        };
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => Outcome::failure(
                ErrorCode::RuntimeError,
                format!("cancelled by the host while {}", state.describe()),
                state.turn(),
            ),
            () = tokio::time::sleep_until(deadline.instant()) => Outcome::failure(
                ErrorCode::Timeout,
                format!(
                    "the call's deadline of {:.1}s passed while {}",
                    timeout.as_secs_f64(),
                    state.describe()
                ),
                state.turn(),
            ),
            outcome = body => outcome,
        };
        let ended = Ended {
            outcome,
            call_files,
            resumed_from,
            deadline,
            started,
        };
        self.conclude(skill, request, &events, &state, durable.as_deref(), ended)
            .await
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

//! The turn loop of a manifest skill: at most `max_turns` provider requests, tool dispatch
//! between them, and the final answer judged and repaired.
//!
//! Per turn: check the token budget and the cost cap (`budget`); emit `status` ("turn 2/8 ·
//! ollama/llama3.2") and `progress`; send the conversation (streamed text deltas become
//! `artifact` chunks named `turn-N`, mime `text/plain`, closed by an empty chunk with
//! `final: true`; provider retries, rate-limit waits and fallbacks become `log` warnings); then either dispatch the requested tools and go on, or judge the final
//! answer — accept it, or append a repair message and go on while turns remain.
//!
//! Not here: the deadline and host cancellation (the executor races this loop against them and
//! drops it, which cancels the in-flight provider request and tools), gates, result assembly.

use crate::protocol::LogLevel;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use skillet_providers::{
    CallOptions, ChatMessage, ChatRequest, ChatResponse, FallbackNotice, FinishReason, Hints,
    ModeNotice, RateLimitNotice, ResponseSchema, RetryNotice, RetryObserver, SchemaDelivery,
    ToolCall, ToolSpec, TurnPhase,
};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::approval_gate::ApprovalGate;
use super::budget::RunBudget;
use super::dispatch::{DispatchContext, RepeatTracker, dispatch_turn};
use super::durable::Durable;
use super::output::{FinalOutput, ends_early, judge};
use super::provider::{ResolvedProvider, provider_failure};
use super::result::Outcome;
use super::run_state::{Answered, Phase, RunState};
use super::tool_schemas::ToolSchemaCache;
use super::{Limits, messages, spans};
use crate::checkpoint::Checkpoint;
use crate::deadline::Deadline;
use crate::events::EventEmitter;
use crate::protocol::ErrorCode;
use crate::schema::{CompiledSchema, Violation};
use crate::skill::CompiledSkill;
use crate::telemetry::metrics;
use crate::tools::{ToolSet, names};

/// Everything one manifest-skill run needs.
pub(crate) struct TurnLoop<'a> {
    pub skill: &'a CompiledSkill,
    pub provider: ResolvedProvider,
    pub tools: ToolSet,
    pub schemas: &'a ToolSchemaCache,
    pub limits: &'a Limits,
    /// The cost cap and per-tool call counts of this run.
    pub budget: RunBudget<'a>,
    /// The rendered instructions; the loop adds the output-format section where the provider's
    /// wire does not carry the schema on every turn ([`messages::system_prompt`]).
    pub instructions: String,
    /// Whether the system prompt states the output schema (set by `run`); when it does not, a
    /// repair quotes it, for a server that ignored the schema on the wire.
    pub schema_in_instructions: bool,
    pub first_message: String,
    /// The input files that are images, shown beside the first message (`images`).
    pub first_images: Vec<ChatMessage>,
    /// The largest image the provider is shown (`None`: none), asked once per run.
    pub image_bytes_limit: Option<usize>,
    pub max_turns: u32,
    pub deadline: Deadline,
    pub cancel: &'a CancellationToken,
    pub events: &'a EventEmitter,
    pub stream: bool,
    pub state: &'a RunState,
    /// Record message content on spans (`[telemetry] capture_content`).
    pub capture_content: bool,
    /// Send each turn's reasoning as a `reasoning-N` artifact (the host's opt-in).
    pub reasoning_events: bool,
    /// Which tool calls wait for approval, and who is asked.
    pub approvals: ApprovalGate<'a>,
    /// Where checkpoints go, when the call is durable (`durable`).
    pub durable: Option<&'a Durable<'a>>,
    /// The checkpoint the run continues from.
    pub resume: Option<Box<Checkpoint>>,
}

/// Appends the model's answer that asked for tools to the conversation; returns its calls.
///
/// Takes the whole response: the turn's future then holds only the calls while the tools run,
/// not the rest of the response in a slot every state of the future pays for.
fn answer_with_tool_calls(request: &mut ChatRequest, response: ChatResponse) -> Vec<ToolCall> {
    let calls = response.tool_calls;
    // Room for this answer and a result per call, exactly: the conversation lives as long as
    // the call, so the spare room of a doubling would be memory every call in flight holds.
    request.messages.reserve_exact(1 + calls.len());
    request.messages.push(ChatMessage::Assistant {
        text: response.text,
        tool_calls: calls.clone(),
        // Sent back unchanged with the calls' results (Anthropic extended thinking).
        thinking: response.thinking,
    });
    calls
}

/// What a turn decided.
enum Step {
    Continue,
    Done(Outcome),
}

impl TurnLoop<'_> {
    /// Runs turns until an outcome. Borrowed, not taken: a call in flight then holds one copy of
    /// the loop (its caller's), not a second one inside this future.
    pub(crate) async fn run(&mut self) -> Outcome {
        let output_schema = self
            .skill
            .output_schema
            .as_ref()
            .filter(|s| !s.is_unconstrained());
        // One request for the whole run: each turn appends to its messages and lends it to the
        // provider, so the conversation is never copied per turn, and the schemas are the
        // compiled ones' documents, shared by every call (no copy per call either).
        let tools: Vec<ToolSpec> = self
            .tools
            .tools()
            .iter()
            .map(|t| ToolSpec {
                name: t.offered_name.clone(),
                description: t.tool.description().to_owned(),
                parameters: self.schemas.get(t).source().clone(),
            })
            .collect();
        // The schema is said once per request: the instructions state it unless the model
        // reads it from the wire on every turn, or a grammar holds every answer to it and it has
        // no words a grammar cannot convey. Decided once, so the prefix stays byte-stable.
        let hint = self.skill.hints.structured_output;
        let delivery = self
            .provider
            .provider
            .schema_every_turn(!tools.is_empty(), hint);
        let stated = output_schema
            .filter(|schema| match delivery {
                SchemaDelivery::Read => false,
                SchemaDelivery::Shape => schema.has_words(),
                SchemaDelivery::NotEveryTurn => true,
            })
            .map(|schema| schema.text());
        self.schema_in_instructions = stated.is_some();
        let system = messages::system_prompt(&self.instructions, stated);
        self.instructions = String::new();
        let mut request = ChatRequest {
            system: Some(system),
            messages: std::iter::once(ChatMessage::user(std::mem::take(&mut self.first_message)))
                .chain(std::mem::take(&mut self.first_images))
                .collect(),
            tools,
            response_schema: output_schema.map(|s| ResponseSchema {
                name: names::sanitize(self.skill.name()),
                schema: s.shared_source(),
            }),
            hints: Hints {
                max_tokens: self.skill.hints.max_tokens,
                temperature: self.skill.hints.temperature,
                top_p: self.skill.hints.top_p,
                seed: None,
                reasoning: self.skill.hints.reasoning.clone(),
            },
            phase: TurnPhase::Open,
            output_mode_hint: hint,
        };
        let mut repeats = RepeatTracker::default();
        let mut last_output = String::new();
        let mut first_turn = 1;
        if let Some(checkpoint) = self.resume.take() {
            // Boxed: a resume happens once per call, so its state is not part of the future
            // every call in flight holds.
            first_turn += Box::pin(self.restore(*checkpoint, &mut request, &mut last_output)).await;
        }
        for turn in first_turn..=self.max_turns {
            self.state.set_turn(turn);
            if let Some(budget) = self.limits.token_budget {
                let (input, output) = self.state.tokens();
                if input + output >= budget {
                    return Outcome::with_last_output(
                        ErrorCode::SkillError,
                        format!(
                            "token budget of {budget} exhausted after {} turns ({} tokens used)",
                            turn - 1,
                            input + output
                        ),
                        turn - 1,
                        &last_output,
                    );
                }
            }
            if let Some(stop) = self.state.with_turn_usage(|t| self.budget.before_turn(t)) {
                return Outcome::with_last_output(
                    ErrorCode::SkillError,
                    stop,
                    turn - 1,
                    &last_output,
                );
            }
            self.events.status(format!(
                "turn {turn}/{} · {}",
                self.max_turns, self.provider.label
            ));
            let pct = 5 + (90 * u64::from(turn - 1) / u64::from(self.max_turns)) as u8;
            self.events
                .progress(pct, format!("turn {turn} of {}", self.max_turns));
            if turn == self.max_turns {
                // The last turn can only be used for the answer: where the server enforces the
                // schema only when the answer is due, it is due now, and prompted tools offer
                // no call.
                request.phase = TurnPhase::Final;
            }
            let started = Instant::now();
            let step = self
                .turn(
                    turn,
                    &mut request,
                    output_schema,
                    &mut repeats,
                    &mut last_output,
                )
                .await;
            metrics::get().turn_took(self.skill.name(), started.elapsed());
            if let Step::Done(outcome) = step {
                return outcome;
            }
            self.checkpoint(turn, &request, &last_output, &[]).await;
        }
        Outcome::with_last_output(
            ErrorCode::SkillError,
            format!(
                "max_turns ({}) exhausted: the model was still calling tools after {} turns",
                self.max_turns, self.max_turns
            ),
            self.max_turns,
            &last_output,
        )
    }

    async fn turn(
        &self,
        turn: u32,
        request: &mut ChatRequest,
        output_schema: Option<&CompiledSchema>,
        repeats: &mut RepeatTracker,
        last_output: &mut String,
    ) -> Step {
        self.state.set_phase(Phase::Provider);
        if let Some(transcript) = self.state.transcript() {
            transcript.begin_turn(turn, request.system.as_deref(), &request.messages);
        }
        let asked = Instant::now();
        // The response lives in this block only: it is borrowed, so a binding of it in the
        // function's scope would keep its 192 bytes in every state of this future (the turn's
        // wait for the model included), though it is moved out of before the tools run.
        let calls = {
            let response = match self.request(turn, request).await {
                Ok(response) => response,
                Err(outcome) => return Step::Done(outcome),
            };
            if let Some(transcript) = self.state.transcript() {
                transcript.answered(&response, asked.elapsed());
            }
            if let Some(reasoning) = &response.reasoning {
                self.tell_reasoning(turn, reasoning);
            }
            last_output.clone_from(&response.text);
            if response.tool_calls.is_empty() {
                return self.judge_answer(turn, request, response, output_schema);
            }
            answer_with_tool_calls(request, response)
        };
        if let Some((name, streak)) = looping(&calls, repeats, self.limits.tool_loop_threshold) {
            // Once, while a turn remains, the model is told instead of stopped: a small model
            // that repeats a call has the result it needs and usually answers when asked to.
            // The calls are not run; only the answer may come next (a grammar server enforces
            // the schema, prompted tools offer no call).
            if repeats.told || turn >= self.max_turns {
                return Step::Done(Outcome::with_last_output(
                    ErrorCode::SkillError,
                    format!(
                        "tool loop: `{name}` was called {streak} times in a row with the same \
                         arguments"
                    ),
                    turn,
                    last_output,
                ));
            }
            self.events.log(
                LogLevel::Warn,
                format!(
                    "tool loop: `{name}` was called {streak} times in a row with the same \
                     arguments; not run again, the model is asked for its final answer"
                ),
            );
            let told = messages::loop_stopped(&name, streak);
            request.messages.extend(
                calls
                    .iter()
                    .map(|call| ChatMessage::tool_error(&call.id, &call.name, told.as_str())),
            );
            repeats.told = true;
            request.phase = TurnPhase::Final;
            return Step::Continue;
        }
        self.checkpoint(turn, request, last_output, &calls).await;
        self.state.set_phase(Phase::Tools);
        let ctx = DispatchContext {
            tools: &self.tools,
            schemas: self.schemas,
            limits: self.limits,
            budget: &self.budget,
            deadline: self.deadline,
            cancel: self.cancel,
            events: self.events,
            turn,
            capture_content: self.capture_content,
            approvals: self.approvals,
            image_bytes_limit: self.image_bytes_limit,
        };
        request.messages.extend(dispatch_turn(&ctx, &calls).await);
        Step::Continue
    }

    /// Judges a final answer (one without tool calls): accepted, or a repair asked for while
    /// turns remain.
    fn judge_answer(
        &self,
        turn: u32,
        request: &mut ChatRequest,
        response: ChatResponse,
        output_schema: Option<&CompiledSchema>,
    ) -> Step {
        let messages = &mut request.messages;

        match judge(&response.text, output_schema) {
            FinalOutput::Accepted(data) => Step::Done(Outcome::Success { data, turns: turn }),
            FinalOutput::Unparseable(error) => {
                let violation = Violation {
                    instance_path: String::new(),
                    schema_path: String::new(),
                    message: format!("not valid JSON: {error}"),
                };
                // Cut off by the token limit: said by the finish reason, or seen in JSON left
                // open at the end (some servers report `stop` for it).
                let cut =
                    response.finish_reason == FinishReason::Length || ends_early(&response.text);
                let step =
                    self.repair_or_fail(turn, messages, response.text, vec![violation], || {
                        if cut {
                            messages::repair_cut_off()
                        } else {
                            let unstated = output_schema
                                .filter(|_| !self.schema_in_instructions)
                                .map(|schema| schema.text());
                            messages::repair_unparseable(&error, unstated)
                        }
                    });
                answer_due(request, step, cut && turn >= self.max_turns)
            }
            FinalOutput::Invalid(violations) => {
                let unstated = output_schema
                    .filter(|_| !self.schema_in_instructions)
                    .map(|schema| schema.text());
                let repair = messages::repair_violations(&violations, unstated);
                let step =
                    self.repair_or_fail(turn, messages, response.text, violations, || repair);
                answer_due(request, step, false)
            }
        }
    }

    /// Asks for a corrected answer while turns remain; otherwise `schema_violation`.
    fn repair_or_fail(
        &self,
        turn: u32,
        messages: &mut Vec<ChatMessage>,
        answer: String,
        violations: Vec<Violation>,
        repair: impl FnOnce() -> String,
    ) -> Step {
        if let Some(transcript) = self.state.transcript() {
            transcript.rejected(&violations);
        }
        if turn >= self.max_turns {
            let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
            return Step::Done(Outcome::output_invalid(
                format!(
                    "the output never matched the output schema ({} turns used); last problems: {}",
                    turn,
                    listed.join("; ")
                ),
                turn,
                &violations,
                &answer,
            ));
        }
        self.events
            .log(LogLevel::Warn, messages::repair_log(&violations));
        messages.push(ChatMessage::assistant(answer));
        messages.push(ChatMessage::user(repair()));
        Step::Continue
    }

    /// One provider request, with streaming, retries reported and usage recorded.
    async fn request(&self, turn: u32, request: &ChatRequest) -> Result<ChatResponse, Outcome> {
        let label = &self.provider.label;
        let artifact = crate::protocol::model_text_artifact(turn);
        let streamed = AtomicBool::new(false);
        let sink = |delta: &str| {
            if !delta.is_empty() {
                streamed.store(true, Ordering::Relaxed);
                self.events.artifact(&artifact, "text/plain", delta, false);
            }
        };
        let provider = &self.provider.provider;
        let provider_name = provider.kind().as_str();
        let observer = ProviderNotices {
            label,
            provider_name,
            events: self.events,
            fallback: Mutex::new(None),
        };
        let mut options = CallOptions::default()
            .with_deadline(self.deadline.instant())
            .with_cancel(self.cancel)
            .with_retry_observer(&observer);
        if self.stream {
            options = options.with_stream(&sink);
        }
        let model = provider.model();
        let span = spans::chat(provider_name, model, turn);
        let result = provider
            .chat_borrowed(request, options)
            .instrument(span.clone())
            .await;
        if streamed.load(Ordering::Relaxed) {
            self.events.artifact(&artifact, "text/plain", "", true);
        }
        match result {
            Ok(response) => {
                let usage = response.usage;
                let fallback = observer
                    .fallback
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take();
                let answered = Answered {
                    model: fallback.as_ref().map_or(model, |(_, m)| m.as_str()),
                    fallback: fallback.as_ref().map(|(name, _)| name.as_str()),
                };
                let model = answered.model;
                self.state.add_usage(turn, &answered, usage.as_ref());
                if let Some(usage) = &usage {
                    metrics::get().tokens_used(model, usage);
                    spans::record_usage(&span, usage);
                } else {
                    metrics::get().usage_unreported(model);
                }
                // The normalized response does not carry the provider's model echo: the model
                // that answered is the one requested (or the fallback's).
                span.record("gen_ai.response.model", model);
                if let Some(id) = &response.request_id {
                    span.record("gen_ai.response.id", id.as_str());
                }
                span.record(
                    "skillet.tool_calls",
                    spans::int(response.tool_calls.len() as u64),
                );
                spans::record_finish_reason(&span, finish_reason_name(response.finish_reason));
                spans::record_content(
                    &span,
                    self.capture_content,
                    "gen_ai.output.messages",
                    &response.text,
                );
                Ok(response)
            }
            Err(error) => {
                let (code, message) = provider_failure(&error, self.deadline, label);
                super::call_report::provider_failed(&error.kind);
                spans::record_error(&span, code.as_str());
                Err(Outcome::failure(code, message, turn))
            }
        }
    }
}

/// The first of `calls` whose run of identical calls (same tool, same arguments) reached
/// `threshold` (0: never), with that run's length. Every call is recorded.
fn looping(
    calls: &[ToolCall],
    repeats: &mut RepeatTracker,
    threshold: u32,
) -> Option<(String, u32)> {
    let mut found = None;
    for call in calls {
        let streak = repeats.record(call);
        if threshold > 0 && streak >= threshold && found.is_none() {
            found = Some((call.name.clone(), streak));
        }
    }
    found
}

/// After a rejected answer: the next turn is an answer turn (the model answered in prose once,
/// so a server that enforces the schema only when the answer is due enforces it now). A final
/// answer cut off by the token limit on the last turn is marked truncated.
fn answer_due(request: &mut ChatRequest, step: Step, cut_on_last_turn: bool) -> Step {
    match step {
        Step::Continue => {
            request.phase = TurnPhase::Answer;
            Step::Continue
        }
        Step::Done(outcome) if cut_on_last_turn => Step::Done(outcome.cut_off()),
        done => done,
    }
}

/// Turns the provider's notices into the call's `log` events (and retry metrics).
struct ProviderNotices<'a> {
    label: &'a str,
    provider_name: &'a str,
    events: &'a EventEmitter,
    /// The fallback that got the turn last (name, model), if one did.
    fallback: Mutex<Option<(String, String)>>,
}

impl RetryObserver for ProviderNotices<'_> {
    fn retrying(&self, notice: &RetryNotice) {
        metrics::get().provider_retried(self.provider_name, notice.error_kind.as_str());
        self.events
            .log(LogLevel::Warn, format!("provider {}: {notice}", self.label));
    }

    fn mode_changed(&self, notice: &ModeNotice) {
        self.events
            .log(LogLevel::Warn, format!("provider {}: {notice}", self.label));
    }

    fn rate_limited(&self, notice: &RateLimitNotice) {
        self.events
            .log(LogLevel::Warn, format!("provider {}: {notice}", self.label));
    }

    fn fell_back(&self, notice: &FallbackNotice) {
        self.events
            .log(LogLevel::Warn, format!("provider {notice}"));
        *self
            .fallback
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some((notice.to.clone(), notice.to_model.clone()));
    }
}

impl TurnLoop<'_> {
    /// Tells the caller turn `turn` had `reasoning`: a debug `log` with its length always, its
    /// text as the `reasoning-N` artifact only when the host sends reasoning.
    fn tell_reasoning(&self, turn: u32, reasoning: &str) {
        let chars = reasoning.chars().count();
        let sent = if self.reasoning_events {
            format!("sent as artifact reasoning-{turn}")
        } else {
            "not sent: the host's reasoning_events is off".to_owned()
        };
        self.events.log(
            LogLevel::Debug,
            format!("model reasoning ({chars} chars, kept out of the answer; {sent})"),
        );
        if self.reasoning_events {
            let text = crate::secrets::REDACTOR.redact(reasoning);
            self.events
                .artifact(&format!("reasoning-{turn}"), "text/plain", text, true);
        }
    }
}

/// The semconv spelling of a finish reason.
fn finish_reason_name(reason: FinishReason) -> &'static str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Other => "other",
    }
}

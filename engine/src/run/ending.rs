//! How a call ends once its run has: the gates check a successful output, the call's files and
//! its checkpoint are closed, the closing events are emitted (`progress` 100, the token usage
//! log) and the `SkillResult` is assembled with its usage, cost and events.
//!
//! A future of its own, awaited after the run's: what it holds (the outcome) then shares room
//! in the call's state with the run, which has ended, instead of having room of its own there
//! for the whole call.
//!
//! Not here: the run itself, its deadline and cancellation (`call`), the outcome's mapping to
//! a result's status and error (`result`), the price of a turn (`budget`).

use std::time::Instant;

use super::budget::estimate_cost;
use super::durable::Durable;
use super::executor::ExecutorInner;
use super::gates::{GateContext, run_gates};
use super::result::Outcome;
use super::run_state::{Phase, RunState};
use super::spans;
use crate::deadline::Deadline;
use crate::events::EventEmitter;
use crate::files::CallFiles;
use crate::protocol::{
    ErrorCode, LogLevel, Resumed, SkillCallRequest, SkillResult, TokenUsage, TurnUsage,
};
use crate::skill::{Implementation, RegisteredSkill};
use crate::telemetry::metrics;

/// How a run ended, and what the call still closes after it.
pub(super) struct Ended {
    pub(super) outcome: Outcome,
    pub(super) call_files: Option<Box<CallFiles>>,
    pub(super) resumed_from: Option<Resumed>,
    pub(super) deadline: Deadline,
    pub(super) started: Instant,
}

impl ExecutorInner {
    /// After the run: the gates, the call's files and checkpoint closed, the result.
    pub(super) async fn conclude(
        &self,
        skill: &RegisteredSkill,
        request: &SkillCallRequest,
        events: &EventEmitter,
        state: &RunState,
        durable: Option<&Durable<'_>>,
        ended: Ended,
    ) -> SkillResult {
        let Ended {
            mut outcome,
            call_files,
            resumed_from,
            deadline,
            started,
        } = ended;

        if let Outcome::Success { data, turns } = &outcome {
            state.set_phase(Phase::Finishing);
            let ctx = GateContext {
                skill: skill.compiled.name(),
                arguments: &request.arguments,
                output: data,
                correlation_id: &request.correlation_id,
            };
            let turns = *turns;
            match tokio::time::timeout_at(deadline.instant(), run_gates(&self.gates, ctx)).await {
                Ok(Ok(())) => {}
                Ok(Err(rejection)) => {
                    outcome = Outcome::failure(rejection.code, rejection.message, turns);
                }
                Err(_elapsed) => {
                    outcome = Outcome::failure(
                        ErrorCode::Timeout,
                        "the call's deadline passed while gates checked the output",
                        turns,
                    );
                }
            }
        }
        if let Some(files) = call_files {
            files.finish(events).await;
        }
        if let Some(durable) = durable {
            durable.finished().await;
        }
        let mut result = self.finish(skill, events, state, outcome, started);
        result.resumed = resumed_from;
        result
    }

    /// Emits the closing events and assembles the result.
    pub(super) fn finish(
        &self,
        skill: &RegisteredSkill,
        events: &EventEmitter,
        state: &RunState,
        outcome: Outcome,
        started: Instant,
    ) -> SkillResult {
        let span = tracing::Span::current();
        span.record("skillet.outcome", outcome.label());
        span.record("skillet.turns", i64::from(outcome.turns()));
        if let Outcome::Failure { code, .. } = &outcome {
            spans::record_error(&span, code.as_str());
        }
        let closing = match &outcome {
            Outcome::Success { .. } => "done".to_owned(),
            Outcome::Failure { code, .. } => format!("failed ({code})"),
        };
        events.progress(100, closing);
        // Before the usage is taken: the transcript reads each turn's tokens from it.
        let transcript = state.take_transcript().map(Box::new);
        let mut usage = None;
        if matches!(skill.implementation, Implementation::Manifest) {
            let (input, output) = state.tokens();
            let known = state.usage_known();
            if known {
                span.record("gen_ai.usage.input_tokens", spans::int(input));
                span.record("gen_ai.usage.output_tokens", spans::int(output));
            }
            let turns = state.take_turn_usage();
            let cached_input = reported_sum(&turns, |t| t.cached_input_tokens);
            let cache_creation = reported_sum(&turns, |t| t.cache_creation_input_tokens);
            let reasoning = reported_sum(&turns, |t| t.reasoning_tokens);
            spans::record_usage_breakdown(&span, cached_input, cache_creation, reasoning);
            let cost = estimate_cost(&self.pricing, &turns);
            if let Some(cost) = &cost {
                span.record(
                    "skillet.cost",
                    format!("{:.6} {}", cost.amount, cost.currency),
                );
            }
            usage = Some(TokenUsage {
                input_tokens: known.then_some(input),
                output_tokens: known.then_some(output),
                cached_input_tokens: cached_input,
                cache_creation_input_tokens: cache_creation,
                reasoning_tokens: reasoning,
                turns,
                cost,
            });
            let turns = outcome.turns();
            let plural = if turns == 1 { "" } else { "s" };
            events.log(
                LogLevel::Info,
                if known {
                    format!(
                        "token usage: {input} input + {output} output = {} tokens over {turns} \
                         turn{plural}",
                        input + output,
                    )
                } else {
                    format!(
                        "token usage: unknown (the server did not report it for every turn; \
                         {input} input + {output} output reported) over {turns} turn{plural}"
                    )
                },
            );
        }
        let took = started.elapsed();
        metrics::get().call_took(skill.compiled.name(), took);
        let duration_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
        let mut result = outcome.into_result(skill.compiled.name(), duration_ms);
        result.usage = usage;
        result.transcript = transcript;
        let (collected, truncated) = events.take_collected();
        result.events = collected;
        result.truncated |= truncated;
        result
    }
}

/// The sum of a figure over the turns that reported it; `None` when none did.
fn reported_sum(turns: &[TurnUsage], figure: impl Fn(&TurnUsage) -> Option<u64>) -> Option<u64> {
    turns
        .iter()
        .filter_map(figure)
        .reduce(|a, b| a.saturating_add(b))
}

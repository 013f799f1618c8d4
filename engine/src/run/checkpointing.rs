//! The turn loop's side of durable runs: a checkpoint made of the loop's state after a turn
//! (its conversation, the calls in flight, usage, events, the deadline left) and handed to the
//! call's [`Durable`](super::durable::Durable), and a loaded checkpoint restored into the
//! loop — its calls that were in flight answered (idempotent tools run again, the others a
//! tool error saying so).
//!
//! Not here: when checkpoints are read and written, and by which store (`durable`).

use skillet_providers::{ChatMessage, ChatRequest, ToolCall, TurnPhase};

use super::agent::TurnLoop;
use super::dispatch::{DispatchContext, dispatch_turn};
use super::durable::interrupted_call_error;
use crate::checkpoint::format::CheckpointParts;
use crate::checkpoint::{Checkpoint, FORMAT, FORMAT_VERSION};
use crate::protocol::LogLevel;

impl TurnLoop<'_> {
    /// Writes a checkpoint after turn `turn` (`in_flight`: the calls it asked for that have no
    /// result yet).
    pub(super) async fn checkpoint(
        &self,
        turn: u32,
        request: &ChatRequest,
        last_output: &str,
        in_flight: &[ToolCall],
    ) {
        let Some(durable) = self.durable else {
            return;
        };
        let parts = CheckpointParts {
            format: FORMAT,
            version: FORMAT_VERSION,
            skill: durable.skill,
            definition: &durable.definition,
            call: &durable.call,
            turn,
            messages: &request.messages,
            in_flight,
            // A final turn resumes as an answer turn: what made it final is not kept.
            answer_due: request.phase != TurnPhase::Open,
            usage: self.state.turn_usage(),
            events: self.events.snapshot(),
            last_output,
            remaining_ms: u64::try_from(self.deadline.remaining().as_millis()).unwrap_or(u64::MAX),
        };
        durable.save(&parts, self.events).await;
    }

    /// Continues from `checkpoint`: its conversation and usage restored, its in-flight calls
    /// answered; returns the turns it had completed.
    pub(super) async fn restore(
        &self,
        checkpoint: Checkpoint,
        request: &mut ChatRequest,
        last_output: &mut String,
    ) -> u32 {
        let Checkpoint {
            turn,
            messages,
            in_flight,
            answer_due,
            usage,
            last_output: output,
            ..
        } = checkpoint;
        request.messages = messages;
        if answer_due {
            request.phase = TurnPhase::Answer;
        }
        *last_output = output;
        self.state.restore_usage(usage);
        self.state.set_turn(turn);
        self.events.log(
            LogLevel::Info,
            format!(
                "resumed from the checkpoint of turn {turn}: {turn} turn{} not run again",
                if turn == 1 { "" } else { "s" }
            ),
        );
        if !in_flight.is_empty() {
            let answers = self.answer_in_flight(turn, &in_flight).await;
            request.messages.extend(answers);
            self.checkpoint(turn, request, last_output, &[]).await;
        }
        turn
    }

    /// Results for the calls that were in flight, in call order: idempotent tools run again,
    /// the others answered with [`interrupted_call_error`].
    async fn answer_in_flight(&self, turn: u32, calls: &[ToolCall]) -> Vec<ChatMessage> {
        let idempotent = |call: &ToolCall| {
            self.tools
                .lookup(&call.name)
                .is_some_and(|t| t.tool.idempotent())
        };
        let again: Vec<ToolCall> = calls.iter().filter(|c| idempotent(c)).cloned().collect();
        let ctx = DispatchContext {
            tools: &self.tools,
            schemas: self.schemas,
            limits: self.limits,
            deadline: self.deadline,
            cancel: self.cancel,
            events: self.events,
            turn,
            capture_content: self.capture_content,
            budget: &self.budget,
            // A re-run passes the approval gate again: the decision the dead process got is not
            // in the checkpoint, so a gated tool is asked about once more.
            approvals: self.approvals,
            image_bytes_limit: self.image_bytes_limit,
        };
        // One result per re-run call, in order, then the images they returned.
        let mut rerun = dispatch_turn(&ctx, &again).await.into_iter();
        let mut answers: Vec<ChatMessage> = calls
            .iter()
            .map(|call| {
                if idempotent(call)
                    && let Some(answer) = rerun.next()
                {
                    return answer;
                }
                self.events.log(
                    LogLevel::Warn,
                    format!(
                        "tool call {} was in flight when the run was interrupted; not run again (not idempotent)",
                        call.name
                    ),
                );
                ChatMessage::tool_error(&call.id, &call.name, interrupted_call_error(&call.name))
            })
            .collect();
        answers.extend(rerun);
        answers
    }
}

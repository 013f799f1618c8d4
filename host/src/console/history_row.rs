//! What of a finished call goes into the history: [`HistoryRecorder`], the core's
//! [`CallRecorder`] that turns each answered call into a [`Row`] (the door it came through,
//! outcome, usage, turns and repairs; input and answer only with content capture) and queues it.
//!
//! Not here: writing rows or reading them back (`super::history`), the table (`super::history_schema`).

use std::sync::Arc;

use super::history::History;
use super::query::Outcome;
use crate::record::{CallRecorder, Door, FinishedCall};

/// One finished call as stored.
#[derive(Debug, Clone, Default)]
pub(super) struct Row {
    pub(super) req_id: String,
    pub(super) skill: String,
    pub(super) caller: String,
    pub(super) door: Option<&'static str>,
    pub(super) started_at: f64,
    pub(super) finished_at: f64,
    pub(super) duration_ms: Option<i64>,
    pub(super) outcome: &'static str,
    pub(super) error_code: Option<String>,
    pub(super) error: Option<String>,
    pub(super) model: Option<String>,
    pub(super) input_tokens: Option<i64>,
    pub(super) output_tokens: Option<i64>,
    pub(super) cost: Option<f64>,
    pub(super) currency: Option<String>,
    pub(super) turns: Option<i64>,
    pub(super) repairs: Option<i64>,
    pub(super) arguments: Option<String>,
    pub(super) response: Option<String>,
}

/// Records every call the core answers into a [`History`]; input, answer and error text only
/// when `capture_content`.
#[derive(Debug)]
pub(crate) struct HistoryRecorder {
    history: Arc<History>,
    capture_content: bool,
}

impl HistoryRecorder {
    /// A recorder into `history`.
    pub(crate) fn new(history: Arc<History>, capture_content: bool) -> HistoryRecorder {
        HistoryRecorder {
            history,
            capture_content,
        }
    }
}

impl CallRecorder for HistoryRecorder {
    fn record(&self, call: FinishedCall<'_>) {
        self.history.push(row_of(&call, self.capture_content));
    }
}

fn row_of(call: &FinishedCall<'_>, capture_content: bool) -> Row {
    let response = call.response;
    let mut row = Row {
        req_id: call.req_id.to_owned(),
        skill: call.skill.to_owned(),
        caller: call.caller.to_owned(),
        door: call.door.map(Door::as_str),
        started_at: call.started_at,
        finished_at: response.created_at,
        model: call.model_override.map(str::to_owned),
        ..Row::default()
    };
    match (&response.data, &response.error) {
        (Some(result), _) => {
            row.outcome = if result.success {
                Outcome::Success.as_str()
            } else {
                Outcome::Failure.as_str()
            };
            row.duration_ms = int(result.duration_ms);
            row.error_code = result.error_code.map(|c| c.as_str().to_owned());
            row.error = result.error.clone();
            row.repairs = int(result
                .events
                .iter()
                .filter(|event| is_repair(event))
                .count() as u64);
            if let Some(usage) = &result.usage {
                row.input_tokens = usage.input_tokens.and_then(int);
                row.output_tokens = usage.output_tokens.and_then(int);
                row.turns = int(usage.turns.len() as u64).filter(|n| *n > 0);
                if let Some(turn) = usage.turns.first() {
                    row.model = Some(turn.model.clone());
                }
                if let Some(cost) = &usage.cost {
                    row.cost = Some(cost.amount);
                    row.currency = Some(cost.currency.clone());
                }
            }
        }
        (None, error) => {
            row.outcome = Outcome::Rejected.as_str();
            row.error_code = error.as_ref().map(|e| e.code.as_str().to_owned());
            row.error = error.as_ref().map(|e| e.message.clone());
        }
    }
    if capture_content {
        row.arguments = serde_json::to_string(call.arguments).ok();
        row.response = Some(skillet_protocol::encode(
            &skillet_protocol::Message::CallResponse(response.clone()),
        ));
    } else {
        row.error = None;
    }
    row
}

/// Whether `event` is the engine's `log` line for an answer rejected as the final answer (the
/// turn after it repairs it).
fn is_repair(event: &skillet_protocol::SkillEvent) -> bool {
    matches!(
        &event.payload,
        skillet_protocol::EventPayload::Log { message, .. }
            if message.starts_with("final answer rejected")
    )
}

/// A count as SQLite stores it (a value past `i64::MAX` is not a count anyone reported).
fn int(value: u64) -> Option<i64> {
    i64::try_from(value).ok()
}

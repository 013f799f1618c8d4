//! What one run of a case showed, read from its `skill/call/resp`: how it ended, its data, the
//! tool trace, the turns it took, the repairs it needed, its usage and latency.
//!
//! The run loop reports tool calls, turns and repairs as events (`run/dispatch.rs`,
//! `run/agent.rs`), and this module reads them back from `SkillResult.events`:
//! - a tool call is a `log` event `tool call NAME(ARGS)` (NAME as offered to the model);
//! - a turn is a `status` event `turn N/MAX · PROVIDER/MODEL`;
//! - a repair is a `log` event `final answer rejected (...); asking the model to repair it`.
//!
//! Usage a provider did not report is unknown, never 0: a result without `usage`, or whose
//! totals are 0 (what a server that sends no usage leaves today), has no token figure.

use serde::Serialize;
use serde_json::Value;

use crate::protocol::{
    CostEstimate, ErrorCode, EventPayload, ProducedFile, SkillCallResponse, SkillEvent,
};

/// The prefix of the `log` event the run loop emits for each tool call.
const TOOL_CALL_LOG: &str = "tool call ";
/// The prefix of the `status` event the run loop emits at each turn.
const TURN_STATUS: &str = "turn ";
/// The text of the `log` event the run loop emits when it asks for a repaired answer.
const REPAIR_LOG: &str = "asking the model to repair it";

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunOutcome {
    /// `data.success: true`.
    Succeeded,
    /// It ran and failed (`data.success: false`).
    Failed {
        /// The result's `error_code` (`skill_error` when it had none).
        code: ErrorCode,
        /// The result's `error`.
        message: String,
    },
    /// It was refused before running (`error` set).
    Rejected {
        /// The rejection's code.
        code: ErrorCode,
        /// The rejection's message.
        message: String,
    },
}

impl RunOutcome {
    /// The error code, `None` on success.
    pub fn error_code(&self) -> Option<ErrorCode> {
        match self {
            RunOutcome::Succeeded => None,
            RunOutcome::Failed { code, .. } | RunOutcome::Rejected { code, .. } => Some(*code),
        }
    }
}

/// What one run showed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observation {
    /// How it ended.
    pub outcome: RunOutcome,
    /// The result's `data` (on a failure, the run loop's partial state).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// The tools called, in call order, as offered to the model.
    pub tool_calls: Vec<String>,
    /// The turns taken; unknown for a rejected call or a native skill.
    pub turns: Option<u32>,
    /// How many times the model was asked to repair its final answer.
    pub repairs: u32,
    /// Input + output tokens over the call, when the provider reported them.
    pub tokens: Option<u64>,
    /// The estimated cost, when usage was reported and the host prices the model.
    pub cost: Option<CostEstimate>,
    /// The call's duration in milliseconds (the result's, else measured around the call).
    pub latency_ms: u64,
    /// Whether the collected events were cut (the trace may then be incomplete).
    pub events_truncated: bool,
    /// The files the run produced, whole (from its `artifact` events).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<ObservedFile>,
}

/// A file a run produced: its name, media type and size, and its text where it has one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObservedFile {
    /// Its path in the run's workspace.
    pub name: String,
    /// Its media type, as the run reported it.
    pub media_type: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its content as text: a text file's, or a binary file's when it decodes as UTF-8;
    /// `None` for other binary content (PDF, images, archives: no text is extracted).
    #[serde(skip)]
    pub text: Option<String>,
}

impl ObservedFile {
    fn of(file: ProducedFile) -> ObservedFile {
        use base64::Engine as _;
        let (size, text) = if file.base64 {
            match base64::engine::general_purpose::STANDARD.decode(file.content.trim()) {
                Ok(bytes) => (bytes.len() as u64, String::from_utf8(bytes).ok()),
                Err(_) => (0, None),
            }
        } else {
            (file.content.len() as u64, Some(file.content))
        };
        ObservedFile {
            name: file.name,
            media_type: file.mime,
            size,
            text,
        }
    }
}

impl Observation {
    /// Reads `response`; `measured_ms` is the wall time around the call, used when the
    /// response carries no duration (a rejection).
    pub fn of_response(response: &SkillCallResponse, measured_ms: u64) -> Self {
        let rejected = |code: ErrorCode, message: String| Observation {
            outcome: RunOutcome::Rejected { code, message },
            data: None,
            tool_calls: Vec::new(),
            turns: None,
            repairs: 0,
            tokens: None,
            cost: None,
            latency_ms: measured_ms,
            events_truncated: false,
            files: Vec::new(),
        };
        if let Some(error) = &response.error {
            return rejected(error.code, error.message.clone());
        }
        let Some(result) = &response.data else {
            // Not a valid `skill/call/resp`; counted as a runtime error rather than a pass.
            return rejected(
                ErrorCode::RuntimeError,
                "the response carries neither data nor error".into(),
            );
        };
        let outcome = if result.success {
            RunOutcome::Succeeded
        } else {
            RunOutcome::Failed {
                code: result.error_code.unwrap_or(ErrorCode::SkillError),
                message: result.error.clone().unwrap_or_default(),
            }
        };
        let trace = Trace::of_events(&result.events);
        let usage = result.usage.as_ref();
        // Absent totals are unknown usage (some turn's server reported none).
        let tokens = usage.and_then(|u| Some(u.input_tokens? + u.output_tokens?));
        Observation {
            outcome,
            data: result.data.clone(),
            tool_calls: trace.tool_calls,
            turns: trace.turns,
            repairs: trace.repairs,
            tokens,
            cost: tokens.and(usage.and_then(|u| u.cost.clone())),
            latency_ms: result.duration_ms,
            events_truncated: result.truncated,
            files: ProducedFile::from_events(&result.events)
                .into_iter()
                .map(ObservedFile::of)
                .collect(),
        }
    }

    /// How many times `tool` was called.
    pub(crate) fn calls_of(&self, tool: &str) -> usize {
        self.tool_calls.iter().filter(|t| *t == tool).count()
    }

    /// The trace for a message: `calculator, read_file` or `none`.
    pub(crate) fn trace_line(&self) -> String {
        if self.tool_calls.is_empty() {
            "none".to_owned()
        } else {
            self.tool_calls.join(", ")
        }
    }
}

/// Tool calls, turns and repairs read from a call's events.
#[derive(Debug, Default, PartialEq)]
struct Trace {
    tool_calls: Vec<String>,
    turns: Option<u32>,
    repairs: u32,
}

impl Trace {
    fn of_events(events: &[SkillEvent]) -> Self {
        let mut trace = Trace::default();
        for event in events {
            match &event.payload {
                EventPayload::Log { message, .. } => {
                    if let Some(call) = message.strip_prefix(TOOL_CALL_LOG)
                        && let Some((name, _)) = call.split_once('(')
                    {
                        trace.tool_calls.push(name.to_owned());
                    } else if message.ends_with(REPAIR_LOG) {
                        trace.repairs += 1;
                    }
                }
                EventPayload::Status { message, .. } => {
                    let turn = message
                        .strip_prefix(TURN_STATUS)
                        .and_then(|rest| rest.split_once('/'))
                        .and_then(|(n, _)| n.parse::<u32>().ok());
                    if let Some(turn) = turn {
                        trace.turns = Some(trace.turns.map_or(turn, |t| t.max(turn)));
                    }
                }
                EventPayload::Progress { .. } | EventPayload::Artifact { .. } => {}
            }
        }
        trace
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::LogLevel;
    use crate::protocol::{SkillResult, TokenUsage};

    fn event(payload: EventPayload) -> SkillEvent {
        SkillEvent::new("r", 0, payload)
    }

    fn result_with(events: Vec<SkillEvent>, usage: Option<TokenUsage>) -> SkillCallResponse {
        let mut result = SkillResult::success(Some(serde_json::json!({"ok": true})), None, 17);
        result.events = events;
        result.usage = usage;
        SkillCallResponse::result("r", "s", result)
    }

    #[test]
    fn tool_calls_turns_and_repairs_are_read_from_the_events() {
        let response = result_with(
            vec![
                event(EventPayload::status(
                    "turn 1/6 · openai-compatible/mock-llm",
                )),
                event(EventPayload::log(
                    LogLevel::Info,
                    "tool call calculator({\"expression\":\"1+2\"})",
                )),
                event(EventPayload::log(
                    LogLevel::Info,
                    "tool result calculator: 3",
                )),
                event(EventPayload::status(
                    "turn 2/6 · openai-compatible/mock-llm",
                )),
                event(EventPayload::log(
                    LogLevel::Warn,
                    "final answer rejected (1 problem); asking the model to repair it",
                )),
                event(EventPayload::status(
                    "turn 3/6 · openai-compatible/mock-llm",
                )),
                event(EventPayload::log(LogLevel::Info, "tool call read_file({})")),
            ],
            None,
        );
        let seen = Observation::of_response(&response, 99);
        assert_eq!(seen.tool_calls, ["calculator", "read_file"]);
        assert_eq!(seen.turns, Some(3));
        assert_eq!(seen.repairs, 1);
        assert_eq!(seen.latency_ms, 17, "the result's duration wins");
        assert_eq!(seen.outcome, RunOutcome::Succeeded);
    }

    #[test]
    fn usage_not_reported_is_unknown_never_zero() {
        let none = Observation::of_response(&result_with(vec![], None), 1);
        assert_eq!(none.tokens, None);
        let zero = TokenUsage {
            cost: Some(CostEstimate {
                amount: 0.0,
                currency: "USD".into(),
            }),
            ..Default::default()
        };
        let zero = Observation::of_response(&result_with(vec![], Some(zero)), 1);
        assert_eq!(zero.tokens, None);
        assert_eq!(
            zero.cost, None,
            "a cost of unreported tokens is unknown too"
        );
        let reported = TokenUsage {
            input_tokens: Some(100),
            output_tokens: Some(20),
            ..Default::default()
        };
        let reported = Observation::of_response(&result_with(vec![], Some(reported)), 1);
        assert_eq!(reported.tokens, Some(120));
    }

    #[test]
    fn a_rejection_is_an_outcome_with_its_code_and_the_measured_latency() {
        let response = SkillCallResponse::rejected(
            "r",
            "s",
            crate::protocol::ProtocolError::new(ErrorCode::SchemaViolation, "/text: required"),
        );
        let seen = Observation::of_response(&response, 42);
        assert_eq!(seen.outcome.error_code(), Some(ErrorCode::SchemaViolation));
        assert_eq!(seen.latency_ms, 42);
        assert_eq!(seen.turns, None);
    }
}

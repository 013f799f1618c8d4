//! How a call's outcome becomes a `SkillResult`, and how its one-line `summary` is made.
//!
//! # `summary`
//! One human line (at most 200 characters, newlines removed):
//! - success with an object output that has a top-level string `summary` → that string;
//! - success with a string output (free-form text) → its first non-empty line;
//! - any other success → `<skill> succeeded in N turn(s)`;
//! - failure → `<skill> failed (<code>) after N turn(s): <first line of the error>`.
//!
//! # Failure `data`
//! Execution failures keep what the run produced, so the work is not thrown away:
//! - `max_turns` exhausted, tool loop, token budget: `{"turns_used", "last_output"}`;
//! - output never valid: `{"turns_used", "violations": [{instance_path, schema_path,
//!   message}], "last_output"}` (`last_output` is the model's last raw answer).
//!
//! Token usage (`SkillResult.usage`) is added by the executor after this conversion.

use serde_json::{Value, json};

use crate::protocol::{ErrorCode, SkillResult};
use crate::schema::Violation;

/// Longest summary line.
const SUMMARY_CHARS: usize = 200;

/// What a call's execution ended with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// The validated output.
    Success {
        /// `SkillResult.data`.
        data: Value,
        /// Turns used (1 for a native skill).
        turns: u32,
    },
    /// A failure with its code and, where useful, the partial state.
    Failure {
        /// `SkillResult.error_code`.
        code: ErrorCode,
        /// `SkillResult.error`.
        message: String,
        /// `SkillResult.data` (partial state), if any.
        data: Option<Value>,
        /// Turns used.
        turns: u32,
        /// The model's last answer was cut off at its token limit (`SkillResult.truncated`).
        cut_off: bool,
    },
}

impl Outcome {
    /// A failure without data.
    pub(crate) fn failure(code: ErrorCode, message: impl Into<String>, turns: u32) -> Self {
        Outcome::Failure {
            code,
            message: message.into(),
            data: None,
            turns,
            cut_off: false,
        }
    }

    /// A failure that keeps the run's last output.
    pub(crate) fn with_last_output(
        code: ErrorCode,
        message: impl Into<String>,
        turns: u32,
        last_output: &str,
    ) -> Self {
        Outcome::Failure {
            code,
            message: message.into(),
            data: Some(json!({"turns_used": turns, "last_output": last_output})),
            turns,
            cut_off: false,
        }
    }

    /// `schema_violation` with every violation and the last raw output.
    pub(crate) fn output_invalid(
        message: impl Into<String>,
        turns: u32,
        violations: &[Violation],
        last_output: &str,
    ) -> Self {
        Outcome::Failure {
            code: ErrorCode::SchemaViolation,
            message: message.into(),
            data: Some(json!({
                "turns_used": turns,
                "violations": violations,
                "last_output": last_output,
            })),
            turns,
            cut_off: false,
        }
    }

    /// This failure, marked as the model's answer having been cut off by its token limit
    /// (`finish_reason: length` in the middle of the JSON): the result says `truncated` and
    /// its message says why.
    pub(crate) fn cut_off(self) -> Self {
        match self {
            Outcome::Failure {
                code,
                message,
                data,
                turns,
                ..
            } => Outcome::Failure {
                code,
                message: format!(
                    "the model's answer was cut off at its token limit (raise max_tokens); {message}"
                ),
                data,
                turns,
                cut_off: true,
            },
            success => success,
        }
    }

    /// Turns used.
    pub(crate) fn turns(&self) -> u32 {
        match self {
            Outcome::Success { turns, .. } | Outcome::Failure { turns, .. } => *turns,
        }
    }

    /// `"success"` or the error code, for tracing and the final progress line.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            Outcome::Success { .. } => "success",
            Outcome::Failure { code, .. } => code.as_str(),
        }
    }

    /// The result (without events; the executor adds them).
    pub(crate) fn into_result(self, skill: &str, duration_ms: u64) -> SkillResult {
        let summary = Value::String(summarize(skill, &self));
        match self {
            Outcome::Success { data, .. } => {
                SkillResult::success(Some(data), Some(summary), duration_ms)
            }
            Outcome::Failure {
                code,
                message,
                data,
                cut_off,
                ..
            } => {
                let mut result = SkillResult::failure(code, message, duration_ms);
                result.data = data;
                result.truncated = cut_off;
                result.summary = Some(summary);
                result
            }
        }
    }
}

/// The one-line summary (see the module docs).
pub(crate) fn summarize(skill: &str, outcome: &Outcome) -> String {
    let turns = |n: u32| format!("{n} turn{}", if n == 1 { "" } else { "s" });
    let line = match outcome {
        Outcome::Success { data, turns: n } => match data {
            Value::Object(map) => match map.get("summary") {
                Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
                _ => format!("{skill} succeeded in {}", turns(*n)),
            },
            Value::String(text) => match first_line(text) {
                Some(line) => line.to_owned(),
                None => format!("{skill} succeeded in {}", turns(*n)),
            },
            _ => format!("{skill} succeeded in {}", turns(*n)),
        },
        Outcome::Failure {
            code,
            message,
            turns: n,
            ..
        } => format!(
            "{skill} failed ({code}) after {}: {}",
            turns(*n),
            first_line(message).unwrap_or("")
        ),
    };
    one_line(&line)
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    let flat = flat.trim();
    match flat.char_indices().nth(SUMMARY_CHARS) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_prefers_the_outputs_own_summary() {
        let ok = |data| Outcome::Success { data, turns: 2 };
        assert_eq!(
            summarize("s", &ok(json!({"summary": "3 issues\nfound"}))),
            "3 issues found"
        );
        assert_eq!(
            summarize("s", &ok(json!("\n  First line\nsecond"))),
            "First line"
        );
        assert_eq!(
            summarize("s", &ok(json!({"n": 1}))),
            "s succeeded in 2 turns"
        );
    }

    #[test]
    fn failure_summary_names_the_code_and_turns() {
        let failure = Outcome::failure(ErrorCode::Timeout, "deadline passed\nmore", 1);
        assert_eq!(
            summarize("s", &failure),
            "s failed (timeout) after 1 turn: deadline passed"
        );
    }

    #[test]
    fn summary_is_capped() {
        let long = "x".repeat(500);
        let s = summarize(
            "s",
            &Outcome::Success {
                data: json!(long),
                turns: 1,
            },
        );
        assert_eq!(s.chars().count(), SUMMARY_CHARS + 1);
    }
}

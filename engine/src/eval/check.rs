//! One machine check of an eval case and its verdict on an [`Observation`].
//!
//! Every check is typed when the case file is read (`case`): regexes are compiled, schemas are
//! compiled, pointers are kept as written. Judging a run never fails for a reason of its own: a
//! check either holds or says, in one line, what it saw instead.
//!
//! Not here: reading the run (`observation`), counting verdicts (`stats`).

use serde::Serialize;
use serde_json::Value;

use super::file_check::FileExpectation;
use super::observation::{Observation, RunOutcome};
use crate::protocol::ErrorCode;
use crate::schema::CompiledSchema;
use crate::template::json_kind;

/// What a check is about; also the failure code of a failed check other than the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// The run succeeded, or failed with the expected code.
    Outcome,
    /// The data validates against a schema.
    Schema,
    /// A JSON pointer into the data equals / contains / matches / lies in a range.
    Output,
    /// The tool trace: called, not called, at most N times.
    Tool,
    /// At most N turns.
    MaxTurns,
    /// At most this cost.
    MaxCost,
    /// A produced file: exists, media type, size, text, JSON pointer.
    File,
}

impl CheckKind {
    /// The name used in reports (`output`, `max_turns`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::Outcome => "outcome",
            CheckKind::Schema => "schema",
            CheckKind::Output => "output",
            CheckKind::Tool => "tool",
            CheckKind::MaxTurns => "max_turns",
            CheckKind::MaxCost => "max_cost",
            CheckKind::File => "file",
        }
    }
}

/// Why an `expect` entry (a pointer check, a produced file's expectation) cannot be a check;
/// the text is the reason the suite's `ManifestError` shows at the entry.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExpectationError {
    /// A file expectation without the file's name.
    #[error("`name` (the produced file's path) is required")]
    NoName,
    /// `min_bytes` above `max_bytes`.
    #[error("min_bytes {min} is above max_bytes {max}")]
    SizeRange { min: u64, max: u64 },
    /// A regular expression that does not compile.
    #[error("regex {pattern:?}: {error}")]
    Regex {
        pattern: String,
        error: regex::Error,
    },
    /// A file's `pointer` without `equals` or `contains`.
    #[error("`pointer` needs `equals` or `contains`")]
    PointerWithoutTest,
    /// A file's `equals`/`contains` without a `pointer`.
    #[error("`equals`/`contains` need a `pointer`")]
    TestWithoutPointer,
    /// A file's `equals` and `contains` together.
    #[error("give `equals` or `contains`, not both")]
    BothTests,
    /// Not a JSON pointer.
    #[error("pointer {0:?} is not a JSON pointer (\"\" or \"/a/0/b\")")]
    NotAPointer(String),
    /// A pointer check with no test, or several.
    #[error("give exactly one of equals, contains, regex or min/max (found {0})")]
    NotOneTest(usize),
    /// A range whose `min` is above its `max`.
    #[error("min {min} is above max {max}")]
    Range { min: f64, max: f64 },
}

/// What a pointer check asks of the value it points at.
#[derive(Debug, Clone)]
pub enum PointerTest {
    /// Equal as JSON (`1` and `1.0` are equal numbers).
    Equals(Value),
    /// A string containing this substring, an array with an element equal to this, or an object
    /// having each of this object's members.
    Contains(Value),
    /// A string the regex matches (anywhere, unless anchored).
    Regex(regex::Regex),
    /// A number within `[min, max]` (either bound optional).
    Range {
        /// Inclusive lower bound.
        min: Option<f64>,
        /// Inclusive upper bound.
        max: Option<f64>,
    },
}

/// How a case expects its run to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectedOutcome {
    /// `data.success: true` (the default).
    Success,
    /// Any failure or rejection (`"success": false`).
    AnyFailure,
    /// A failure or rejection with this code (`"error_code": "..."`).
    Code(ErrorCode),
}

impl std::fmt::Display for ExpectedOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExpectedOutcome::Success => f.write_str("success"),
            ExpectedOutcome::AnyFailure => f.write_str("a failure"),
            ExpectedOutcome::Code(code) => write!(f, "{code}"),
        }
    }
}

/// One check of a case.
#[derive(Debug, Clone)]
pub enum Check {
    /// The run ended as expected.
    Outcome(ExpectedOutcome),
    /// The data validates against `schema` (named `origin` in messages).
    Schema {
        /// The skill's output schema or a schema file of the eval.
        schema: CompiledSchema,
        /// Where it came from, for messages.
        origin: String,
    },
    /// The value at `pointer` in the data passes `test`.
    Output {
        /// A JSON pointer (RFC 6901) into the data; `""` is the whole value.
        pointer: String,
        /// What it must be.
        test: PointerTest,
    },
    /// The tool was called at least once.
    ToolCalled(String),
    /// The tool was never called.
    ToolNotCalled(String),
    /// The tool was called at most this many times.
    ToolAtMost(String, u32),
    /// The run took at most this many turns.
    MaxTurns(u32),
    /// The run's estimated cost was at most this (in the price list's currency).
    MaxCost(f64),
    /// A produced file is as expected.
    File(FileExpectation),
}

/// A check that did not hold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckFailure {
    /// What the check is about.
    pub kind: CheckKind,
    /// The failure code counted in the statistics: the run's error code (or `succeeded`) for an
    /// outcome check, the kind's name otherwise.
    pub code: String,
    /// What was expected and what was seen.
    pub message: String,
}

impl Check {
    /// What the check is about.
    pub fn kind(&self) -> CheckKind {
        match self {
            Check::Outcome(_) => CheckKind::Outcome,
            Check::Schema { .. } => CheckKind::Schema,
            Check::Output { .. } => CheckKind::Output,
            Check::ToolCalled(_) | Check::ToolNotCalled(_) | Check::ToolAtMost(..) => {
                CheckKind::Tool
            }
            Check::MaxTurns(_) => CheckKind::MaxTurns,
            Check::MaxCost(_) => CheckKind::MaxCost,
            Check::File(_) => CheckKind::File,
        }
    }

    /// Judges `run`: `Ok` when the check holds.
    pub fn judge(&self, run: &Observation) -> Result<(), CheckFailure> {
        let fail = |message: String| CheckFailure {
            kind: self.kind(),
            code: self.kind().as_str().to_owned(),
            message,
        };
        match self {
            Check::Outcome(expected) => judge_outcome(*expected, &run.outcome),
            Check::Schema { schema, origin } => {
                let data = run.data.as_ref().ok_or_else(|| fail("no data".into()))?;
                schema.validate(data).map_err(|violations| {
                    let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
                    fail(format!("does not match {origin}: {}", listed.join("; ")))
                })
            }
            Check::Output { pointer, test } => {
                let data = run.data.as_ref().ok_or_else(|| fail("no data".into()))?;
                let value = data
                    .pointer(pointer)
                    .ok_or_else(|| fail(format!("{}: no value there", shown(pointer))))?;
                judge_pointer(test, value).map_err(|why| fail(format!("{}: {why}", shown(pointer))))
            }
            Check::ToolCalled(name) => match run.calls_of(name) {
                0 => Err(fail(format!(
                    "{name} was never called (calls: {})",
                    run.trace_line()
                ))),
                _ => Ok(()),
            },
            // A cut trace can show a call but never prove its absence, nor a count or turns
            // within a limit.
            Check::ToolNotCalled(_) | Check::ToolAtMost(..) | Check::MaxTurns(_)
                if run.events_truncated =>
            {
                Err(fail(
                    "the run's events were cut (collection cap), so its trace is incomplete".into(),
                ))
            }
            Check::ToolNotCalled(name) => match run.calls_of(name) {
                0 => Ok(()),
                n => Err(fail(format!("{name} was called {n} time(s)"))),
            },
            Check::ToolAtMost(name, limit) => {
                let n = run.calls_of(name);
                if n <= *limit as usize {
                    Ok(())
                } else {
                    Err(fail(format!(
                        "{name} was called {n} times, at most {limit}"
                    )))
                }
            }
            Check::MaxTurns(limit) => match run.turns {
                Some(turns) if turns <= *limit => Ok(()),
                Some(turns) => Err(fail(format!("took {turns} turns, at most {limit}"))),
                None => Err(fail("the number of turns is unknown".into())),
            },
            Check::MaxCost(limit) => match &run.cost {
                Some(cost) if cost.amount <= *limit => Ok(()),
                Some(cost) => Err(fail(format!(
                    "cost {:.6} {}, at most {limit}",
                    cost.amount, cost.currency
                ))),
                None => Err(fail(
                    "the cost is unknown (no usage reported, or no [pricing] for the model)".into(),
                )),
            },
            Check::File(expected) => expected.judge(run).map_err(fail),
        }
    }
}

fn judge_outcome(expected: ExpectedOutcome, seen: &RunOutcome) -> Result<(), CheckFailure> {
    let seen_code = seen.error_code();
    let holds = match expected {
        ExpectedOutcome::Success => seen_code.is_none(),
        ExpectedOutcome::AnyFailure => seen_code.is_some(),
        ExpectedOutcome::Code(want) => seen_code == Some(want),
    };
    if holds {
        return Ok(());
    }
    let code = seen_code.map_or_else(|| "succeeded".to_owned(), |c| c.as_str().to_owned());
    let message = match seen {
        RunOutcome::Succeeded => format!("succeeded, expected {expected}"),
        RunOutcome::Failed { code, message } => {
            format!("failed ({code}), expected {expected}: {message}")
        }
        RunOutcome::Rejected { code, message } => {
            format!("rejected ({code}), expected {expected}: {message}")
        }
    };
    Err(CheckFailure {
        kind: CheckKind::Outcome,
        code,
        message,
    })
}

pub(super) fn judge_pointer(test: &PointerTest, value: &Value) -> Result<(), String> {
    match test {
        PointerTest::Equals(want) => {
            if json_equal(value, want) {
                Ok(())
            } else {
                Err(format!("{} is not {}", short(value), short(want)))
            }
        }
        PointerTest::Contains(want) => {
            let found = match (value, want) {
                (Value::String(text), Value::String(part)) => text.contains(part.as_str()),
                (Value::Array(items), _) => items.iter().any(|item| json_equal(item, want)),
                (Value::Object(members), Value::Object(wanted)) => wanted
                    .iter()
                    .all(|(k, v)| members.get(k).is_some_and(|m| json_equal(m, v))),
                _ => {
                    return Err(format!(
                        "{} cannot contain {}",
                        json_kind(value),
                        json_kind(want)
                    ));
                }
            };
            if found {
                Ok(())
            } else {
                Err(format!("{} does not contain {}", short(value), short(want)))
            }
        }
        PointerTest::Regex(regex) => match value {
            Value::String(text) if regex.is_match(text) => Ok(()),
            Value::String(_) => Err(format!("{} does not match /{regex}/", short(value))),
            other => Err(format!("{} is not a string", json_kind(other))),
        },
        PointerTest::Range { min, max } => {
            let Some(number) = value.as_f64() else {
                return Err(format!("{} is not a number", json_kind(value)));
            };
            let low = min.is_none_or(|min| number >= min);
            let high = max.is_none_or(|max| number <= max);
            if low && high {
                Ok(())
            } else {
                let bound = |b: Option<f64>| b.map_or_else(|| "…".to_owned(), |b| b.to_string());
                Err(format!(
                    "{number} is outside [{}, {}]",
                    bound(*min),
                    bound(*max)
                ))
            }
        }
    }
}

/// JSON equality where numbers compare by value (`234.8` from one writer, `2.348e2` from
/// another, `1` and `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

pub(super) fn shown(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}

/// A value for a one-line message, cut at 80 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;

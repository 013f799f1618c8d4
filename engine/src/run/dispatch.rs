//! Tool dispatch for one turn: the model's tool calls in, one tool result message per call out,
//! in call order.
//!
//! Every call is answered, never dropped and never fatal to the run:
//! - a name the skill was not offered → a tool error listing what it can call (never executed);
//! - a tool over its `[limits.max_tool_calls]` allowance for the run → a tool error saying so
//!   (never executed; see `budget`);
//! - arguments that are not JSON, or fail the tool's input schema → a tool error listing every
//!   problem (the tool does not run);
//! - a tool that fails, panics (caught, whether it runs in its own task or, when it
//!   [runs inline](crate::tools::Tool::runs_inline), on the call's), or runs past its timeout (the earlier of [`Limits::tool_timeout`] and the call's deadline) → a tool error;
//! - output longer than [`Limits::max_tool_output_bytes`] is cut at a character boundary and ends
//!   with a marker saying how much was kept.
//!
//! The calls of a turn run concurrently, at most [`Limits::tool_concurrency`] at a time. When the
//! surrounding call is cancelled or dropped (its deadline), in-flight tools get their cancellation
//! token fired and their tasks aborted.
//!
//! A tool that needs a person's approval runs only once it is given; a denial is a tool error
//! (`approval`).
//!
//! Not here: deciding to stop on repeated calls ([`RepeatTracker`] is used by the turn loop).

use crate::protocol::LogLevel;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::{FutureExt, StreamExt};
use serde_json::Value;
use skillet_providers::{ChatMessage, ImageInput, ToolCall};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::approval_gate::ApprovalGate;
use super::budget::RunBudget;
use super::images::tool_images;
use super::tool_schemas::ToolSchemaCache;
use super::{Limits, spans};
use crate::deadline::Deadline;
use crate::events::EventEmitter;
use crate::telemetry::metrics;
use crate::tools::{Tool, ToolContext, ToolError, ToolOutput, ToolSet};

/// Longest tool argument or result text shown in a `log` event.
const LOG_PREVIEW_CHARS: usize = 200;

/// Longest tool error shown in a `log` event: an error's cause often comes after a long
/// preamble (a script's traceback, a build's output), so it is cut only where a terminal would
/// drown, never at a preview's length.
const LOG_ERROR_CHARS: usize = 4000;

/// What one turn's dispatch needs.
pub(crate) struct DispatchContext<'a> {
    pub tools: &'a ToolSet,
    pub schemas: &'a ToolSchemaCache,
    pub limits: &'a Limits,
    /// Counts the run's calls per tool (`[limits.max_tool_calls]`).
    pub budget: &'a RunBudget<'a>,
    pub deadline: Deadline,
    pub cancel: &'a CancellationToken,
    pub events: &'a EventEmitter,
    pub turn: u32,
    /// Record tool arguments and results on spans (`[telemetry] capture_content`).
    pub capture_content: bool,
    /// Which calls wait for a person's approval, and who is asked (`approval`).
    pub approvals: ApprovalGate<'a>,
    /// The largest image the provider is shown (`None`: none), for tools' images (`images`).
    pub image_bytes_limit: Option<usize>,
}

/// What running one call gave: the span outcome, the result text or error, and the images the
/// tool returned.
struct ToolRun {
    outcome: &'static str,
    content: Result<String, String>,
    images: Vec<ImageInput>,
}

impl ToolRun {
    fn failed(outcome: &'static str, error: String) -> Self {
        ToolRun {
            outcome,
            content: Err(error),
            images: Vec::new(),
        }
    }
}

/// Runs a turn's tool calls; returns one `ToolResult` message per call, in call order, then
/// the images the tools returned that the model is shown (`images`).
pub(crate) async fn dispatch_turn(
    ctx: &DispatchContext<'_>,
    calls: &[ToolCall],
) -> Vec<ChatMessage> {
    // Collected first: a lazy `map` closure here makes the future's `Send` bound higher-ranked
    // over the borrowed calls, which the compiler cannot prove.
    let answers: Vec<_> = calls.iter().map(|call| answer_call(ctx, call)).collect();
    let results = Vec::with_capacity(calls.len());
    let (mut messages, images) = futures::stream::iter(answers)
        .buffered(ctx.limits.tool_concurrency())
        .fold(
            (results, Vec::new()),
            |(mut results, mut images), (result, shown)| {
                results.push(result);
                images.extend(shown);
                std::future::ready((results, images))
            },
        )
        .await;
    messages.extend(images);
    messages
}

/// Answers one call: checks it, runs it, and turns whatever happened into a tool result (and
/// the images of it the model is shown).
async fn answer_call(
    ctx: &DispatchContext<'_>,
    call: &ToolCall,
) -> (ChatMessage, Vec<ChatMessage>) {
    // A name the skill was not offered is the model's text, not ours: it does not become a
    // metric label.
    let known = ctx.tools.lookup(&call.name).is_some();
    let span = spans::execute_tool(&call.name, &call.id, ctx.turn);
    // Written once for the span (when content is captured) and the log event's preview.
    let arguments = call.arguments.to_string();
    spans::record_content(
        &span,
        ctx.capture_content,
        "gen_ai.tool.call.arguments",
        &arguments,
    );
    ctx.events.log(
        LogLevel::Info,
        format!("tool call {}({})", call.name, preview(&arguments)),
    );
    let run = match prepare(ctx, call) {
        Err(problem) => ToolRun::failed("rejected", problem),
        Ok(tool) => match ctx
            .approvals
            .check(tool.name(), call, ctx.events, ctx.cancel, &span)
            .await
        {
            Ok(()) => run_tool(ctx, tool, call).instrument(span.clone()).await,
            Err(denied) => ToolRun::failed("denied", denied),
        },
    };
    let ToolRun {
        outcome,
        content,
        images,
    } = run;
    span.record("skillet.outcome", outcome);
    metrics::get().tool_answered(
        if known { &call.name } else { metrics::UNKNOWN },
        content.is_err(),
    );
    match &content {
        Ok(text) => {
            spans::record_content(&span, ctx.capture_content, "gen_ai.tool.call.result", text)
        }
        Err(_) => spans::record_error(&span, outcome),
    }
    match content {
        Ok(text) => {
            let (text, cut) = cut_output(text, ctx.limits.max_tool_output_bytes);
            ctx.events.log(
                LogLevel::Info,
                format!(
                    "tool result {}: {}{}",
                    call.name,
                    preview(&text),
                    if cut { " (output cut)" } else { "" }
                ),
            );
            let shown = tool_images(&call.name, images, ctx.image_bytes_limit, ctx.events);
            (ChatMessage::tool_result(&call.id, &call.name, text), shown)
        }
        Err(error) => {
            let (error, _) = cut_output(error, ctx.limits.max_tool_output_bytes);
            ctx.events.log(
                LogLevel::Warn,
                format!("tool error {}: {}", call.name, cut(&error, LOG_ERROR_CHARS)),
            );
            (
                ChatMessage::tool_error(&call.id, &call.name, error),
                Vec::new(),
            )
        }
    }
}

/// The tool a call may run, or the error answered instead of running anything.
fn prepare(ctx: &DispatchContext<'_>, call: &ToolCall) -> Result<Arc<dyn Tool>, String> {
    let Some(resolved) = ctx.tools.lookup(&call.name) else {
        let offered: Vec<&str> = ctx
            .tools
            .tools()
            .iter()
            .map(|t| t.offered_name.as_str())
            .collect();
        return Err(if offered.is_empty() {
            format!("unknown tool `{}`: this skill has no tools", call.name)
        } else {
            format!(
                "unknown tool `{}`: this skill can call only {}",
                call.name,
                offered.join(", ")
            )
        });
    };
    if let Some(parse_error) = &call.invalid_arguments {
        return Err(format!(
            "invalid arguments for `{}`: {parse_error}",
            call.name
        ));
    }
    if let Err(problems) = ctx.schemas.get(resolved).check(&call.arguments) {
        return Err(format!(
            "invalid arguments for `{}` ({} problem{}):\n- {}",
            call.name,
            problems.len(),
            if problems.len() == 1 { "" } else { "s" },
            problems.join("\n- ")
        ));
    }
    ctx.budget.take_tool_call(resolved.tool.name())?;
    Ok(resolved.tool.clone())
}

/// A spawned task that is aborted when this handle is dropped (the call was cancelled or timed
/// out around it), so no tool or handler outlives its call.
pub(crate) struct AbortOnDrop<T>(pub(crate) JoinHandle<T>);

impl<T> AbortOnDrop<T> {
    /// Waits for the task.
    pub(crate) async fn join(mut self) -> Result<T, tokio::task::JoinError> {
        (&mut self.0).await
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// How a tool's run ended, whichever task it ran on.
enum Finished {
    Output(Result<ToolOutput, ToolError>),
    Panicked,
    Cancelled,
}

/// Runs `tool` to its end: on the call's own task when the tool [runs inline](Tool::runs_inline)
/// (a panic is caught), else in a task of its own that is aborted if this future is dropped.
async fn run_to_end(tool: Arc<dyn Tool>, arguments: Value, tool_ctx: ToolContext) -> Finished {
    if tool.runs_inline() {
        return match AssertUnwindSafe(tool.call(arguments, tool_ctx))
            .catch_unwind()
            .await
        {
            Ok(output) => Finished::Output(output),
            Err(_) => Finished::Panicked,
        };
    }
    let task = tokio::spawn(
        async move { tool.call(arguments, tool_ctx).await }.instrument(tracing::Span::current()),
    );
    match AbortOnDrop(task).join().await {
        Ok(output) => Finished::Output(output),
        Err(join_error) if join_error.is_panic() => Finished::Panicked,
        Err(_) => Finished::Cancelled,
    }
}

/// Runs `tool`, bounded by its timeout and the call's cancellation. Returns the span outcome
/// and the text for the model (`Err` = tool error).
async fn run_tool(ctx: &DispatchContext<'_>, tool: Arc<dyn Tool>, call: &ToolCall) -> ToolRun {
    let deadline = ctx.deadline.min_after(ctx.limits.tool_timeout);
    let tool_cancel = ctx.cancel.child_token();
    // Fires the tool's token if this future is dropped (the call's deadline or the host).
    let _cancel_on_drop = tool_cancel.clone().drop_guard();
    let tool_ctx = ToolContext {
        cancel: tool_cancel.clone(),
        deadline,
        events: ctx.events.clone(),
        call_id: call.id.clone(),
    };
    tokio::select! {
        finished = run_to_end(tool, call.arguments.clone(), tool_ctx) => match finished {
            Finished::Output(Ok(output)) => tool_output(output),
            Finished::Output(Err(error)) => {
                ToolRun::failed("error", format!("tool `{}` failed: {error}", call.name))
            }
            Finished::Panicked => ToolRun::failed(
                "panic",
                format!("tool `{}` panicked; its work was discarded", call.name),
            ),
            Finished::Cancelled => {
                ToolRun::failed("cancelled", format!("tool `{}` was cancelled", call.name))
            }
        },
        () = tokio::time::sleep_until(deadline.instant()) => {
            tool_cancel.cancel();
            let limit = if deadline < ctx.deadline {
                format!("its {:.1}s timeout", ctx.limits.tool_timeout.as_secs_f64())
            } else {
                "the call's deadline".to_owned()
            };
            ToolRun::failed("timeout", format!("tool `{}` did not finish within {limit}", call.name))
        }
        () = ctx.cancel.cancelled() => {
            ToolRun::failed("cancelled", format!("tool `{}` was cancelled", call.name))
        }
    }
}

fn tool_output(output: ToolOutput) -> ToolRun {
    let text = output.to_text();
    if output.is_error {
        ToolRun::failed("error", text)
    } else {
        ToolRun {
            outcome: "ok",
            content: Ok(text),
            images: output.images,
        }
    }
}

/// `text` cut to at most `max_bytes` (at a character boundary) plus a marker; whether it was cut.
pub(crate) fn cut_output(text: String, max_bytes: usize) -> (String, bool) {
    if text.len() <= max_bytes {
        return (text, false);
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let total = text.len();
    let mut cut = text;
    cut.truncate(end);
    cut.push_str(&format!(
        "\n[output truncated: {end} of {total} bytes shown]"
    ));
    (cut, true)
}

/// `text` shortened for a log line.
pub(crate) fn preview(text: &str) -> String {
    cut(text, LOG_PREVIEW_CHARS)
}

/// `text` cut after `chars` characters, marked with `…` when cut.
fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Counts how many times in a row the same tool was called with the same arguments, across
/// turns, to stop a model that loops.
#[derive(Debug, Default)]
pub(crate) struct RepeatTracker {
    last: Option<(String, String)>,
    streak: u32,
    /// Whether the model was already told it repeats a call (`agent`): the next loop stops.
    pub(crate) told: bool,
}

impl RepeatTracker {
    /// Records `call`; returns the streak length including it.
    pub(crate) fn record(&mut self, call: &ToolCall) -> u32 {
        let key = (call.name.clone(), canonical_json(&call.arguments));
        if self.last.as_ref() == Some(&key) {
            self.streak += 1;
        } else {
            self.last = Some(key);
            self.streak = 1;
        }
        self.streak
    }
}

/// JSON text with object keys sorted at every level, so argument order does not matter.
fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_errors_log_line_keeps_the_cause_after_a_long_preamble() {
        let error = format!("{} uv is not on PATH; install it", "x".repeat(300));
        assert!(cut(&error, LOG_ERROR_CHARS).ends_with("install it"));
        assert!(preview(&error).ends_with('…'));
    }

    #[test]
    fn oversized_output_is_cut_at_a_char_boundary_with_a_marker() {
        let (text, cut) = cut_output("héllo world".into(), 2);
        assert!(cut);
        assert!(
            text.starts_with("h\n[output truncated: 1 of 12 bytes shown]"),
            "{text}"
        );
        let (text, cut) = cut_output("short".into(), 10);
        assert!(!cut);
        assert_eq!(text, "short");
    }

    #[test]
    fn repeat_tracker_ignores_key_order_and_resets_on_change() {
        let call = |args: Value| ToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: args,
            invalid_arguments: None,
        };
        let mut tracker = RepeatTracker::default();
        assert_eq!(tracker.record(&call(json!({"a": 1, "b": 2}))), 1);
        assert_eq!(tracker.record(&call(json!({"b": 2, "a": 1}))), 2);
        assert_eq!(tracker.record(&call(json!({"a": 2}))), 1);
    }
}

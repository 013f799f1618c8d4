//! Tracing spans of a call, following the OpenTelemetry GenAI semantic conventions (version in
//! [`crate::telemetry::GENAI_SEMCONV_VERSION`]), in one place so names and attributes stay
//! consistent: `invoke_agent {skill}` ⊃ (`chat {model}` per provider request,
//! `execute_tool {tool}` per tool call).
//!
//! Span names, kinds and status use `tracing-opentelemetry`'s special fields (`otel.name`,
//! `otel.kind`, `otel.status_code`); attributes are the semconv `gen_ai.*` and `error.type`
//! keys plus a few `skillet.*` ones (request id, turn, outcome). Status is left unset on
//! success and set to `error` (with `error.type` = the A2E error code or the tool failure
//! kind) on failure.
//!
//! Message content (model answers, tool arguments and results) is recorded only when the host
//! opted in (`[telemetry] capture_content`), through [`record_content`]; credentials never are.
//! Not here: where spans go (the `skillet` crate's `telemetry::otlp`).

use opentelemetry::{Array, StringValue, Value};
use skillet_providers::Usage;
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The span of one call; provider, model, usage and outcome are recorded as they become known.
pub(crate) fn invoke_agent(skill: &str, req_id: &str, correlation_id: &str) -> Span {
    tracing::info_span!(
        "invoke_agent",
        otel.name = format!("invoke_agent {skill}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = skill,
        gen_ai.conversation.id = correlation_id,
        gen_ai.provider.name = Empty,
        gen_ai.request.model = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.usage.reasoning.output_tokens = Empty,
        error.type = Empty,
        skillet.request.id = req_id,
        enduser.id = Empty,
        skillet.outcome = Empty,
        skillet.turns = Empty,
        skillet.cost = Empty,
    )
}

/// The span of one provider request (retries included).
pub(crate) fn chat(provider: &str, model: &str, turn: u32) -> Span {
    tracing::info_span!(
        "chat",
        otel.name = format!("chat {model}"),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.response.model = Empty,
        gen_ai.response.id = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.usage.reasoning.output_tokens = Empty,
        gen_ai.output.messages = Empty,
        error.type = Empty,
        skillet.turn = i64::from(turn),
        skillet.tool_calls = Empty,
    )
}

/// The span of one tool call.
pub(crate) fn execute_tool(tool: &str, call_id: &str, turn: u32) -> Span {
    tracing::info_span!(
        "execute_tool",
        otel.name = format!("execute_tool {tool}"),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
        skillet.turn = i64::from(turn),
        skillet.outcome = Empty,
        skillet.approval = Empty,
        skillet.approval.by = Empty,
    )
}

/// A count as an OpenTelemetry int attribute (`tracing-opentelemetry` exports `u64` fields as
/// strings).
pub(crate) fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A provider response's token counts on its `chat` span (the breakdowns only when reported).
pub(crate) fn record_usage(span: &Span, usage: &Usage) {
    span.record("gen_ai.usage.input_tokens", int(usage.input_tokens));
    span.record("gen_ai.usage.output_tokens", int(usage.output_tokens));
    record_usage_breakdown(
        span,
        usage.cached_input_tokens,
        usage.cache_creation_input_tokens,
        usage.reasoning_tokens,
    );
}

/// The cache and reasoning breakdowns of `gen_ai.usage.*` (current GenAI semconv names), each
/// only when reported.
pub(crate) fn record_usage_breakdown(
    span: &Span,
    cache_read: Option<u64>,
    cache_creation: Option<u64>,
    reasoning: Option<u64>,
) {
    let figures = [
        ("gen_ai.usage.cache_read.input_tokens", cache_read),
        ("gen_ai.usage.cache_creation.input_tokens", cache_creation),
        ("gen_ai.usage.reasoning.output_tokens", reasoning),
    ];
    for (field, n) in figures {
        if let Some(n) = n {
            span.record(field, int(n));
        }
    }
}

/// Marks `span` failed with `error_type` (an A2E code or a tool failure kind).
pub(crate) fn record_error(span: &Span, error_type: &str) {
    span.record("otel.status_code", "error");
    span.record("error.type", error_type);
}

/// `gen_ai.response.finish_reasons` (a string array, which `tracing` fields cannot carry).
pub(crate) fn record_finish_reason(span: &Span, reason: &str) {
    if span.is_disabled() {
        // Nothing takes it: skip building the array.
        return;
    }
    let reasons = Array::String(vec![StringValue::from(reason.to_owned())]);
    span.set_attribute("gen_ai.response.finish_reasons", Value::Array(reasons));
}

/// Records message content on `field` when the host opted in.
pub(crate) fn record_content(span: &Span, capture: bool, field: &'static str, content: &str) {
    if capture {
        span.record(field, content);
    }
}

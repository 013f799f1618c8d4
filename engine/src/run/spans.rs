//! Tracing spans of a call, in one place so their names and fields stay consistent:
//! `skill.call` ⊃ `skill.turn` ⊃ (`provider.request`, `skill.tool`), plus `skill.gate`.
//!
//! Fields are identifiers and counts only — skill, request id, turn, provider, model, tool,
//! outcome, token counts. Message content, arguments, outputs and credentials never go into
//! spans (events carry previews for the caller; tracing is for operators).

use tracing::Span;
use tracing::field::Empty;

/// The span of one call; `outcome`, `turns`, `input_tokens`, `output_tokens` are recorded at
/// the end.
pub(crate) fn call(skill: &str, req_id: &str, correlation_id: &str) -> Span {
    tracing::info_span!(
        "skill.call",
        skill = skill,
        req_id = req_id,
        correlation_id = correlation_id,
        outcome = Empty,
        turns = Empty,
        input_tokens = Empty,
        output_tokens = Empty,
    )
}

/// The span of one turn.
pub(crate) fn turn(skill: &str, turn: u32, max_turns: u32, provider: &str) -> Span {
    tracing::info_span!(
        "skill.turn",
        skill = skill,
        turn = turn,
        max_turns = max_turns,
        provider = provider,
        outcome = Empty,
    )
}

/// The span of one provider request (retries included).
pub(crate) fn provider_request(provider: &str, model: &str, tools: usize) -> Span {
    tracing::info_span!(
        "provider.request",
        provider = provider,
        model = model,
        tools = tools,
        outcome = Empty,
        input_tokens = Empty,
        output_tokens = Empty,
        tool_calls = Empty,
    )
}

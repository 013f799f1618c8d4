//! Keeping an answer within the NATS server's `max_payload` (from its `INFO`), so that it can
//! always be stored and published.
//!
//! An answer over the limit can never be stored: retrying the store as if the failure were
//! transient let JetStream redeliver the call, and the skill ran again up to `max_deliveries`
//! times, although every run succeeded. So before storing, [`fit`] makes the answer fit:
//!
//! 1. the collected events (`data.events`) are cut from the end, and `data.truncated` is set
//!    (the live events went out on the events subject as they came; streamed model text, the
//!    bulk of a large answer, is there);
//! 2. when even the answer without events does not fit (the output itself is too large), the
//!    answer becomes a non-retryable `skill_error` saying so — one clear answer, never a re-run.
//!
//! [`HEADROOM`] bytes are kept for what a store or publish adds around the payload (headers,
//! subject). Not here: storing and publishing (`store`, `worker`).

use skillet_protocol::{ErrorCode, Message, SkillCallResponse, SkillResult};

/// Bytes of `max_payload` left for the headers and subject of a store or publish.
pub(crate) const HEADROOM: usize = 4096;

/// The encoded size of `response`, as stored and published.
fn encoded_len(response: &SkillCallResponse) -> usize {
    skillet_protocol::encode(&Message::CallResponse(response.clone())).len()
}

/// `response` made to fit in `max_payload` bytes (see the module doc); returned as it is when
/// it fits.
pub(crate) fn fit(mut response: SkillCallResponse, max_payload: usize) -> SkillCallResponse {
    let budget = max_payload.saturating_sub(HEADROOM).max(1024);
    let size = encoded_len(&response);
    if size <= budget {
        return response;
    }
    let Some(result) = response.data.as_mut() else {
        // A rejection is a few hundred bytes; only an absurd message could get here.
        return too_large(response, size, max_payload);
    };
    let events = std::mem::take(&mut result.events);
    result.truncated = true;
    let base = encoded_len(&response);
    if base > budget {
        return too_large(response, size, max_payload);
    }
    // Keep the longest prefix of events that fits (each costs its encoding and a comma).
    let mut room = budget - base;
    let mut keep = 0;
    for event in &events {
        let cost = serde_json::to_vec(event).map_or(usize::MAX, |v| v.len() + 1);
        if cost > room {
            break;
        }
        room -= cost;
        keep += 1;
    }
    let dropped = events.len() - keep;
    if let Some(result) = response.data.as_mut() {
        result.events = events;
        result.events.truncate(keep);
    }
    // The estimate is exact for the writer's compact JSON; should it ever be off, drop more.
    while encoded_len(&response) > budget {
        let Some(result) = response.data.as_mut() else {
            break;
        };
        if result.events.pop().is_none() {
            break;
        }
    }
    tracing::warn!(
        req_id = %response.req_id,
        size,
        max_payload,
        dropped,
        "the answer is over the NATS server's max_payload; its collected events were cut"
    );
    response
}

/// The answer that replaces one whose output alone is over the limit.
fn too_large(response: SkillCallResponse, size: usize, max_payload: usize) -> SkillCallResponse {
    tracing::warn!(req_id = %response.req_id, size, max_payload, "the answer is over the NATS server's max_payload; answering skill_error");
    let message = format!(
        "the skill's answer is {size} bytes, more than this NATS server accepts in one message \
         (max_payload {max_payload} bytes); it ran to completion, but its answer cannot be \
         delivered over NATS: ask for less output, or call it over HTTP"
    );
    let duration_ms = response.data.as_ref().map_or(0, |r| r.duration_ms);
    let usage = response.data.and_then(|r| r.usage);
    let mut result = SkillResult::failure(ErrorCode::SkillError, message, duration_ms);
    result.truncated = true;
    result.usage = usage;
    SkillCallResponse::result(response.req_id, response.name, result)
}

/// The answer that replaces one whose store failed permanently.
pub(crate) fn unstorable(
    response: SkillCallResponse,
    error: &super::error::NatsError,
) -> SkillCallResponse {
    let duration_ms = response.data.as_ref().map_or(0, |r| r.duration_ms);
    let message =
        format!("the skill ran, but its answer cannot be stored ({error}); it is not run again");
    let mut result = SkillResult::failure(ErrorCode::RuntimeError, message, duration_ms);
    result.truncated = true;
    SkillCallResponse::result(response.req_id, response.name, result)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skillet_protocol::LogLevel;

    use super::*;
    use skillet_protocol::{EventPayload, SkillEvent};

    fn answer(events: usize, output_bytes: usize) -> SkillCallResponse {
        let events = (0..events)
            .map(|seq| {
                SkillEvent::new(
                    "r1",
                    seq as u64,
                    EventPayload::log(LogLevel::Info, "x".repeat(1000)),
                )
            })
            .collect();
        SkillCallResponse::result(
            "r1",
            "big",
            SkillResult {
                success: true,
                data: Some(json!({"text": "y".repeat(output_bytes)})),
                summary: None,
                truncated: false,
                error: None,
                error_code: None,
                duration_ms: 5,
                events,
                usage: None,
                resumed: None,
                transcript: None,
            },
        )
    }

    #[test]
    fn an_answer_that_fits_is_unchanged() {
        let small = answer(3, 100);
        assert_eq!(fit(small.clone(), 1 << 20), small);
    }

    #[test]
    fn events_are_cut_from_the_end_and_the_answer_says_truncated() {
        // 2 MiB of collected events against a 64 KiB limit.
        let big = answer(2048, 1000);
        let fitted = fit(big, 64 * 1024);
        assert!(encoded_len(&fitted) <= 64 * 1024 - HEADROOM);
        let result = fitted.data.unwrap();
        assert!(result.success && result.truncated);
        assert!(!result.events.is_empty() && result.events.len() < 2048);
        let seqs: Vec<u64> = result.events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>(), "a prefix");
        assert_eq!(result.data.unwrap()["text"].as_str().unwrap().len(), 1000);
    }

    #[test]
    fn an_output_over_the_limit_becomes_one_clear_non_retryable_error() {
        let fitted = fit(answer(10, 2 << 20), 1 << 20);
        assert!(encoded_len(&fitted) < 4096);
        let result = fitted.data.unwrap();
        assert!(!result.success);
        assert_eq!(result.error_code, Some(ErrorCode::SkillError));
        assert!(result.error.unwrap().contains("max_payload"));
    }
}

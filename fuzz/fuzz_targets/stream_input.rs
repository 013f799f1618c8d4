//! Shared by `openai_stream`, `anthropic_stream` and `ollama_stream`: turns fuzzer bytes into a
//! streamed response body cut into chunks the fuzzer chose, runs it through the provider's real
//! stream decoder (framing, per-line/event and total caps, decoder), and checks what must hold.
//!
//! Input: byte 0 — bits 0..2 what the request asked for (text with a tool, an object schema,
//! an array schema), bit 2 small caps (event cap `16 + 8 * (byte0 >> 3)` bytes, body cap 1 KiB)
//! instead of the provider's; byte 1 — `n`, how many chunk sizes follow (0..8); then `n` sizes
//! (0 counts as 1); the rest is the body, cut by the sizes in turn (`n = 0`: one chunk).
//!
//! Checks: nothing panics; the outcome does not depend on where the body was cut (same answer,
//! or the same error kind, as the body in one chunk); an answer with tool calls finishes with
//! `tool_calls`; the whole-body and error-body decoders take the same bytes without panicking.

use std::sync::LazyLock;

use skillet_providers::FinishReason;
use skillet_providers::fuzzing::{
    Api, Asked, Caps, decode_error_body, decode_stream, decode_whole,
};

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
});

pub fn check(api: Api, data: &[u8]) {
    let [flags, count, rest @ ..] = data else {
        return;
    };
    let count = usize::from(*count % 9).min(rest.len());
    let (sizes, body) = rest.split_at(count);
    let asked = match flags & 0b11 {
        1 => Asked::Object,
        2 => Asked::Array,
        _ => Asked::Text,
    };
    let caps = if flags & 0b100 == 0 {
        Caps::default()
    } else {
        Caps {
            max_event_bytes: 16 + 8 * usize::from(flags >> 3),
            max_total_bytes: 1024,
        }
    };

    let split = RUNTIME.block_on(decode_stream(api, asked, chunks(body, sizes), caps));
    let whole = RUNTIME.block_on(decode_stream(api, asked, vec![body.to_vec()], caps));
    match (&split, &whole) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the answer depends on the chunking"),
        (Err(a), Err(b)) => assert_eq!(a.kind, b.kind, "the error depends on the chunking"),
        _ => panic!("the chunking changed the outcome: {split:?} vs {whole:?}"),
    }
    if let Ok(answer) = &split
        && !answer.tool_calls.is_empty()
    {
        assert_eq!(answer.finish_reason, FinishReason::ToolCalls, "{answer:?}");
    }
    let _ = decode_whole(api, asked, body);
    let _ = decode_error_body(api, body);
}

/// `body` cut into pieces of `sizes` bytes in turn (0 counts as 1); one piece without sizes.
fn chunks(body: &[u8], sizes: &[u8]) -> Vec<Vec<u8>> {
    if sizes.is_empty() {
        return vec![body.to_vec()];
    }
    let mut pieces = Vec::new();
    let mut rest = body;
    for size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, tail) = rest.split_at(usize::from(*size).max(1).min(rest.len()));
        pieces.push(piece.to_vec());
        rest = tail;
    }
    pieces
}

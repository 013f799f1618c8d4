//! The hand-written JSON writer for the two messages a host sends most: `skill/call/resp` (with
//! its collected events) and `skill/event`.
//!
//! Why by hand: a call's answer is mostly short strings (every event carries its id, version,
//! `req_id` and message), and `serde_json` escapes a string one byte at a time through a lookup
//! table. Here a string is checked eight bytes at a time for the three things JSON must escape
//! (a control character, `"`, `\`) and copied in runs, and the envelope's field names are
//! written as constants. Numbers, the result's `data`/`summary` values, usage and errors are
//! still written by `serde_json`, so the bytes are exactly what the derived `Serialize` writes:
//! the tests compare the two on messages that set every field and every kind of character.
//!
//! The structs are destructured without `..`: a field added to a message fails to compile here
//! until it is written.
//!
//! Not here: decoding (`codec`, `event_decode`), the other messages (derived `Serialize`).

use serde::Serialize;

use super::event::{EventPayload, SkillEvent};
use super::{SkillCallResponse, SkillResult};

/// Writes `{"type":"skill/call/resp",...}`.
pub(super) fn call_response(out: &mut Vec<u8>, response: &SkillCallResponse) {
    let SkillCallResponse {
        id,
        version,
        ts,
        req_id,
        name,
        data,
        error,
        created_at,
    } = response;
    out.extend_from_slice(br#"{"type":"skill/call/resp","id":"#);
    string(out, id);
    out.extend_from_slice(br#","version":"#);
    string(out, version);
    out.extend_from_slice(br#","ts":"#);
    serde_value(out, ts);
    out.extend_from_slice(br#","req_id":"#);
    string(out, req_id);
    out.extend_from_slice(br#","name":"#);
    string(out, name);
    if let Some(result) = data {
        out.extend_from_slice(br#","data":"#);
        skill_result(out, result);
    }
    if let Some(error) = error {
        out.extend_from_slice(br#","error":"#);
        serde_value(out, error);
    }
    out.extend_from_slice(br#","created_at":"#);
    serde_value(out, created_at);
    out.push(b'}');
}

/// Writes `{"type":"skill/event",...}`.
pub(super) fn event_message(out: &mut Vec<u8>, event: &SkillEvent) {
    out.extend_from_slice(br#"{"type":"skill/event","#);
    event_fields(out, event);
}

fn skill_result(out: &mut Vec<u8>, result: &SkillResult) {
    let SkillResult {
        success,
        data,
        summary,
        truncated,
        error,
        error_code,
        duration_ms,
        events,
        usage,
    } = result;
    out.extend_from_slice(if *success {
        br#"{"success":true"#
    } else {
        br#"{"success":false"#
    });
    if let Some(data) = data {
        out.extend_from_slice(br#","data":"#);
        serde_value(out, data);
    }
    if let Some(summary) = summary {
        out.extend_from_slice(br#","summary":"#);
        serde_value(out, summary);
    }
    if *truncated {
        out.extend_from_slice(br#","truncated":true"#);
    }
    if let Some(error) = error {
        out.extend_from_slice(br#","error":"#);
        string(out, error);
    }
    if let Some(code) = error_code {
        out.extend_from_slice(br#","error_code":"#);
        serde_value(out, code);
    }
    out.extend_from_slice(br#","duration_ms":"#);
    serde_value(out, duration_ms);
    if !events.is_empty() {
        out.extend_from_slice(br#","events":["#);
        for (i, event) in events.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'{');
            event_fields(out, event);
        }
        out.push(b']');
    }
    if let Some(usage) = usage {
        out.extend_from_slice(br#","usage":"#);
        serde_value(out, usage);
    }
    out.push(b'}');
}

/// An event's fields after its opening brace, and the closing brace.
fn event_fields(out: &mut Vec<u8>, event: &SkillEvent) {
    let SkillEvent {
        id,
        version,
        ts,
        req_id,
        seq,
        payload,
    } = event;
    out.extend_from_slice(br#""id":"#);
    string(out, id);
    out.extend_from_slice(br#","version":"#);
    string(out, version);
    out.extend_from_slice(br#","ts":"#);
    serde_value(out, ts);
    out.extend_from_slice(br#","req_id":"#);
    string(out, req_id);
    out.extend_from_slice(br#","seq":"#);
    serde_value(out, seq);
    match payload {
        EventPayload::Progress { pct, message } => {
            out.extend_from_slice(br#","kind":"progress","data":{"pct":"#);
            serde_value(out, pct);
            out.extend_from_slice(br#","message":"#);
            string(out, message);
        }
        EventPayload::Artifact {
            name,
            mime,
            chunk,
            is_final,
        } => {
            out.extend_from_slice(br#","kind":"artifact","data":{"name":"#);
            string(out, name);
            out.extend_from_slice(br#","mime":"#);
            string(out, mime);
            out.extend_from_slice(br#","chunk":"#);
            string(out, chunk);
            out.extend_from_slice(if *is_final {
                br#","final":true"#
            } else {
                br#","final":false"#
            });
        }
        EventPayload::Log { level, message } => {
            out.extend_from_slice(br#","kind":"log","data":{"level":"#);
            string(out, level);
            out.extend_from_slice(br#","message":"#);
            string(out, message);
        }
        EventPayload::Status { message } => {
            out.extend_from_slice(br#","kind":"status","data":{"message":"#);
            string(out, message);
        }
    }
    out.extend_from_slice(b"}}");
}

/// Anything else, written by `serde_json` (numbers, codes, usage, arbitrary values).
fn serde_value<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing into a `Vec` cannot fail, and these values have string keys only; should it
    // fail all the same, `null` keeps the line valid JSON.
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.extend_from_slice(b"null");
    }
}

/// Bytes with the high bit set in every lane.
const HIGH: u64 = 0x8080_8080_8080_8080;
/// `0x01` in every lane.
const ONES: u64 = 0x0101_0101_0101_0101;

/// The lanes of `word` (8 bytes, little-endian) that need escaping — below 0x20, `"` or `\` —
/// as their high bits. These are the classic "has a zero byte" (on `word ^ c`) and "has a byte
/// below n" tests: a lane above a match may be flagged falsely (the borrow), but the lowest
/// flagged lane is always a true match, so `trailing_zeros() / 8` is the first byte to escape.
fn escape_mask(word: u64) -> u64 {
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let has_quote = quote.wrapping_sub(ONES) & !quote;
    let has_backslash = backslash.wrapping_sub(ONES) & !backslash;
    (below_space | has_quote | has_backslash) & HIGH
}

/// The offset of the first byte at or after `from` that needs escaping, eight bytes at a time
/// (the last few padded with spaces, which never do).
fn next_escape(bytes: &[u8], mut from: usize) -> Option<usize> {
    while from < bytes.len() {
        let word = match bytes
            .get(from..from + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
        {
            Some(word) => word,
            None => {
                let mut padded = [b' '; 8];
                padded[..bytes.len() - from].copy_from_slice(&bytes[from..]);
                padded
            }
        };
        let mask = escape_mask(u64::from_le_bytes(word));
        if mask != 0 {
            return Some(from + (mask.trailing_zeros() / 8) as usize);
        }
        from += 8;
    }
    None
}

/// Writes `text` as a JSON string, escaping exactly as `serde_json` does: `\"`, `\\`, the short
/// forms `\b \t \n \f \r`, and `\u00xx` (lowercase hex) for the other control characters;
/// everything else, non-ASCII included, as it is, copied in runs.
pub(super) fn string(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut copied = 0;
    while let Some(at) = next_escape(bytes, copied) {
        out.extend_from_slice(&bytes[copied..at]);
        let byte = bytes[at];
        match byte {
            b'"' => out.extend_from_slice(br#"\""#),
            b'\\' => out.extend_from_slice(br"\\"),
            0x08 => out.extend_from_slice(br"\b"),
            b'\t' => out.extend_from_slice(br"\t"),
            b'\n' => out.extend_from_slice(br"\n"),
            0x0c => out.extend_from_slice(br"\f"),
            b'\r' => out.extend_from_slice(br"\r"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(br"\u00");
                out.push(HEX[usize::from(byte >> 4)]);
                out.push(HEX[usize::from(byte & 0xf)]);
            }
        }
        copied = at + 1;
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;

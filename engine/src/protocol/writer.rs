//! The hand-written JSON writer for the two messages a host sends most: `skill/call/resp` (with
//! its collected events) and `skill/event`.
//!
//! Why by hand: a call's answer is mostly short strings (every event carries its id, version,
//! `req_id` and message) under a fixed envelope. Here the field names are constants, the
//! strings go through `skillet_providers::json_writer` (checked eight bytes at a time, copied
//! in runs, where `serde_json` escapes one byte at a time) and so do the result's
//! `data`/`summary` values, usage and errors. The bytes are exactly what the derived
//! `Serialize` writes through `serde_json`: the tests compare the two on messages that set
//! every field and every kind of character.
//!
//! The structs are destructured without `..`: a field added to a message fails to compile here
//! until it is written.
//!
//! Not here: decoding (`codec`, `event_decode`), the other messages (derived `Serialize`).

use serde::Serialize;
use skillet_providers::json_writer::{self, write_str as string};

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

/// Anything else (numbers, codes, usage, arbitrary values), through the same fast writer.
fn serde_value<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    // Writing into a `Vec` cannot fail, and these values have string keys only; should it
    // fail all the same, `null` keeps the line valid JSON.
    if json_writer::to_writer(out, value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;

//! The hand-written JSON writer for the two messages a host sends most: `skill/call/resp` (with
//! its collected events) and `skill/event`.
//!
//! Why by hand: a call's answer is mostly short strings (every event carries its id, version,
//! `req_id` and message) under a fixed envelope. Here the field names are constants, the
//! strings go through `skillet_json` (checked eight bytes at a time, copied
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
use skillet_json::write_str as string;

use super::event::{EventPayload, SkillEvent};
use super::message::MessageType;
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
    open_message(out, MessageType::CallResponse);
    text_field(out, br#","id":"#, id);
    text_field(out, br#","version":"#, version);
    value_field(out, br#","ts":"#, ts);
    text_field(out, br#","req_id":"#, req_id);
    text_field(out, br#","name":"#, name);
    if let Some(result) = data {
        out.extend_from_slice(br#","data":"#);
        skill_result(out, result);
    }
    if let Some(error) = error {
        value_field(out, br#","error":"#, error);
    }
    value_field(out, br#","created_at":"#, created_at);
    out.push(b'}');
}

/// Writes `{"type":"skill/event",...}`.
pub(super) fn event_message(out: &mut Vec<u8>, event: &SkillEvent) {
    open_message(out, MessageType::Event);
    out.push(b',');
    event_fields(out, event);
}

/// Opens the message's object with its `type`, spelt as the message-type table spells it
/// (a wire type needs no escaping).
fn open_message(out: &mut Vec<u8>, kind: MessageType) {
    out.extend_from_slice(br#"{"type":""#);
    out.extend_from_slice(kind.as_str().as_bytes());
    out.push(b'"');
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
        resumed,
        transcript,
    } = result;
    out.extend_from_slice(if *success {
        br#"{"success":true"#
    } else {
        br#"{"success":false"#
    });
    if let Some(data) = data {
        value_field(out, br#","data":"#, data);
    }
    if let Some(summary) = summary {
        value_field(out, br#","summary":"#, summary);
    }
    if *truncated {
        out.extend_from_slice(br#","truncated":true"#);
    }
    if let Some(error) = error {
        text_field(out, br#","error":"#, error);
    }
    if let Some(code) = error_code {
        value_field(out, br#","error_code":"#, code);
    }
    value_field(out, br#","duration_ms":"#, duration_ms);
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
        value_field(out, br#","usage":"#, usage);
    }
    if let Some(resumed) = resumed {
        value_field(out, br#","resumed":"#, resumed);
    }
    if let Some(transcript) = transcript {
        value_field(out, br#","transcript":"#, transcript);
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
    text_field(out, br#""id":"#, id);
    text_field(out, br#","version":"#, version);
    value_field(out, br#","ts":"#, ts);
    text_field(out, br#","req_id":"#, req_id);
    value_field(out, br#","seq":"#, seq);
    match payload {
        EventPayload::Progress { pct, message } => {
            value_field(out, br#","kind":"progress","data":{"pct":"#, pct);
            text_field(out, br#","message":"#, message);
        }
        EventPayload::Artifact {
            name,
            mime,
            chunk,
            is_final,
        } => {
            text_field(out, br#","kind":"artifact","data":{"name":"#, name);
            text_field(out, br#","mime":"#, mime);
            text_field(out, br#","chunk":"#, chunk);
            out.extend_from_slice(if *is_final {
                br#","final":true"#
            } else {
                br#","final":false"#
            });
        }
        EventPayload::Log { level, message } => {
            text_field(out, br#","kind":"log","data":{"level":"#, level.as_str());
            text_field(out, br#","message":"#, message);
        }
        EventPayload::Status { message, detail } => {
            text_field(out, br#","kind":"status","data":{"message":"#, message);
            if let Some(detail) = detail {
                value_field(out, br#","detail":"#, detail);
            }
        }
    }
    out.extend_from_slice(b"}}");
}

/// `key` (written with its comma, quotes and colon), then `text` as a JSON string.
fn text_field(out: &mut Vec<u8>, key: &[u8], text: &str) {
    out.extend_from_slice(key);
    string(out, text);
}

/// `key` (as for [`text_field`]), then `value`.
fn value_field<T: Serialize + ?Sized>(out: &mut Vec<u8>, key: &[u8], value: &T) {
    out.extend_from_slice(key);
    serde_value(out, value);
}

/// Anything else (numbers, codes, usage, arbitrary values), through the same fast writer.
fn serde_value<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let start = out.len();
    // Writing into a `Vec` cannot fail, and these values have string keys only; should it
    // fail all the same, `null` keeps the line valid JSON.
    if skillet_json::to_writer(out, value).is_err() {
        out.truncate(start);
        out.extend_from_slice(b"null");
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;

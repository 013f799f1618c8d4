//! The hand-written writer against the derived `Serialize`: the same bytes, on messages that set
//! every field and every event kind, with texts JSON must escape in every field. (How a string
//! is escaped is `skillet_json`'s, tested in `skillet-providers` at every offset.)

use serde_json::json;

use super::*;
use crate::{
    CostEstimate, ErrorCode, Message, ProtocolError, TokenUsage, TurnUsage, encode,
    encode_line_into,
};

/// Texts for every field: empty, plain, and one with each control character, `"`, `\`, DEL
/// and non-ASCII characters, also shifted by a few bytes.
fn strings() -> Vec<String> {
    let controls: String = (0u8..0x20).map(char::from).collect();
    let awkward = format!("{controls}\"\\/\u{7f} é ☃ 😀 done");
    vec![
        String::new(),
        "turn 1 of 4".to_owned(),
        awkward.clone(),
        format!("abc{awkward}"),
        format!("tool result: {{\"expression\":\"6 * 7\",\"result\":42}}"),
    ]
}

fn serde_bytes(message: &Message) -> Vec<u8> {
    serde_json::to_vec(message).expect("derived encoding")
}

fn events(text: &str) -> Vec<SkillEvent> {
    vec![
        SkillEvent::new(text, 0, EventPayload::status(text)),
        SkillEvent::new("r", 1, EventPayload::progress(37, text)),
        SkillEvent::new("r", 2, EventPayload::log(crate::LogLevel::Warn, text)),
        SkillEvent::new(
            "r",
            3,
            EventPayload::artifact(text, "text/plain", text, true),
        ),
        SkillEvent::new("r", 4, EventPayload::artifact("a", text, "", false)),
        SkillEvent::new(
            "r",
            5,
            EventPayload::status_with(
                text,
                json!({"approval": "requested", "tool": text, "arguments": {"k": [1, null]}}),
            ),
        ),
    ]
}

fn full_result(text: &str) -> SkillResult {
    SkillResult {
        success: false,
        data: Some(json!({"text": text, "n": [1, 2.5, -3, null, true], "nested": {"k": text}})),
        summary: Some(json!(text)),
        truncated: true,
        error: Some(text.to_owned()),
        error_code: Some(ErrorCode::Timeout),
        duration_ms: 1234,
        events: events(text),
        usage: Some(TokenUsage {
            input_tokens: Some(10),
            output_tokens: Some(5),
            cached_input_tokens: Some(2),
            cache_creation_input_tokens: Some(3),
            reasoning_tokens: Some(1),
            turns: vec![TurnUsage {
                turn: 1,
                model: text.to_owned(),
                provider: Some(text.to_owned()),
                input_tokens: Some(10),
                output_tokens: Some(5),
                cached_input_tokens: None,
                cache_creation_input_tokens: Some(3),
                reasoning_tokens: Some(1),
            }],
            cost: Some(CostEstimate {
                amount: 0.000_125,
                currency: "USD".into(),
            }),
        }),
        resumed: Some(crate::Resumed { turns_saved: 2 }),
        transcript: Some(Box::new(crate::Transcript {
            system: text.to_owned(),
            turns: vec![crate::TranscriptTurn {
                turn: 1,
                sent: vec![crate::TranscriptMessage {
                    text: text.to_owned(),
                    ..Default::default()
                }],
                answer: Some(crate::TranscriptMessage {
                    role: crate::TranscriptRole::Assistant,
                    tool_calls: vec![crate::TranscriptToolCall {
                        id: text.to_owned(),
                        name: "calc".into(),
                        arguments: serde_json::json!({ "a": text }),
                    }],
                    ..Default::default()
                }),
                violations: vec![text.to_owned()],
                duration_ms: 3,
                input_tokens: Some(1),
                output_tokens: None,
            }],
            truncated: true,
        })),
    }
}

fn assert_same(message: &Message) {
    let mut ours = Vec::new();
    match message {
        Message::CallResponse(response) => call_response(&mut ours, response),
        Message::Event(event) => event_message(&mut ours, event),
        _ => unreachable!("only answers and events are written by hand"),
    }
    assert_eq!(
        String::from_utf8(ours).expect("UTF-8"),
        String::from_utf8(serde_bytes(message)).expect("UTF-8")
    );
}

#[test]
fn a_full_answer_is_written_byte_for_byte_as_the_derived_encoding() {
    for text in strings() {
        let mut response =
            SkillCallResponse::result(text.clone(), text.clone(), full_result(&text));
        response.error = Some(ProtocolError::new(ErrorCode::RuntimeError, text.clone()));
        response.id = text.clone();
        response.version = text.clone();
        assert_same(&Message::CallResponse(response));
    }
}

#[test]
fn minimal_rejected_and_successful_answers_match_too() {
    let rejected = SkillCallResponse::rejected(
        "r1",
        "",
        ProtocolError::new(ErrorCode::UnknownSkill, "no skill \"x\""),
    );
    assert_same(&Message::CallResponse(rejected));
    let bare = SkillResult::success(None, None, 0);
    assert_same(&Message::CallResponse(SkillCallResponse::result(
        "r2", "s", bare,
    )));
    let mut odd_times = SkillCallResponse::result("r3", "s", SkillResult::success(None, None, 7));
    odd_times.ts = 1e21;
    odd_times.created_at = 0.1 + 0.2;
    assert_same(&Message::CallResponse(odd_times));
}

#[test]
fn events_of_every_kind_match_the_derived_encoding() {
    for text in strings() {
        for event in events(&text) {
            assert_same(&Message::Event(event));
        }
    }
}

#[test]
fn encode_and_encode_line_into_use_the_writer_and_still_decode() {
    let response = SkillCallResponse::result("r", "s", full_result(&strings()[2]));
    let message = Message::CallResponse(response);
    let text = encode(&message);
    assert_eq!(text.as_bytes(), serde_bytes(&message));
    let mut line = b"before\n".to_vec();
    encode_line_into(&message, &mut line);
    assert_eq!(
        line,
        [b"before\n".as_slice(), text.as_bytes(), b"\n"].concat()
    );
    assert_eq!(crate::decode(&text), Ok(message));
}

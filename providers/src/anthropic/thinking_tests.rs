//! Anthropic extended thinking on the wire: the `thinking` parameter, and `thinking` /
//! `redacted_thinking` blocks read from an answer (whole and streamed) and sent back unchanged,
//! first in the assistant turn, with the tool results of a tool-use turn.

use serde_json::{Value, json};

use super::Anthropic;
use super::response::AnswerShape;
use crate::modes::TurnPlan;
use crate::transport::TrackingSink;
use crate::types::{ChatMessage, ChatRequest, ChatResponse, Hints, Reasoning, ResponseSchema};
use crate::wire::{StreamDecoder, StreamEvent, Wire, WireSettings};

const SIGNATURE: &str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds";
const REDACTED: &str = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP";

/// The blocks of an answer that thought, then called a tool.
fn answer_blocks() -> Value {
    json!([
        {"type": "thinking", "thinking": "The user wants the weather.\nCall the tool.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
    ])
}

fn settings<'a>(hints: &'a Hints, reasoning: &'a Reasoning) -> WireSettings<'a> {
    WireSettings {
        model: "claude-test",
        api_key: None,
        default_hints: hints,
        anthropic_version: "2023-06-01",
        official_openai: false,
        prompt_cache: true,
        reasoning,
    }
}

/// The request body of the turn after `response`: the call's result answered.
fn next_turn_body(response: &ChatResponse) -> Value {
    let request = ChatRequest {
        messages: vec![
            ChatMessage::user("weather in Paris?"),
            ChatMessage::Assistant {
                text: response.text.clone(),
                tool_calls: response.tool_calls.clone(),
                thinking: response.thinking.clone(),
            },
            ChatMessage::tool_result("toolu_1", "get_weather", "sunny"),
        ],
        ..Default::default()
    };
    let hints = Hints::default();
    let reasoning = Reasoning {
        thinking_budget_tokens: Some(2048),
        ..Reasoning::default()
    };
    let plan = TurnPlan::enforcing(&request);
    let (body, _) = Anthropic::request(settings(&hints, &reasoning), &request, &plan, false);
    serde_json::from_slice(&skillet_json::to_vec(&body).unwrap()).unwrap()
}

#[test]
fn thinking_blocks_of_a_whole_answer_go_back_unchanged_before_the_tool_use() {
    let body = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": answer_blocks(), "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 20}
    });
    let response =
        Anthropic::decode_whole(body.to_string().as_bytes(), &AnswerShape::None).unwrap();
    assert_eq!(response.thinking.len(), 2);
    assert_eq!(
        response.reasoning.as_deref(),
        Some("The user wants the weather.\nCall the tool.")
    );
    let sent = next_turn_body(&response);
    assert_eq!(sent["messages"][1]["role"], "assistant");
    assert_eq!(sent["messages"][1]["content"], answer_blocks(), "{sent}");
    assert_eq!(
        sent["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
}

#[test]
fn thinking_blocks_of_a_streamed_answer_are_assembled_from_their_deltas_and_go_back_unchanged() {
    let (first, rest) = SIGNATURE.split_at(10);
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_2", "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The user wants the weather.\n"}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Call the tool."}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": first}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": rest}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": REDACTED}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Paris\"}"}}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let streamed = std::sync::Mutex::new(String::new());
    let collect = |delta: &str| streamed.lock().unwrap().push_str(delta);
    let sink = TrackingSink::new(Some(&collect));
    let mut decoder = Anthropic::decoder(&AnswerShape::None);
    for (name, data) in &events {
        let data = data.to_string();
        decoder
            .event(
                StreamEvent {
                    name,
                    data: data.as_bytes(),
                },
                &sink,
            )
            .unwrap();
    }
    let response = decoder.finish(&sink).unwrap();
    assert!(
        streamed.lock().unwrap().is_empty(),
        "reasoning is not the answer's text"
    );
    let sent = next_turn_body(&response);
    assert_eq!(sent["messages"][1]["content"], answer_blocks(), "{sent}");
}

#[test]
fn a_thinking_budget_raises_max_tokens_above_it_and_offers_the_answer_tool_unforced() {
    let request = ChatRequest {
        messages: vec![ChatMessage::user("hi")],
        response_schema: Some(ResponseSchema {
            name: "answer".into(),
            schema: json!({"type": "object"}).into(),
        }),
        ..Default::default()
    };
    let hints = Hints {
        max_tokens: Some(1000),
        ..Hints::default()
    };
    let reasoning = Reasoning {
        thinking_budget_tokens: Some(2048),
        ..Reasoning::default()
    };
    let plan = TurnPlan::best_for(&Anthropic::INFO.modes, &request);
    let (body, _) = Anthropic::request(settings(&hints, &reasoning), &request, &plan, false);
    let sent: Value = serde_json::from_slice(&skillet_json::to_vec(&body).unwrap()).unwrap();
    assert_eq!(sent["max_tokens"], 2048 + 4096, "{sent}");
    assert_eq!(sent["tool_choice"], json!({"type": "auto"}), "{sent}");

    let none = Reasoning::default();
    let (body, _) = Anthropic::request(settings(&hints, &none), &request, &plan, false);
    let sent: Value = serde_json::from_slice(&skillet_json::to_vec(&body).unwrap()).unwrap();
    assert!(sent.get("thinking").is_none(), "{sent}");
    assert_eq!(sent["max_tokens"], 1000);
    assert_eq!(sent["tool_choice"]["type"], "tool");
}

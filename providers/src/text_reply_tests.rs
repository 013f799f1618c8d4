use serde_json::json;

use super::*;
use crate::modes::OutputMode;
use crate::shared_json::SharedJson;
use crate::types::{ResponseSchema, ToolSpec};

fn request(schema: bool) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::user("hi")],
        tools: vec![ToolSpec {
            name: "calculator".into(),
            description: "math".into(),
            parameters: SharedJson::new(json!({"type": "object"})),
        }],
        response_schema: schema.then(|| ResponseSchema {
            name: "a".into(),
            schema: SharedJson::new(json!({"type": "object"})),
        }),
        ..Default::default()
    }
}

fn reply(text: &str) -> ChatResponse {
    ChatResponse {
        thinking: Vec::new(),
        text: text.into(),
        tool_calls: Vec::new(),
        finish_reason: FinishReason::Stop,
        usage: None,
        request_id: None,
        reasoning: None,
    }
}

fn plan(prompted: bool) -> TurnPlan {
    TurnPlan {
        output: OutputMode::None,
        schema: None,
        native_tools: !prompted,
        prompted_tools: prompted,
        strict: false,
        answer_wrapped: false,
    }
}

#[test]
fn think_blocks_are_reasoning_not_answer() {
    let out = finish_response(
        reply("<think>add 2 and 2</think>\n{\"n\": 4}"),
        &plan(false),
        &request(true),
    );
    assert_eq!(out.text, "{\"n\": 4}");
    assert_eq!(out.reasoning.as_deref(), Some("add 2 and 2"));
    let (reasoning, rest) = split_reasoning("<think>never closed").unwrap();
    assert_eq!((reasoning.as_str(), rest.as_str()), ("never closed", ""));
    assert_eq!(split_reasoning("no think here"), None);
}

#[test]
fn prompted_calls_are_read_in_every_common_form_with_unique_ids() {
    for text in [
        r#"{"tool": "calculator", "arguments": {"expression": "1+2"}}"#,
        "Let me compute.\n```json\n{\"tool\": \"calculator\", \"arguments\": {\"expression\": \"1+2\"}}\n```",
        r#"<tool_call>{"name": "calculator", "arguments": {"expression": "1+2"}}</tool_call>"#,
        r#"{"name": "calculator", "arguments": "{\"expression\": \"1+2\"}"}"#,
    ] {
        let out = finish_response(reply(text), &plan(true), &request(true));
        assert_eq!(out.tool_calls.len(), 1, "{text}");
        assert_eq!(out.tool_calls[0].name, "calculator");
        assert_eq!(
            out.tool_calls[0].arguments,
            json!({"expression": "1+2"}),
            "{text}"
        );
        assert_eq!(out.tool_calls[0].id, "call_0");
        assert_eq!(out.finish_reason, FinishReason::ToolCalls);
        assert!(out.text.is_empty());
    }
}

#[test]
fn the_prompted_answer_is_unwrapped_and_plain_answers_pass_through() {
    let out = finish_response(
        reply(r#"{"final_answer": {"total": 3}}"#),
        &plan(true),
        &request(true),
    );
    assert_eq!(out.text, r#"{"total":3}"#);
    assert!(out.tool_calls.is_empty());
    let text_skill = finish_response(
        reply(r#"{"final_answer": "three"}"#),
        &plan(true),
        &request(false),
    );
    assert_eq!(text_skill.text, "three");
    let bare = finish_response(reply(r#"{"total": 3}"#), &plan(true), &request(true));
    assert_eq!(bare.text, r#"{"total": 3}"#);
}

#[test]
fn a_model_that_writes_its_call_instead_of_using_native_tools_still_calls() {
    let out = finish_response(
        reply(r#"{"name": "calculator", "arguments": {"expression": "2*3"}}"#),
        &plan(false),
        &request(true),
    );
    assert_eq!(out.tool_calls.len(), 1);
    // An ordinary answer that happens to have a `name` is not a call.
    let answer = finish_response(
        reply(r#"{"name": "Ada", "arguments": []}"#),
        &plan(false),
        &request(true),
    );
    assert!(answer.tool_calls.is_empty());
}

#[test]
fn missing_and_repeated_ids_are_made_unique_in_the_conversation() {
    let mut req = request(true);
    req.messages.push(ChatMessage::Assistant {
        thinking: Vec::new(),
        text: String::new(),
        tool_calls: vec![ToolCall::from_value(
            "call_0".into(),
            "calculator".into(),
            json!({}),
        )],
    });
    let mut response = reply("");
    response.tool_calls = vec![
        ToolCall::from_value("call_0".into(), "calculator".into(), json!({})),
        ToolCall::from_value(String::new(), "calculator".into(), json!({})),
    ];
    let out = finish_response(response, &plan(false), &req);
    let ids: Vec<&str> = out.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_2"]);
}

#[test]
fn one_json_value_is_found_inside_prose() {
    assert_eq!(
        find_json_value("Sure! {\"a\": [1, 2]} Hope it helps."),
        Some(json!({"a": [1, 2]}))
    );
    assert_eq!(
        find_json_value("[note] then {\"b\": 1}"),
        Some(json!({"b": 1}))
    );
    assert_eq!(find_json_value("no json at all"), None);
    assert_eq!(find_json_value("  7 "), Some(json!(7)));
}

//! Prompted tool calling, for servers and models without native tools (Ollama's "does not
//! support tools", llama.cpp chat formats that ignore `tools`): the tool list and a JSON call
//! format go into the instructions, earlier calls and results are written back as text, and
//! the turn may be constrained to the union "one tool call or the final answer".
//!
//! The call format (also what the union schema allows):
//! `{"tool": NAME, "arguments": {...}}` for a call, `{"final_answer": VALUE}` for the answer.
//! Reading the reply back (also the common `<tool_call>{...}</tool_call>` form) lives in
//! `text_reply.rs`; the engine sees ordinary [`ToolCall`]s either way, with the
//! same validation, events and loop detection.
//!
//! Not here: deciding when prompted tools are used (`modes.rs`).

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use crate::shared_json::SharedJson;
use crate::types::{ChatMessage, ChatRequest, ResponseSchema, ToolCall, TurnPhase};

/// The key of the answer object in the prompted format.
pub(crate) const ANSWER_KEY: &str = "final_answer";

/// The request as a server without tools is sent it: tools described in the system prompt,
/// calls and results as text, no `tools`. Consecutive user messages are merged, since many
/// chat templates require user and assistant turns to alternate.
pub(crate) fn prompted_request(request: &ChatRequest) -> ChatRequest {
    let mut system = request.system.clone().unwrap_or_default();
    if !system.is_empty() {
        system.push_str("\n\n");
    }
    system.push_str(&tool_instructions(request));
    let mut messages: Vec<ChatMessage> = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        let text_form = match message {
            ChatMessage::Assistant {
                text, tool_calls, ..
            } if !tool_calls.is_empty() => ChatMessage::assistant(calls_as_text(text, tool_calls)),
            ChatMessage::ToolResult {
                name,
                content,
                is_error,
                ..
            } => {
                let what = if *is_error { "failed" } else { "returned" };
                ChatMessage::user(format!("Tool `{name}` {what}:\n{content}"))
            }
            other => other.clone(),
        };
        match (messages.last_mut(), text_form) {
            (Some(ChatMessage::User { text: last }), ChatMessage::User { text }) => {
                last.push_str("\n\n");
                last.push_str(&text);
            }
            (_, message) => messages.push(message),
        }
    }
    ChatRequest {
        system: Some(system),
        messages,
        tools: Vec::new(),
        response_schema: None,
        hints: request.hints.clone(),
        phase: request.phase,
        output_mode_hint: request.output_mode_hint,
    }
}

/// The instructions section that lists the tools and the call format.
fn tool_instructions(request: &ChatRequest) -> String {
    let mut text = String::from(
        "## Tools\n\nYou can call these tools. To call one, answer with only this JSON object \
         and nothing else: {\"tool\": \"<tool name>\", \"arguments\": {<arguments>}}. Call one \
         tool per answer; its result comes in the next message.\n\n",
    );
    for tool in &request.tools {
        let _ = writeln!(
            text,
            "- `{}`: {}\n  arguments (JSON Schema): {}",
            tool.name,
            tool.description.trim(),
            tool.parameters.json_text().get()
        );
    }
    let answer = if request.response_schema.is_some() {
        "the JSON value the output format asks for"
    } else {
        "your answer as a JSON string"
    };
    let _ = write!(
        text,
        "\nWhen you have the final answer, answer with only {{\"{ANSWER_KEY}\": <{answer}>}}."
    );
    text
}

/// An earlier assistant turn's calls as the text the format asks for (one object per line).
fn calls_as_text(text: &str, calls: &[ToolCall]) -> String {
    let mut out = String::new();
    if !text.trim().is_empty() && !looks_like_call(text) {
        out.push_str(text.trim());
        out.push('\n');
    }
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let object = json!({"tool": call.name, "arguments": call.arguments});
        out.push_str(&object.to_string());
    }
    out
}

/// Whether the text is already the call's JSON (the model's own reply, kept in history).
fn looks_like_call(text: &str) -> bool {
    let trimmed = text.trim();
    trimmed.starts_with('{') && trimmed.contains("\"tool\"") || trimmed.contains("<tool_call>")
}

/// The union schema "one call of an offered tool, or the final answer": `oneOf` of each tool's
/// call shape and the answer object — only the answer object on a [`TurnPhase::Final`] turn,
/// where nothing but the answer may come (a repair turn keeps the calls: the model may still
/// need a tool to get the answer right). `None` when a schema cannot be embedded (a reference
/// to the root, or two `$defs` entries of one name that differ).
pub(crate) fn union_schema(request: &ChatRequest) -> Option<ResponseSchema> {
    let mut defs = Map::new();
    let mut variants = Vec::with_capacity(request.tools.len() + 1);
    let callable = match request.phase {
        TurnPhase::Open | TurnPhase::Answer => request.tools.as_slice(),
        TurnPhase::Final => &[],
    };
    for tool in callable {
        let arguments = embeddable(tool.parameters.value(), &mut defs)?;
        variants.push(json!({
            "type": "object",
            "properties": {"tool": {"const": tool.name}, "arguments": arguments},
            "required": ["tool", "arguments"],
            "additionalProperties": false
        }));
    }
    let answer = match &request.response_schema {
        Some(schema) => embeddable(schema.schema.value(), &mut defs)?,
        None => json!({"type": "string"}),
    };
    variants.push(json!({
        "type": "object",
        "properties": {ANSWER_KEY: answer},
        "required": [ANSWER_KEY],
        "additionalProperties": false
    }));
    let mut union = json!({"oneOf": variants});
    if !defs.is_empty() {
        union["$defs"] = Value::Object(defs);
    }
    Some(ResponseSchema {
        name: "tool_call_or_answer".to_owned(),
        schema: SharedJson::new(union),
    })
}

/// `schema` made fit to sit inside the union: its `$defs` hoisted to the union's root (refs
/// `#/$defs/..` keep working), `$schema`/`$id` dropped. `None` when it refers to its own root.
fn embeddable(schema: &Value, defs: &mut Map<String, Value>) -> Option<Value> {
    let Some(object) = schema.as_object() else {
        return Some(schema.clone());
    };
    let mut own = object.clone();
    own.remove("$schema");
    own.remove("$id");
    if let Some(Value::Object(local)) = own.remove("$defs") {
        for (name, def) in local {
            match defs.get(&name) {
                Some(existing) if *existing != def => return None,
                _ => {
                    defs.insert(name, def);
                }
            }
        }
    }
    let text = Value::Object(own.clone()).to_string();
    if text.contains("\"$ref\":\"#\"") || own.contains_key("definitions") {
        return None;
    }
    let mut schema = Value::Object(own);
    relax_for_grammar(&mut schema);
    Some(schema)
}

/// Longest bounded repetition kept in a schema sent as a grammar.
const GRAMMAR_MAX_REPEAT: u64 = 256;

/// Drops length bounds a grammar would have to spell out item by item: llama.cpp turns
/// `maxLength: 4096` into 4096 nested rules, which llama-cpp-python fails to parse (and then
/// crashes on). The engine still validates the real schema, bounds included.
fn relax_for_grammar(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for bound in ["maxLength", "maxItems", "maxProperties"] {
                if map
                    .get(bound)
                    .and_then(Value::as_u64)
                    .is_some_and(|n| n > GRAMMAR_MAX_REPEAT)
                {
                    map.remove(bound);
                }
            }
            for value in map.values_mut() {
                relax_for_grammar(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(relax_for_grammar),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolSpec;

    fn request() -> ChatRequest {
        ChatRequest {
            system: Some("Add the amounts.".into()),
            messages: vec![
                ChatMessage::user("{\"items\":[1,2]}"),
                ChatMessage::Assistant {
                    thinking: Vec::new(),
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "call_0".into(),
                        name: "calculator".into(),
                        arguments: json!({"expression": "1+2"}),
                        invalid_arguments: None,
                    }],
                },
                ChatMessage::tool_result("call_0", "calculator", "3"),
                ChatMessage::user("Go on."),
            ],
            tools: vec![ToolSpec {
                name: "calculator".into(),
                description: "Evaluates arithmetic.".into(),
                parameters: SharedJson::new(json!({
                    "type": "object",
                    "properties": {"expression": {"type": "string"}},
                    "required": ["expression"]
                })),
            }],
            response_schema: Some(ResponseSchema {
                name: "sum".into(),
                schema: SharedJson::new(json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {"total": {"$ref": "#/$defs/amount"}},
                    "required": ["total"],
                    "$defs": {"amount": {"type": "number"}}
                })),
            }),
            hints: Default::default(),
            phase: TurnPhase::Open,
            output_mode_hint: None,
        }
    }

    #[test]
    fn the_prompted_request_lists_the_tools_and_writes_calls_and_results_as_text() {
        let prompted = prompted_request(&request());
        assert!(prompted.tools.is_empty());
        let system = prompted.system.unwrap();
        assert!(system.starts_with("Add the amounts.\n\n## Tools"));
        assert!(system.contains("- `calculator`: Evaluates arithmetic."));
        assert!(system.contains(r#"{"tool": "<tool name>", "arguments": {<arguments>}}"#));
        assert!(system.contains(r#"{"final_answer": <the JSON value"#));
        assert_eq!(prompted.messages.len(), 3, "{:?}", prompted.messages);
        assert_eq!(
            prompted.messages[1],
            ChatMessage::assistant(r#"{"tool":"calculator","arguments":{"expression":"1+2"}}"#)
        );
        // The tool result and the next user message merge: turns keep alternating.
        assert_eq!(
            prompted.messages[2],
            ChatMessage::user("Tool `calculator` returned:\n3\n\nGo on.")
        );
    }

    #[test]
    fn the_union_allows_each_call_and_the_answer_with_definitions_hoisted() {
        let union = union_schema(&request()).unwrap();
        let variants = union.schema["oneOf"].as_array().unwrap();
        assert_eq!(variants.len(), 2);
        assert_eq!(
            variants[0]["properties"]["tool"],
            json!({"const": "calculator"})
        );
        let answer = &variants[1]["properties"][ANSWER_KEY];
        assert_eq!(
            answer["properties"]["total"],
            json!({"$ref": "#/$defs/amount"})
        );
        assert!(answer.get("$schema").is_none() && answer.get("$defs").is_none());
        assert_eq!(union.schema["$defs"], json!({"amount": {"type": "number"}}));
    }

    #[test]
    fn on_a_final_turn_the_union_allows_only_the_answer_and_a_repair_keeps_the_calls() {
        let final_turn = ChatRequest {
            phase: TurnPhase::Final,
            ..request()
        };
        let union = union_schema(&final_turn).unwrap();
        let variants = union.schema["oneOf"].as_array().unwrap();
        assert_eq!(variants.len(), 1, "{}", union.schema.value());
        assert!(variants[0]["properties"].get(ANSWER_KEY).is_some());

        let repair = ChatRequest {
            phase: TurnPhase::Answer,
            ..request()
        };
        let union = union_schema(&repair).unwrap();
        assert_eq!(union.schema["oneOf"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn long_length_bounds_are_left_out_of_the_grammar() {
        let mut wide = request();
        wide.tools[0].parameters = SharedJson::new(json!({"type": "object", "properties": {
            "expression": {"type": "string", "minLength": 1, "maxLength": 4096},
            "tags": {"type": "array", "maxItems": 8}}}));
        let union = union_schema(&wide).unwrap();
        let arguments = &union.schema["oneOf"][0]["properties"]["arguments"]["properties"];
        assert_eq!(
            arguments["expression"],
            json!({"type": "string", "minLength": 1})
        );
        assert_eq!(arguments["tags"]["maxItems"], 8);
    }

    #[test]
    fn a_schema_referring_to_its_root_is_not_embedded() {
        let mut recursive = request();
        recursive.response_schema = Some(ResponseSchema {
            name: "tree".into(),
            schema: SharedJson::new(json!({"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#"}}}})),
        });
        assert!(union_schema(&recursive).is_none());
    }
}

//! The writer against `serde_json::to_vec`: the same bytes for strings with every character JSON
//! escapes at every offset of the eight-byte scan, for values of every shape, for serde's enum
//! and struct forms, for raw JSON text, and for every body the three wires build.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::json;
use serde_json::value::RawValue;

use crate::types::{
    ChatMessage, ChatRequest, Hints, Reasoning, ResponseSchema, ThinkingBlock, ToolCall, ToolSpec,
};
use crate::wire::{Wire, WireSettings};
use skillet_json::*;

fn assert_same<T: Serialize + ?Sized>(value: &T) {
    let theirs = serde_json::to_vec(value).expect("serde_json writes it");
    let ours = to_vec(value).expect("the writer writes it");
    assert_eq!(
        String::from_utf8(ours).expect("UTF-8"),
        String::from_utf8(theirs).expect("UTF-8")
    );
}

/// Every ASCII control character, the two escaped printables, DEL and some non-ASCII text.
fn awkward() -> String {
    let mut text: String = (0u8..0x20).map(char::from).collect();
    text.push_str("\"\\/\u{7f} é ☃ 😀 done");
    text
}

fn strings() -> Vec<String> {
    let mut all = vec![String::new(), awkward()];
    for offset in 0..17 {
        all.push(format!("{}{}", "x".repeat(offset), awkward()));
        all.push(format!("{}\"", "y".repeat(offset)));
        all.push(format!(
            "{}\n{}",
            "z".repeat(offset),
            "w".repeat(16 - offset)
        ));
        all.push("v".repeat(offset));
    }
    all
}

#[test]
fn strings_are_escaped_exactly_as_serde_json_escapes_them() {
    for text in strings() {
        assert_same(&text);
        let mut ours = Vec::new();
        write_str(&mut ours, &text);
        let back: String = serde_json::from_slice(&ours).unwrap();
        assert_eq!(back, text);
    }
}

#[test]
fn values_of_every_shape_match() {
    for text in strings() {
        assert_same(&json!({
            "s": text, "k\u{1}": [text, {"nested": [null, true, false]}],
            "n": [0, -1, 1.5, 1e300, -2.5e-8, u64::MAX, i64::MIN, 0.1],
            "empty": {}, "none": [], "order": {"z": 1, "a": 2}
        }));
    }
    assert_same(&f64::NAN);
    assert_same(&[1.0f32, 0.1, f32::INFINITY]);
    assert_same(&'é');
    assert_same(b"bytes".as_slice());
    assert_same(&());
    assert_same(&Some(Some(3u8)));
}

#[derive(Serialize)]
enum Shapes {
    Unit,
    Newtype(String),
    Tuple(u8, String),
    Struct { a: u8, b: Option<String> },
}

#[derive(Serialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
enum Adjacent {
    One { text: String },
}

#[derive(Serialize)]
#[serde(tag = "role")]
enum Internal<'a> {
    User { content: &'a str },
}

#[derive(Serialize)]
struct Everything<'a> {
    unit: (),
    tuple: (u8, &'a str, bool),
    shapes: Vec<Shapes>,
    adjacent: Adjacent,
    internal: Internal<'a>,
    #[serde(flatten)]
    flat: BTreeMap<String, u32>,
    keys: BTreeMap<i32, &'a str>,
    bool_keys: BTreeMap<bool, u8>,
    raw: &'a RawValue,
    shared: crate::SharedJson,
    shared_text: &'a RawValue,
}

#[test]
fn serde_forms_raw_text_and_map_keys_match() {
    let raw = RawValue::from_string(r#"{"b": [1, 2], "a": "x\ny"}"#.to_owned()).unwrap();
    let shared = crate::SharedJson::new(json!({"type": "object", "q": awkward()}));
    assert_same(&Everything {
        unit: (),
        tuple: (7, "t\"", true),
        shapes: vec![
            Shapes::Unit,
            Shapes::Newtype(awkward()),
            Shapes::Tuple(1, "x".into()),
            Shapes::Struct { a: 2, b: None },
        ],
        adjacent: Adjacent::One { text: awkward() },
        internal: Internal::User { content: "hi" },
        flat: BTreeMap::from([("f1".into(), 1), ("f2".into(), 2)]),
        keys: BTreeMap::from([(-3, "minus"), (10, "ten")]),
        bool_keys: BTreeMap::from([(true, 1), (false, 0)]),
        raw: &raw,
        shared: shared.clone(),
        shared_text: shared.json_text(),
    });
    let not_a_key: BTreeMap<Vec<u8>, u8> = BTreeMap::from([(vec![1], 1)]);
    assert!(to_vec(&not_a_key).is_err(), "serde_json refuses it too");
    assert!(serde_json::to_vec(&not_a_key).is_err());
}

fn request() -> ChatRequest {
    let call = ToolCall {
        id: "call_1".into(),
        name: "lookup".into(),
        arguments: json!({"q": awkward(), "n": 2}),
        invalid_arguments: None,
    };
    ChatRequest {
        system: Some(format!("You are terse.\n{}", awkward())),
        messages: vec![
            ChatMessage::user(awkward()),
            ChatMessage::Assistant {
                thinking: vec![
                    ThinkingBlock::Thinking {
                        thinking: awkward(),
                        signature: "sig+/=".into(),
                    },
                    ThinkingBlock::RedactedThinking {
                        data: "EmwKAhgB".into(),
                    },
                ],
                text: String::new(),
                tool_calls: vec![call],
            },
            ChatMessage::tool_result("call_1", "lookup", "{\"hits\":[1,2]}"),
            ChatMessage::tool_error("call_1", "lookup", awkward()),
        ],
        tools: vec![ToolSpec {
            name: "lookup".into(),
            description: "Looks \"things\" up".into(),
            parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}).into(),
        }],
        response_schema: Some(ResponseSchema {
            name: "answer".into(),
            schema: json!({"type": "array", "items": {"type": "string"}}).into(),
        }),
        hints: Hints {
            max_tokens: Some(100),
            temperature: Some(0.2),
            top_p: None,
            seed: Some(7),
            ..Hints::default()
        },
        ..Default::default()
    }
}

fn body_matches<W: Wire>() {
    let request = request();
    let hints = Hints::default();
    let reasoning = Reasoning {
        reasoning_effort: Some("high".into()),
        thinking_budget_tokens: Some(2048),
        think: Some(true),
    };
    let none = Reasoning::default();
    for (official_openai, prompt_cache, reasoning) in [
        (false, false, &none),
        (true, false, &reasoning),
        (false, true, &reasoning),
    ] {
        let settings = WireSettings {
            model: "m",
            api_key: None,
            default_hints: &hints,
            anthropic_version: "2023-06-01",
            official_openai,
            prompt_cache,
            reasoning,
        };
        for stream in [false, true] {
            let plan = crate::modes::TurnPlan::enforcing(&request);
            let (body, _) = W::request(settings, &request, &plan, stream);
            assert_same(&body);
        }
    }
}

#[test]
fn every_wire_body_matches() {
    macro_rules! each_wire {
        ($($(#[$doc:meta])* $variant:ident => $wire:ty,)*) => {$(body_matches::<$wire>();)*};
    }
    crate::kind::with_provider_kinds!(each_wire);
}

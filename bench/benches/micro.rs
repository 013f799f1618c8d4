//! Micro-benchmarks of the engine's per-call and per-turn hot paths (criterion): template
//! render, output-schema validation of a typical answer, event encoding, A2E message decode,
//! encoding a final response, the bench skill's recorded 3-turn answer (encode, decode) and its
//! recorded third-turn chat body (`serde_json` against `skillet_json`).
//! Manifest load + compile is `engine/benches/load_skills.rs`
//! (`cargo bench -p skillet-engine --bench load_skills`).
//!
//! Run: `cargo bench -p skillet-bench --bench micro` (add `-- --quick` on a busy machine).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use skillet_engine::protocol::{
    self, EventPayload, Message, SkillCallResponse, SkillEvent, SkillResult,
};
use skillet_engine::schema::CompiledSchema;
use skillet_engine::template::Template;

/// The seed's `skill/call/req` wire example (shared/vectors/a2e/call-req.json).
const CALL_REQ: &str = r#"{"type":"skill/call/req","id":"sc1","version":"1.0","ts":1716123457.100,"name":"code_review","arguments":{"code":"def add(a, b): return a + b"},"correlation_id":"","timeout":60,"streaming":true,"llm_override":null,"metadata":{}}"#;

/// A summarize-like output schema: nested objects, an array of items, enums, bounds, a `$ref`.
const OUTPUT_SCHEMA: &str = r##"{
  "$defs": {"point": {"type": "object", "properties": {
      "text": {"type": "string", "minLength": 1, "maxLength": 500},
      "weight": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["text", "weight"], "additionalProperties": false}},
  "type": "object",
  "properties": {
    "summary": {"type": "string", "minLength": 1},
    "key_points": {"type": "array", "items": {"$ref": "#/$defs/point"}, "minItems": 1, "maxItems": 10},
    "sentiment": {"enum": ["positive", "neutral", "negative"]},
    "language": {"type": "string", "pattern": "^[a-z]{2}$"}
  },
  "required": ["summary", "key_points", "sentiment"],
  "additionalProperties": false
}"##;

fn typical_output() -> Value {
    json!({
        "summary": "Skillet runs SKILL.md skills as bounded multi-turn loops with validated output.",
        "key_points": [
            {"text": "Skills are folders with a SKILL.md and JSON Schemas.", "weight": 0.9},
            {"text": "The engine dispatches only the tools a skill declares.", "weight": 0.7},
            {"text": "Results are validated against the output schema.", "weight": 0.8},
            {"text": "Events stream while the skill works.", "weight": 0.4}
        ],
        "sentiment": "positive",
        "language": "en"
    })
}

const TEMPLATE: &str = "# Review\n\nReview the {{ language }} code below for {{ focus.area }} \
issues; at most {{ focus.max_findings }} findings.\n\n```\n{{ code }}\n```\n\n\
Escaped: \\{{ not a placeholder }}\n";

fn template(c: &mut Criterion) {
    let template = Template::compile(TEMPLATE).expect("template compiles");
    let args = json!({
        "language": "python",
        "focus": {"area": "security", "max_findings": 5},
        "code": "def add(a, b):\n    return a + b\n".repeat(20)
    });
    c.bench_function("template_render", |b| {
        b.iter(|| template.render(black_box(&args)).expect("renders"))
    });
}

fn schema(c: &mut Criterion) {
    let schema: Value = serde_json::from_str(OUTPUT_SCHEMA).expect("schema JSON");
    let compiled = CompiledSchema::compile(&schema).expect("schema compiles");
    let valid = typical_output();
    assert!(compiled.validate(&valid).is_ok());
    let mut invalid = valid.clone();
    invalid["key_points"][1]["weight"] = json!(3);
    invalid["sentiment"] = json!("mixed");
    assert_eq!(compiled.validate(&invalid).map_err(|v| v.len()), Err(2));
    c.bench_function("schema_validate_valid_output", |b| {
        b.iter(|| compiled.validate(black_box(&valid)))
    });
    c.bench_function("schema_validate_invalid_output_all_violations", |b| {
        b.iter(|| compiled.validate(black_box(&invalid)))
    });
}

fn events(c: &mut Criterion) {
    let progress = Message::Event(SkillEvent::new(
        "0b8f0e6a-4d1c-4c3e-9a57-3f1f8d2a9c11",
        7,
        EventPayload::progress(40, "turn 2/8 · openai-compatible/gpt-4o-mini"),
    ));
    let artifact = Message::Event(SkillEvent::new(
        "0b8f0e6a-4d1c-4c3e-9a57-3f1f8d2a9c11",
        8,
        EventPayload::artifact("turn-2", "text/plain", "The quick brown fox ", false),
    ));
    c.bench_function("event_encode_progress", |b| {
        b.iter(|| protocol::encode(black_box(&progress)))
    });
    c.bench_function("event_encode_artifact_chunk", |b| {
        b.iter(|| protocol::encode(black_box(&artifact)))
    });
    let response = Message::CallResponse(SkillCallResponse::result(
        "sc1",
        "summarize",
        SkillResult::success(
            Some(typical_output()),
            Some(json!("Skillet runs skills.")),
            1234,
        ),
    ));
    c.bench_function("response_encode_success", |b| {
        b.iter(|| protocol::encode(black_box(&response)))
    });
}

fn decode(c: &mut Criterion) {
    assert!(matches!(
        protocol::decode(CALL_REQ),
        Ok(Message::CallRequest(_))
    ));
    c.bench_function("a2e_decode_call_req", |b| {
        b.iter(|| protocol::decode(black_box(CALL_REQ)))
    });
    // The generic path (text → JSON tree → message), as decode worked before it read the
    // envelope first; kept to show the difference.
    c.bench_function("a2e_decode_call_req_via_value", |b| {
        b.iter(|| {
            let value: serde_json::Value = serde_json::from_str(black_box(CALL_REQ)).unwrap();
            protocol::decode_value(value)
        })
    });
    let bad = r#"{"type":"skill/call/req","id":"sc1","version":"9.9","name":"x"}"#;
    assert!(protocol::decode(bad).is_err());
    c.bench_function("a2e_decode_rejected_version", |b| {
        b.iter(|| protocol::decode(black_box(bad)))
    });
}

/// The answer of the bench skill's 3-turn call, as `serve --stdio` writes it: 12 events.
const CALL_RESP_3_TURNS: &str = include_str!("call-resp-3-turns.json");

fn whole_answer(c: &mut Criterion) {
    let Ok(Message::CallResponse(response)) = protocol::decode(CALL_RESP_3_TURNS) else {
        panic!("the recorded answer decodes");
    };
    assert_eq!(response.data.as_ref().map(|d| d.events.len()), Some(12));
    let message = Message::CallResponse(response);
    c.bench_function("a2e_encode_call_resp_12_events", |b| {
        b.iter(|| protocol::encode(black_box(&message)))
    });
    c.bench_function("a2e_decode_call_resp_12_events", |b| {
        b.iter(|| protocol::decode(black_box(CALL_RESP_3_TURNS)))
    });
}

/// The third turn's Chat Completions body of the bench skill, as the mock received it.
const CHAT_BODY_TURN_3: &str = include_str!("chat-body-turn-3.json");

fn request_body(c: &mut Criterion) {
    let body: Value = serde_json::from_str(CHAT_BODY_TURN_3).expect("the recorded body parses");
    assert_eq!(
        skillet_json::to_vec(&body).unwrap(),
        serde_json::to_vec(&body).unwrap()
    );
    c.bench_function("chat_body_serde_json", |b| {
        b.iter(|| serde_json::to_vec(black_box(&body)))
    });
    c.bench_function("chat_body_json_writer", |b| {
        b.iter(|| skillet_json::to_vec(black_box(&body)))
    });
    // The same body with a 16 KB prose system prompt (real skills' instructions run to
    // kilobytes).
    let mut long = body.clone();
    let line = "Review the code below for security issues and report at most five findings, \
                each with its line number, a severity and a one-sentence fix.\n";
    let prompt = line.repeat(16 * 1024 / line.len());
    if let Some(system) = long.pointer_mut("/messages/0/content") {
        *system = Value::String(prompt);
    }
    c.bench_function("chat_body_16k_prompt_serde_json", |b| {
        b.iter(|| serde_json::to_vec(black_box(&long)))
    });
    c.bench_function("chat_body_16k_prompt_json_writer", |b| {
        b.iter(|| skillet_json::to_vec(black_box(&long)))
    });
}

/// A durable run's cost per turn: one checkpoint written (encoded, redacted, handed to the
/// in-memory store) and, on resume, read back; a 4-turn run with 1 KiB tool results.
fn checkpoint(c: &mut Criterion) {
    use skillet_engine::checkpoint::{Checkpoint, CheckpointStore, MemoryCheckpoints};
    let sample = Checkpoint::sample(4, 1024);
    let bytes = sample.encode();
    println!(
        "checkpoint of 4 turns with 1 KiB tool results: {} bytes",
        bytes.len()
    );
    let store = MemoryCheckpoints::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    c.bench_function("checkpoint_write_4_turns", |b| {
        b.iter(|| {
            let bytes = black_box(&sample).encode();
            runtime.block_on(store.save("call-1", bytes)).unwrap();
        })
    });
    c.bench_function("checkpoint_read_4_turns", |b| {
        b.iter(|| Checkpoint::decode(black_box(&bytes)).unwrap())
    });
}

criterion_group!(
    micro,
    checkpoint,
    template,
    schema,
    events,
    decode,
    whole_answer,
    request_body
);
criterion_main!(micro);

//! Property tests of three invariants the engine promises for every input, not just the examples
//! in the other suites: a template render never panics and never leaves a `{{` behind;
//! `decode(encode(m)) == m` for every valid A2E message; and the event stream of a call keeps
//! `seq` gap-free from 0 and `progress` non-decreasing, ending at 100, whatever is emitted.
//!
//! Case counts are modest (64–256) so the file runs in seconds; `PROPTEST_CASES` raises them.

use skillet_engine::protocol::LogLevel;
use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use skillet_engine::events::{EventEmitter, EventSink};
use skillet_engine::protocol::{
    ErrorCode, EventPayload, Message, PROTOCOL_VERSION, ProtocolError, SkillCallRequest,
    SkillCallResponse, SkillDiscoverRequest, SkillDiscoverResponse, SkillEvent, SkillResult,
    decode, encode,
};
use skillet_engine::template::Template;

// ---------------------------------------------------------------------------------------------
// Templates

/// Argument names the generated templates use.
const NAMES: [&str; 5] = ["a", "b", "name", "user", "x1"];

/// Text that cannot form or escape a placeholder on its own (no `{`, no backslash).
fn plain_text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 .,:;!?}\n\t\u{e9}\u{4e16}-]{0,12}"
}

/// A scalar argument that renders without braces: strings without `{`, numbers, booleans, null.
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-zA-Z0-9 }\u{e9}]{0,8}".prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
    ]
}

/// How a scalar value appears in the rendered text (the template module's contract).
fn rendered(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Any source over an alphabet rich in template syntax, to hit every parser branch.
fn hostile_source() -> impl Strategy<Value = String> {
    "[{}a-e .#/!>&~*@\\[\\]\"'=\\\\0-9\n-]{0,40}"
}

/// An argument object covering the names, with scalar or nested values.
fn arguments() -> impl Strategy<Value = Value> {
    prop::collection::vec(prop_oneof![scalar(), Just(json!({"a": 1, "b": [1, 2]}))], 5)
        .prop_map(|values| Value::Object(NAMES.iter().map(|n| n.to_string()).zip(values).collect()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Text interleaved with `{{ name }}` placeholders renders to exactly the text with each
    /// placeholder replaced, and no `{{` survives.
    #[test]
    fn well_formed_template_renders_every_placeholder(
        parts in prop::collection::vec(
            (plain_text(), 0..NAMES.len(), " {0,2}", " {0,2}"), 0..8),
        tail in plain_text(),
        values in prop::collection::vec(scalar(), NAMES.len()),
    ) {
        let mut source = String::new();
        let mut expected = String::new();
        for (text, name, before, after) in &parts {
            source.push_str(text);
            source.push_str(&format!("{{{{{before}{}{after}}}}}", NAMES[*name]));
            expected.push_str(text);
            expected.push_str(&rendered(&values[*name]));
        }
        source.push_str(&tail);
        expected.push_str(&tail);
        let args = Value::Object(NAMES.iter().map(|n| n.to_string()).zip(values).collect());

        let template = Template::compile(&source)
            .map_err(|e| TestCaseError::fail(format!("{source:?}: {e}")))?;
        let out = template
            .render(&args)
            .map_err(|e| TestCaseError::fail(format!("{source:?}: {e}")))?;
        prop_assert!(!out.contains("{{"), "{source:?} rendered {out:?}");
        prop_assert_eq!(out, expected);
    }

    /// Whatever the source, compiling and rendering never panic; a successful render of a
    /// source without escapes, with brace-free scalar arguments, leaves no `{{`.
    #[test]
    fn any_source_compiles_or_errors_and_never_leaves_braces(
        source in hostile_source(),
        values in prop::collection::vec(scalar(), NAMES.len()),
        nested in arguments(),
    ) {
        let Ok(template) = Template::compile(&source) else {
            return Ok(());
        };
        let _ = template.render(&nested);
        let _ = template.render(&Value::Null);
        let args = Value::Object(NAMES.iter().map(|n| n.to_string()).zip(values).collect());
        if let Ok(out) = template.render(&args)
            && !source.contains('\\')
        {
            prop_assert!(!out.contains("{{"), "{source:?} rendered {out:?}");
        }
    }

    /// A missing argument is an error naming the placeholder, never an empty string.
    #[test]
    fn missing_argument_is_an_error_naming_its_path(text in plain_text(), name in 0..NAMES.len()) {
        let source = format!("{text}{{{{ {} }}}}", NAMES[name]);
        let template = Template::compile(&source).expect("well-formed");
        let err = template.render(&json!({})).expect_err("nothing to render");
        prop_assert_eq!(err.path, NAMES[name]);
    }
}

// ---------------------------------------------------------------------------------------------
// A2E messages

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 _./:\u{e9}\u{4e16}\"\\\\\n-]{0,16}"
}

/// Timestamps as the engine writes them: seconds with millisecond precision.
fn timestamp() -> impl Strategy<Value = f64> {
    (0u64..4_000_000_000_000).prop_map(|ms| ms as f64 / 1000.0)
}

/// JSON values without floats of arbitrary precision (numbers are integers or short decimals).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1_000_000i64..1_000_000).prop_map(|n| json!(n as f64 / 100.0)),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map("[a-z_]{1,6}", json_value(), 0..4)
        .prop_map(|m| m.into_iter().collect())
}

fn payload() -> impl Strategy<Value = EventPayload> {
    prop_oneof![
        (0u8..=100, text()).prop_map(|(pct, m)| EventPayload::progress(pct, m)),
        text().prop_map(EventPayload::status),
        (
            prop::sample::select(vec![
                LogLevel::Debug,
                LogLevel::Info,
                LogLevel::Warn,
                LogLevel::Error
            ]),
            text()
        )
            .prop_map(|(level, m)| EventPayload::log(level, m)),
        (text(), text(), text(), any::<bool>())
            .prop_map(|(n, mime, c, f)| EventPayload::artifact(n, mime, c, f)),
    ]
}

fn event() -> impl Strategy<Value = SkillEvent> {
    (text(), text(), timestamp(), any::<u64>(), payload()).prop_map(
        |(id, req_id, ts, seq, payload)| {
            let mut event = SkillEvent::new(req_id, seq, payload);
            event.id = id;
            event.ts = ts;
            event
        },
    )
}

fn error_code() -> impl Strategy<Value = ErrorCode> {
    prop::sample::select(ErrorCode::ALL.to_vec())
}

fn skill_result() -> impl Strategy<Value = SkillResult> {
    (
        any::<bool>(),
        prop::option::of(json_value()),
        prop::option::of(json_value()),
        any::<bool>(),
        prop::option::of(text()),
        prop::option::of(error_code()),
        any::<u32>(),
        prop::collection::vec(event(), 0..3),
    )
        .prop_map(
            |(success, data, summary, truncated, error, error_code, ms, events)| {
                // `Some(null)` is written as `null` and read back as `None`: not a distinct value.
                // Built through the constructor, so fields added later keep their defaults.
                let mut result = SkillResult::success(
                    data.filter(|v| !v.is_null()),
                    summary.filter(|v| !v.is_null()),
                    u64::from(ms),
                );
                result.success = success;
                result.truncated = truncated;
                result.error = error;
                result.error_code = error_code;
                result.events = events;
                result
            },
        )
}

fn message() -> impl Strategy<Value = Message> {
    let discover_request = (
        text(),
        timestamp(),
        prop::collection::vec(text(), 0..3),
        prop::collection::vec(text(), 0..3),
    )
        .prop_map(|(id, ts, tags, categories)| {
            let mut m: SkillDiscoverRequest =
                serde_json::from_value(json!({})).expect("all fields default");
            m.id = id;
            m.ts = ts;
            m.filter_tags = tags;
            m.filter_categories = categories;
            Message::from(m)
        });
    let discover_response = (text(), text(), timestamp()).prop_map(|(id, req_id, ts)| {
        let mut m = SkillDiscoverResponse::new(req_id, Vec::new());
        m.id = id;
        m.ts = ts;
        Message::from(m)
    });
    let call_request = (
        (text(), timestamp(), text(), json_object()),
        (text(), any::<u32>(), any::<bool>(), json_object()),
    )
        .prop_map(
            |((id, ts, name, arguments), (correlation_id, timeout, streaming, metadata))| {
                let mut m = SkillCallRequest::new(name, arguments);
                m.id = id;
                m.ts = ts;
                m.correlation_id = correlation_id;
                m.timeout = u64::from(timeout);
                m.streaming = streaming;
                m.metadata = metadata;
                Message::from(m)
            },
        );
    let call_response = (
        (text(), text(), text(), timestamp(), timestamp()),
        prop_oneof![
            skill_result().prop_map(|r| (Some(r), None)),
            (error_code(), text(), any::<bool>()).prop_map(|(code, message, retryable)| {
                let mut error = ProtocolError::new(code, message);
                error.retryable = retryable;
                (None, Some(error))
            }),
        ],
    )
        .prop_map(|((id, req_id, name, ts, created_at), (data, error))| {
            let m = SkillCallResponse {
                id,
                version: PROTOCOL_VERSION.to_owned(),
                ts,
                req_id,
                name,
                data,
                error,
                created_at,
            };
            Message::from(m)
        });
    prop_oneof![
        discover_request,
        discover_response,
        call_request,
        call_response,
        event().prop_map(Message::from),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every valid message survives the wire unchanged, and encodes to one line.
    #[test]
    fn decode_of_encode_is_the_identity(message in message()) {
        let line = encode(&message);
        prop_assert!(!line.contains('\n'), "{line}");
        let decoded = decode(&line)
            .map_err(|e| TestCaseError::fail(format!("{line}: {e}")))?;
        prop_assert_eq!(&decoded, &message, "{}", line);
        prop_assert_eq!(encode(&decoded), line);
    }
}

// ---------------------------------------------------------------------------------------------
// Event invariants

/// What a run (or a tool) may do to a call's emitter.
#[derive(Debug, Clone)]
enum Emit {
    Progress(u8),
    Status,
    Log,
    Artifact(bool),
    /// A clone of the emitter (a tool task) emits a progress value.
    FromClone(u8),
}

fn emit_step() -> impl Strategy<Value = Emit> {
    prop_oneof![
        any::<u8>().prop_map(Emit::Progress),
        Just(Emit::Status),
        Just(Emit::Log),
        any::<bool>().prop_map(Emit::Artifact),
        any::<u8>().prop_map(Emit::FromClone),
    ]
}

/// A live sink recording what reached the transport.
#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<SkillEvent>>);

impl EventSink for Recorder {
    fn emit(&self, event: &SkillEvent) {
        self.0.lock().expect("recorder lock").push(event.clone());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Under any emit sequence (and a final 100 as the run loop sends on success): `seq` runs
    /// 0, 1, 2, … without gaps in both the live stream and the collected events, progress
    /// never decreases and ends at 100, and nothing is emitted after the result is taken.
    #[test]
    fn seq_is_gap_free_and_progress_monotone_ending_at_100(
        steps in prop::collection::vec(emit_step(), 0..60),
        cap in 1usize..80,
    ) {
        let recorder = Arc::new(Recorder::default());
        let emitter = EventEmitter::new("req-1", Some(recorder.clone()), cap);
        let clone = emitter.clone();
        let mut returned = Vec::new();
        for step in &steps {
            returned.push(match step {
                Emit::Progress(pct) => emitter.progress(*pct, "p"),
                Emit::Status => emitter.status("s"),
                Emit::Log => emitter.log(LogLevel::Info, "l"),
                Emit::Artifact(last) => emitter.artifact("a", "text/plain", "c", *last),
                Emit::FromClone(pct) => clone.progress(*pct, "tool"),
            });
        }
        returned.push(emitter.progress(100, "done"));
        let (collected, truncated) = emitter.take_collected();
        let after = emitter.status("too late");

        let live = recorder.0.lock().expect("recorder lock").clone();
        let expected_seq: Vec<u64> = (0..live.len() as u64).collect();
        prop_assert_eq!(&returned, &expected_seq);
        prop_assert_eq!(live.iter().map(|e| e.seq).collect::<Vec<_>>(), expected_seq);
        prop_assert_eq!(live.len(), steps.len() + 1);
        prop_assert!(live.iter().all(|e| e.req_id == "req-1"));
        prop_assert_eq!(after, live.len() as u64, "the closed emitter must not advance");

        let pcts: Vec<u8> = live
            .iter()
            .filter_map(|e| match e.payload {
                EventPayload::Progress { pct, .. } => Some(pct),
                _ => None,
            })
            .collect();
        prop_assert!(pcts.windows(2).all(|w| w[0] <= w[1]), "{pcts:?}");
        prop_assert!(pcts.iter().all(|p| *p <= 100), "{pcts:?}");
        prop_assert_eq!(pcts.last().copied(), Some(100));
        prop_assert_eq!(emitter.last_progress(), 100);

        // Collection keeps the first `cap` events, in order, and says when it dropped some.
        prop_assert_eq!(collected.len(), live.len().min(cap));
        prop_assert_eq!(truncated, live.len() > cap);
        prop_assert!(collected.iter().zip(&live).all(|(c, l)| c == l));
        let ids: BTreeSet<&str> = live.iter().map(|e| e.id.as_str()).collect();
        prop_assert_eq!(ids.len(), live.len(), "event ids must be unique");
    }
}

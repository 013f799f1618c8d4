//! Decoding and encoding whole messages, with decode failures classified onto A2E codes:
//! malformed JSON → `parse_error`; a non-object (an array is never read positionally), an
//! envelope key (`type`, `id`, `version`, `name`) given twice, a missing or unknown `type`, or a
//! missing or ill-typed field → `invalid_message`; a `version` other than [`PROTOCOL_VERSION`] →
//! `version_mismatch`. The request's `id` is recovered whenever the text is a JSON object with a
//! string `id`, so even a rejected message can be answered with its `req_id`.

use serde::Deserialize;
use serde_json::Value;

use super::message::{Message, MessageType};
use super::{ErrorCode, PROTOCOL_VERSION, ProtocolError};
use super::{one_pass, writer};

/// Why a message could not be decoded, with what could be recovered of it.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// `parse_error`, `invalid_message` or `version_mismatch`.
    pub code: ErrorCode,
    /// What was wrong, naming the offending field where known.
    pub message: String,
    /// The message's `id`, when it could be recovered (answer with it as `req_id`).
    pub req_id: Option<String>,
    /// The message's `type`, when it could be recovered.
    pub message_type: Option<String>,
    /// The `name` of a `skill/call/req`, when it could be recovered.
    pub name: Option<String>,
}

impl DecodeError {
    /// The transport-level error object for the answer.
    pub fn to_protocol_error(&self) -> ProtocolError {
        ProtocolError::new(self.code, self.message.clone())
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for DecodeError {}

/// The fields needed to classify a message, read without building a JSON tree.
///
/// Deserialized by hand rather than derived: a derived struct would also accept a JSON array
/// (`["skill/discover/req"]` would fill `type` positionally) and would leave duplicate keys to
/// whichever later step reads them. Here only an object is accepted, and an envelope key that
/// appears twice is refused, so a proxy reading the first value and Skillet can never disagree.
#[derive(Default)]
struct Envelope {
    message_type: Option<Value>,
    id: Option<Value>,
    version: Option<Value>,
    name: Option<Value>,
}

/// The keys that decide what a message is and whom it answers.
const ENVELOPE_KEYS: [&str; 4] = ["type", "id", "version", "name"];

/// Why the envelope could not be read (beyond JSON syntax).
enum EnvelopeProblem {
    NotAnObject,
    DuplicateKey(&'static str),
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> serde::de::Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let slot = match key.as_ref() {
                "type" => &mut envelope.message_type,
                "id" => &mut envelope.id,
                "version" => &mut envelope.version,
                "name" => &mut envelope.name,
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
            };
            if slot.is_some() {
                let key = ENVELOPE_KEYS
                    .into_iter()
                    .find(|k| *k == key.as_ref())
                    .unwrap_or("type");
                return Err(serde::de::Error::custom(DUPLICATE_MARKER.to_owned() + key));
            }
            *slot = Some(map.next_value()?);
        }
        Ok(envelope)
    }
}

/// Prefix of the custom error the visitor raises for a duplicate envelope key; `decode` turns
/// it back into [`EnvelopeProblem::DuplicateKey`] (serde's error type carries only text).
const DUPLICATE_MARKER: &str = "skillet-duplicate-envelope-key:";

impl EnvelopeProblem {
    fn of(error: &serde_json::Error) -> Option<EnvelopeProblem> {
        let text = error.to_string();
        if let Some(rest) = text.strip_prefix(DUPLICATE_MARKER) {
            let key = ENVELOPE_KEYS
                .into_iter()
                .find(|k| rest.starts_with(&format!("{k} ")) || rest == *k)?;
            return Some(EnvelopeProblem::DuplicateKey(key));
        }
        // `deserialize_any` on anything but an object reports an invalid type.
        text.starts_with("invalid type:")
            .then_some(EnvelopeProblem::NotAnObject)
    }

    fn into_error(self) -> DecodeError {
        let message = match self {
            EnvelopeProblem::NotAnObject => "a message must be a JSON object".to_owned(),
            EnvelopeProblem::DuplicateKey(key) => {
                format!("duplicate key `{key}`: a message names each envelope key once")
            }
        };
        invalid(None, None, None, message)
    }
}

fn text_of(value: Option<Value>) -> Option<String> {
    match value {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// Decodes one message from JSON text.
///
/// A well-formed message whose first key is `type` is read once, straight into its type.
/// Otherwise the text is read twice, neither time into a generic JSON tree: once for the
/// envelope (`type`, `id`, `version`, `name`), which classifies the message and recovers its id;
/// then straight into the message type the envelope names.
pub fn decode(text: &str) -> Result<Message, DecodeError> {
    // A well-formed message whose first key is `type` needs one pass (`one_pass`); anything
    // else, and every error, comes from the two passes below.
    if let Some(message) = one_pass::decode(text) {
        return Ok(message);
    }
    let envelope: Envelope = match serde_json::from_str(text) {
        Ok(envelope) => envelope,
        Err(e) if e.is_data() => {
            // Malformed JSON after the problem spot is still a `parse_error`.
            serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(parse_error)?;
            return Err(EnvelopeProblem::of(&e).map_or_else(
                || invalid(None, None, None, format!("message envelope: {e}")),
                EnvelopeProblem::into_error,
            ));
        }
        Err(e) => return Err(parse_error(e)),
    };
    let req_id = text_of(envelope.id);
    let name = text_of(envelope.name);
    let message_type = classify(envelope.message_type, envelope.version, &req_id, &name)?;
    let Some(kind) = MessageType::parse(&message_type) else {
        return Err(unknown_type(req_id, message_type, name));
    };
    // What `serde_json::from_str` does, with the body type chosen by `kind`.
    let mut body = serde_json::Deserializer::from_str(text);
    let typed = kind
        .deserialize_body(&mut body)
        .and_then(|message| body.end().map(|()| message));
    typed.map_err(|e| {
        let message = format!("{message_type}: {e}");
        invalid(req_id, Some(message_type), name, message)
    })
}

fn parse_error(e: serde_json::Error) -> DecodeError {
    DecodeError {
        code: ErrorCode::ParseError,
        message: format!("malformed JSON: {e}"),
        req_id: None,
        message_type: None,
        name: None,
    }
}

/// Checks `type` and `version`; returns the type.
fn classify(
    message_type: Option<Value>,
    version: Option<Value>,
    req_id: &Option<String>,
    name: &Option<String>,
) -> Result<String, DecodeError> {
    let message_type = match message_type {
        None => {
            return Err(invalid(
                req_id.clone(),
                None,
                name.clone(),
                "missing field `type`".into(),
            ));
        }
        Some(Value::String(t)) => t,
        Some(other) => {
            return Err(invalid(
                req_id.clone(),
                None,
                name.clone(),
                format!("`type` must be a string, got {other}"),
            ));
        }
    };
    match version {
        None => Ok(message_type),
        Some(Value::String(v)) if v == PROTOCOL_VERSION => Ok(message_type),
        Some(other) => Err(DecodeError {
            code: ErrorCode::VersionMismatch,
            message: format!(
                "unsupported protocol version {other}; this host speaks \"{PROTOCOL_VERSION}\""
            ),
            req_id: req_id.clone(),
            message_type: Some(message_type),
            name: name.clone(),
        }),
    }
}

/// Decodes one message from an already parsed JSON value.
pub fn decode_value(value: Value) -> Result<Message, DecodeError> {
    let Value::Object(object) = &value else {
        return Err(invalid(
            None,
            None,
            None,
            "a message must be a JSON object".into(),
        ));
    };
    let req_id = object.get("id").and_then(Value::as_str).map(str::to_owned);
    let name = object
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let message_type = classify(
        object.get("type").cloned(),
        object.get("version").cloned(),
        &req_id,
        &name,
    )?;
    let Some(kind) = MessageType::parse(&message_type) else {
        return Err(unknown_type(req_id, message_type, name));
    };
    // What `serde_json::from_value` does, with the body type chosen by `kind`.
    let typed = kind.deserialize_body(value);
    typed.map_err(|e| {
        let message = format!("{message_type}: {e}");
        invalid(req_id, Some(message_type), name, message)
    })
}

fn unknown_type(req_id: Option<String>, message_type: String, name: Option<String>) -> DecodeError {
    let message = format!("unknown message type {message_type:?}");
    invalid(req_id, Some(message_type), name, message)
}

fn invalid(
    req_id: Option<String>,
    message_type: Option<String>,
    name: Option<String>,
    message: String,
) -> DecodeError {
    DecodeError {
        code: ErrorCode::InvalidMessage,
        message,
        req_id,
        message_type,
        name,
    }
}

/// Encodes a message as one line of JSON (no trailing newline).
///
/// Answers and events are written by hand (`writer`: same bytes, faster escaping); the other
/// messages by their derived `Serialize`.
pub fn encode(message: &Message) -> String {
    let mut text = Vec::new();
    encode_into(message, &mut text);
    // Both writers emit UTF-8 only (JSON text of `str`s and serde_json's output).
    String::from_utf8(text).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn encode_into(message: &Message, out: &mut Vec<u8>) {
    match message {
        Message::CallResponse(response) => writer::call_response(out, response),
        Message::Event(event) => writer::event_message(out, event),
        _ => {
            let start = out.len();
            // Serializing these plain data types cannot fail: every map key is a string and
            // no Serialize impl here returns an error.
            if let Err(e) = serde_json::to_writer(&mut *out, message) {
                out.truncate(start);
                out.extend_from_slice(encode_failed(&e).as_bytes());
            }
        }
    }
}

/// Appends a message as one line of JSON, newline included, to `line`: what a line-framed
/// transport writes, without an interim `String` per message.
pub fn encode_line_into(message: &Message, line: &mut Vec<u8>) {
    encode_into(message, line);
    line.push(b'\n');
}

fn encode_failed(error: &serde_json::Error) -> String {
    let call_response = MessageType::CallResponse.as_str();
    format!(
        r#"{{"type":"{call_response}","error":{{"code":"runtime_error","message":"encode failed: {error}","retryable":false}}}}"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LogLevel;
    use crate::{EventPayload, SkillEvent};

    const VECTORS: [(&str, &str); 5] = [
        (
            "discover-req",
            include_str!("../tests/vectors/a2e/discover-req.json"),
        ),
        (
            "discover-resp",
            include_str!("../tests/vectors/a2e/discover-resp.json"),
        ),
        (
            "call-req",
            include_str!("../tests/vectors/a2e/call-req.json"),
        ),
        (
            "call-resp",
            include_str!("../tests/vectors/a2e/call-resp.json"),
        ),
        (
            "event-progress",
            include_str!("../tests/vectors/a2e/event-progress.json"),
        ),
    ];

    #[test]
    fn every_seed_wire_example_round_trips_with_the_same_fields_and_values() {
        for (name, text) in VECTORS {
            let message = decode(text.trim()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let original: Value = serde_json::from_str(text).unwrap();
            let reencoded: Value = serde_json::from_str(&encode(&message)).unwrap();
            assert_eq!(reencoded, original, "{name} re-encodes differently");
        }
    }

    #[test]
    fn json_that_is_not_an_object_is_invalid_message() {
        for text in ["[1,2]", "42", "\"skill/call/req\"", "null"] {
            let err = decode(text).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidMessage, "{text}");
        }
    }

    #[test]
    fn an_array_is_never_read_as_a_message_even_when_it_spells_one() {
        for text in [
            r#"["skill/discover/req"]"#,
            r#"["skill/discover/req","d1","1.0"]"#,
            "[1,2,3,4,5]",
            r#"[{"type":"skill/discover/req","id":"d1"}]"#,
            "true",
        ] {
            let err = decode(text).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidMessage, "{text}: {err}");
            assert!(err.message.contains("JSON object"), "{text}: {err}");
            assert_eq!(err.req_id, None, "{text}");
        }
    }

    #[test]
    fn a_duplicated_envelope_key_is_invalid_message_naming_the_key() {
        let cases = [
            (
                r#"{"type":"skill/call/req","type":"skill/discover/req","id":"d1"}"#,
                "type",
            ),
            (r#"{"type":"skill/discover/req","id":"a","id":"b"}"#, "id"),
            (
                r#"{"type":"skill/call/req","id":"c","name":"safe","name":"evil"}"#,
                "name",
            ),
            (
                r#"{"type":"skill/discover/req","id":"v","version":"1.0","version":"1.0"}"#,
                "version",
            ),
        ];
        for (text, key) in cases {
            let err = decode(text).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidMessage, "{text}: {err}");
            assert!(
                err.message.contains(&format!("duplicate key `{key}`")),
                "{text}: {err}"
            );
        }
        // Other keys keep the typed decoder's rule (duplicates refused).
        let err =
            decode(r#"{"type":"skill/call/req","id":"c","name":"x","timeout":5,"timeout":9}"#)
                .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidMessage, "{err}");
        // Malformed JSON after a problem spot is still a parse error.
        let err = decode(r#"{"id":"a","id":"b","#).unwrap_err();
        assert_eq!(err.code, ErrorCode::ParseError, "{err}");
    }

    #[test]
    fn decode_and_decode_value_agree_on_every_vector() {
        for (name, text) in VECTORS {
            let from_text = decode(text.trim()).unwrap();
            let from_value = decode_value(serde_json::from_str(text).unwrap()).unwrap();
            assert_eq!(from_text, from_value, "{name}");
        }
    }

    #[test]
    fn malformed_json_is_a_parse_error() {
        let err = decode("{\"type\": ").unwrap_err();
        assert_eq!(err.code, ErrorCode::ParseError);
        assert_eq!(err.req_id, None);
    }

    #[test]
    fn unknown_type_is_invalid_message_with_the_id_recovered() {
        let err = decode(r#"{"type":"skill/explode","id":"x1"}"#).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidMessage);
        assert_eq!(err.req_id.as_deref(), Some("x1"));
        assert!(err.message.contains("skill/explode"));
    }

    #[test]
    fn other_version_is_version_mismatch() {
        let err = decode(r#"{"type":"skill/discover/req","id":"v2","version":"2.0"}"#).unwrap_err();
        assert_eq!(err.code, ErrorCode::VersionMismatch);
        assert_eq!(err.req_id.as_deref(), Some("v2"));
    }

    #[test]
    fn ill_typed_field_is_invalid_message_naming_the_field() {
        let err = decode(r#"{"type":"skill/call/req","id":"c1","name":"x","timeout":"soon"}"#)
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidMessage);
        assert_eq!(err.req_id.as_deref(), Some("c1"));
        assert_eq!(err.name.as_deref(), Some("x"));
        assert!(err.message.contains("string \"soon\""), "{}", err.message);
    }

    #[test]
    fn call_without_name_is_invalid_message() {
        let err = decode(r#"{"type":"skill/call/req","id":"c2"}"#).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidMessage);
        assert!(err.message.contains("name"), "{}", err.message);
    }

    #[test]
    fn missing_envelope_fields_get_the_seed_defaults() {
        let Message::CallRequest(call) = decode(r#"{"type":"skill/call/req","name":"x"}"#).unwrap()
        else {
            panic!("not a call");
        };
        assert_eq!(call.version, "1.0");
        assert_eq!(call.timeout, 60);
        assert!(call.streaming);
        assert!(!call.id.is_empty());
        assert!(call.ts > 1.7e9);
    }

    #[test]
    fn every_error_code_has_its_wire_string() {
        for code in ErrorCode::ALL {
            let text = serde_json::to_string(&code).unwrap();
            assert_eq!(text, format!("\"{}\"", code.as_str()));
            assert_eq!(code.as_str().parse::<ErrorCode>().unwrap(), code);
        }
        assert!(!ErrorCode::UnknownSkill.default_retryable());
        assert!(ErrorCode::SkillError.default_retryable());
    }

    #[test]
    fn event_payloads_encode_with_the_seed_shapes() {
        let cases = [
            (
                EventPayload::progress(30, "m"),
                r#"{"pct":30,"message":"m"}"#,
                "progress",
            ),
            (
                EventPayload::artifact("n", "text/plain", "c", true),
                r#"{"name":"n","mime":"text/plain","chunk":"c","final":true}"#,
                "artifact",
            ),
            (
                EventPayload::log(LogLevel::Info, "m"),
                r#"{"level":"info","message":"m"}"#,
                "log",
            ),
            (EventPayload::status("m"), r#"{"message":"m"}"#, "status"),
        ];
        for (payload, data, kind) in cases {
            let event = SkillEvent::new("r", 3, payload);
            let v: Value = serde_json::from_str(&encode(&event.into())).unwrap();
            assert_eq!(v["kind"], kind);
            assert_eq!(v["data"], serde_json::from_str::<Value>(data).unwrap());
            assert_eq!(v["seq"], 3);
            assert_eq!(v["type"], "skill/event");
        }
    }
}

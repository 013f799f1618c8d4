//! The A2E skills capability on the wire: the five messages, the data models they carry, and the
//! error codes (seed `000_98d4355ae1ec2135.txt`).
//!
//! Everything here is plain serde data with no behaviour beyond construction, decoding and
//! encoding: field names, defaults and JSON shapes follow the seed exactly, and every wire example
//! of the seed (`shared/vectors/a2e/`) decodes and re-encodes with the same fields and values.
//!
//! What lives here: the message types ([`Message`] and the five bodies), the data they carry
//! ([`SkillDefinition`], [`LLMConfig`] with its credentials as `SecretString`s that encode as
//! `[REDACTED]`, [`SkillResult`], [`SkillEvent`]), the error codes ([`ErrorCode`],
//! [`SkillErrorCode`]), the argument names every adapter shares ([`PROMPT_ARGUMENT`]), and the
//! codec: [`decode`] (which classifies a bad message into the [`ProtocolError`] to answer it
//! with) and [`encode`] / [`encode_line_into`].
//!
//! What does not: any I/O or transport (`skillet-host` frames these messages on stdio, HTTP,
//! NATS), and the meaning of a call (running it is `skillet-engine`'s `run`). The only crate of
//! ours this one depends on is `skillet-json`, so every layer above can share the wire types
//! without pulling in a runtime.
//!
//! Decoding a message and encoding it back:
//!
//! ```
//! use skillet_protocol::{Message, decode, encode};
//!
//! let text = r#"{"type":"skill/call/req","id":"sc1","version":"1.0","ts":1716123457.1,"name":"code_review","arguments":{"code":"def add(a, b): return a + b"}}"#;
//! let message = decode(text)?;
//! let Message::CallRequest(call) = &message else { panic!("a skill/call/req") };
//! assert_eq!(call.name, "code_review");
//! assert_eq!(call.timeout, 60); // fields left out take the seed's defaults
//!
//! let line = encode(&message);
//! assert!(line.starts_with(r#"{"type":"skill/call/req","id":"sc1""#));
//! assert_eq!(decode(&line)?, message);
//! # Ok::<(), skillet_protocol::DecodeError>(())
//! ```

#![warn(missing_docs)]

mod codec;
mod definition;
mod error;
mod event;
mod event_decode;
mod message;
mod messages;
mod one_pass;
mod produced_file;
mod result;
mod transcript;
mod writer;

pub use codec::{DecodeError, decode, decode_value, encode, encode_line_into};
pub use definition::{Credentials, LLMConfig, SkillDefinition, SkillStatus};
pub use error::{ErrorCode, ProtocolError, SkillErrorCode};
pub use event::{EventKind, EventPayload, LogLevel, SkillEvent};
pub use message::Message;
pub use messages::{
    SkillCallRequest, SkillCallResponse, SkillDiscoverRequest, SkillDiscoverResponse,
};
pub use produced_file::{
    BASE64_MIME_SUFFIX, ProducedFile, is_model_text_artifact, model_text_artifact,
};
pub use result::{CostEstimate, Resumed, SkillResult, TokenUsage, TurnUsage};
pub use transcript::{
    MAX_TRANSCRIPT_CHARS, MAX_TRANSCRIPT_TEXT_CHARS, TRANSCRIPT_METADATA, Transcript,
    TranscriptMessage, TranscriptRole, TranscriptToolCall, TranscriptTurn, transcript_requested,
};

/// The argument that carries free text: `{"prompt": TEXT}` alone becomes the first user message
/// as it is. Every adapter that maps free text onto a skill without an input schema (MCP's default
/// tool input, an A2A text part) uses this one name.
pub const PROMPT_ARGUMENT: &str = "prompt";

/// The protocol version this engine speaks; messages carrying another version are answered with
/// [`ErrorCode::VersionMismatch`].
pub const PROTOCOL_VERSION: &str = "1.0";

/// A fresh message id (a UUID v4, as the seed's "auto UUID").
pub fn new_id() -> String {
    id_text(uuid::Uuid::new_v4())
}

/// A UUID as the seed writes ids (lower-case, hyphenated), without the formatting machinery.
pub fn id_text(id: uuid::Uuid) -> String {
    id.hyphenated()
        .encode_lower(&mut uuid::Uuid::encode_buffer())
        .to_owned()
}

/// The current time as a Unix epoch float (the seed's `ts` and `created_at`).
pub fn now_ts() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The protocol version every message this crate builds carries ([`PROTOCOL_VERSION`]).
pub fn default_version() -> String {
    PROTOCOL_VERSION.to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_lower_case_hyphenated_v4_uuids_and_differ() {
        let (a, b) = (super::new_id(), super::new_id());
        assert_ne!(a, b);
        let parsed = uuid::Uuid::parse_str(&a).expect("a UUID");
        assert_eq!(parsed.get_version_num(), 4);
        assert_eq!(a, parsed.hyphenated().to_string());
        assert_eq!(a, a.to_lowercase());
    }
}

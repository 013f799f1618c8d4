//! One-pass decoding of a well-formed message whose first key is `type` — what this engine, the
//! seed's examples and most clients write.
//!
//! [`super::decode`] reads a message twice: once for its envelope (to classify any problem and
//! recover the id) and once into the type the envelope names. For a call's answer, a dozen
//! events long, the first pass was a third of the decoding. Here the first key names the type
//! and the rest of the object goes straight into it, with the envelope's own rule kept on the
//! way: `type`, `id`, `version` and `name` at most once each.
//!
//! This path only ever *accepts*: anything it does not like (another first key, an unknown
//! type, a repeated envelope key, a bad field, another version) makes it give up, and the
//! two-pass decode runs and says what is wrong, exactly as before. So a message decodes to the
//! same value on either path, and every error comes from one place.
//!
//! Not here: classifying errors (`codec`), the message types.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::{CowStrDeserializer, MapAccessDeserializer};
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::PROTOCOL_VERSION;
use super::message::{Message, MessageType};

/// The message, when `text` is one this path accepts; `None` sends it down the two-pass decode.
pub(super) fn decode(text: &str) -> Option<Message> {
    let TypeFirst(message) = serde_json::from_str(text).ok()?;
    (message.version() == PROTOCOL_VERSION).then_some(message)
}

struct TypeFirst(Message);

impl<'de> Deserialize<'de> for TypeFirst {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(TypeFirstVisitor)
    }
}

struct TypeFirstVisitor;

impl<'de> Visitor<'de> for TypeFirstVisitor {
    type Value = TypeFirst;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object whose first key is `type`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TypeFirst, A::Error> {
        let first: Option<Cow<'de, str>> = map.next_key()?;
        if first.as_deref() != Some("type") {
            return Err(de::Error::custom("not type-first"));
        }
        let message_type: Cow<'de, str> = map.next_value()?;
        let rest = MapAccessDeserializer::new(EnvelopeOnce {
            map,
            seen: Seen::TYPE,
        });
        let kind =
            MessageType::parse(&message_type).ok_or_else(|| de::Error::custom("unknown type"))?;
        kind.deserialize_body(rest).map(TypeFirst)
    }
}

/// Which envelope keys were read, as bits.
struct Seen(u8);

impl Seen {
    const TYPE: Seen = Seen(1);

    fn bit(key: &str) -> u8 {
        match key {
            "type" => 1,
            "id" => 2,
            "version" => 4,
            "name" => 8,
            _ => 0,
        }
    }
}

/// The rest of the message's object, refusing an envelope key seen before.
struct EnvelopeOnce<A> {
    map: A,
    seen: Seen,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for EnvelopeOnce<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.map.next_key::<Cow<'de, str>>()? else {
            return Ok(None);
        };
        let bit = Seen::bit(&key);
        if self.seen.0 & bit != 0 {
            return Err(de::Error::custom("repeated envelope key"));
        }
        self.seen.0 |= bit;
        seed.deserialize(CowStrDeserializer::new(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EventPayload, SkillCallResponse, SkillEvent, SkillResult, encode};

    fn answer() -> Message {
        let mut result = SkillResult::success(Some(serde_json::json!({"n": 1})), None, 5);
        result.events = vec![
            SkillEvent::new("r1", 0, EventPayload::status("turn 1")),
            SkillEvent::new("r1", 1, EventPayload::progress(100, "done")),
        ];
        Message::CallResponse(SkillCallResponse::result("r1", "s", result))
    }

    #[test]
    fn a_type_first_message_decodes_to_what_the_two_pass_decode_gives() {
        let answer = answer();
        let text = encode(&answer);
        assert_eq!(decode(&text), Some(answer));
        let request = r#"{"type":"skill/call/req","id":"c1","version":"1.0","ts":1.0,"name":"s","arguments":{"a":1}}"#;
        let Some(Message::CallRequest(call)) = decode(request) else {
            panic!("a call request decodes");
        };
        assert_eq!((call.id.as_str(), call.name.as_str()), ("c1", "s"));
        assert_eq!(
            Some(Message::CallRequest(call)),
            super::super::decode(request).ok()
        );
    }

    #[test]
    fn anything_doubtful_is_left_to_the_two_pass_decode() {
        // Valid, but not type-first: the two-pass decode reads it.
        let later_type = r#"{"id":"c1","type":"skill/call/req","name":"s"}"#;
        assert_eq!(decode(later_type), None);
        assert!(super::super::decode(later_type).is_ok());
        let doubtful = [
            // Not an object, not JSON.
            r#"["skill/call/req"]"#,
            r#"{"type":"skill/call/req","#,
            // Unknown type, another version, a version that is not a string.
            r#"{"type":"skill/call/nope","id":"c1"}"#,
            r#"{"type":"skill/call/req","id":"c1","version":"2.0","name":"s"}"#,
            r#"{"type":"skill/call/req","id":"c1","version":1.0,"name":"s"}"#,
            // Every envelope key given twice; `name` also where the type has no such field.
            r#"{"type":"skill/call/req","type":"skill/event","id":"c1","name":"s"}"#,
            r#"{"type":"skill/call/req","id":"c1","id":"c2","name":"s"}"#,
            r#"{"type":"skill/call/req","version":"1.0","version":"1.0","name":"s"}"#,
            r#"{"type":"skill/call/req","id":"c1","name":"s","name":"t"}"#,
            r#"{"type":"skill/discover/req","id":"d1","name":"a","name":"b"}"#,
            // A field of the wrong type.
            r#"{"type":"skill/call/req","id":"c1","name":"s","timeout":"soon"}"#,
        ];
        for text in doubtful {
            assert_eq!(decode(text), None, "{text}");
            assert!(
                super::super::decode(text).is_err(),
                "the two-pass decode refuses {text}"
            );
        }
    }
}

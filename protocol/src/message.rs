//! [`Message`]: any message of the skills capability, tagged by its `type` — what the decoders
//! produce and the encoders take — and the one table of message types it is derived from.
//!
//! The table (`message_types!`) is the only place a wire `type` is paired with its variant
//! and body: the enum's serde tags, [`Message::type_name`], the accessors and the decoders'
//! dispatch ([`MessageType::deserialize_body`]) are all generated from it, so a new message
//! type is one row and a misspelt tag cannot differ between encoding and decoding.
//!
//! Not here: decoding and encoding (`codec`, `one_pass`, `event_decode`, `writer`), the message
//! bodies themselves (`messages`, `event`).

use serde::{Deserialize, Deserializer, Serialize};

use super::{
    SkillCallRequest, SkillCallResponse, SkillDiscoverRequest, SkillDiscoverResponse, SkillEvent,
};

/// Derives, from `Variant(Body) = "wire type"` rows, [`Message`] (tagged by `type`),
/// [`MessageType`] (the tag alone) and every per-type match over them.
macro_rules! message_types {
    ($($(#[$doc:meta])* $variant:ident($body:ident) = $wire:tt,)*) => {
        /// Any message of the skills capability, tagged by its `type`.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type")]
        pub enum Message {
            $(
                $(#[$doc])*
                #[serde(rename = $wire)]
                $variant($body),
            )*
        }

        /// The `type` of a message without its body: what a decoder dispatches on.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum MessageType {
            $($variant,)*
        }

        impl MessageType {
            /// Every message type, in table order.
            #[cfg(test)]
            pub(crate) const ALL: &[MessageType] = &[$(MessageType::$variant,)*];

            /// The wire `type`.
            pub(crate) fn as_str(self) -> &'static str {
                match self {
                    $(MessageType::$variant => $wire,)*
                }
            }

            /// The message type a wire `type` names, if any.
            pub(crate) fn parse(wire: &str) -> Option<MessageType> {
                match wire {
                    $($wire => Some(MessageType::$variant),)*
                    _ => None,
                }
            }

            /// Reads this type's body (the message's object, its `type` read or skipped by
            /// the caller) into a [`Message`].
            pub(crate) fn deserialize_body<'de, D: Deserializer<'de>>(
                self,
                body: D,
            ) -> Result<Message, D::Error> {
                match self {
                    $(MessageType::$variant => $body::deserialize(body).map(Message::$variant),)*
                }
            }
        }

        impl Message {
            /// The message's type without its body.
            pub(crate) fn message_type(&self) -> MessageType {
                match self {
                    $(Message::$variant(_) => MessageType::$variant,)*
                }
            }

            /// The message's own `id`.
            pub fn id(&self) -> &str {
                match self {
                    $(Message::$variant(m) => &m.id,)*
                }
            }

            /// The protocol `version` the message carries.
            pub(crate) fn version(&self) -> &str {
                match self {
                    $(Message::$variant(m) => &m.version,)*
                }
            }
        }

        $(
            impl From<$body> for Message {
                fn from(m: $body) -> Self {
                    Message::$variant(m)
                }
            }
        )*
    };
}

message_types! {
    /// `skill/discover/req`: Agent → Host, list skills.
    DiscoverRequest(SkillDiscoverRequest) = "skill/discover/req",
    /// `skill/discover/resp`: Host → Agent, the matching skill manifests.
    DiscoverResponse(SkillDiscoverResponse) = "skill/discover/resp",
    /// `skill/call/req`: Agent → Host, execute a skill.
    CallRequest(SkillCallRequest) = "skill/call/req",
    /// `skill/call/resp`: Host → Agent, the one final answer to a call.
    CallResponse(SkillCallResponse) = "skill/call/resp",
    /// `skill/event`: Host → Agent, a streaming event of a call in flight.
    Event(SkillEvent) = "skill/event",
}

impl Message {
    /// The wire `type` of this message.
    pub fn type_name(&self) -> &'static str {
        self.message_type().as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EventPayload, SkillResult, decode, decode_value, encode};

    /// A message of each type; exhaustive, so a new row in the table fails to compile here
    /// until it has a sample.
    fn sample(kind: MessageType) -> Message {
        match kind {
            MessageType::DiscoverRequest => SkillDiscoverRequest::default().into(),
            MessageType::DiscoverResponse => SkillDiscoverResponse::new("d1", Vec::new()).into(),
            MessageType::CallRequest => SkillCallRequest::new("echo", Default::default()).into(),
            MessageType::CallResponse => {
                let result = SkillResult::success(Some(serde_json::json!({"n": 1})), None, 5);
                SkillCallResponse::result("c1", "echo", result).into()
            }
            MessageType::Event => SkillEvent::new("c1", 0, EventPayload::status("s")).into(),
        }
    }

    #[test]
    fn every_message_type_in_the_table_round_trips_through_encode_and_decode() {
        assert_eq!(MessageType::ALL.len(), 5, "the seed's five message types");
        for &kind in MessageType::ALL {
            let wire = kind.as_str();
            assert_eq!(MessageType::parse(wire), Some(kind), "{wire}");
            let message = sample(kind);
            assert_eq!(message.type_name(), wire);
            let line = encode(&message);
            assert!(
                line.starts_with(&format!(r#"{{"type":"{wire}","#)),
                "{wire} encodes its type first: {line}"
            );
            // Type first: the one-pass decode; type last: the two-pass decode; and from a value.
            assert_eq!(decode(&line).as_ref(), Ok(&message), "{wire}");
            let mut object: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&line).unwrap();
            let tag = object.remove("type").unwrap();
            object.insert("type".into(), tag);
            let type_last = serde_json::to_string(&object).unwrap();
            assert!(!type_last.starts_with(r#"{"type""#), "{type_last}");
            assert_eq!(decode(&type_last).as_ref(), Ok(&message), "{wire}");
            let value = serde_json::Value::Object(object);
            assert_eq!(decode_value(value).as_ref(), Ok(&message), "{wire}");
        }
        assert_eq!(MessageType::parse("skill/call"), None);
    }
}

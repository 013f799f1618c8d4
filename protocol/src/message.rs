//! [`Message`]: any message of the skills capability, tagged by its `type` — what the decoders
//! produce and the encoders take.
//!
//! Not here: decoding and encoding (`codec`, `one_pass`, `event_decode`, `writer`), the message
//! types themselves (`messages`, `event`).

use serde::{Deserialize, Serialize};

use super::{
    SkillCallRequest, SkillCallResponse, SkillDiscoverRequest, SkillDiscoverResponse, SkillEvent,
};

/// Any message of the skills capability, tagged by its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Message {
    /// `skill/discover/req`
    #[serde(rename = "skill/discover/req")]
    DiscoverRequest(SkillDiscoverRequest),
    /// `skill/discover/resp`
    #[serde(rename = "skill/discover/resp")]
    DiscoverResponse(SkillDiscoverResponse),
    /// `skill/call/req`
    #[serde(rename = "skill/call/req")]
    CallRequest(SkillCallRequest),
    /// `skill/call/resp`
    #[serde(rename = "skill/call/resp")]
    CallResponse(SkillCallResponse),
    /// `skill/event`
    #[serde(rename = "skill/event")]
    Event(SkillEvent),
}

impl Message {
    /// The wire `type` of this message.
    pub fn type_name(&self) -> &'static str {
        match self {
            Message::DiscoverRequest(_) => "skill/discover/req",
            Message::DiscoverResponse(_) => "skill/discover/resp",
            Message::CallRequest(_) => "skill/call/req",
            Message::CallResponse(_) => "skill/call/resp",
            Message::Event(_) => "skill/event",
        }
    }

    /// The message's own `id`.
    pub fn id(&self) -> &str {
        match self {
            Message::DiscoverRequest(m) => &m.id,
            Message::DiscoverResponse(m) => &m.id,
            Message::CallRequest(m) => &m.id,
            Message::CallResponse(m) => &m.id,
            Message::Event(m) => &m.id,
        }
    }
}

macro_rules! message_from {
    ($($ty:ident => $variant:ident),* $(,)?) => {$(
        impl From<$ty> for Message {
            fn from(m: $ty) -> Self {
                Message::$variant(m)
            }
        }
    )*};
}

message_from! {
    SkillDiscoverRequest => DiscoverRequest,
    SkillDiscoverResponse => DiscoverResponse,
    SkillCallRequest => CallRequest,
    SkillCallResponse => CallResponse,
    SkillEvent => Event,
}

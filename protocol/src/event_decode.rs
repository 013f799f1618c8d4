//! Decoding a [`SkillEvent`] in one pass.
//!
//! A derived decoder would have to `#[serde(flatten)]` the `kind`/`data` pair into the event,
//! and serde reads a flattened struct by first copying every field of the object into a
//! generic buffer and then reading that buffer again: for a call's answer with a dozen events
//! that doubled the client's decoding cost. Here the fields are read in order, `data` straight
//! into the shape its `kind` names; only when `data` comes before `kind` in the object is it
//! held as a JSON value until the kind is known.
//!
//! What it accepts is what the derived decoder accepted: the seed's defaults for `id`,
//! `version`, `ts`, `req_id` and `seq`; `kind` and `data` required; unknown fields (such as the
//! `type` of a top-level `skill/event`) ignored; a field given twice refused.
//!
//! Not here: the event types themselves (`event`), whole messages (`codec`).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, de::Error as _};
use serde_json::Value;

use super::event::{EventKind, EventPayload, LogLevel, SkillEvent};
use super::{default_version, new_id, now_ts};

impl<'de> Deserialize<'de> for SkillEvent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EventVisitor)
    }
}

/// The event's fields, named as on the wire.
enum Field {
    Id,
    Version,
    Ts,
    ReqId,
    Seq,
    Kind,
    Data,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

struct FieldVisitor;

impl Visitor<'_> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event field name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
        Ok(match name {
            "id" => Field::Id,
            "version" => Field::Version,
            "ts" => Field::Ts,
            "req_id" => Field::ReqId,
            "seq" => Field::Seq,
            "kind" => Field::Kind,
            "data" => Field::Data,
            _ => Field::Other,
        })
    }
}

struct EventVisitor;

/// Fails with serde's usual wording when `slot` is already filled.
fn once<T, E: de::Error>(slot: &Option<T>, name: &'static str) -> Result<(), E> {
    match slot {
        Some(_) => Err(E::duplicate_field(name)),
        None => Ok(()),
    }
}

impl<'de> Visitor<'de> for EventVisitor {
    type Value = SkillEvent;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a skill event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SkillEvent, A::Error> {
        let (mut id, mut version, mut ts, mut req_id, mut seq) = (None, None, None, None, None);
        let mut kind: Option<EventKind> = None;
        let mut payload: Option<EventPayload> = None;
        let mut early_data: Option<Value> = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Id => {
                    once(&id, "id")?;
                    id = Some(map.next_value()?);
                }
                Field::Version => {
                    once(&version, "version")?;
                    version = Some(map.next_value()?);
                }
                Field::Ts => {
                    once(&ts, "ts")?;
                    ts = Some(map.next_value()?);
                }
                Field::ReqId => {
                    once(&req_id, "req_id")?;
                    req_id = Some(map.next_value()?);
                }
                Field::Seq => {
                    once(&seq, "seq")?;
                    seq = Some(map.next_value()?);
                }
                Field::Kind => {
                    once(&kind, "kind")?;
                    kind = Some(map.next_value()?);
                }
                Field::Data => {
                    if payload.is_some() || early_data.is_some() {
                        return Err(A::Error::duplicate_field("data"));
                    }
                    match kind {
                        Some(kind) => payload = Some(map.next_value_seed(DataOf(kind))?),
                        None => early_data = Some(map.next_value()?),
                    }
                }
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let kind = kind.ok_or_else(|| A::Error::missing_field("kind"))?;
        let payload = match (payload, early_data) {
            (Some(payload), _) => payload,
            (None, Some(data)) => DataOf(kind).deserialize(data).map_err(A::Error::custom)?,
            (None, None) => return Err(A::Error::missing_field("data")),
        };
        Ok(SkillEvent {
            id: id.unwrap_or_else(new_id),
            version: version.unwrap_or_else(default_version),
            ts: ts.unwrap_or_else(now_ts),
            req_id: req_id.unwrap_or_default(),
            seq: seq.unwrap_or_default(),
            payload,
        })
    }
}

/// Reads an event's `data` as the shape of `kind`.
struct DataOf(EventKind);

#[derive(Deserialize)]
struct ProgressData {
    pct: u8,
    message: String,
}

#[derive(Deserialize)]
struct ArtifactData {
    name: String,
    mime: String,
    chunk: String,
    #[serde(rename = "final")]
    is_final: bool,
}

#[derive(Deserialize)]
struct LogData {
    level: LogLevel,
    message: String,
}

#[derive(Deserialize)]
struct StatusData {
    message: String,
    #[serde(default)]
    detail: Option<serde_json::Value>,
}

impl<'de> DeserializeSeed<'de> for DataOf {
    type Value = EventPayload;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<EventPayload, D::Error> {
        Ok(match self.0 {
            EventKind::Progress => {
                let ProgressData { pct, message } = ProgressData::deserialize(deserializer)?;
                EventPayload::Progress { pct, message }
            }
            EventKind::Artifact => {
                let data = ArtifactData::deserialize(deserializer)?;
                EventPayload::Artifact {
                    name: data.name,
                    mime: data.mime,
                    chunk: data.chunk,
                    is_final: data.is_final,
                }
            }
            EventKind::Log => {
                let LogData { level, message } = LogData::deserialize(deserializer)?;
                EventPayload::Log { level, message }
            }
            EventKind::Status => {
                let StatusData { message, detail } = StatusData::deserialize(deserializer)?;
                EventPayload::Status { message, detail }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(text: &str) -> Result<SkillEvent, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    #[test]
    fn data_before_kind_and_unknown_fields_decode_alike() {
        let ordered = decode(
            r#"{"id":"e1","version":"1.0","ts":1.5,"req_id":"r","seq":3,"kind":"artifact",
               "data":{"name":"n","mime":"text/plain","chunk":"c","final":true}}"#,
        )
        .unwrap();
        let reordered = decode(
            r#"{"type":"skill/event","data":{"final":true,"chunk":"c","mime":"text/plain",
               "name":"n","extra":1},"seq":3,"kind":"artifact","x":[1,{"y":2}],"req_id":"r",
               "ts":1.5,"version":"1.0","id":"e1"}"#,
        )
        .unwrap();
        assert_eq!(ordered, reordered);
        assert_eq!(
            ordered.payload,
            EventPayload::artifact("n", "text/plain", "c", true)
        );
    }

    #[test]
    fn any_level_string_is_read_as_the_nearest_level_and_written_as_one_of_four() {
        for (wire, level) in [
            ("debug", LogLevel::Debug),
            ("TRACE", LogLevel::Debug),
            ("info", LogLevel::Info),
            ("notice", LogLevel::Info),
            ("something-else", LogLevel::Info),
            ("warning", LogLevel::Warn),
            ("Warn", LogLevel::Warn),
            ("critical", LogLevel::Error),
            ("error", LogLevel::Error),
        ] {
            let text = format!(r#"{{"kind":"log","data":{{"level":"{wire}","message":"m"}}}}"#);
            let event = decode(&text).unwrap();
            assert_eq!(event.payload, EventPayload::log(level, "m"), "{wire}");
            let written = serde_json::to_value(&event.payload).unwrap();
            assert_eq!(written["data"]["level"], level.as_str(), "{wire}");
        }
        let escaped = decode(r#"{"kind":"log","data":{"level":"w\u0061rn","message":"m"}}"#);
        assert_eq!(
            escaped.unwrap().payload,
            EventPayload::log(LogLevel::Warn, "m")
        );
    }

    #[test]
    fn a_status_detail_is_read_and_its_absence_is_none() {
        let event =
            decode(r#"{"kind":"status","data":{"message":"m","detail":{"approval":"denied"}}}"#)
                .unwrap();
        assert_eq!(
            event.payload,
            EventPayload::status_with("m", serde_json::json!({"approval": "denied"}))
        );
        let plain = decode(r#"{"kind":"status","data":{"message":"m"}}"#).unwrap();
        assert_eq!(plain.payload, EventPayload::status("m"));
        let written = serde_json::to_value(&plain.payload).unwrap();
        assert!(written["data"].get("detail").is_none(), "{written}");
    }

    #[test]
    fn the_seed_defaults_fill_what_is_missing() {
        let event = decode(r#"{"kind":"status","data":{"message":"m"}}"#).unwrap();
        assert_eq!(event.version, "1.0");
        assert_eq!((event.req_id.as_str(), event.seq), ("", 0));
        assert_eq!(event.id.len(), 36, "a fresh UUID");
        assert!(event.ts > 1.7e9);
    }

    #[test]
    fn a_missing_or_repeated_field_or_a_wrong_shape_is_an_error_naming_it() {
        let missing_kind = decode(r#"{"data":{"message":"m"}}"#).unwrap_err();
        assert!(
            missing_kind.contains("missing field `kind`"),
            "{missing_kind}"
        );
        let missing_data = decode(r#"{"kind":"log"}"#).unwrap_err();
        assert!(
            missing_data.contains("missing field `data`"),
            "{missing_data}"
        );
        let twice = decode(r#"{"kind":"log","seq":1,"seq":2,"data":{}}"#).unwrap_err();
        assert!(twice.contains("duplicate field `seq`"), "{twice}");
        let data_twice =
            decode(r#"{"data":{"message":"a"},"kind":"status","data":{"message":"b"}}"#)
                .unwrap_err();
        assert!(
            data_twice.contains("duplicate field `data`"),
            "{data_twice}"
        );
        let shape =
            decode(r#"{"kind":"progress","data":{"pct":"half","message":"m"}}"#).unwrap_err();
        assert!(shape.contains("invalid type"), "{shape}");
        let late_shape = decode(r#"{"data":{"level":"info"},"kind":"log"}"#).unwrap_err();
        assert!(
            late_shape.contains("missing field `message`"),
            "{late_shape}"
        );
        let kind = decode(r#"{"kind":"chat","data":{}}"#).unwrap_err();
        assert!(kind.contains("unknown variant `chat`"), "{kind}");
        assert!(
            decode(r#"["e1","1.0"]"#).is_err(),
            "an array is not an event"
        );
    }
}

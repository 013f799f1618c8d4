//! What an incoming A2A message carries, checked once at the edge: its required `messageId` and
//! `role` ([`check_message`]) and its parts sorted by kind ([`MessageParts`]), for `input` to turn into
//! a skill's arguments.
//!
//! | part | becomes |
//! |---|---|
//! | one `data` part holding an object | the input object (a second data part, or one that is not an object: `-32602`) |
//! | `text` parts | one text, joined by blank lines |
//! | a `text` part with a `filename` | an input file `{name, text}` |
//! | a `raw` part (base64 bytes) | an input file `{name, base64}`, named by `filename` (else `file-N`); bad base64: `-32602` |
//! | a `url` part | `-32005`: the host does not fetch URLs for callers (no allow-list exists to make that safe) |
//!
//! Input files are the engine's `_files` items, which it writes into the call's workspace
//! within `[skills.workspace]`'s limits. Not here: which skill runs and where text goes
//! (`input`).

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::jsonrpc::{RpcCode, RpcError};
use super::wire::{Message, PartContent, Role};

/// Refuses a message without a `messageId` or a `role` (both required by A2A 1.0; a
/// `ROLE_UNSPECIFIED` role says nothing either), before anything runs.
pub(crate) fn check_message(message: &Message) -> Result<(), RpcError> {
    if message.role == Role::Unspecified {
        return Err(RpcError::new(
            RpcCode::InvalidParams,
            "message.role is required: send \"ROLE_USER\" for a message from the client",
        )
        .with_violations(vec![(
            "message.role".into(),
            "required, ROLE_USER or ROLE_AGENT (not ROLE_UNSPECIFIED)".into(),
        )]));
    }
    if message.message_id.trim().is_empty() {
        return Err(RpcError::new(
            RpcCode::InvalidParams,
            "message.messageId is required (a unique id the client gives each message)",
        )
        .with_violations(vec![(
            "message.messageId".into(),
            "required, non-empty".into(),
        )]));
    }
    Ok(())
}

/// A message's parts by kind.
#[derive(Debug, Default)]
pub(crate) struct MessageParts<'a> {
    /// The one data part's object.
    pub data: Option<&'a Map<String, Value>>,
    /// The texts of the text parts without a filename, in order.
    pub texts: Vec<&'a str>,
    /// The input files, as `_files` items.
    pub files: Vec<Value>,
}

impl<'a> MessageParts<'a> {
    /// Sorts `message`'s parts, refusing what no skill call can take.
    pub(crate) fn sort(message: &'a Message) -> Result<MessageParts<'a>, RpcError> {
        if message.parts.is_empty() {
            return Err(RpcError::new(
                RpcCode::InvalidParams,
                "the message has no parts: send a data part with the input object, text, or files",
            ));
        }
        let mut sorted = MessageParts::default();
        for (index, part) in message.parts.iter().enumerate() {
            let name = || {
                part.filename
                    .clone()
                    .filter(|n| !n.trim().is_empty())
                    .unwrap_or_else(|| format!("file-{}", index + 1))
            };
            match &part.content {
                PartContent::Data(Value::Object(object)) if sorted.data.is_none() => {
                    sorted.data = Some(object);
                }
                PartContent::Data(Value::Object(_)) => {
                    return Err(RpcError::new(
                        RpcCode::InvalidParams,
                        "the message has more than one data part; send the input object once",
                    ));
                }
                PartContent::Data(_) => {
                    return Err(RpcError::new(
                        RpcCode::InvalidParams,
                        "the data part must be a JSON object: the skill's input",
                    ));
                }
                PartContent::Text(text) if part.filename.is_some() => {
                    sorted.files.push(json!({"name": name(), "text": text}));
                }
                PartContent::Text(text) => sorted.texts.push(text),
                PartContent::Raw(encoded) => {
                    if base64::engine::general_purpose::STANDARD
                        .decode(encoded.trim())
                        .is_err()
                    {
                        return Err(RpcError::new(
                            RpcCode::InvalidParams,
                            format!("part {index}: `raw` is not valid base64"),
                        ));
                    }
                    sorted
                        .files
                        .push(json!({"name": name(), "base64": encoded}));
                }
                PartContent::Url(url) => {
                    return Err(RpcError::new(
                        RpcCode::ContentTypeNotSupported,
                        format!(
                            "part {index}: files by URL ({url}) are not fetched; send the \
                             file's bytes as a raw part"
                        ),
                    ));
                }
            }
        }
        Ok(sorted)
    }

    /// The text parts as one text, when there are any.
    pub(crate) fn text(&self) -> Option<String> {
        (!self.texts.is_empty()).then(|| self.texts.join("\n\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(parts: Value) -> Message {
        serde_json::from_value(json!({"messageId": "m", "role": "ROLE_USER", "parts": parts}))
            .unwrap()
    }

    #[test]
    fn a_data_part_texts_and_files_are_sorted_and_named() {
        let m = message(json!([
            {"data": {"a": 1}}, {"text": "one"}, {"raw": "aGk=", "filename": "hi.txt"},
            {"text": "two"}, {"raw": "AA=="}, {"text": "x,y", "filename": "t.csv"}
        ]));
        let parts = MessageParts::sort(&m).unwrap();
        assert_eq!(parts.data, json!({"a": 1}).as_object());
        assert_eq!(parts.text().as_deref(), Some("one\n\ntwo"));
        assert_eq!(
            Value::Array(parts.files),
            json!([{"name": "hi.txt", "base64": "aGk="}, {"name": "file-5", "base64": "AA=="},
                   {"name": "t.csv", "text": "x,y"}])
        );
    }

    #[test]
    fn what_no_call_can_take_is_refused_with_its_code() {
        let code = |parts: Value| MessageParts::sort(&message(parts)).unwrap_err().code;
        assert_eq!(code(json!([])), RpcCode::InvalidParams);
        assert_eq!(
            code(json!([{"data": {}}, {"data": {}}])),
            RpcCode::InvalidParams
        );
        assert_eq!(code(json!([{"data": [1]}])), RpcCode::InvalidParams);
        assert_eq!(code(json!([{"raw": "%%%"}])), RpcCode::InvalidParams);
        assert_eq!(
            code(json!([{"url": "https://x/y.pdf"}])),
            RpcCode::ContentTypeNotSupported
        );
        let mut m = message(json!([{"text": "hi"}]));
        m.message_id.clear();
        assert_eq!(check_message(&m).unwrap_err().code, RpcCode::InvalidParams);
        let mut m = message(json!([{"text": "hi"}]));
        m.role = Role::Unspecified;
        assert!(
            check_message(&m)
                .unwrap_err()
                .message
                .contains("message.role")
        );
    }
}

//! [`SharedJson`]: a JSON document that many requests send unchanged (a tool's input schema, an
//! output schema), shared by reference and written as JSON text once.
//!
//! An agent loop offers the same schemas on every turn of every call. Writing them from the
//! JSON tree each time walked every key and escaped every string again, per turn; a
//! `SharedJson` keeps its compact text beside the tree, written on first send, and request
//! bodies embed that text as it is ([`SharedJson::json_text`]).
//!
//! Not here: the request types that hold it (`types`), the wire bodies that embed it (each wire
//! module).

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON document shared by every request that sends it (cloning is one reference count), with
/// its compact JSON text written once. Reads as the [`Value`] it holds.
#[derive(Clone)]
pub struct SharedJson(Arc<Document>);

struct Document {
    value: Value,
    text: OnceLock<Box<RawValue>>,
}

impl SharedJson {
    /// Shares `value`.
    pub fn new(value: Value) -> Self {
        SharedJson(Arc::new(Document {
            value,
            text: OnceLock::new(),
        }))
    }

    /// The shared JSON value itself (its text, written once, is what goes on the wire).
    pub fn value(&self) -> &Value {
        &self.0.value
    }

    /// The document as compact JSON text, written on first use and kept: what a request body
    /// embeds (serializing a `&RawValue` with `serde_json` copies the text as it is).
    pub fn json_text(&self) -> &RawValue {
        self.0.text.get_or_init(|| {
            // Writing a `Value` cannot fail (string keys only), and its text is valid JSON.
            serde_json::value::to_raw_value(&self.0.value)
                .unwrap_or_else(|_| RawValue::NULL.to_owned())
        })
    }

    /// Whether both are the same shared document (not merely equal ones).
    pub fn ptr_eq(a: &SharedJson, b: &SharedJson) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl Deref for SharedJson {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0.value
    }
}

impl From<Value> for SharedJson {
    fn from(value: Value) -> Self {
        SharedJson::new(value)
    }
}

impl PartialEq for SharedJson {
    fn eq(&self, other: &Self) -> bool {
        SharedJson::ptr_eq(self, other) || self.0.value == other.0.value
    }
}

impl fmt::Debug for SharedJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0.value, f)
    }
}

/// Serializes the document itself, for any format; only the wire bodies, which are always
/// `serde_json`, embed [`SharedJson::json_text`].
impl Serialize for SharedJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.value.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SharedJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(SharedJson::new)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_text_is_the_compact_document_and_is_written_once() {
        let doc = SharedJson::new(
            json!({"type": "object", "properties": {"q": {"type": "string",
            "description": "a \"quoted\"\nline"}}}),
        );
        let text = doc.json_text();
        assert_eq!(text.get(), doc.value().to_string());
        let again = doc.clone();
        assert!(
            std::ptr::eq(text, again.json_text()),
            "one text for every clone"
        );
    }

    #[test]
    fn a_body_embeds_the_text_and_other_formats_see_the_document() {
        #[derive(Serialize)]
        struct Body<'a> {
            schema: &'a RawValue,
        }
        let doc = SharedJson::from(json!({"b": [1, 2.5, null], "a": "é"}));
        let body = serde_json::to_string(&Body {
            schema: doc.json_text(),
        })
        .unwrap();
        assert_eq!(body, r#"{"schema":{"b":[1,2.5,null],"a":"é"}}"#);
        // Through serde's generic path (here into a `Value`) it is the document, not a token.
        assert_eq!(serde_json::to_value(&doc).unwrap(), *doc.value());
        let back: SharedJson = serde_json::from_str(&serde_json::to_string(&doc).unwrap()).unwrap();
        assert_eq!(back, doc);
        assert!(!SharedJson::ptr_eq(&back, &doc));
        assert_eq!(format!("{doc:?}"), format!("{:?}", doc.value()));
    }
}

//! The A2A protobuf schema at run time: the descriptor set `host/build.rs` compiles from
//! `proto/a2a.proto`, the methods of its `A2AService`, and the two conversions the binding
//! needs — a request's protobuf bytes into the ProtoJSON params the A2A methods read, and a
//! method's ProtoJSON answer into the protobuf bytes of its response type.
//!
//! Why reflection rather than generated structs: the methods (`super::super::methods`) already
//! speak ProtoJSON, the JSON form of these very messages, so the binding only has to translate
//! between the two encodings of one schema. `prost-reflect` does that by the official ProtoJSON
//! mapping (camelCase names, enum names, 64-bit integers as strings, `Struct`/`Value`/
//! `Timestamp` as JSON) for every message of the file, with no code generated per message.
//!
//! Not here: gRPC framing and status codes (`super`, `super::status`).

use std::sync::LazyLock;

use prost::Message as _;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor};
use serde_json::Value;

/// The descriptor set `build.rs` wrote.
const DESCRIPTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/a2a_descriptors.binpb"));

/// The full name of the service every method belongs to.
pub(crate) const SERVICE: &str = "lf.a2a.v1.A2AService";

/// The schema, decoded once; `None` only if the build wrote a descriptor set that does not
/// decode or lacks the service (every method then answers `INTERNAL`, naming this).
static SCHEMA: LazyLock<Option<DescriptorPool>> = LazyLock::new(|| {
    DescriptorPool::decode(DESCRIPTORS)
        .ok()
        .filter(|pool| pool.get_service_by_name(SERVICE).is_some())
});

/// Why a method or a message cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SchemaError {
    /// The compiled schema is unusable (a build problem, not a client's).
    #[error("the A2A protobuf schema compiled into this build is unusable; rebuild skillet-host")]
    Unusable,
    /// The service has no method of this name.
    #[error("{SERVICE} has no method {0:?}")]
    UnknownMethod(String),
    /// A request's bytes are not the method's input message.
    #[error("the request is not a valid {message}: {reason}")]
    Decode {
        /// The message's full name.
        message: String,
        /// What the decoder said.
        reason: String,
    },
    /// An answer does not fit the method's output message.
    #[error("the answer does not fit {message}: {reason}")]
    Encode {
        /// The message's full name.
        message: String,
        /// What the mapping said.
        reason: String,
    },
}

/// One method of `A2AService`: its name and its message types.
#[derive(Debug, Clone)]
pub(crate) struct Method {
    /// The method name, as the JSON-RPC binding names it too (`SendMessage`, …).
    pub(crate) name: String,
    /// Whether it answers with a stream of messages (`SendStreamingMessage`, `SubscribeToTask`).
    pub(crate) streaming: bool,
    input: MessageDescriptor,
    output: MessageDescriptor,
}

impl Method {
    /// The method called `name`.
    pub(crate) fn named(name: &str) -> Result<Method, SchemaError> {
        let pool = SCHEMA.as_ref().ok_or(SchemaError::Unusable)?;
        let service = pool
            .get_service_by_name(SERVICE)
            .ok_or(SchemaError::Unusable)?;
        let method = service
            .methods()
            .find(|m| m.name() == name)
            .ok_or_else(|| SchemaError::UnknownMethod(name.to_owned()))?;
        Ok(Method {
            name: method.name().to_owned(),
            streaming: method.is_server_streaming(),
            input: method.input(),
            output: method.output(),
        })
    }

    /// A request's protobuf bytes as the ProtoJSON params of the method.
    pub(crate) fn params(&self, bytes: &[u8]) -> Result<Value, SchemaError> {
        let decode_error = |reason: String| SchemaError::Decode {
            message: self.input.full_name().to_owned(),
            reason,
        };
        let message = DynamicMessage::decode(self.input.clone(), bytes)
            .map_err(|e| decode_error(e.to_string()))?;
        serde_json::to_value(&message).map_err(|e| decode_error(e.to_string()))
    }

    /// A ProtoJSON answer as the protobuf bytes of the method's output message (for a
    /// streaming method: of one `StreamResponse`).
    pub(crate) fn answer(&self, json: Value) -> Result<Vec<u8>, SchemaError> {
        encode(&self.output, json)
    }
}

/// `json` (ProtoJSON) as the bytes of a `descriptor` message. Fields the schema does not know
/// are left out (A2A §5.7: ignore unrecognized fields); `null` is the empty message.
fn encode(descriptor: &MessageDescriptor, json: Value) -> Result<Vec<u8>, SchemaError> {
    let json = if json.is_null() {
        Value::Object(Default::default())
    } else {
        json
    };
    let options = DeserializeOptions::new().deny_unknown_fields(false);
    let message = DynamicMessage::deserialize_with_options(descriptor.clone(), json, &options)
        .map_err(|e| SchemaError::Encode {
            message: descriptor.full_name().to_owned(),
            reason: e.to_string(),
        })?;
    Ok(message.encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_method_of_the_json_rpc_binding_is_a_method_of_the_grpc_service() {
        for name in crate::a2a::version::METHODS {
            let method = Method::named(name).unwrap();
            assert_eq!(
                method.streaming,
                crate::a2a::version::is_streaming(name),
                "{name}"
            );
        }
        assert!(matches!(
            Method::named("message/send"),
            Err(SchemaError::UnknownMethod(_))
        ));
    }

    #[test]
    fn a_request_decodes_to_the_protojson_params_the_methods_read() {
        let send = Method::named("SendMessage").unwrap();
        let params = json!({
            "message": {"messageId": "m1", "role": "ROLE_USER",
                "parts": [{"data": {"text": "hi"}}, {"raw": "AAE="}],
                "metadata": {"skillId": "echo"}},
            "configuration": {"historyLength": 0, "returnImmediately": true}
        });
        // The request's bytes, as a client's stub would send them.
        let bytes = encode(&send.input, params.clone()).unwrap();
        assert_eq!(send.params(&bytes).unwrap(), params);
        assert!(matches!(
            send.params(b"\xff\xff\xff"),
            Err(SchemaError::Decode { .. })
        ));
    }

    #[test]
    fn an_answer_encodes_to_the_output_message_leaving_unknown_fields_out() {
        let get = Method::named("GetTask").unwrap();
        let task = json!({"id": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00Z"},
            "kind": "task"});
        let bytes = get.answer(task).unwrap();
        let back = DynamicMessage::decode(get.output.clone(), bytes.as_slice()).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            json!({"id": "t1", "contextId": "c1",
                "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00Z"}})
        );
        let delete = Method::named("DeleteTaskPushNotificationConfig").unwrap();
        assert_eq!(delete.answer(Value::Null).unwrap(), Vec::<u8>::new());
        assert!(matches!(
            get.answer(json!({"history": "not a list"})),
            Err(SchemaError::Encode { .. })
        ));
    }
}

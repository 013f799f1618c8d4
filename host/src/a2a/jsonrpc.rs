//! JSON-RPC 2.0 framing of the A2A binding: decoding one request envelope (every way it can be
//! malformed), the A2A error codes, and encoding the one response to it.
//!
//! | input | answer |
//! |---|---|
//! | not JSON / not UTF-8 | `-32700` parse error, `id: null` |
//! | a JSON array (a batch) | `-32600` invalid request, `id: null` — batches are not supported |
//! | not an object; `jsonrpc` not `"2.0"`; no `id` or an `id` that is not a string or number; `method` not a string | `-32600`, with the `id` when it could be read |
//! | an unknown method | `-32601` |
//! | `params` missing or of the wrong shape | `-32602` ([`params`], and [`history_length`] for a negative `historyLength`) |
//!
//! A request without `id` (a notification) is answered with `-32600` too: every A2A method has a
//! result, so the binding treats id-less requests as malformed rather than staying silent.
//! Method semantics are not here (`methods`), nor HTTP (`http`).

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// `google.rpc.ErrorInfo`, the detail type the A2A SDKs read an error's reason from.
const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// `google.rpc.BadRequest`, for input violations.
const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";
/// The `ErrorInfo.domain` of A2A errors.
const A2A_DOMAIN: &str = "a2a-protocol.org";

/// A JSON-RPC / A2A error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcCode {
    /// `-32700`.
    ParseError,
    /// `-32600`.
    InvalidRequest,
    /// `-32601`.
    MethodNotFound,
    /// `-32602`.
    InvalidParams,
    /// `-32603`.
    Internal,
    /// `-32001`.
    TaskNotFound,
    /// `-32002`.
    TaskNotCancelable,
    /// `-32003`.
    PushNotificationNotSupported,
    /// `-32004`.
    UnsupportedOperation,
    /// `-32005`.
    ContentTypeNotSupported,
    /// `-32007`.
    ExtendedAgentCardNotConfigured,
    /// `-32009`.
    VersionNotSupported,
}

impl RpcCode {
    /// The JSON-RPC `error.code` this variant is sent as (e.g. `-32700` for a parse error).
    pub fn code(self) -> i64 {
        match self {
            RpcCode::ParseError => -32700,
            RpcCode::InvalidRequest => -32600,
            RpcCode::MethodNotFound => -32601,
            RpcCode::InvalidParams => -32602,
            RpcCode::Internal => -32603,
            RpcCode::TaskNotFound => -32001,
            RpcCode::TaskNotCancelable => -32002,
            RpcCode::PushNotificationNotSupported => -32003,
            RpcCode::UnsupportedOperation => -32004,
            RpcCode::ContentTypeNotSupported => -32005,
            RpcCode::ExtendedAgentCardNotConfigured => -32007,
            RpcCode::VersionNotSupported => -32009,
        }
    }

    /// The `ErrorInfo.reason` of the A2A spec.
    pub fn reason(self) -> &'static str {
        match self {
            RpcCode::ParseError => "PARSE_ERROR",
            RpcCode::InvalidRequest => "INVALID_REQUEST",
            RpcCode::MethodNotFound => "METHOD_NOT_FOUND",
            RpcCode::InvalidParams => "INVALID_PARAMS",
            RpcCode::Internal => "INTERNAL_ERROR",
            RpcCode::TaskNotFound => "TASK_NOT_FOUND",
            RpcCode::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            RpcCode::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            RpcCode::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            RpcCode::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            RpcCode::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            RpcCode::VersionNotSupported => "VERSION_NOT_SUPPORTED",
        }
    }
}

/// An error answer: code, message, and `google.rpc` detail objects.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC or A2A error code the answer carries.
    pub code: RpcCode,
    /// What went wrong, for a person.
    pub message: String,
    /// Structured details (boxed: errors travel in `Result`s).
    details: Box<ErrorDetails>,
}

/// The structured part of an [`RpcError`].
#[derive(Debug, Clone, Default, PartialEq)]
struct ErrorDetails {
    /// Extra `ErrorInfo.metadata` entries (string values).
    metadata: Map<String, Value>,
    /// Input violations as `(field, description)`, sent as a `BadRequest` detail.
    violations: Vec<(String, String)>,
}

impl RpcError {
    /// An error with no details beyond its reason.
    pub fn new(code: RpcCode, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            details: Box::default(),
        }
    }

    /// Adds an `ErrorInfo.metadata` entry.
    pub(crate) fn with_metadata(mut self, key: &str, value: impl Into<String>) -> RpcError {
        self.details
            .metadata
            .insert(key.to_owned(), Value::String(value.into()));
        self
    }

    /// Adds input violations.
    pub(crate) fn with_violations(mut self, violations: Vec<(String, String)>) -> RpcError {
        self.details.violations = violations;
        self
    }

    /// The JSON-RPC `error` object.
    pub fn to_json(&self) -> Value {
        let mut data = vec![json!({
            "@type": ERROR_INFO_TYPE,
            "reason": self.code.reason(),
            "domain": A2A_DOMAIN,
            "metadata": self.details.metadata,
        })];
        if !self.details.violations.is_empty() {
            let field_violations: Vec<Value> = self
                .details
                .violations
                .iter()
                .map(|(field, description)| json!({"field": field, "description": description}))
                .collect();
            data.push(json!({"@type": BAD_REQUEST_TYPE, "fieldViolations": field_violations}));
        }
        json!({"code": self.code.code(), "message": self.message, "data": data})
    }
}

/// A well-formed request envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcRequest {
    /// The request id (a string or a number), echoed in the answer.
    pub id: Value,
    /// The method name.
    pub method: String,
    /// The params (`Value::Null` when absent).
    pub params: Value,
}

/// Decodes one request body. The error carries the id to answer with (`null` when unknown).
pub(crate) fn decode(body: &[u8]) -> Result<RpcRequest, (Value, RpcError)> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        (
            Value::Null,
            RpcError::new(RpcCode::ParseError, format!("invalid JSON payload: {e}")),
        )
    })?;
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err((
                Value::Null,
                RpcError::new(
                    RpcCode::InvalidRequest,
                    "batch requests are not supported; send one request per HTTP request",
                ),
            ));
        }
        _ => {
            return Err((
                Value::Null,
                RpcError::new(
                    RpcCode::InvalidRequest,
                    "a JSON-RPC request must be a JSON object",
                ),
            ));
        }
    };
    let id = match object.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        Some(_) => {
            return Err((
                Value::Null,
                RpcError::new(RpcCode::InvalidRequest, "`id` must be a string or a number"),
            ));
        }
        None => {
            return Err((
                Value::Null,
                RpcError::new(
                    RpcCode::InvalidRequest,
                    "`id` is required: every A2A method answers, so notifications are not accepted",
                ),
            ));
        }
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((
            id,
            RpcError::new(RpcCode::InvalidRequest, "`jsonrpc` must be \"2.0\""),
        ));
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return Err((
            id,
            RpcError::new(RpcCode::InvalidRequest, "`method` must be a string"),
        ));
    };
    Ok(RpcRequest {
        method: method.to_owned(),
        params: object.get("params").cloned().unwrap_or(Value::Null),
        id,
    })
}

/// The success answer to request `id`.
pub(crate) fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The error answer to request `id`.
pub(crate) fn error(id: &Value, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()})
}

/// `params` decoded as the method's parameter type: `-32602` when it is not an object or not
/// of that shape.
pub(super) fn params<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    if !params.is_object() {
        return Err(RpcError::new(
            RpcCode::InvalidParams,
            "`params` must be an object",
        ));
    }
    serde_json::from_value(params)
        .map_err(|e| RpcError::new(RpcCode::InvalidParams, format!("invalid params: {e}")))
}

/// A request's `historyLength`: `None` (all), or how many; negative is `-32602`.
pub(super) fn history_length(requested: Option<i64>) -> Result<Option<usize>, RpcError> {
    match requested {
        None => Ok(None),
        Some(n) => usize::try_from(n).map(Some).map_err(|_| {
            RpcError::new(
                RpcCode::InvalidParams,
                format!("historyLength must not be negative (got {n})"),
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_of(body: &[u8]) -> (Value, i64) {
        let (id, e) = decode(body).unwrap_err();
        (id, e.code.code())
    }

    #[test]
    fn every_malformed_envelope_has_its_code_and_keeps_a_readable_id() {
        assert_eq!(code_of(b"{nope"), (Value::Null, -32700));
        assert_eq!(code_of(b"\xff\xfe"), (Value::Null, -32700));
        assert_eq!(code_of(b"[]"), (Value::Null, -32600));
        assert_eq!(code_of(b"42"), (Value::Null, -32600));
        assert_eq!(
            code_of(br#"{"jsonrpc":"2.0","method":"GetTask"}"#).1,
            -32600
        );
        assert_eq!(
            code_of(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask"}"#).1,
            -32600
        );
        assert_eq!(
            code_of(br#"{"jsonrpc":"1.0","id":7,"method":"GetTask"}"#),
            (json!(7), -32600)
        );
        assert_eq!(
            code_of(br#"{"jsonrpc":"2.0","id":"x","method":5}"#),
            (json!("x"), -32600)
        );
    }

    #[test]
    fn errors_carry_the_a2a_reason_and_violations() {
        let e = RpcError::new(RpcCode::InvalidParams, "bad")
            .with_violations(vec![("text".into(), "required".into())]);
        let json = e.to_json();
        assert_eq!(json["code"], -32602);
        assert_eq!(json["data"][0]["reason"], "INVALID_PARAMS");
        assert_eq!(json["data"][1]["fieldViolations"][0]["field"], "text");
    }
}

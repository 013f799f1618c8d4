//! [`Wire`]: the shape every provider module fills in — parse a request into the neutral form,
//! render a neutral reply whole or as stream frames, render errors in the provider's own shape.
//! A fourth provider is added by implementing this trait and routing one path to it.

use serde_json::Value;

use crate::delivery::Frames;
use crate::reply::Reply;
use crate::request::{BadRequest, ChatRequest, Endpoint};

/// One provider's chat wire format.
pub(crate) trait Wire: Send + Sync + 'static {
    /// The endpoint this wire serves.
    const ENDPOINT: Endpoint;
    /// `Content-Type` of streamed responses.
    const STREAM_CONTENT_TYPE: &'static str;

    /// Parses a request body (already JSON) and its headers.
    fn parse(body: &Value, headers: Vec<(String, String)>) -> Result<ChatRequest, BadRequest>;

    /// Completes a parsed request from its URL path, for an API that names the model or the
    /// streaming there (Gemini's `/v1beta/models/{model}:streamGenerateContent`). Default: the
    /// request as parsed.
    fn at_path(request: ChatRequest, path: &str) -> Result<ChatRequest, BadRequest> {
        let _ = path;
        Ok(request)
    }

    /// The non-streamed response body.
    fn whole(reply: &Reply, req: &ChatRequest) -> Value;

    /// The streamed response frames.
    fn frames(reply: &Reply, req: &ChatRequest) -> Frames;

    /// An error body for `status`; `code` overrides the provider's default error code/type.
    fn error(status: u16, code: Option<&str>, message: &str) -> Value;

    /// A mid-stream error frame (sent with status 200 after some chunks).
    fn stream_error_frame(status: u16, code: Option<&str>, message: &str) -> bytes::Bytes;

    /// A stream frame whose payload is not JSON, framed correctly otherwise.
    fn malformed_frame() -> bytes::Bytes;
}

/// A field that must be a string.
pub(crate) fn required_str<'a>(body: &'a Value, field: &str) -> Result<&'a str, BadRequest> {
    body.get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| BadRequest(format!("`{field}` is required and must be a string")))
}

/// A field that must be an array.
pub(crate) fn required_array<'a>(
    body: &'a Value,
    field: &str,
) -> Result<&'a Vec<Value>, BadRequest> {
    body.get(field)
        .and_then(Value::as_array)
        .ok_or_else(|| BadRequest(format!("`{field}` is required and must be an array")))
}

/// An optional boolean field; present but not a boolean is an error.
pub(crate) fn optional_bool(body: &Value, field: &str) -> Result<Option<bool>, BadRequest> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(BadRequest(format!("`{field}` must be a boolean"))),
    }
}

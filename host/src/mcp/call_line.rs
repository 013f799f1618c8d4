//! A `tools/call` request line read in one typed pass: the message MCP hosts send most, turned
//! into the value rmcp's own decoding gives, without its buffering.
//!
//! rmcp decodes every incoming line generically: the message is buffered whole to find its
//! shape (request, notification, response, error), buffered again to pick the request type by
//! `method`, and `params` a third time to take `_meta` apart from the rest (serde's untagged and
//! flattened paths, which also build and drop errors along the way) — several times the work of
//! reading it once. [`decode`] reads a line with exactly
//! the keys a `tools/call` has (`jsonrpc`, `id`, `method`, `params` with `name`, `arguments`,
//! `_meta`) straight into typed fields, and builds the message the way rmcp's decoding does:
//! `_meta` into the request's extensions as a `RequestMetaObject`, the parameters' own `meta`
//! left empty. Anything else — another method, another key, a key twice, a BOM, anything it
//! does not read — is `None`, and the caller decodes the line as rmcp does (`line_transport`),
//! so what a line means never depends on which path read it. The tests hold the two paths
//! equal on lines of every shape.
//!
//! Not here: reading lines (`line_transport`), running the call (`handler`).

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, JsonObject, JsonRpcVersion2_0,
    Request, RequestId, RequestMetaObject,
};
use serde::Deserialize;

/// The method this fast path reads.
const METHOD: &str = "tools/call";

/// A `tools/call` request with no key besides these.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallLine<'a> {
    #[allow(dead_code)] // Its type accepts "2.0" only; the value itself carries nothing.
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    params: CallParams,
}

/// A `tools/call`'s parameters with no key besides these.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    #[serde(rename = "_meta", default)]
    meta: Option<JsonObject>,
}

/// `line` (without its newline) as the message rmcp decodes it to, if it is a `tools/call`
/// request of the plain shape this reads; `None` for every other line (see the module docs).
pub(crate) fn decode(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    let call: CallLine<'_> = serde_json::from_slice(line).ok()?;
    if call.method != METHOD {
        return None;
    }
    let CallParams {
        name,
        arguments,
        meta,
    } = call.params;
    let mut params = CallToolRequestParams::new(name);
    params.arguments = arguments;
    let mut request = Request::new(params);
    if let Some(meta) = meta {
        request.extensions.insert(RequestMetaObject::from(meta));
    }
    Some(ClientJsonRpcMessage::request(
        ClientRequest::CallToolRequest(request),
        call.id,
    ))
}

/// The parts of a decoded `tools/call` the handler reads — the id, the parameters, the `_meta`
/// in the extensions — for holding the two decodings equal (tests, the fuzz target); `None` for
/// any other message. rmcp's `Request` has no equality of its own.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn call_parts(
    message: &ClientJsonRpcMessage,
) -> Option<(RequestId, CallToolRequestParams, Option<serde_json::Value>)> {
    let rmcp::model::JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let ClientRequest::CallToolRequest(call) = &request.request else {
        return None;
    };
    let meta = call
        .extensions
        .get::<RequestMetaObject>()
        .and_then(|meta| serde_json::to_value(meta).ok());
    Some((request.id.clone(), call.params.clone(), meta))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// What rmcp's own decoding makes of `line`.
    fn rmcp_decode(line: &[u8]) -> Option<ClientJsonRpcMessage> {
        serde_json::from_slice(line).ok()
    }

    fn call(id: Value, params: Value) -> String {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
    }

    /// `tools/call` lines of every plain shape: ids of both kinds, `_meta` with a progress token
    /// and a trace context, no or null arguments, keys in any order, escapes, whitespace.
    fn read_here() -> Vec<String> {
        vec![
            call(json!(1), json!({"name": "summarize", "arguments": {"text": "hi"}})),
            call(json!("req-7"), json!({"name": "summarize", "arguments": {}})),
            call(json!(-3), json!({"name": "summarize"})),
            call(json!(9), json!({"name": "summarize", "arguments": null})),
            call(
                json!(i64::MAX),
                json!({"name": "summarize", "arguments": {"a": [1, 2.5, null, true]},
                    "_meta": {"progressToken": 5, "traceparent": "00-ab-cd-01"}}),
            ),
            call(
                json!(4),
                json!({"_meta": {"progressToken": "tok"}, "arguments": {"q": "\"\\\n\u{1F980}"},
                    "name": "na\"me"}),
            ),
            r#" { "params" : {"name":"s","arguments":{"x":1}} , "method":"tools/call", "id":2, "jsonrpc":"2.0" } "#.into(),
            r#"{"jsonrpc":"2.0","id":3,"method":"tools\/call","params":{"name":"s"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"s","_meta":{"progressToken":1.5}}}"#.into(),
        ]
    }

    /// Lines the fast path leaves to rmcp: other keys, other methods, malformed or odd values.
    fn left_to_rmcp() -> Vec<String> {
        vec![
            call(json!(5), json!({"name": "s", "task": {"ttl": 1000}})),
            call(json!(6), json!({"name": "s", "requestState": "abc"})),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"s"},"result":{}}"#.into(),
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{}}"#.into(),
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"s"}}"#.into(),
            r#"{"jsonrpc":"1.0","id":9,"method":"tools/call","params":{"name":"s"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":10,"id":11,"method":"tools/call","params":{"name":"s"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"s","name":"t"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"s"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"s"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":7}}"#.into(),
            r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"s","arguments":[1]}}"#.into(),
            r#"{"jsonrpc":"2.0","id":16,"method":"tools/call","params":null}"#.into(),
            r#"{"jsonrpc":"2.0","id":17,"method":"tools/call"}"#.into(),
            "\u{feff}".to_owned() + &call(json!(18), json!({"name": "s"})),
            r#"{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"s"}"#.into(),
            "not json".into(),
            String::new(),
        ]
    }

    #[test]
    fn every_line_read_here_means_what_rmcp_reads_in_it() {
        for line in read_here() {
            let ours = decode(line.as_bytes()).unwrap_or_else(|| panic!("not read here: {line}"));
            let theirs = rmcp_decode(line.as_bytes())
                .unwrap_or_else(|| panic!("rmcp refuses a line read here: {line}"));
            assert!(call_parts(&ours).is_some(), "{line}");
            assert_eq!(call_parts(&ours), call_parts(&theirs), "{line}");
        }
    }

    #[test]
    fn other_methods_other_keys_and_malformed_lines_are_left_to_rmcp() {
        for line in left_to_rmcp() {
            assert!(decode(line.as_bytes()).is_none(), "read here: {line}");
        }
    }

    #[test]
    fn meta_goes_into_the_extensions_as_rmcp_puts_it() {
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","_meta":{"progressToken":5}}}"#;
        let (id, params, meta) = call_parts(&decode(line.as_bytes()).unwrap()).unwrap();
        assert_eq!(id, RequestId::Number(1));
        assert_eq!(params.name, "s");
        assert!(params.meta.is_none());
        assert_eq!(meta, Some(json!({"progressToken": 5})));
    }
}

//! Which MCP revision a request speaks, and the methods the 2026-07-28 revision removed.
//!
//! A request speaks 2026-07-28 when its `_meta` names that protocol version (or a later one)
//! or its session began without `initialize` (rmcp's negotiated version then is the request's
//! own). On such a request the removed methods — `initialize`, `ping`, `logging/setLevel`,
//! `resources/subscribe`, `resources/unsubscribe` — are `-32601` (over HTTP rmcp answers that
//! code with `404 Not Found`, as the revision's transport asks), whatever their params; on the
//! `initialize` era they are served as before. `ping` and the two subscribe methods rmcp
//! already refuses itself when their params decode; the rest are refused here
//! (`McpHandler`). Over HTTP a removed method naming 2026-07-28 in its `_meta` is refused
//! before rmcp sees it ([`removed_refusal`]): rmcp would open a session for an `initialize`,
//! and check the revision's headers (`Mcp-Name`) of a method that no longer exists.
//!
//! Not here: what replaces them (`subscriptions/listen`: `listen`; the per-request log level:
//! `notify`).

use rmcp::model::{ErrorCode, ErrorData, ProtocolVersion, RequestMetaObject};
use serde_json::Value;

/// The methods 2026-07-28 removed (requests only: its removed notifications need no answer).
pub(crate) const REMOVED_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The `_meta` key naming a request's protocol version.
const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// Whether `version` is 2026-07-28 or later (ISO dates compare as strings).
pub(crate) fn is_2026(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether a request's own `_meta` names 2026-07-28 or later.
pub(crate) fn meta_is_2026(meta: &RequestMetaObject) -> bool {
    is_2026(meta.protocol_version().as_ref())
}

/// The `-32601` a removed `method` gets on a 2026-07-28 request.
pub(crate) fn removed(method: &str) -> ErrorData {
    let instead = match method {
        "initialize" => "send each request with its version in `_meta` (`server/discover` first)",
        "ping" => "any request shows the server is alive",
        "logging/setLevel" => "put `io.modelcontextprotocol/logLevel` in a request's `_meta`",
        _ => "use `subscriptions/listen`",
    };
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("{method}: removed in MCP 2026-07-28; {instead}"),
        None,
    )
}

/// Over HTTP: the JSON-RPC error answering `body` when it is a removed method's request whose
/// `_meta` names 2026-07-28 or later (its `id` echoed), else `None`.
pub(crate) fn removed_refusal(body: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct Probe {
        method: Option<String>,
        #[serde(default)]
        id: Value,
        #[serde(default)]
        params: Value,
    }
    let probe: Probe = serde_json::from_slice(body).ok()?;
    let method = probe.method?;
    if !REMOVED_METHODS.contains(&method.as_str()) {
        return None;
    }
    let version = probe
        .params
        .get("_meta")?
        .get(PROTOCOL_VERSION_KEY)?
        .as_str()?;
    if version < ProtocolVersion::V_2026_07_28.as_str() {
        return None;
    }
    let error = removed(&method);
    Some(serde_json::json!({
        "jsonrpc": "2.0",
        "id": probe.id,
        "error": {"code": error.code.0, "message": error.message},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_method_naming_2026_in_its_meta_is_refused_with_its_id() {
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let error = removed_refusal(body).expect("refused");
        assert_eq!(error["id"], 7);
        assert_eq!(error["error"]["code"], -32601);
        let subscribe = br#"{"jsonrpc":"2.0","id":"s","method":"resources/subscribe","params":{"uri":"skill://a/SKILL.md","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(removed_refusal(subscribe).expect("refused")["id"], "s");
    }

    #[test]
    fn an_initialize_of_the_handshake_era_passes() {
        let legacy = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
        assert!(removed_refusal(legacy).is_none());
        let older = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}"#;
        assert!(removed_refusal(older).is_none());
        let other = br#"{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert!(removed_refusal(other).is_none());
    }
}

//! Which A2A version a request speaks, from its `A2A-Version` header (or query parameter) and
//! its method name, and which methods answer as streams.
//!
//! | `A2A-Version` | method | answer |
//! |---|---|---|
//! | `1.0` or `1.0.x` | any | served |
//! | any other version | any | `-32009` VersionNotSupported |
//! | absent or empty | a 1.0 method name (`SendMessage`, `GetTask`, …) | served: the name says 1.0 |
//! | absent or empty | anything else (a 0.3 name such as `message/send`) | `-32009`: an absent header means 0.3 (A2A §3.6.2), which is not served |
//!
//! Not here: the methods themselves (`methods`), HTTP (`http`).

use axum::http::HeaderMap;

use super::card::A2A_PROTOCOL_VERSION;
use super::jsonrpc::{RpcCode, RpcError};

/// The service-parameter header carrying the protocol version.
pub(crate) const VERSION_HEADER: &str = "A2A-Version";

/// The version assumed when a request names none (A2A §3.6.2).
const IMPLIED_VERSION: &str = "0.3";

/// The method names of A2A 1.0's JSON-RPC binding.
pub(crate) const METHODS: &[&str] = &[
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
];

/// The methods answered as an SSE stream — their errors too.
pub(crate) const STREAMING_METHODS: &[&str] = &["SendStreamingMessage", "SubscribeToTask"];

/// Whether `method` is answered as a stream.
pub(crate) fn is_streaming(method: &str) -> bool {
    STREAMING_METHODS.contains(&method)
}

/// Accepts a request for `method` with these headers and query, or answers why not.
pub(crate) fn check(
    headers: &HeaderMap,
    query: Option<&str>,
    method: &str,
) -> Result<(), RpcError> {
    let version = match requested_version(headers, query) {
        Some(version) => version,
        None if METHODS.contains(&method) => return Ok(()),
        None => IMPLIED_VERSION.to_owned(),
    };
    if is_supported(&version) {
        return Ok(());
    }
    Err(RpcError::new(
        RpcCode::VersionNotSupported,
        format!(
            "A2A version {version:?} is not supported; send the header \
             {VERSION_HEADER}: {A2A_PROTOCOL_VERSION} and a 1.0 method name"
        ),
    ))
}

/// The version the request names, when it names one.
fn requested_version(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    let from_header = headers
        .get(VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty());
    let from_query = || {
        query?
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| k.eq_ignore_ascii_case(VERSION_HEADER))
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    };
    from_header.or_else(from_query).map(str::to_owned)
}

/// `1.0` and `1.0.x`: patch versions do not affect compatibility.
fn is_supported(version: &str) -> bool {
    let mut parts = version.split('.');
    matches!((parts.next(), parts.next()), (Some("1"), Some("0")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn an_absent_version_is_1_0_for_a_1_0_name_and_0_3_otherwise() {
        let mut headers = HeaderMap::new();
        assert!(check(&headers, None, "GetTask").is_ok());
        assert_eq!(
            check(&headers, None, "tasks/get").unwrap_err().code,
            RpcCode::VersionNotSupported
        );
        assert!(check(&headers, Some("A2A-Version=1.0"), "tasks/get").is_ok());
        headers.insert("a2a-version", HeaderValue::from_static("1.0.3"));
        assert!(check(&headers, None, "GetTask").is_ok());
        headers.insert("a2a-version", HeaderValue::from_static("0.3"));
        assert!(check(&headers, None, "GetTask").is_err());
        assert!(is_supported("1.0") && is_supported("1.0.3"));
        assert!(!is_supported("0.3") && !is_supported("1.1") && !is_supported("1"));
    }
}

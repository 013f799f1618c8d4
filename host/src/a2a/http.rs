//! The A2A JSON-RPC binding over HTTP: `POST /a2a` (axum). One request body in → one JSON-RPC
//! answer out, as `application/json`, or as an SSE stream (`text/event-stream`, one
//! `data: {"jsonrpc":"2.0","id":…,"result":StreamResponse}` event per item) for
//! `SendStreamingMessage` and `SubscribeToTask`.
//!
//! Every JSON-RPC answer, errors included, is HTTP 200, except a body over the size limit (413,
//! still with a JSON-RPC error body). The protocol version is the `A2A-Version` header (or
//! query parameter); an absent or empty one means `0.3` (A2A §3.6.2) — unless the method has a
//! 1.0 name (`SendMessage`, not `message/send`), which only a 1.0 client sends — and any version
//! other than `1.0` (patch ignored) is answered with `-32009` VersionNotSupported. Errors detected
//! before a stream starts are plain JSON answers; a stream, once started, always ends with the
//! task's terminal status.

use axum::Router;
use axum::body::Body;
use axum::extract::{Request as HttpRequest, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde_json::Value;
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::card::A2A_PROTOCOL_VERSION;
use super::jsonrpc::{self, RpcCode, RpcError};
use super::methods::{A2aAdapter, Answer};

/// The path of the JSON-RPC endpoint.
pub const JSONRPC_PATH: &str = "/a2a";

/// The service-parameter header carrying the protocol version.
pub const VERSION_HEADER: &str = "A2A-Version";

/// The version assumed when a request names none (A2A §3.6.2).
const IMPLIED_VERSION: &str = "0.3";

#[derive(Clone)]
struct A2aState {
    adapter: A2aAdapter,
    max_body_bytes: usize,
}

/// The routes of the binding, to merge into the host's HTTP router.
pub fn router(adapter: A2aAdapter, max_body_bytes: usize) -> Router {
    Router::new()
        .route(JSONRPC_PATH, post(post_jsonrpc))
        .with_state(A2aState {
            adapter,
            max_body_bytes,
        })
}

async fn post_jsonrpc(State(state): State<A2aState>, request: HttpRequest) -> Response {
    let caller = crate::auth::http::caller_of(request.extensions());
    let version = requested_version(request.headers(), request.uri().query());
    let limit = state.max_body_bytes;
    let Ok(body) = axum::body::to_bytes(request.into_body(), limit).await else {
        let error = RpcError::new(
            RpcCode::InvalidRequest,
            format!("request exceeds the {limit}-byte limit"),
        );
        return json_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &jsonrpc::error(&Value::Null, &error),
        );
    };
    let request = match jsonrpc::decode(&body) {
        Ok(request) => request,
        Err((id, error)) => return json_response(StatusCode::OK, &jsonrpc::error(&id, &error)),
    };
    let version = version.unwrap_or_else(|| implied_version(&request.method).to_owned());
    if !is_supported(&version) {
        let error = RpcError::new(
            RpcCode::VersionNotSupported,
            format!(
                "A2A version {version:?} is not supported; send the header \
                 {VERSION_HEADER}: {A2A_PROTOCOL_VERSION}"
            ),
        );
        return json_response(StatusCode::OK, &jsonrpc::error(&request.id, &error));
    }
    let id = request.id.clone();
    match state.adapter.handle_as(request, &caller).await {
        Ok(Answer::Result(result)) => json_response(StatusCode::OK, &jsonrpc::result(&id, result)),
        Ok(Answer::Stream { first, rest }) => {
            let items = futures::stream::once(async move { *first })
                .chain(UnboundedReceiverStream::new(rest))
                .map(move |item| {
                    let result = serde_json::to_value(&item).unwrap_or(Value::Null);
                    let data = jsonrpc::result(&id, result).to_string();
                    Ok::<_, std::convert::Infallible>(SseEvent::default().data(data))
                });
            Sse::new(items)
                .keep_alive(KeepAlive::default())
                .into_response()
        }
        Err(error) => json_response(StatusCode::OK, &jsonrpc::error(&id, &error)),
    }
}

/// The version a request that names none is read as: `1.0` when its method has a 1.0 name
/// (`SendMessage`; 0.3's are `message/send` and the like), so a 1.0 client that omits the header
/// is understood, and 0.3 ([`IMPLIED_VERSION`], A2A §3.6.2) otherwise.
fn implied_version(method: &str) -> &'static str {
    let is_1_0_name = !method.contains('/') && method.starts_with(|c: char| c.is_ascii_uppercase());
    if is_1_0_name {
        A2A_PROTOCOL_VERSION
    } else {
        IMPLIED_VERSION
    }
}

/// The version the request names in its header or query, if any.
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

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_matched_on_major_and_minor_and_absent_means_0_3_for_0_3_names() {
        let mut headers = HeaderMap::new();
        assert_eq!(requested_version(&headers, None), None);
        assert_eq!(implied_version("message/send"), "0.3");
        assert_eq!(implied_version("tasks/get"), "0.3");
        assert_eq!(implied_version("SendMessage"), "1.0");
        assert_eq!(implied_version("ListTasks"), "1.0");
        assert_eq!(
            requested_version(&headers, Some("A2A-Version=1.0")).as_deref(),
            Some("1.0")
        );
        headers.insert("a2a-version", HeaderValue::from_static("1.0.3"));
        assert_eq!(requested_version(&headers, None).as_deref(), Some("1.0.3"));
        assert!(is_supported("1.0") && is_supported("1.0.3"));
        assert!(!is_supported("0.3") && !is_supported("1.1") && !is_supported("1"));
    }
}

//! Answers what rmcp's streamable-HTTP service would refuse with a bare HTTP 415: a `POST /mcp`
//! whose body is not JSON gets a JSON-RPC parse error (-32700), and a JSON-RPC batch (an array:
//! MCP 2025-06-18 removed batching) an invalid-request error (-32600), each under HTTP 400 with
//! `id: null` — a client always learns why in the protocol's own words. A method MCP 2026-07-28
//! removed (`initialize`, …), on a request naming that revision in its `_meta`, is `404` with
//! `-32601` here (`revision`), before rmcp would open a session for it or check its headers.
//!
//! The body is read once here (bounded by `max_message_bytes`, as rmcp bounds it) and handed on
//! unchanged. Not here: the session and stream caps (`limits`).

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The check, as an axum middleware over the `/mcp` route.
pub(crate) async fn refuse_malformed_bodies(
    max_body_bytes: usize,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, max_body_bytes).await else {
        return json_rpc_error(
            http::StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
            &format!("the request body is over {max_body_bytes} bytes"),
        );
    };
    if let Some((code, message)) = problem(&bytes) {
        return json_rpc_error(http::StatusCode::BAD_REQUEST, code, message);
    }
    // A method 2026-07-28 removed, on a request of that revision (`revision`).
    if let Some(error) = super::revision::removed_refusal(&bytes) {
        return (
            http::StatusCode::NOT_FOUND,
            [(http::header::CONTENT_TYPE, "application/json")],
            Body::from(error.to_string()),
        )
            .into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// What is wrong with a body, as a JSON-RPC error code and message; `None` for one JSON object.
fn problem(body: &[u8]) -> Option<(i64, &'static str)> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err() {
        return Some((-32700, "Parse error: the body is not one JSON value"));
    }
    match first {
        Some(b'{') => None,
        Some(b'[') => Some((
            -32600,
            "Invalid Request: JSON-RPC batches are not accepted (MCP 2025-06-18 removed them); \
             send one message per request",
        )),
        _ => Some((
            -32600,
            "Invalid Request: a JSON-RPC message is a JSON object",
        )),
    }
}

fn json_rpc_error(status: http::StatusCode, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    (
        status,
        [(http::header::CONTENT_TYPE, "application/json")],
        Body::from(body.to_string()),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt;

    async fn answer(body: &'static str) -> (http::StatusCode, serde_json::Value) {
        let router = axum::Router::new()
            .route(
                "/mcp",
                axum::routing::post(|body: String| async move { body }),
            )
            .layer(axum::middleware::from_fn(move |request, next| {
                refuse_malformed_bodies(64, request, next)
            }));
        let request = Request::post("/mcp").body(Body::from(body)).unwrap();
        let response = router.oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = to_bytes(response.into_body(), 1 << 16).await.unwrap();
        let value = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
        (status, value)
    }

    #[tokio::test]
    async fn malformed_json_batches_and_non_objects_get_json_rpc_errors() {
        let (status, error) = answer("{\"jsonrpc\": ").await;
        assert_eq!(status, http::StatusCode::BAD_REQUEST);
        assert_eq!(error["error"]["code"], -32700);
        assert_eq!(error["id"], serde_json::Value::Null);
        let (status, error) = answer(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await;
        assert_eq!(status, http::StatusCode::BAD_REQUEST);
        assert_eq!(error["error"]["code"], -32600);
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains("batches")
        );
        let (_, error) = answer("42").await;
        assert_eq!(error["error"]["code"], -32600);
        let (status, _) = answer(&*Box::leak("x".repeat(100).into_boxed_str())).await;
        assert_eq!(status, http::StatusCode::PAYLOAD_TOO_LARGE);
    }

    #[tokio::test]
    async fn one_json_object_is_handed_on_unchanged() {
        let router = axum::Router::new()
            .route(
                "/mcp",
                axum::routing::post(|body: String| async move { body }),
            )
            .layer(axum::middleware::from_fn(move |request, next| {
                refuse_malformed_bodies(1024, request, next)
            }));
        let body = r#" {"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let request = Request::post("/mcp").body(Body::from(body)).unwrap();
        let response = router.oneshot(request).await.unwrap();
        assert_eq!(response.status(), http::StatusCode::OK);
        let bytes = to_bytes(response.into_body(), 1 << 16).await.unwrap();
        assert_eq!(bytes, body.as_bytes());
    }
}

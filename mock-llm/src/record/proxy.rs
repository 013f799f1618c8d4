//! The recording proxy's request path: forward one request to the upstream (headers,
//! credentials and query included), stream the answer back to the client as it arrives while
//! keeping a copy, and — once a chat answer completed with a 2xx status — hand it to the
//! recording.
//!
//! Errors: nothing listening / connection lost before an answer → 502 in the API's own error
//! shape naming the upstream (never its userinfo or the request's query, which may hold a key); an upstream error status
//! is passed through unchanged and not recorded; a stream that breaks midway is cut for the
//! client too and not recorded. Not here: the file (`recording`), answer parsing (`capture`).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures::{SinkExt, StreamExt};
use serde_json::Value;

use super::recording::{Key, endpoint_of};
use super::{Exchange, Shared, recorded_status};
use crate::anthropic::Anthropic;
use crate::ollama::Ollama;
use crate::openai::OpenAi;
use crate::request::{ChatRequest, Endpoint};

use crate::wire::Wire;

/// Request headers not forwarded: hop-by-hop ones, the ones the client recomputes, and
/// `accept-encoding` (the answer must arrive uncompressed to be recorded).
const REQUEST_HEADERS_DROPPED: [&str; 8] = [
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "upgrade",
    "accept-encoding",
];

/// Response headers not passed back (the server framing the answer to the client sets its own).
const RESPONSE_HEADERS_DROPPED: [&str; 4] = [
    "content-length",
    "connection",
    "transfer-encoding",
    "keep-alive",
];

/// An error body in the shape of the API the request came through.
fn api_error(endpoint: Option<Endpoint>, status: u16, message: &str) -> Response {
    let body = match endpoint {
        Some(Endpoint::AnthropicMessages) => Anthropic::error(status, Some("api_error"), message),
        Some(Endpoint::OllamaChat) => Ollama::error(status, None, message),
        Some(_) => OpenAi::error(status, Some("upstream_unavailable"), message),
        None => serde_json::json!({ "error": message }),
    };
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    (
        status,
        [(http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The neutral request, when the path is a chat endpoint and the body one of its requests.
fn parse(endpoint: Endpoint, body: &[u8]) -> Option<ChatRequest> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let parsed = match endpoint {
        Endpoint::AnthropicMessages => Anthropic::parse(&value, Vec::new()),
        Endpoint::OllamaChat => Ollama::parse(&value, Vec::new()),
        _ => OpenAi::parse(&value, Vec::new()),
    };
    match parsed {
        Ok(r) => Some(r),
        Err(e) => {
            tracing::warn!(error = %e.0, "mock-llm record: request not understood, forwarded unrecorded");
            None
        }
    }
}

/// Every path: forward, answer, and record chat answers.
pub(super) async fn forward(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let arrival = shared.arrivals.fetch_add(1, Ordering::Relaxed);
    let endpoint = endpoint_of(uri.path());
    let key = {
        let mut redactor = shared.redactor.lock().await;
        redactor.learn_request(&headers, uri.query());
        endpoint.and_then(|e| parse(e, &body)).map(|req| Exchange {
            endpoint: req.endpoint,
            stream: req.stream,
            key: Key::of(&req, &redactor),
        })
    };
    let path_and_query = uri.path_and_query().map_or("/", |p| p.as_str());
    let url = format!("{}{path_and_query}", shared.upstream);
    let mut outgoing = reqwest::header::HeaderMap::new();
    for (name, value) in &headers {
        if !REQUEST_HEADERS_DROPPED.contains(&name.as_str()) {
            outgoing.append(name.clone(), value.clone());
        }
    }
    let sent = shared
        .client
        .request(method, &url)
        .headers(outgoing)
        .body(body)
        .send()
        .await;
    let upstream = match sent {
        Ok(r) => r,
        Err(e) => {
            let message = format!(
                "mock-llm record: the upstream {} did not answer: {}",
                shared.shown,
                e.without_url()
            );
            tracing::warn!("{message}");
            return api_error(endpoint, 502, &message);
        }
    };
    let status = upstream.status();
    let mut response = Response::builder().status(status);
    for (name, value) in upstream.headers() {
        if !RESPONSE_HEADERS_DROPPED.contains(&name.as_str()) {
            response = response.header(name, value);
        }
    }
    let record = key.filter(|_| recorded_status(status.as_u16()));
    if endpoint.is_some() && !recorded_status(status.as_u16()) {
        tracing::warn!(%status, path = uri.path(), "mock-llm record: upstream error passed through, not recorded");
    }
    let (mut tx, rx) = futures::channel::mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    let mut chunks = upstream.bytes_stream();
    let task_shared = Arc::clone(&shared);
    shared.tasks.spawn(async move {
        let mut copy: Vec<u8> = Vec::new();
        let mut complete = true;
        let mut client_gone = false;
        while let Some(chunk) = chunks.next().await {
            match chunk {
                Ok(bytes) => {
                    if record.is_some() {
                        copy.extend_from_slice(&bytes);
                    }
                    // A client that left does not stop the recording of what it asked.
                    if !client_gone && tx.send(Ok(bytes)).await.is_err() {
                        client_gone = true;
                    }
                }
                Err(e) => {
                    complete = false;
                    let message = format!("upstream answer broke off: {}", e.without_url());
                    tracing::warn!("mock-llm record: {message}; the exchange is not recorded");
                    let _ = tx.send(Err(std::io::Error::other(message))).await;
                    break;
                }
            }
        }
        // Written before the client's answer ends, so a client that has its answer finds it
        // in the file.
        if let (true, Some(exchange)) = (complete, record) {
            task_shared
                .record(arrival, exchange, status.as_u16(), &copy)
                .await;
        }
        drop(tx);
    });
    response
        .body(Body::from_stream(rx))
        .unwrap_or_else(|e| api_error(endpoint, 502, &format!("mock-llm record: {e}")))
}

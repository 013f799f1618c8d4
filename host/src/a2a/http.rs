//! The A2A JSON-RPC binding over HTTP: `POST /a2a` (axum). One request body in → one JSON-RPC
//! answer out, as `application/json`, or as an SSE stream (`text/event-stream`, one
//! `data: {"jsonrpc":"2.0","id":…,"result":StreamResponse}` event per item) for
//! `SendStreamingMessage` and `SubscribeToTask`.
//!
//! Every JSON-RPC answer, errors included, is HTTP 200, except a body over the size limit (413,
//! still with a JSON-RPC error body). The protocol version is checked by `version` (`-32009`
//! unless 1.0; an absent header is 1.0 for a 1.0 method name). An error answering a streaming
//! method (`SendStreamingMessage`, `SubscribeToTask`) is an SSE stream of that one JSON-RPC
//! error, as the client asked for a stream; errors before the method is known (a body that is
//! not a request) are plain JSON. A stream, once started, always ends with the task's terminal
//! status.

use axum::Router;
use axum::body::Body;
use axum::extract::{Request as HttpRequest, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde_json::Value;

use super::continuation;
use super::jsonrpc::{self, RpcCode, RpcError};
use super::methods::{A2aAdapter, Answer};
use super::store::Subscription;
use super::version;
use super::wire::StreamResponse;

/// The path of the JSON-RPC endpoint.
pub const JSONRPC_PATH: &str = "/a2a";

pub(crate) use super::version::VERSION_HEADER;

#[derive(Clone)]
struct A2aState {
    adapter: A2aAdapter,
    max_body_bytes: usize,
}

/// The routes of the binding, and those of the HTTP+JSON (`super::rest`) and gRPC
/// (`super::grpc`) bindings over the same adapter, to merge into the host's HTTP router.
pub fn router(adapter: A2aAdapter, max_body_bytes: usize) -> Router {
    let rest = super::rest::router(adapter.clone(), max_body_bytes)
        .merge(super::grpc::router(adapter.clone(), max_body_bytes));
    Router::new()
        .route(JSONRPC_PATH, post(post_jsonrpc))
        .with_state(A2aState {
            adapter,
            max_body_bytes,
        })
        .merge(rest)
}

async fn post_jsonrpc(State(state): State<A2aState>, request: HttpRequest) -> Response {
    let caller = crate::auth::http::caller_of(request.extensions());
    let (headers, query) = (
        request.headers().clone(),
        request.uri().query().map(str::to_owned),
    );
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
    let streaming = version::is_streaming(&request.method);
    if let Err(error) = version::check(&headers, query.as_deref(), &request.method) {
        return error_response(streaming, &request.id, &error);
    }
    let id = request.id.clone();
    match state.adapter.handle_as(request, &caller).await {
        Ok(Answer::Result(result)) => json_response(StatusCode::OK, &jsonrpc::result(&id, result)),
        Ok(Answer::Stream { first, rest }) => {
            let items = stream_items(first, rest).map(move |item| {
                let result = serde_json::to_value(&item).unwrap_or(Value::Null);
                let data = jsonrpc::result(&id, result).to_string();
                Ok::<_, std::convert::Infallible>(SseEvent::default().data(data))
            });
            Sse::new(items)
                .keep_alive(KeepAlive::new().interval(crate::listener::SSE_KEEP_ALIVE))
                .into_response()
        }
        Err(error) => error_response(streaming, &id, &error),
    }
}

/// The items of a stream answer, shared by both bindings: `first`, then the task's updates.
/// A stream ends after its task's terminal status (the store closes it) or right after the
/// update in which the task waits for input: the reply is a new request (`continuation`).
pub(super) fn stream_items(
    first: Box<StreamResponse>,
    rest: Subscription,
) -> impl futures::Stream<Item = StreamResponse> + Send + 'static {
    let rest = futures::stream::unfold((rest, false), |(mut rest, ended)| async move {
        if ended {
            return None;
        }
        let item = rest.recv().await?;
        let ended = continuation::waits_for_input(&item);
        Some((item, (rest, ended)))
    });
    futures::stream::once(async move { *first }).chain(rest)
}

/// The answer to a request that failed: one SSE event holding the JSON-RPC error for a
/// streaming method, plain JSON otherwise.
fn error_response(streaming: bool, id: &Value, error: &RpcError) -> Response {
    let body = jsonrpc::error(id, error);
    if !streaming {
        return json_response(StatusCode::OK, &body);
    }
    let event = SseEvent::default().data(body.to_string());
    Sse::new(futures::stream::once(async move {
        Ok::<_, std::convert::Infallible>(event)
    }))
    .into_response()
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

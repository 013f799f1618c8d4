//! The HTTP transport (axum): A2E over `POST /a2e`, the A2A Agent Card and a health check.
//!
//! | route | answer |
//! |---|---|
//! | `POST /a2e` | one A2E message in the body → its answer. `Accept: text/event-stream` selects SSE: one SSE event per message, `event:` = the message `type`, `data:` = the message JSON; a streaming call sends its `skill/event`s, then the final `skill/call/resp`, then the stream ends. Otherwise the answer is one JSON message (`application/json`; a call's events are then only in `data.events`). |
//! | `GET /.well-known/agent-card.json` | the A2A v1.0 Agent Card |
//! | `GET /healthz` | `{"status":"ok","in_flight":N,"max_concurrent_calls":M}` |
//! | `GET /metrics` | Prometheus/OpenMetrics text (`telemetry::metrics`) |
//!
//! HTTP status: 200 for every A2E answer, including protocol rejections (their `error` says why);
//! 413 for a body over the limit and 503 (with `Retry-After: 1`) when the concurrent-call limit
//! is reached — both still with a `skill/call/resp` error body. A client that disconnects cancels
//! its call. Shutdown stops accepting, lets calls finish within the grace period, then cancels
//! them (they still answer).

use std::future::Future;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Request as HttpRequest, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::card::complete_card;
use super::endpoint::{Endpoint, Request};
use crate::protocol::{self, Message, SkillCallResponse};

/// Default largest request body, in bytes.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;

/// How long cancelled calls get to answer after the grace period before the server stops anyway.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// Settings of the HTTP transport.
#[derive(Debug, Clone, Copy)]
pub struct HttpOptions {
    /// Largest accepted request body; larger → 413 with an `invalid_message` answer.
    pub max_body_bytes: usize,
    /// How long calls in flight may run on after shutdown starts before they are cancelled.
    pub grace: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            grace: Duration::from_secs(10),
        }
    }
}

#[derive(Clone)]
struct AppState {
    endpoint: Endpoint,
    options: HttpOptions,
    /// The card's interface URL (`http://ADDR/a2e`), when known.
    a2e_url: Option<String>,
}

/// The router with every route. `a2e_url` is the public URL of `POST /a2e`, put in the Agent
/// Card's `supportedInterfaces` when the service's card names none.
pub fn router(endpoint: Endpoint, options: HttpOptions, a2e_url: Option<String>) -> Router {
    let state = AppState {
        endpoint,
        options,
        a2e_url,
    };
    Router::new()
        .route("/a2e", post(post_a2e))
        .route("/.well-known/agent-card.json", get(get_card))
        .route("/healthz", get(get_health))
        .merge(crate::telemetry::metrics::router())
        // The body limit is enforced by `post_a2e` itself so the rejection is an A2E answer.
        .layer(DefaultBodyLimit::disable())
        .with_state(state)
}

/// Serves on `listener` until `shutdown` completes, then drains as described in the module docs.
pub async fn serve(
    listener: TcpListener,
    endpoint: Endpoint,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let a2e_url = listener
        .local_addr()
        .ok()
        .map(|addr| format!("http://{addr}/a2e"));
    let app = router(endpoint.clone(), options, a2e_url);
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown.await;
        let _ = started_tx.send(());
    });
    let deadline = async move {
        if started_rx.await.is_err() {
            // The server ended by itself; nothing to cut short.
            return std::future::pending::<()>().await;
        }
        tokio::time::sleep(options.grace).await;
        tracing::warn!(
            in_flight = endpoint.in_flight(),
            "grace period over; cancelling calls"
        );
        endpoint.cancel_all();
        tokio::time::sleep(CANCEL_GRACE).await;
    };
    tokio::select! {
        result = server => result,
        () = deadline => Ok(()),
    }
}

async fn get_card(State(state): State<AppState>) -> Response {
    let card = complete_card(state.endpoint.agent_card(), state.a2e_url.as_deref());
    axum::Json(card).into_response()
}

async fn get_health(State(state): State<AppState>) -> Response {
    axum::Json(serde_json::json!({
        "status": "ok",
        "in_flight": state.endpoint.in_flight(),
        "max_concurrent_calls": state.endpoint.max_concurrent_calls(),
    }))
    .into_response()
}

async fn post_a2e(State(state): State<AppState>, request: HttpRequest) -> Response {
    let wants_sse = accepts_event_stream(request.headers());
    let trace = crate::telemetry::propagation::TraceHeaders::from_headers(request.headers());
    let limit = state.options.max_body_bytes;
    let body = match axum::body::to_bytes(request.into_body(), limit).await {
        Ok(body) => body,
        Err(_) => {
            return answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                Message::CallResponse(Endpoint::oversized(limit)),
                wants_sse,
            );
        }
    };
    let request = match Endpoint::parse_bytes(&body) {
        Ok(request) => request,
        Err(rejection) => {
            return answer(StatusCode::OK, Message::CallResponse(*rejection), wants_sse);
        }
    };
    let call = match request {
        Request::Discover(discover) => {
            let response = state.endpoint.discover(&discover);
            return answer(
                StatusCode::OK,
                Message::DiscoverResponse(response),
                wants_sse,
            );
        }
        Request::Call(call) => *call,
    };
    let mut call = call;
    trace.adopt_into(&mut call.metadata);
    let permit = match state.endpoint.admit(&call) {
        Ok(permit) => permit,
        Err(busy) => {
            let mut response = answer(
                StatusCode::SERVICE_UNAVAILABLE,
                Message::CallResponse(*busy),
                wants_sse,
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
        }
    };
    let (out, mut outbound) = mpsc::unbounded_channel::<Message>();
    let cancel = state.endpoint.call_token();
    if !wants_sse {
        // Dropping this handler (the client went away) drops the call's future: cancelled.
        state
            .endpoint
            .run_call(permit, call, out, false, cancel)
            .await;
        return match final_response(&mut outbound) {
            Some(response) => answer(StatusCode::OK, Message::CallResponse(response), false),
            None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        };
    }
    let endpoint = state.endpoint.clone();
    // The call runs in its own task so events stream while it works; the stream holds a drop
    // guard so a disconnected client cancels the call.
    let guard = cancel.clone().drop_guard();
    tokio::spawn(async move { endpoint.run_call(permit, call, out, true, cancel).await });
    let stream = UnboundedReceiverStream::new(outbound).map(move |message| {
        let _keep = &guard;
        Ok::<_, std::convert::Infallible>(sse_event(&message))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// The `skill/call/resp` in a drained channel (events before it are dropped: JSON mode).
fn final_response(outbound: &mut mpsc::UnboundedReceiver<Message>) -> Option<SkillCallResponse> {
    let mut last = None;
    while let Ok(message) = outbound.try_recv() {
        if let Message::CallResponse(response) = message {
            last = Some(response);
        }
    }
    last
}

fn accepts_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("text/event-stream"))
}

fn sse_event(message: &Message) -> SseEvent {
    SseEvent::default()
        .event(message.type_name())
        .data(protocol::encode(message))
}

/// One message as the whole answer, JSON or a one-event SSE stream.
fn answer(status: StatusCode, message: Message, sse: bool) -> Response {
    if sse {
        let event = sse_event(&message);
        let stream = futures::stream::once(async move { Ok::<_, std::convert::Infallible>(event) });
        return (status, Sse::new(stream)).into_response();
    }
    let mut response = Response::new(Body::from(Bytes::from(protocol::encode(&message))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

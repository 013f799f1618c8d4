//! The HTTP transport (axum): A2E over `POST /a2e`, the A2A Agent Card and a health check.
//!
//! | route | answer |
//! |---|---|
//! | `POST /a2e` | one A2E message in the body → its answer (with an `X-Skillet-Console` header, a call's tool-call approvals wait for the web console's page: `approval_desk`). `Accept: text/event-stream` selects SSE: one SSE event per message, `event:` = the message `type`, `data:` = the message JSON; a streaming call sends its `skill/event`s, then the final `skill/call/resp`, then the stream ends. Otherwise the answer is one JSON message (`application/json`; a call's events are then only in `data.events`). |
//! | `GET /.well-known/agent-card.json` | the A2A v1.0 Agent Card, cacheable (`Cache-Control`, `ETag`; `304` on a matching `If-None-Match`: `card`) |
//! | `GET /healthz` | `{"status":"ok","in_flight":N,"max_concurrent_calls":M}` |
//! | `GET /metrics` | Prometheus/OpenMetrics text (`telemetry::metrics`) |
//!
//! HTTP status: 200 for every A2E answer, including protocol rejections (their `error` says why),
//! except: under `[auth]`, 401 for no or a bad credential (`auth::http`), 403 for a call the caller
//! may not make (`unauthorized`) and 429 with `Retry-After` when its own limits are reached;
//! 408 for a body that did not arrive within the body-read timeout; 413 for a body over the limit and 503 (with `Retry-After: 1`) when the concurrent-call limit
//! is reached — both still with a `skill/call/resp` error body. A client that disconnects cancels
//! its call. Shutdown stops accepting, lets calls finish within the grace period, then cancels
//! them (they still answer). A call whose `id` is already in flight on this server is refused with
//! `invalid_message` (HTTP 200).
//!
//! Every route of the server, merged ones included, sits behind the `Host`/`Origin` rule
//! (`super::origin_guard`: 403 for another site's page or a rebinding name) and, under
//! `[auth]`, authentication (`super::auth::http`).
//!
//! Connections are accepted by `super::listener` (connection cap, header-read and idle
//! timeouts, TLS with an [`Edge`]'s certificate: `super::tls`); admission, cancellation and the drain are the [`super::core::HostCore`]'s. This
//! module only maps HTTP requests and responses onto A2E messages.

use std::future::Future;
use std::sync::Arc;
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

use super::card::{card_response, complete_card};
use super::core::{CANCEL_GRACE, CallScope, Refusal};
use super::endpoint::{Dispatched, Endpoint, Request};
use super::forwarded::{TrustedProxies, client_of};
use super::listener::{ConnectionLimits, serve_connections};
use super::origin_guard::{AllowedSites, SiteRule};
use super::tls::TlsServer;
use skillet_protocol::{ErrorCode, Message, ProtocolError, SkillCallResponse};

/// Default largest request body, in bytes.
pub const DEFAULT_MAX_BODY_BYTES: usize = crate::DEFAULT_MAX_MESSAGE_BYTES;

/// Settings of the HTTP transport.
#[derive(Debug, Clone, Copy)]
pub struct HttpOptions {
    /// Largest accepted request body; larger → 413 with an `invalid_message` answer.
    pub max_body_bytes: usize,
    /// How long calls in flight may run on after shutdown starts before they are cancelled.
    pub grace: Duration,
    /// Connection cap, header-read and idle timeouts.
    pub connections: ConnectionLimits,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            grace: Duration::from_secs(10),
            connections: ConnectionLimits::default(),
        }
    }
}

#[derive(Clone)]
struct AppState {
    endpoint: Endpoint,
    /// One scope for every A2E call over HTTP: a call id is in flight once per server.
    scope: CallScope,
    options: HttpOptions,
    /// The card's interface URL (`http://ADDR/a2e`), when known.
    a2e_url: Option<String>,
}

/// The router with every route. `a2e_url` is the public URL of `POST /a2e`, put in the Agent
/// Card's `supportedInterfaces` when the service's card names none.
pub fn router(endpoint: Endpoint, options: HttpOptions, a2e_url: Option<String>) -> Router {
    let state = AppState {
        scope: endpoint.core().scope().through(crate::record::Door::A2e),
        endpoint,
        options,
        a2e_url,
    };
    Router::new()
        .route("/a2e", post(post_a2e))
        .route("/.well-known/agent-card.json", get(get_card))
        .route("/healthz", get(get_health))
        .merge(crate::metrics_route::router())
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
    serve_with(listener, endpoint, options, Router::new(), shutdown).await
}

/// What sits between the socket and the routes of a server.
#[derive(Debug, Clone, Default)]
pub struct Edge {
    /// Serve HTTPS with this certificate (`[server.tls]`); `None`: plain HTTP.
    pub tls: Option<Arc<TlsServer>>,
    /// The peers whose `X-Forwarded-*` headers are believed (`[server] trusted_proxies`).
    pub trusted_proxies: TrustedProxies,
    /// The names and origins allowed besides this server's own addresses and pages
    /// (`[server] allowed_hosts`, `allowed_origins`; `crate::origin_guard`).
    pub allowed_sites: AllowedSites,
}

impl Edge {
    /// `https` with TLS, else `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }
}

/// [`serve`] with more routes (another protocol's adapter on the same core) merged in.
pub async fn serve_with(
    listener: TcpListener,
    endpoint: Endpoint,
    options: HttpOptions,
    extra: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_on(
        listener,
        endpoint,
        options,
        extra,
        Edge::default(),
        shutdown,
    )
    .await
}

/// [`serve_with`] behind `edge` (TLS, trusted proxies).
pub async fn serve_on(
    listener: TcpListener,
    endpoint: Endpoint,
    options: HttpOptions,
    extra: Router,
    edge: Edge,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let scheme = edge.scheme();
    let bound = listener.local_addr()?;
    let a2e_url = listener
        .local_addr()
        .ok()
        .map(|addr| format!("{scheme}://{addr}/a2e"));
    let base_url = listener
        .local_addr()
        .ok()
        .map(|addr| format!("{scheme}://{addr}"))
        .unwrap_or_default();
    let mut app = router(endpoint.clone(), options, a2e_url).merge(extra);
    // With access rules, every door on this server authenticates its callers (`auth::http`).
    if let Some(access) = endpoint.core().access() {
        let base = access.public_url().map_or(base_url, str::to_owned);
        app = crate::auth::http::protect(app, Arc::clone(access), base);
    }
    // A request for another site (a rebinding `Host`, another page's `Origin`) is refused
    // before authentication and every door; it reads the origin a trusted proxy forwarded.
    let rule = SiteRule::new(bound, edge.tls.is_some(), edge.allowed_sites.clone());
    app = crate::origin_guard::layer(app, rule);
    // Outermost: who the client is (peer address, or what a trusted proxy forwarded) is known
    // before the site rule, authentication and every door.
    app = crate::forwarded::layer(app, edge.trusted_proxies.clone(), scheme);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = serve_connections(listener, app, options.connections, edge.tls, async move {
        let _ = stop_rx.await;
    });
    tokio::pin!(server);
    let core = endpoint.core().clone();
    let drain = async move {
        shutdown.await;
        let _ = stop_tx.send(());
        core.drain(options.grace).await;
    };
    tokio::select! {
        result = &mut server => return result,
        () = drain => {}
    }
    // Every call has answered; give connections a moment to deliver the answers.
    match tokio::time::timeout(CANCEL_GRACE, server).await {
        Ok(result) => result,
        Err(_) => Ok(()),
    }
}

async fn get_card(State(state): State<AppState>, request: HttpRequest) -> Response {
    let origin = client_of(request.extensions()).origin;
    let card = state
        .endpoint
        .agent_card()
        .map(|card| complete_card(card, state.a2e_url.as_deref()))
        .map(|card| match state.endpoint.core().access() {
            Some(access) => {
                let skills = state
                    .endpoint
                    .service()
                    .discover(&skillet_protocol::SkillDiscoverRequest::default())
                    .skills;
                access.secure_card(card, &skills)
            }
            None => card,
        })
        .map(|card| match (&origin, &state.a2e_url) {
            // Behind a trusted proxy: the URLs this server made up name the proxy's origin.
            (Some(origin), Some(a2e_url)) => {
                rebase_card(card, a2e_url.trim_end_matches("/a2e"), origin)
            }
            _ => card,
        });
    card_response(card, request.headers())
}

/// `card` with every interface URL under `listening` (this server's own `scheme://ADDR`)
/// moved under `origin`, and the gRPC interface's `host:port` (the listener's) moved to the
/// origin's; configured URLs (`[card] url`, `[a2a] url`) are left alone.
fn rebase_card(
    mut card: skillet_core::card::AgentCard,
    listening: &str,
    origin: &str,
) -> skillet_core::card::AgentCard {
    let (own, public) = (authority_of(listening), authority_of(origin));
    for interface in &mut card.supported_interfaces {
        if let Some(path) = interface.url.strip_prefix(listening)
            && (path.is_empty() || path.starts_with('/'))
        {
            interface.url = format!("{origin}{path}");
        } else if let (Some(own), Some(public)) = (&own, &public)
            && interface.url == *own
        {
            interface.url.clone_from(public);
        }
    }
    card
}

/// `host:port` of `url`, the port implied by its scheme when it names none (how a gRPC
/// interface is addressed on the card).
fn authority_of(url: &str) -> Option<String> {
    let uri: http::Uri = url.parse().ok()?;
    let host = uri.host()?;
    let port = uri
        .port_u16()
        .unwrap_or(if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    Some(format!("{host}:{port}"))
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
    let caller = crate::auth::http::caller_of(request.extensions());
    let wants_sse = accepts_event_stream(request.headers());
    // The console's page asks for its runs' approvals to wait for it (`approval_desk`).
    let ask_desk = request
        .headers()
        .contains_key(crate::approval_desk::ASK_HEADER);
    let trace = skillet_core::telemetry::propagation::TraceHeaders::from_headers(request.headers());
    let limit = state.options.max_body_bytes;
    let body = match axum::body::to_bytes(request.into_body(), limit).await {
        Ok(body) => body,
        Err(e) if is_too_large(&e) => {
            return answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                Message::CallResponse(Endpoint::oversized(limit)),
                wants_sse,
            );
        }
        Err(e) => {
            let rejection = SkillCallResponse::rejected(
                "",
                "",
                ProtocolError::new(
                    ErrorCode::InvalidMessage,
                    format!("the request body could not be read: {e}"),
                ),
            );
            return answer(
                StatusCode::REQUEST_TIMEOUT,
                Message::CallResponse(rejection),
                wants_sse,
            );
        }
    };
    let (out, mut outbound) = mpsc::unbounded_channel::<Message>();
    let dispatched = match Endpoint::parse_bytes(&body) {
        Ok(mut request) => {
            // A caller's W3C trace context continues into the call's spans.
            if let Request::Call(call) = &mut request {
                trace.adopt_into(&mut call.metadata);
            }
            state.endpoint.dispatch_asking(
                &caller,
                &state.scope,
                request,
                &out,
                wants_sse,
                ask_desk,
            )
        }
        Err(rejection) => {
            let _ = out.send(Message::CallResponse(*rejection));
            Dispatched::Answered
        }
    };
    let cancel = match dispatched {
        Dispatched::Running(cancel) => cancel,
        Dispatched::Answered => {
            return match outbound.try_recv() {
                Ok(message) => answer(StatusCode::OK, message, wants_sse),
                Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            };
        }
        Dispatched::Refused(refusal) => {
            let Ok(message) = outbound.try_recv() else {
                return StatusCode::INTERNAL_SERVER_ERROR.into_response();
            };
            let status = match refusal {
                Refusal::Busy { .. } => StatusCode::SERVICE_UNAVAILABLE,
                Refusal::DuplicateId(_) => StatusCode::OK,
                Refusal::Unauthorized => StatusCode::FORBIDDEN,
                Refusal::Limited { .. } => StatusCode::TOO_MANY_REQUESTS,
            };
            let mut response = answer(status, message, wants_sse);
            if let Some(wait) = retry_after(&refusal) {
                response.headers_mut().insert(header::RETRY_AFTER, wait);
            }
            return response;
        }
    };
    drop(out);
    // A client that goes away drops this handler (JSON) or the stream (SSE), and with it the
    // guard: the call is cancelled (it still answers, into a closed channel).
    let guard = cancel.drop_guard();
    if !wants_sse {
        while let Some(message) = outbound.recv().await {
            if let Message::CallResponse(response) = message {
                drop(guard);
                return answer(StatusCode::OK, Message::CallResponse(response), false);
            }
        }
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    let stream = UnboundedReceiverStream::new(outbound).map(move |message| {
        let _keep = &guard;
        Ok::<_, std::convert::Infallible>(sse_event(&message))
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(crate::listener::SSE_KEEP_ALIVE))
        .into_response()
}

/// The `Retry-After` of a retryable refusal (seconds).
pub(crate) fn retry_after(refusal: &Refusal) -> Option<HeaderValue> {
    match refusal {
        Refusal::Busy { .. } => Some(HeaderValue::from_static("1")),
        Refusal::Limited { retry_after } => {
            HeaderValue::from_str(&retry_after.as_secs().max(1).to_string()).ok()
        }
        Refusal::DuplicateId(_) | Refusal::Unauthorized => None,
    }
}

/// Whether a body error is the size limit (rather than a timeout or a broken connection).
fn is_too_large(error: &axum::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
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
        .data(skillet_protocol::encode(message))
}

/// One message as the whole answer, JSON or a one-event SSE stream.
fn answer(status: StatusCode, message: Message, sse: bool) -> Response {
    if sse {
        let event = sse_event(&message);
        let stream = futures::stream::once(async move { Ok::<_, std::convert::Infallible>(event) });
        return (status, Sse::new(stream)).into_response();
    }
    let mut response = Response::new(Body::from(Bytes::from(skillet_protocol::encode(&message))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

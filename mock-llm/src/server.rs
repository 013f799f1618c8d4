//! [`MockServer`]: binding, routing, shared state, the generic chat handler that ties a [`Wire`]
//! to the dispatcher and delivery, the control API (`/_mock/...`), and shutdown.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, Version};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::HeaderValue;
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::anthropic::Anthropic;
use crate::config::MockConfig;
use crate::delivery::{self, Cut, Pace};
use crate::dispatch::{Decision, Script};
use crate::faults::{Fault, FaultKind, StatusFault};
use crate::gemini::Gemini;
use crate::journal::{JournalEntry, redact};
use crate::ollama::{self, Ollama};
use crate::openai::{self, OpenAi};
use crate::request::{ChatRequest, Endpoint};
use crate::scenario::Scenario;
use crate::wire::Wire;

/// Error starting the server.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

struct Mutable {
    script: Script,
    journal: VecDeque<JournalEntry>,
    /// Requests journaled since start or reset (the journal itself keeps only the newest).
    journaled: u64,
}

pub(crate) struct Shared {
    config: MockConfig,
    state: Mutex<Mutable>,
    shutdown: CancellationToken,
    /// TCP connections accepted so far.
    connections: Arc<AtomicU64>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Mutable> {
        // A panic while holding the lock cannot leave the journal half-written in a way that
        // matters to a mock; keep serving.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn record(&self, state: &mut Mutable, mut entry: JournalEntry) {
        state.journaled += 1;
        entry.seq = state.journaled;
        if state.journal.len() >= self.config.journal_limit.max(1) {
            state.journal.pop_front();
        }
        state.journal.push_back(entry);
    }

    fn models(&self) -> Vec<String> {
        let mut names = self.config.models.clone();
        for m in &self.lock().script.scenario().models {
            if !names.contains(m) {
                names.push(m.clone());
            }
        }
        names
    }
}

/// A running mock server. Dropping it stops the server too; [`MockServer::shutdown`] also waits.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl MockServer {
    /// Binds `config.listen` (default `127.0.0.1:0`) and serves in a background task.
    pub async fn start(config: MockConfig) -> Result<Self, StartError> {
        let addr = config.listen;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| StartError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| StartError::Bind { addr, source })?;
        let script = Script::new(config.scenario.clone(), config.seed);
        let shared = Arc::new(Shared {
            config,
            state: Mutex::new(Mutable {
                script,
                journal: VecDeque::new(),
                journaled: 0,
            }),
            shutdown: CancellationToken::new(),
            connections: Arc::new(AtomicU64::new(0)),
        });
        let app = router(shared.clone());
        let token = shared.shutdown.clone();
        let task = tokio::spawn(crate::accept::serve(
            listener,
            app,
            Arc::clone(&shared.connections),
            token,
        ));
        tracing::info!(%addr, "mock-llm listening");
        Ok(MockServer {
            addr,
            shared,
            task: Some(task),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, no trailing slash. OpenAI clients use `base_url() + "/v1"`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// TCP connections accepted so far (one per call in flight over HTTP/1.1; one for all of
    /// a client's calls over HTTP/2).
    pub fn connections_accepted(&self) -> u64 {
        self.shared.connections.load(Ordering::Relaxed)
    }

    /// Every request received so far, in order.
    pub fn journal(&self) -> Vec<JournalEntry> {
        self.shared.lock().journal.iter().cloned().collect()
    }

    /// Queues a fault for the next matching requests (once unless `times` says otherwise).
    pub fn push_fault(&self, fault: Fault) {
        self.shared.lock().script.push_fault(fault);
    }

    /// Replaces the scenario; rule counters and queued faults start over.
    pub fn set_scenario(&self, scenario: Scenario) {
        self.shared.lock().script.replace(scenario);
    }

    /// Clears the journal, queued faults, rule counters and id counters; keeps the scenario.
    pub fn reset(&self) {
        let mut state = self.shared.lock();
        state.script.reset();
        state.journal.clear();
        state.journaled = 0;
    }

    /// Stops accepting, ends open streams (stalled ones included) and waits for the server task.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.cancel();
        if let Some(task) = self.task.take()
            && let Err(e) = task.await
        {
            tracing::error!(error = %e, "mock-llm server task failed");
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

fn router(shared: Arc<Shared>) -> Router {
    let body_limit = axum::extract::DefaultBodyLimit::max(shared.config.max_body_bytes);
    Router::new()
        .route("/v1/chat/completions", post(chat::<OpenAi>))
        .route("/v1/models", get(openai_models))
        .route("/v1/messages", post(chat::<Anthropic>))
        .route("/api/chat", post(chat::<Ollama>))
        .route("/v1beta/models/{target}", post(chat::<Gemini>))
        .route("/v1/models/{target}", post(chat::<Gemini>))
        .route("/api/tags", get(ollama_tags))
        .route("/api/version", get(ollama_version))
        .route("/_mock/requests", get(control_requests))
        .route("/_mock/reset", post(control_reset))
        .route("/_mock/scenario", post(control_scenario))
        .route("/_mock/faults", post(control_faults))
        .fallback(not_found)
        .layer(body_limit)
        .with_state(shared)
}

fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn entry(
    endpoint: Endpoint,
    method: &Method,
    version: Version,
    uri: &Uri,
    headers: &[(String, String)],
    body: Value,
) -> JournalEntry {
    JournalEntry {
        seq: 0,
        endpoint: endpoint.as_str().to_owned(),
        method: method.to_string(),
        http_version: format!("{version:?}"),
        path: uri.path().to_owned(),
        headers: redact(headers),
        body,
        matched_rule: None,
        fault: None,
    }
}

fn has_credential(headers: &[(String, String)]) -> bool {
    headers.iter().any(|(n, v)| {
        (n == "authorization" || n == "x-api-key" || n == "x-goog-api-key") && !v.trim().is_empty()
    })
}

async fn chat<W: Wire>(
    State(shared): State<Arc<Shared>>,
    method: Method,
    version: Version,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let headers = header_pairs(&headers);
    // The body is parsed once; the parsed value goes into the journal last, moved, not copied
    // (a copy of every request's JSON tree was most of a request's cost under load).
    let parsed: Result<Value, _> = serde_json::from_slice(&body);
    let mut record = entry(W::ENDPOINT, &method, version, &uri, &headers, Value::Null);
    let text = || Value::String(String::from_utf8_lossy(&body).into_owned());
    if shared.config.require_auth && !has_credential(&headers) {
        record.body = parsed.unwrap_or_else(|_| text());
        let mut state = shared.lock();
        shared.record(&mut state, record);
        let body = W::error(
            401,
            None,
            "missing credentials: send Authorization or x-api-key",
        );
        return json_response(StatusCode::UNAUTHORIZED, &body);
    }
    let value = match parsed {
        Ok(value) => value,
        Err(e) => {
            record.body = text();
            let mut state = shared.lock();
            shared.record(&mut state, record);
            let message = format!("request body is not JSON: {e}");
            return json_response(StatusCode::BAD_REQUEST, &W::error(400, None, &message));
        }
    };
    let request = W::parse(&value, headers).and_then(|r| W::at_path(r, uri.path()));
    let mut request = match request {
        Ok(r) => r,
        Err(e) => {
            record.body = value;
            let mut state = shared.lock();
            shared.record(&mut state, record);
            return json_response(StatusCode::BAD_REQUEST, &W::error(400, None, &e.0));
        }
    };
    let decision = {
        let created = shared.config.clock.now_secs();
        let mut state = shared.lock();
        let dialect = state.script.scenario().dialect.clone();
        if let Some(refusal) = dialect.refusal(&request, &value) {
            record.body = value;
            record.matched_rule = Some("dialect refusal".to_owned());
            shared.record(&mut state, record);
            let status = StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::BAD_REQUEST);
            let body = W::error(refusal.status, refusal.code, &refusal.message);
            return json_response(status, &body);
        }
        if dialect.ignores_tools() {
            request.tools.clear();
        }
        let mut decision = state.script.decide(&request, created, shared.config.timing);
        decision.reply = dialect.shape(decision.reply);
        record.body = value;
        record.matched_rule = Some(decision.rule.clone());
        record.fault = decision.fault.as_ref().map(Fault::label);
        shared.record(&mut state, record);
        decision
    };
    respond::<W>(&shared, &request, decision).await
}

async fn respond<W: Wire>(shared: &Shared, request: &ChatRequest, decision: Decision) -> Response {
    let Decision {
        reply,
        fault,
        timing,
        ..
    } = decision;
    let mut pace = Pace {
        first: timing.first_token,
        between: timing.per_chunk,
    };
    let mut latency = timing.latency;
    let mut cut = Cut::None;
    let kind = fault.map(|f| f.kind);
    match &kind {
        Some(FaultKind::Latency {
            before,
            first_token,
            per_chunk,
        }) => {
            latency += *before;
            pace.first += *first_token;
            pace.between += *per_chunk;
        }
        Some(FaultKind::Truncate { after_chunks }) => cut = Cut::Truncate(*after_chunks),
        Some(FaultKind::Stall { after_chunks }) => cut = Cut::Stall(*after_chunks),
        Some(FaultKind::DropConnection { after_chunks }) => cut = Cut::Drop(*after_chunks),
        _ => {}
    }
    let token = shared.shutdown.clone();
    if !delivery::pause(latency, &token).await {
        return json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &W::error(503, None, "mock-llm is shutting down"),
        );
    }
    match kind {
        Some(FaultKind::Status(s)) => status_error::<W>(&s),
        Some(FaultKind::StreamError { error, .. }) if !request.stream => status_error::<W>(&error),
        Some(FaultKind::StreamError {
            after_chunks,
            error,
        }) => {
            let mut frames = W::frames(&reply, request);
            frames.body.truncate(after_chunks);
            frames.body.push(W::stream_error_frame(
                error.status,
                error.code.as_deref(),
                &fault_message(&error),
            ));
            frames.tail.clear();
            delivery::stream(W::STREAM_CONTENT_TYPE, frames, Cut::None, pace, token)
        }
        Some(FaultKind::MalformedBody) => {
            if request.stream {
                let frames = delivery::Frames {
                    body: vec![W::malformed_frame()],
                    tail: Vec::new(),
                };
                delivery::stream(W::STREAM_CONTENT_TYPE, frames, Cut::None, pace, token)
            } else {
                let junk = Bytes::from_static(
                    b"{\"id\": \"mock-malformed\", \"choices\": [{\"message\": <not json>",
                );
                delivery::whole(StatusCode::OK, "application/json", junk, Cut::None, token)
            }
        }
        _ if request.stream => delivery::stream(
            W::STREAM_CONTENT_TYPE,
            W::frames(&reply, request),
            cut,
            pace,
            token,
        ),
        _ => {
            let body = Bytes::from(W::whole(&reply, request).to_string());
            delivery::whole(StatusCode::OK, "application/json", body, cut, token)
        }
    }
}

fn fault_message(s: &StatusFault) -> String {
    s.message
        .clone()
        .unwrap_or_else(|| format!("mock-llm injected HTTP {} fault", s.status))
}

/// An error response in `W`'s shape with the fault's retry headers.
fn status_error<W: Wire>(s: &StatusFault) -> Response {
    let status = StatusCode::from_u16(s.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json_response(
        status,
        &W::error(s.status, s.code.as_deref(), &fault_message(s)),
    );
    let h = response.headers_mut();
    if let Some(secs) = s.retry_after_secs {
        h.insert("retry-after", HeaderValue::from(secs));
    }
    if let Some(ms) = s.retry_after_ms {
        h.insert("retry-after-ms", HeaderValue::from(ms));
    }
    response
}

fn record_plain(
    shared: &Shared,
    endpoint: Endpoint,
    method: &Method,
    version: Version,
    uri: &Uri,
    headers: &HeaderMap,
) {
    let headers = header_pairs(headers);
    let mut state = shared.lock();
    shared.record(
        &mut state,
        entry(endpoint, method, version, uri, &headers, Value::Null),
    );
}

async fn openai_models(
    State(shared): State<Arc<Shared>>,
    method: Method,
    version: Version,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    record_plain(
        &shared,
        Endpoint::OpenAiModels,
        &method,
        version,
        &uri,
        &headers,
    );
    json_response(
        StatusCode::OK,
        &openai::models(&shared.models(), shared.config.clock.now_secs()),
    )
}

async fn ollama_tags(
    State(shared): State<Arc<Shared>>,
    method: Method,
    version: Version,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    record_plain(
        &shared,
        Endpoint::OllamaTags,
        &method,
        version,
        &uri,
        &headers,
    );
    json_response(
        StatusCode::OK,
        &ollama::tags(&shared.models(), shared.config.clock.now_secs()),
    )
}

async fn ollama_version(
    State(shared): State<Arc<Shared>>,
    method: Method,
    version: Version,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    record_plain(
        &shared,
        Endpoint::OllamaVersion,
        &method,
        version,
        &uri,
        &headers,
    );
    json_response(StatusCode::OK, &ollama::version())
}

async fn control_requests(State(shared): State<Arc<Shared>>) -> Response {
    let journal: Vec<JournalEntry> = shared.lock().journal.iter().cloned().collect();
    json_response(
        StatusCode::OK,
        &serde_json::to_value(journal).unwrap_or(Value::Null),
    )
}

async fn control_reset(State(shared): State<Arc<Shared>>) -> Response {
    let mut state = shared.lock();
    state.script.reset();
    state.journal.clear();
    state.journaled = 0;
    json_response(StatusCode::OK, &json!({"reset": true}))
}

fn control_error(message: String) -> Response {
    json_response(StatusCode::BAD_REQUEST, &json!({"error": message}))
}

async fn control_scenario(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(text) = std::str::from_utf8(&body) else {
        return control_error("scenario body is not UTF-8".into());
    };
    let is_json = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    let scenario = if is_json {
        Scenario::from_json_str(text)
    } else {
        Scenario::from_yaml_str(text)
    };
    match scenario {
        Ok(s) => {
            let rules = s.rules.len();
            shared.lock().script.replace(s);
            json_response(StatusCode::OK, &json!({"rules": rules}))
        }
        Err(e) => control_error(e.to_string()),
    }
}

async fn control_faults(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let value: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return control_error(format!("faults body is not JSON: {e}")),
    };
    let list = match value {
        Value::Array(items) => items,
        one => vec![one],
    };
    let mut faults = Vec::with_capacity(list.len());
    for item in list {
        match serde_json::from_value::<Fault>(item) {
            Ok(f) => faults.push(f),
            Err(e) => return control_error(format!("fault: {e}")),
        }
    }
    let queued = faults.len();
    let mut state = shared.lock();
    for f in faults {
        state.script.push_fault(f);
    }
    json_response(StatusCode::OK, &json!({"queued": queued}))
}

async fn not_found(uri: Uri) -> Response {
    json_response(
        StatusCode::NOT_FOUND,
        &json!({"error": format!("mock-llm does not serve {}", uri.path())}),
    )
}

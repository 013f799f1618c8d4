//! Bounds on MCP's streamable HTTP at `/mcp`: how many sessions it keeps and how many
//! standalone `GET /mcp` streams it holds open, per session and in total.
//!
//! rmcp's [`LocalSessionManager`] keeps every session an `initialize` creates (about 78 kB
//! each) for its 300 s keep-alive, without a cap, and a session may hold up to 33 standalone
//! streams (one primary and 32 "shadow" streams). A stream is a request in progress, so the
//! accept loop's idle eviction never frees its connection: enough of them keep every other
//! client (`/healthz`, A2E, A2A, MCP calls) out. Here:
//!
//! - **sessions** — at most [`McpLimits::max_sessions`]. An `initialize` over the cap first
//!   closes the session idle the longest (no request or stream open); when every session is
//!   busy it is answered HTTP 503 with a JSON-RPC error body, and nothing grows.
//! - **standalone streams** — at most [`McpLimits::max_streams_per_session`] per session and
//!   [`McpLimits::max_streams`] in total (resumed streams count too), a budget separate from
//!   calls; [`McpLimits::for_connections`] keeps the total at most half the connection cap, so
//!   the other half is always there for calls and health checks. A `GET` over a cap gets 503.
//!
//! - **finished calls' streams** — rmcp keeps each finished `tools/call` stream's events (about
//!   8 kB) for late resumption; [`COMPLETED_STREAM_TTL`] keeps them 10 s instead of rmcp's 60 s
//!   (a client resumes after the 3 s `retry` the stream announces), so a burst of calls costs a
//!   sixth of the memory for a sixth of the time. They are not counted against the caps above.
//!
//! - **reads' answers** — a request stream carries a `read_budget::PermitSlot`; when its
//!   handler left read permits there, the stream's cached messages are dropped as soon as it
//!   ends, then the permits, so a file's bytes are counted as long as the process holds them.
//!
//! [`BoundedSessions`] also holds which identity opened each session (`session_owner`), and
//! wraps rmcp's manager and keeps the counts (streams are counted until
//! their response body is dropped, that is until the client goes or the session ends); the
//! `refuse_over_limits` middleware answers over-cap requests before rmcp sees them (rmcp
//! would answer a session manager's error with a bare 500), and the manager refuses them
//! again should two requests race past the check.
//!
//! Not here: the connection cap itself (`crate::listener`), the handler (`handler`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionHandle, LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

use super::read_budget::PermitSlot;
use super::session_owner::SessionOwners;
use rmcp::model::GetExtensions as _;

/// Default of [`McpLimits::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 512;
/// Default of [`McpLimits::max_streams`].
pub const DEFAULT_MAX_STREAMS: usize = 256;
/// Default of [`McpLimits::max_streams_per_session`].
pub const DEFAULT_MAX_STREAMS_PER_SESSION: usize = 2;

/// The caps of `/mcp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpLimits {
    /// Most sessions kept at once.
    pub max_sessions: usize,
    /// Most standalone (`GET /mcp`) streams open at once, over every session.
    pub max_streams: usize,
    /// Most standalone streams of one session.
    pub max_streams_per_session: usize,
}

impl Default for McpLimits {
    fn default() -> Self {
        McpLimits {
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_streams: DEFAULT_MAX_STREAMS,
            max_streams_per_session: DEFAULT_MAX_STREAMS_PER_SESSION,
        }
    }
}

impl McpLimits {
    /// These limits with the stream total at most half of `max_connections` (at least one),
    /// so streams can never hold the connections calls and health checks need.
    pub fn for_connections(self, max_connections: usize) -> Self {
        McpLimits {
            max_sessions: self.max_sessions.max(1),
            max_streams: self.max_streams.min(max_connections / 2).max(1),
            max_streams_per_session: self.max_streams_per_session.max(1),
        }
    }
}

/// Why the bounded manager refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BoundedError {
    /// rmcp's own error.
    #[error(transparent)]
    Inner(#[from] LocalSessionManagerError),
    /// Every session is busy and the cap is reached.
    #[error("the server keeps {0} MCP sessions, its limit, and none is idle")]
    SessionsFull(usize),
    /// A stream cap is reached.
    #[error("{0}")]
    StreamsFull(String),
}

/// What is known of one session.
#[derive(Debug)]
struct Usage {
    last_used: Instant,
    /// Request streams (a `POST` answered with SSE) open.
    requests: usize,
    /// Standalone streams open.
    streams: usize,
}

impl Usage {
    fn new() -> Self {
        Usage {
            last_used: Instant::now(),
            requests: 0,
            streams: 0,
        }
    }

    fn idle(&self) -> bool {
        self.requests == 0 && self.streams == 0
    }
}

#[derive(Debug, Default)]
struct Counts {
    sessions: HashMap<SessionId, Usage>,
    streams: usize,
}

/// rmcp's session manager within [`McpLimits`] (see the module doc).
pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    limits: McpLimits,
    counts: Arc<Mutex<Counts>>,
    owners: SessionOwners,
}

/// Which count a stream holds until it is dropped.
#[derive(Clone, Copy)]
enum Held {
    Request,
    Standalone,
}

/// Gives back what a stream held when its response body is dropped.
struct Release {
    counts: Arc<Mutex<Counts>>,
    id: SessionId,
    held: Held,
}

impl Drop for Release {
    fn drop(&mut self) {
        let mut counts = lock(&self.counts);
        if let Held::Standalone = self.held {
            counts.streams = counts.streams.saturating_sub(1);
        }
        if let Some(usage) = counts.sessions.get_mut(&self.id) {
            match self.held {
                Held::Request => usage.requests = usage.requests.saturating_sub(1),
                Held::Standalone => usage.streams = usage.streams.saturating_sub(1),
            }
            usage.last_used = Instant::now();
        }
    }
}

fn lock(counts: &Mutex<Counts>) -> std::sync::MutexGuard<'_, Counts> {
    counts.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How long a finished call's stream is kept for a client to resume it (see the module doc).
pub(crate) const COMPLETED_STREAM_TTL: std::time::Duration = std::time::Duration::from_secs(10);

impl BoundedSessions {
    /// A manager within `limits`.
    pub(crate) fn new(limits: McpLimits) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.completed_cache_ttl = COMPLETED_STREAM_TTL;
        BoundedSessions {
            inner,
            limits,
            counts: Arc::default(),
            owners: SessionOwners::default(),
        }
    }

    /// Which identity opened each session (`session_owner`).
    pub(crate) fn owners(&self) -> &SessionOwners {
        &self.owners
    }

    /// Standalone streams open now.
    #[cfg(test)]
    pub(crate) fn stream_count(&self) -> usize {
        lock(&self.counts).streams
    }

    /// Makes room for one more session: forgets sessions rmcp already dropped (their
    /// keep-alive ran out), then closes the idle one used the longest ago when at the cap.
    /// `Err` when the cap is reached and every session is busy.
    pub(crate) async fn make_room(&self) -> Result<(), BoundedError> {
        let seen_at = Instant::now();
        let live: Vec<SessionId> = self.inner.sessions.read().await.keys().cloned().collect();
        self.owners.retain_live(&live, seen_at);
        let evict = {
            let mut counts = lock(&self.counts);
            counts.sessions.retain(|id, _| live.contains(id));
            if live.len() < self.limits.max_sessions {
                return Ok(());
            }
            let oldest_idle = counts
                .sessions
                .iter()
                .filter(|(_, usage)| usage.idle())
                .min_by_key(|(_, usage)| usage.last_used)
                .map(|(id, _)| id.clone());
            // A live session we never saw (created between two checks) is not evicted.
            let Some(id) = oldest_idle else {
                return Err(BoundedError::SessionsFull(self.limits.max_sessions));
            };
            counts.sessions.remove(&id);
            id
        };
        self.owners.forget(&evict);
        tracing::debug!(session = %evict, "MCP session cap reached; closing the longest idle one");
        self.inner.close_session(&evict).await?;
        Ok(())
    }

    /// Whether session `id` may open one more standalone stream; the refusal says which cap.
    pub(crate) fn stream_room(&self, id: &SessionId) -> Result<(), BoundedError> {
        let counts = lock(&self.counts);
        self.check_stream_room(&counts, id)
    }

    fn check_stream_room(&self, counts: &Counts, id: &SessionId) -> Result<(), BoundedError> {
        if counts.streams >= self.limits.max_streams {
            return Err(BoundedError::StreamsFull(format!(
                "the server holds {} MCP streams, its limit; retry later",
                self.limits.max_streams
            )));
        }
        let of_session = counts.sessions.get(id).map_or(0, |u| u.streams);
        if of_session >= self.limits.max_streams_per_session {
            return Err(BoundedError::StreamsFull(format!(
                "this MCP session already holds {of_session} streams, its limit"
            )));
        }
        Ok(())
    }

    fn touch(&self, id: &SessionId) {
        if let Some(usage) = lock(&self.counts).sessions.get_mut(id) {
            usage.last_used = Instant::now();
        }
    }

    /// Takes a count for a stream of session `id` (checking the stream caps for a standalone
    /// one); the returned guard gives it back.
    fn hold(&self, id: &SessionId, held: Held) -> Result<Release, BoundedError> {
        let mut counts = lock(&self.counts);
        if let Held::Standalone = held {
            self.check_stream_room(&counts, id)?;
            counts.streams += 1;
        }
        let usage = counts.sessions.entry(id.clone()).or_insert_with(Usage::new);
        usage.last_used = Instant::now();
        match held {
            Held::Request => usage.requests += 1,
            Held::Standalone => usage.streams += 1,
        }
        Ok(Release {
            counts: Arc::clone(&self.counts),
            id: id.clone(),
            held,
        })
    }
}

/// Drops a finished read's cached messages, then its permits (see `create_stream`).
struct ForgetRead {
    slot: PermitSlot,
    handle: LocalSessionHandle,
    channel: Option<u64>,
}

impl Drop for ForgetRead {
    fn drop(&mut self) {
        let (Some(channel), true) = (self.channel, self.slot.holds_permits()) else {
            return;
        };
        let (handle, slot) = (self.handle.clone(), self.slot.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = handle.close_request_wise_channel(channel).await;
                drop(slot);
            });
        }
    }
}

/// `stream` that gives back `release`'s count when it is dropped.
fn holding<S>(stream: S, release: Release) -> impl Stream<Item = ServerSseMessage> + Send + Sync
where
    S: Stream<Item = ServerSseMessage> + Send + Sync + 'static,
{
    stream.map(move |message| {
        let _held = &release;
        message
    })
}

impl SessionManager for BoundedSessions {
    type Error = BoundedError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await?;
        let (id, transport) = self.inner.create_session().await?;
        lock(&self.counts).sessions.insert(id.clone(), Usage::new());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.touch(id);
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.counts).sessions.remove(id);
        self.owners.forget(id);
        Ok(self.inner.close_session(id).await?)
    }

    /// rmcp's `create_stream`, plus the request's [`PermitSlot`]: when its handler left read
    /// permits there, the stream's cached messages are dropped as soon as the stream ends (a
    /// read is asked again, not resumed), and only then the permits (`read_budget`).
    async fn create_stream(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let release = self.hold(id, Held::Request)?;
        let slot = PermitSlot::default();
        if let ClientJsonRpcMessage::Request(request) = &mut message
            && let Some(parts) = request
                .request
                .extensions_mut()
                .get_mut::<http::request::Parts>()
        {
            parts.extensions.insert(slot.clone());
        }
        let handle = self
            .inner
            .sessions
            .read()
            .await
            .get(id)
            .cloned()
            .ok_or_else(|| LocalSessionManagerError::SessionNotFound(id.clone()))?;
        let receiver = handle
            .establish_request_wise_channel()
            .await
            .map_err(LocalSessionManagerError::from)?;
        let channel = receiver.http_request_id;
        handle
            .push_message(message, channel)
            .await
            .map_err(LocalSessionManagerError::from)?;
        let forget = ForgetRead {
            slot,
            handle,
            channel,
        };
        let stream = tokio_stream::wrappers::ReceiverStream::new(receiver.inner).map(move |m| {
            let _kept = &forget;
            m
        });
        Ok(holding(stream, release))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let release = self.hold(id, Held::Standalone)?;
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(holding(stream, release))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let release = self.hold(id, Held::Standalone)?;
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(holding(stream, release))
    }
}

/// The session header of streamable HTTP.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// Answers over-cap requests with 503 before rmcp sees them: an `initialize` (a `POST` without
/// a session) when no session can be made room for, a `GET` when a stream cap is reached.
pub(crate) async fn refuse_over_limits(
    sessions: Arc<BoundedSessions>,
    request: Request,
    next: Next,
) -> Response {
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(SessionId::from);
    let refusal = match (request.method(), session) {
        (&http::Method::POST, None) => sessions.make_room().await.err(),
        (&http::Method::GET, Some(id)) => sessions.stream_room(&id).err(),
        _ => None,
    };
    match refusal {
        Some(why) => unavailable(&why.to_string()),
        None => next.run(request).await,
    }
}

/// HTTP 503 with a JSON-RPC error body (`id` null: the request is not read) and a short
/// `Retry-After`.
fn unavailable(message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32000, "message": message},
    });
    (
        http::StatusCode::SERVICE_UNAVAILABLE,
        [
            (http::header::CONTENT_TYPE, "application/json"),
            (http::header::RETRY_AFTER, "5"),
        ],
        Body::from(body.to_string()),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_keep_half_the_connections_free() {
        let limits = McpLimits::default().for_connections(100);
        assert_eq!(limits.max_streams, 50);
        assert_eq!(McpLimits::default().for_connections(1).max_streams, 1);
        assert_eq!(
            McpLimits::default().for_connections(10_000).max_streams,
            DEFAULT_MAX_STREAMS
        );
    }

    #[test]
    fn finished_call_streams_are_kept_for_a_resume_not_for_a_minute() {
        let sessions = BoundedSessions::new(McpLimits::default());
        let config = &sessions.inner.session_config;
        assert_eq!(config.completed_cache_ttl, COMPLETED_STREAM_TTL);
        let retry = config.sse_retry.expect("rmcp announces a retry interval");
        assert!(
            config.completed_cache_ttl >= 3 * retry,
            "a resume still finds it"
        );
    }

    #[tokio::test]
    async fn stream_caps_hold_per_session_and_in_total_until_the_streams_are_dropped() {
        let sessions = BoundedSessions::new(McpLimits {
            max_sessions: 8,
            max_streams: 3,
            max_streams_per_session: 2,
        });
        let (a, b) = (SessionId::from("a"), SessionId::from("b"));
        let first = sessions.hold(&a, Held::Standalone).unwrap();
        let _second = sessions.hold(&a, Held::Standalone).unwrap();
        assert!(matches!(
            sessions.hold(&a, Held::Standalone),
            Err(BoundedError::StreamsFull(_))
        ));
        let _third = sessions.hold(&b, Held::Standalone).unwrap();
        assert!(sessions.stream_room(&b).is_err(), "the total is reached");
        assert_eq!(sessions.stream_count(), 3);
        drop(first);
        assert_eq!(sessions.stream_count(), 2);
        assert!(sessions.stream_room(&b).is_ok());
        // Request streams are not in the stream budget.
        let _call = sessions.hold(&a, Held::Request).unwrap();
        assert_eq!(sessions.stream_count(), 2);
    }
}

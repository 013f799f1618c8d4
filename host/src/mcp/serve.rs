//! The MCP transports: stdio (`skillet serve --mcp`) and streamable HTTP at `/mcp` (merged into
//! `skillet serve --http`, next to `/a2e`).
//!
//! Over HTTP, rmcp's streamable HTTP service keeps sessions (`Mcp-Session-Id`) for clients that
//! negotiate a session-based protocol version and limits the request body (its own `Host` and
//! `Origin` checks are off: the server's one rule for every route, `crate::origin_guard`, has
//! refused another site's request before it reaches `/mcp`); sessions and standalone streams are
//! capped (`limits`); a body that is not one JSON object gets a JSON-RPC error (`body_check`).
//! Both transports run calls through
//! the shared [`HostCore`], so the concurrency limit is the server's, not the transport's.
//!
//! Not here: the handler (`handler`) and the accept loop (`crate::listener`).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use rmcp::ServiceExt;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use super::body_check::refuse_malformed_bodies;
use super::coalesce::coalescing;
use super::eof_drain::DrainAtEof;
use super::handler::McpHandler;
use super::limits::{BoundedSessions, McpLimits, refuse_over_limits};
use super::line_transport::LineTransport;
use super::list_changed::{SessionPeers, watch_tools};
use super::oversize::{AnswerOversized, LineGuard};
use super::pre_init::PreInit;
use super::session_owner::refuse_other_identities;
use crate::core::{CANCEL_GRACE, HostCore};

/// Settings of MCP over streamable HTTP.
#[derive(Debug, Clone)]
pub struct McpHttpOptions {
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// The caps on sessions and standalone streams (see `limits`).
    pub limits: McpLimits,
}

/// The `/mcp` route for the HTTP server, and the task that announces tool changes (it ends
/// when `stop` is cancelled).
pub fn http_router(core: &HostCore, options: &McpHttpOptions, stop: CancellationToken) -> Router {
    http_router_with_tasks(core, options, stop, super::tasks::McpTasks::default())
}

/// [`http_router`] with the server's Tasks-extension store given (durable with `[server]
/// state_db`: [`McpTasks::durable`](super::McpTasks::durable)).
pub fn http_router_with_tasks(
    core: &HostCore,
    options: &McpHttpOptions,
    stop: CancellationToken,
    tasks: super::tasks::McpTasks,
) -> Router {
    // `subscriptions/listen` streams share the standalone streams' cap (`listen`).
    let peers = SessionPeers::new(options.limits.max_streams);
    tokio::spawn(watch_tools(core.clone(), peers.clone(), stop.clone()));
    let mut config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_sse_keep_alive(Some(crate::listener::SSE_KEEP_ALIVE));
    config.max_request_body_bytes = options.max_body_bytes;
    config.cancellation_token = stop;
    let core = core.clone();
    let sessions = Arc::new(BoundedSessions::new(options.limits));
    // One task store for the server: a 2026-07-28 client polls from request to request.
    let approvals = super::input_required::PendingApprovals::default();
    let service = StreamableHttpService::new(
        move || {
            Ok(McpHandler::new_session(&core, &peers)
                .with_tasks(&tasks)
                .with_approvals(&approvals))
        },
        Arc::clone(&sessions),
        config,
    );
    let max_body_bytes = options.max_body_bytes;
    Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn({
            let sessions = Arc::clone(&sessions);
            move |request, next| refuse_over_limits(Arc::clone(&sessions), request, next)
        }))
        // Before the caps and rmcp: a session is only its opener's (`session_owner`).
        .layer(axum::middleware::from_fn(move |request, next| {
            refuse_other_identities(Arc::clone(&sessions), request, next)
        }))
        // Outermost: a malformed body is answered before it can take a session's room.
        .layer(axum::middleware::from_fn(move |request, next| {
            refuse_malformed_bodies(max_body_bytes, request, next)
        }))
}

/// Serves one MCP session over a byte stream (stdin/stdout for `serve --mcp`) until the client
/// closes it or `shutdown` completes, then lets calls in flight finish within `grace` (then
/// cancels them); at the end of input their answers are still written (`eof_drain`). A line
/// longer than `max_line_bytes` (`[server] max_message_bytes`) is answered with -32600 and not
/// read (`oversize`; rmcp would drop it without a word), and a line that is not JSON is ignored
/// as the official MCP SDKs ignore it (answering unparsable input can start an error storm with
/// a peer that echoes it; rmcp issue #938); well-formed JSON that is not a message gets -32600
/// (`line_transport`, which reads a `tools/call` line in one pass: `call_line`).
pub async fn serve_stream<R, W>(
    core: HostCore,
    input: R,
    output: W,
    grace: Duration,
    max_line_bytes: usize,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let peers = SessionPeers::default();
    let stop = CancellationToken::new();
    let watcher = tokio::spawn(watch_tools(core.clone(), peers.clone(), stop.clone()));
    // rmcp writes and flushes each message alone; this gathers those flushed together, and
    // calls write their notifications into it themselves.
    let (output, written) = coalescing(output);
    let handler = McpHandler::new_stream_session(&core, &peers, output.lines());
    let transport = DrainAtEof::new(
        PreInit::new(AnswerOversized::new(LineTransport::new(
            LineGuard::new(input, max_line_bytes),
            output,
        ))),
        core.clone(),
        grace,
    );
    let running = match handler.serve(transport).await {
        Ok(running) => running,
        Err(e) => {
            stop.cancel();
            let _ = watcher.await;
            finish_writing(written).await;
            return Err(std::io::Error::other(format!("MCP initialize failed: {e}")));
        }
    };
    let session_end = running.cancellation_token();
    tokio::pin!(shutdown);
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        result = &mut waiting => {
            if let Err(e) = result {
                tracing::warn!(error = %e, "MCP session ended with an error");
            }
            core.drain(grace).await;
        }
        () = &mut shutdown => {
            core.drain(grace).await;
            session_end.cancel();
            let _ = waiting.await;
        }
    }
    stop.cancel();
    let _ = watcher.await;
    finish_writing(written).await;
    Ok(())
}

/// Waits until what the session wrote last is written (its transport is gone by now), for at
/// most [`CANCEL_GRACE`]: a host that stopped reading must not keep the process alive.
async fn finish_writing(written: tokio::task::JoinHandle<()>) {
    if tokio::time::timeout(CANCEL_GRACE, written).await.is_err() {
        tracing::warn!("the MCP output did not take the last messages in time");
    }
}

//! The accept loop: serves the router over HTTP/1.1 and HTTP/2 on one port, and stops
//! gracefully.
//!
//! HTTP/2 is spoken by prior knowledge (`h2c`: the client's first bytes are the HTTP/2
//! preface), as a provider with `http2_prior_knowledge` sends it. Up to [`MAX_HTTP2_STREAMS`]
//! calls share one connection, so a test or benchmark can hold thousands of calls in flight
//! over a single socket, as clients of HTTPS APIs do after ALPN picks HTTP/2. (`axum::serve`
//! leaves hyper's default of 200 streams per connection, which would queue the rest.)
//!
//! Not here: routes and answers (`server`, `dispatch`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Most concurrent HTTP/2 streams (calls) one connection may carry.
pub const MAX_HTTP2_STREAMS: u32 = 1 << 20;

/// Request bytes all streams of a connection may have in flight at once.
const HTTP2_CONNECTION_WINDOW: u32 = 256 << 20;

/// Request bytes one stream may have in flight at once.
const HTTP2_STREAM_WINDOW: u32 = 1 << 20;

/// Serves `app` on `listener` until `shutdown` fires; then stops accepting, lets every
/// connection finish the requests it has (HTTP/2: sends `GOAWAY`), and returns when all closed.
/// Counts every accepted connection in `accepted`.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    accepted: Arc<AtomicU64>,
    shutdown: CancellationToken,
) {
    let mut builder = Builder::new(TokioExecutor::new());
    // Windows sized for thousands of requests at once on one connection: with hyper's 1 MiB
    // connection window, request bodies beyond it arrive as many small DATA frames, which h2's
    // flood protection counts against the connection and answers with ENHANCE_YOUR_CALM.
    builder
        .http2()
        .max_concurrent_streams(MAX_HTTP2_STREAMS)
        .initial_connection_window_size(HTTP2_CONNECTION_WINDOW)
        .initial_stream_window_size(HTTP2_STREAM_WINDOW);
    let connections = TaskTracker::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    tracing::warn!(error = %e, "mock-llm: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        accepted.fetch_add(1, Ordering::Relaxed);
        let builder = builder.clone();
        let service = TowerToHyperService::new(app.clone());
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = shutdown.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    connections.close();
    connections.wait().await;
}

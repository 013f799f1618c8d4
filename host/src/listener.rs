//! The HTTP accept loop: serves an axum [`Router`] with a connection cap, a header-read timeout
//! and an idle timeout, without Nagle's delay, and stops gracefully.
//!
//! `axum::serve` has none of the three, so a few hundred idle sockets could exhaust the process's
//! file descriptors and take the server offline. Here:
//! - **connection cap** — at most [`ConnectionLimits::max_connections`] open connections, clamped
//!   below the process's open-file limit (`RLIMIT_NOFILE` minus 64 spare descriptors) so
//!   accepting never starves the rest of the process. When full, the oldest connection with no
//!   request in progress is closed to make room; when every connection is busy the new one is
//!   closed.
//! - **header-read timeout** — an HTTP/1 client must send a request's headers within
//!   [`ConnectionLimits::header_read_timeout`].
//! - **idle timeout** — a connection with no request in progress for
//!   [`ConnectionLimits::idle_timeout`] (fresh, keep-alive, HTTP/2 alike) is closed.
//! - **body-read timeout** — a request's body must arrive within
//!   [`ConnectionLimits::body_read_timeout`] of its headers; reading it later fails with
//!   `BodyTimedOut` (a trickled body would otherwise hold a busy connection forever).
//! - **no Nagle delay** — every connection gets `TCP_NODELAY`, so an answer streamed in pieces
//!   (SSE) is not held back waiting for the peer's delayed ACK.
//! - **TLS** (with a [`TlsServer`]) — the handshake runs on the connection's own task within the
//!   header-read timeout; a connection whose first byte is not a TLS handshake (plain HTTP sent
//!   to the TLS port) gets one plain `400` saying to use `https://`, and is closed.
//! - **peer address** — every request carries its connection's [`PeerAddr`] in its extensions
//!   (what `forwarded` starts from).
//!
//! Not here: routes, protocols and calls (`http`, `mcp`, the core), certificates (`tls`).

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use crate::tls::TlsServer;

/// File descriptors kept free for everything but connections (logs, toolkit children, provider
/// sockets).
pub(crate) const FD_HEADROOM: u64 = 64;

/// How often a silent SSE stream (A2E, A2A, MCP) sends a keep-alive comment. Below the 5 s read
/// timeout of an `httpx.AsyncClient()` with default settings — what a2a-sdk's `ClientFactory` and
/// many Python hosts stream with — so a model turn that takes longer does not look like a dead
/// server to them.
pub(crate) const SSE_KEEP_ALIVE: Duration = Duration::from_secs(3);

/// The TCP peer of the connection a request came on (in every request's extensions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PeerAddr(pub SocketAddr);

/// The first byte of a TLS record carrying a handshake (RFC 8446 §5.1, `handshake(22)`).
const TLS_HANDSHAKE: u8 = 0x16;

/// The answer to a connection on the TLS port that does not start a TLS handshake.
const PLAIN_HTTP_ON_TLS_PORT: &[u8] = b"HTTP/1.1 400 Bad Request\r\n\
content-type: text/plain\r\n\
connection: close\r\n\
content-length: 51\r\n\
\r\n\
this port speaks TLS: use https:// instead of http\n";

/// Limits of the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Most open connections (further clamped by the open-file limit).
    pub max_connections: usize,
    /// Longest wait for an HTTP/1 request's headers.
    pub header_read_timeout: Duration,
    /// Longest time a connection may stay open with no request in progress.
    pub idle_timeout: Duration,
    /// Longest time a request's body may take to arrive after its headers.
    pub body_read_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            body_read_timeout: Duration::from_secs(30),
        }
    }
}

impl ConnectionLimits {
    /// The cap actually applied: `max_connections`, at most the open-file limit minus headroom.
    pub fn effective_max_connections(&self) -> usize {
        let by_fds = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .map(|soft| soft.saturating_sub(FD_HEADROOM).max(1))
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(usize::MAX);
        self.max_connections.min(by_fds).max(1)
    }
}

/// One open connection as the accept loop sees it.
struct Connection {
    activity: Arc<Activity>,
    evict: CancellationToken,
}

/// Requests in progress on a connection and when that count last changed.
struct Activity {
    busy: AtomicUsize,
    since: Mutex<Instant>,
}

impl Activity {
    fn touch(&self) {
        *self.since.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn idle_since(&self) -> Option<Instant> {
        (self.busy.load(Ordering::SeqCst) == 0)
            .then(|| *self.since.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Counts a request as in progress until its response body is dropped.
struct InProgress(Arc<Activity>);

impl InProgress {
    fn start(activity: &Arc<Activity>) -> Self {
        activity.busy.fetch_add(1, Ordering::SeqCst);
        activity.touch();
        InProgress(Arc::clone(activity))
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
        self.0.touch();
    }
}

type Registry = Arc<Mutex<BTreeMap<u64, Connection>>>;

/// Serves `app` on `listener` (over TLS with `tls`) until `shutdown` completes; then stops
/// accepting, asks every connection to close after its current request, and returns when all
/// have closed.
pub(crate) async fn serve_connections(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    tls: Option<Arc<TlsServer>>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let cap = limits.effective_max_connections();
    tracing::debug!(max_connections = cap, "accepting HTTP connections");
    let registry: Registry = Arc::new(Mutex::new(BTreeMap::new()));
    let (stop_tx, stop_rx) = watch::channel(false);
    let connections = TaskTracker::new();
    let mut next_id = 0u64;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // EMFILE and friends: back off instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        configure(&stream);
        if !make_room(&registry, cap) {
            tracing::debug!("connection cap reached and every connection busy; closing new one");
            drop(stream);
            continue;
        }
        let id = next_id;
        next_id += 1;
        let activity = Arc::new(Activity {
            busy: AtomicUsize::new(0),
            since: Mutex::new(Instant::now()),
        });
        let evict = CancellationToken::new();
        registry
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                id,
                Connection {
                    activity: Arc::clone(&activity),
                    evict: evict.clone(),
                },
            );
        let registry = Arc::clone(&registry);
        let app = app.clone();
        let stop = stop_rx.clone();
        let tls = tls.clone();
        connections.spawn(async move {
            let peer = PeerAddr(peer);
            match tls {
                None => serve_one(stream, peer, app, limits, activity, evict, stop).await,
                Some(tls) => {
                    if let Some(stream) = handshake(stream, &tls, limits.header_read_timeout).await
                    {
                        serve_one(stream, peer, app, limits, activity, evict, stop).await;
                    }
                }
            }
            registry
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    connections.close();
    connections.wait().await;
    Ok(())
}

/// The options every accepted connection gets. `TCP_NODELAY`: answers that go out in pieces (an
/// SSE stream: MCP's `/mcp`, A2A's `message/stream`) must not wait for the peer's delayed ACK.
/// With Nagle's algorithm on, each piece after the first waits for the peer's delayed ACK
/// (tens of milliseconds on Linux), which a person sees as a slow streamed answer.
fn configure(stream: &tokio::net::TcpStream) {
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "cannot set TCP_NODELAY");
    }
}

/// Makes room for one more connection: true when there is room (possibly after evicting the
/// oldest idle connection), false when every connection is busy.
fn make_room(registry: &Registry, cap: usize) -> bool {
    let registry = registry.lock().unwrap_or_else(PoisonError::into_inner);
    let open = registry
        .values()
        .filter(|c| !c.evict.is_cancelled())
        .count();
    if open < cap {
        return true;
    }
    match registry
        .values()
        .find(|c| !c.evict.is_cancelled() && c.activity.idle_since().is_some())
    {
        Some(oldest_idle) => {
            oldest_idle.evict.cancel();
            true
        }
        None => false,
    }
}

/// The TLS handshake of one connection, within `timeout`; `None` (the connection closed) when
/// it fails, takes too long, or the peer speaks plain HTTP (answered with one `400` first).
async fn handshake(
    mut stream: TcpStream,
    tls: &TlsServer,
    timeout: Duration,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    let mut first = [0u8; 1];
    match tokio::time::timeout(timeout, stream.peek(&mut first)).await {
        Ok(Ok(1)) if first[0] == TLS_HANDSHAKE => {}
        Ok(Ok(1)) => {
            tracing::debug!("plain HTTP on the TLS port; answering 400");
            refuse_plain(&mut stream).await;
            return None;
        }
        _ => return None,
    }
    match tokio::time::timeout(timeout, tls.acceptor().accept(stream)).await {
        Ok(Ok(stream)) => Some(stream),
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "TLS handshake failed");
            None
        }
        Err(_) => {
            tracing::debug!("TLS handshake timed out");
            None
        }
    }
}

/// Answers a plain-HTTP peer once, then reads what it still sends for a moment (closing with
/// unread bytes would reset the connection before the peer reads the answer).
async fn refuse_plain(stream: &mut TcpStream) {
    if stream.write_all(PLAIN_HTTP_ON_TLS_PORT).await.is_err() {
        return;
    }
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 4096];
    let drain = async {
        let mut total = 0usize;
        while let Ok(n) = stream.read(&mut sink).await {
            total += n;
            if n == 0 || total > 64 * 1024 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
}

async fn serve_one<S>(
    stream: S,
    peer: PeerAddr,
    app: Router,
    limits: ConnectionLimits,
    activity: Arc<Activity>,
    evict: CancellationToken,
    mut stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let counted = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        let guard = InProgress::start(&counted);
        let app = app.clone();
        request.extensions_mut().insert(peer);
        let request = request.map(|body| {
            Body::new(DeadlineBody {
                inner: body,
                deadline: Box::pin(tokio::time::sleep(limits.body_read_timeout)),
            })
        });
        async move {
            let response = app.oneshot(request).await;
            response.map(|response| {
                response.map(|body| {
                    Body::new(body.map_frame(move |frame| {
                        let _in_progress = &guard;
                        frame
                    }))
                })
            })
        }
    });
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let mut stopping = false;
    loop {
        let idle_deadline = activity
            .idle_since()
            .map(|since| since + limits.idle_timeout);
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(e) = result {
                    tracing::trace!(error = %e, "connection ended with an error");
                }
                return;
            }
            () = evict.cancelled() => {
                tracing::debug!("closing an idle connection to make room");
                return;
            }
            () = sleep_until(idle_deadline) => {
                if activity.idle_since().is_some_and(|since| since.elapsed() >= limits.idle_timeout) {
                    tracing::debug!("closing an idle connection");
                    return;
                }
            }
            changed = stop.changed(), if !stopping => {
                if changed.is_err() || *stop.borrow() {
                    stopping = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        // Busy: re-check once a second (the request may end at any time).
        None => tokio::time::sleep(Duration::from_secs(1)).await,
    }
}

/// The error of a request body that did not arrive within the body-read timeout.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
pub(crate) struct BodyTimedOut;

/// A request body that fails with [`BodyTimedOut`] once its deadline passes.
struct DeadlineBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame.map(|f| f.map_err(Into::into))),
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut)))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_connections_send_without_waiting_for_acks() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap());
        let (accepted, _client) = tokio::join!(listener.accept(), client);
        let (stream, _) = accepted.unwrap();
        assert!(!stream.nodelay().unwrap(), "Nagle is on by default");
        configure(&stream);
        assert!(stream.nodelay().unwrap());
    }
}

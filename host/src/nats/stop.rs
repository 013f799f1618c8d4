//! How a worker stops: every step after SIGTERM/SIGINT is bounded by one deadline, the moment
//! the stop was asked plus the grace period, so a worker stops also when its NATS server is gone.
//!
//! Why bounded: the client library reconnects forever, and while it does, nothing it is asked
//! (a flush, an ack, a store) completes — an unbounded wait turned a worker that had lost its
//! server into one only SIGKILL could stop. Steps, in order:
//!
//! 1. the calls in flight get what is left of the grace, then are cancelled (the core's drain;
//!    its cancelled calls are NAKed by their handlers);
//! 2. the handlers store, answer and ack what finished, for at most [`WRAP_UP`] past the
//!    deadline — and not at all once the connection is down: nothing more can reach the server;
//! 3. what the client still buffers is flushed, for at most [`FLUSH_LIMIT`], only when connected.
//!
//! What a stop with the server gone leaves behind is what a killed worker leaves: messages that
//! were neither acked nor NAKed, which the server redelivers after `ack_wait`; the next worker
//! continues each from its last checkpoint (or replays its stored answer).
//!
//! Not here: pulling and handling calls (`worker`), the drain itself (the core).

use std::time::Duration;

use async_nats::Client;
use async_nats::connection::State;
use tokio::time::Instant;
use tokio_util::task::TaskTracker;

use crate::core::HostCore;

/// How long past the grace the handlers may go on storing, answering and acking the calls that
/// finished (or were cancelled) in time, while the server is reachable.
pub(super) const WRAP_UP: Duration = Duration::from_secs(3);

/// The most a final flush of the client's buffer may take.
pub(super) const FLUSH_LIMIT: Duration = Duration::from_secs(1);

/// How often the wrap-up looks whether the connection is still up.
const CONNECTION_CHECK: Duration = Duration::from_millis(100);

/// Finishes a worker's calls within `grace` of `asked` (when the stop was asked), then returns;
/// see the module doc for the steps and their bounds.
pub(super) async fn wrap_up(
    core: &HostCore,
    handlers: &TaskTracker,
    client: &Client,
    asked: Instant,
    grace: Duration,
) {
    let deadline = asked + grace;
    core.drain(deadline.saturating_duration_since(Instant::now()))
        .await;
    handlers.close();
    let handlers_done = tokio::time::timeout_at(deadline + WRAP_UP, async {
        tokio::select! {
            () = handlers.wait() => true,
            () = disconnected(client) => false,
        }
    })
    .await
    .unwrap_or(false);
    if !handlers_done {
        tracing::warn!(
            "NATS server unreachable or too slow at shutdown; calls not acked are left to redelivery"
        );
    }
    if connected(client) {
        let _ = tokio::time::timeout(FLUSH_LIMIT, client.flush()).await;
    }
}

/// Completes `pull_expiry` after the stop was `asked`; never before a stop was asked. A pull in
/// progress when the stop comes gets that long to bring what the server already sent.
pub(super) async fn linger(asked: Option<Instant>, pull_expiry: Duration) {
    match asked {
        Some(at) => tokio::time::sleep_until(at + pull_expiry).await,
        None => std::future::pending().await,
    }
}

/// Whether the client is connected to a server now.
fn connected(client: &Client) -> bool {
    client.connection_state() == State::Connected
}

/// Completes once the client is not connected.
async fn disconnected(client: &Client) {
    while connected(client) {
        tokio::time::sleep(CONNECTION_CHECK).await;
    }
}

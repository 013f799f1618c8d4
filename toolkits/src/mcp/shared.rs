//! [`Shared`]: the state an MCP toolkit, its tools and its supervisor share — the server's name
//! and settings, the status, the live session's peer and tools — and how a tool call waits for a
//! ready session.
//!
//! The lowest module of the MCP toolkit: `tool` and `toolkit` both build on it, and it imports
//! neither (the toolkit hands in how its supervisor is spawned), so the arrows run one way.
//! Not here: the supervisor and the session lifecycle (`toolkit`), one tool's call (`tool`).

use std::sync::{Arc, Mutex, RwLock};

use rmcp::service::{Peer, RoleClient};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::config::McpToolkitConfig;
use skillet_core::deadline::Deadline;
use skillet_core::tools::{Tool, ToolError, ToolkitError, ToolkitStatus};

/// State shared by the toolkit handle, its tools and the supervisor.
pub(crate) struct Shared {
    pub(crate) name: Arc<str>,
    pub(crate) config: McpToolkitConfig,
    pub(super) status: watch::Sender<ToolkitStatus>,
    pub(super) live: RwLock<Live>,
    pub(super) tools_changed: Arc<Notify>,
    pub(super) shutdown: CancellationToken,
    pub(super) supervisor: Mutex<Option<JoinHandle<()>>>,
    /// Spawns the supervisor task (`toolkit` owns it; passed in so that this module, which the
    /// tools use, does not import the toolkit).
    pub(super) spawn_supervisor: fn(Arc<Shared>) -> JoinHandle<()>,
}

/// What the current session offers.
#[derive(Default)]
pub(super) struct Live {
    /// The session's peer; `None` while no session is up.
    pub(super) peer: Option<Peer<RoleClient>>,
    /// The allowed tools of the last session (kept while restarting, so a run that resolves its
    /// tools meanwhile still offers them; its calls wait for the restart).
    pub(super) tools: Vec<Arc<dyn Tool>>,
}

impl Shared {
    pub(super) fn error(&self, reason: String) -> ToolkitError {
        ToolkitError {
            toolkit: self.name.to_string(),
            reason,
        }
    }

    /// Starts the supervisor unless it runs or the toolkit was shut down.
    pub(super) fn ensure_supervisor(self: &Arc<Self>) {
        let mut supervisor = lock(&self.supervisor);
        if supervisor.is_some() || self.shutdown.is_cancelled() {
            return;
        }
        self.status.send_replace(ToolkitStatus::Starting);
        *supervisor = Some((self.spawn_supervisor)(self.clone()));
    }

    /// The current session's peer, waiting while the server (re)starts; fails at once when the
    /// toolkit is `Failed` or stopped.
    pub(crate) async fn ready_peer(
        self: &Arc<Self>,
        deadline: Deadline,
        cancel: &CancellationToken,
    ) -> Result<Peer<RoleClient>, ToolError> {
        let mut rx = self.status.subscribe();
        loop {
            let status = rx.borrow_and_update().clone();
            match status {
                ToolkitStatus::Ready => {
                    if let Some(peer) = read(&self.live).peer.clone() {
                        return Ok(peer);
                    }
                }
                ToolkitStatus::Idle => self.ensure_supervisor(),
                ToolkitStatus::Starting => {}
                ToolkitStatus::Failed(reason) => {
                    return Err(ToolError::Unavailable(format!(
                        "MCP server {} is down: {reason}",
                        self.name
                    )));
                }
                ToolkitStatus::Stopped => {
                    return Err(ToolError::Unavailable(format!(
                        "MCP toolkit {} was shut down",
                        self.name
                    )));
                }
            }
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() {
                        return Err(ToolError::Unavailable(format!(
                            "MCP toolkit {} was shut down", self.name
                        )));
                    }
                }
                _ = cancel.cancelled() => return Err(ToolError::Cancelled),
                _ = tokio::time::sleep_until(deadline.instant()) => {
                    return Err(ToolError::Unavailable(format!(
                        "MCP server {} did not come up before the call's deadline", self.name
                    )));
                }
            }
        }
    }
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

pub(super) fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|p| p.into_inner())
}

pub(super) fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|p| p.into_inner())
}

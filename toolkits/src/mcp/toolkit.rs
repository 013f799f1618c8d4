//! [`McpToolkit`]: one configured MCP server as a [`Toolkit`], and the supervisor task that keeps
//! its session alive.
//!
//! The supervisor owns the session. It opens it, publishes the server's tools, re-lists them on
//! `notifications/tools/list_changed`, and when the session dies (the child exited, the HTTP
//! endpoint went away) marks the toolkit `Starting`, waits (250 ms doubling to 30 s; the delay
//! resets once a session has stayed up for 30 s) and opens a new one. A server that cannot be
//! started is `Failed` with the reason, and still retried, so skills that depend on it become
//! runnable when it comes up. Calls in flight when a session dies fail with
//! `ToolError::Unavailable`; calls made while it restarts wait for it, within their deadline.
//!
//! The state the toolkit, its tools and the supervisor share is `shared` (below both this module
//! and `tool`).

use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::config::McpToolkitConfig;
use super::connect::{ClientEvents, Session, open_session};
use super::shared::{Live, Shared, lock, read, write};
use super::tool::McpTool;
use skillet_core::tools::{Tool, Toolkit, ToolkitError, ToolkitStatus};

/// First delay before restarting a server.
const FIRST_RESTART_DELAY: Duration = Duration::from_millis(250);
/// Longest delay between restarts.
const MAX_RESTART_DELAY: Duration = Duration::from_secs(30);
/// A session that lived this long resets the restart delay.
const STABLE_SESSION: Duration = Duration::from_secs(30);
/// Limit on re-listing tools after a change notification.
const RELIST_TIMEOUT: Duration = Duration::from_secs(30);
/// Limit on closing a session at shutdown (the stdio transport itself escalates to SIGTERM and
/// kill within this).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// An MCP server as a toolkit. Cheap to share; tools it hands out stay valid across restarts.
///
/// Dropping the last handle stops the server in the background; call [`Toolkit::shutdown`] to
/// wait for it.
pub struct McpToolkit {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for McpToolkit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolkit")
            .field("name", &self.shared.name)
            .field("server", &self.shared.config.describe())
            .field("status", &*self.shared.status.borrow())
            .finish()
    }
}

impl McpToolkit {
    /// A toolkit named `name` for the server in `config`. Nothing starts until
    /// [`Toolkit::start`] or first use.
    pub fn new(name: impl Into<String>, config: McpToolkitConfig) -> Arc<McpToolkit> {
        let (status, _) = watch::channel(ToolkitStatus::Idle);
        Arc::new(McpToolkit {
            shared: Arc::new(Shared {
                name: Arc::from(name.into()),
                config,
                status,
                live: RwLock::new(Live::default()),
                tools_changed: Arc::new(Notify::new()),
                shutdown: CancellationToken::new(),
                supervisor: Mutex::new(None),
                spawn_supervisor: |shared| tokio::spawn(supervise(shared)),
            }),
        })
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &McpToolkitConfig {
        &self.shared.config
    }

    /// Follows the status as it changes (e.g. to re-run `Registry::resolve_dependencies` when
    /// the server comes up or goes down, so skills become `Published` or `Blocked`).
    pub fn watch_status(&self) -> watch::Receiver<ToolkitStatus> {
        self.shared.status.subscribe()
    }

    /// Waits until the status is `Ready`, `Failed` or `Stopped` and returns it.
    async fn settled_status(&self) -> ToolkitStatus {
        let mut rx = self.shared.status.subscribe();
        let settled = rx
            .wait_for(|s| !matches!(s, ToolkitStatus::Idle | ToolkitStatus::Starting))
            .await
            .map(|s| s.clone());
        settled.unwrap_or(ToolkitStatus::Stopped)
    }
}

impl Drop for McpToolkit {
    fn drop(&mut self) {
        // The supervisor holds `Shared` too; without this it would keep the server running.
        self.shared.shutdown.cancel();
    }
}

#[async_trait]
impl Toolkit for McpToolkit {
    fn name(&self) -> &str {
        &self.shared.name
    }

    async fn start(&self) -> Result<(), ToolkitError> {
        self.shared.ensure_supervisor();
        match self.settled_status().await {
            ToolkitStatus::Ready => Ok(()),
            ToolkitStatus::Failed(reason) => Err(self.shared.error(reason)),
            _ => Err(self.shared.error("the toolkit was shut down".into())),
        }
    }

    fn status(&self) -> ToolkitStatus {
        self.shared.status.borrow().clone()
    }

    fn describe(&self) -> String {
        self.shared.config.describe()
    }

    fn connects_on_first_use(&self) -> bool {
        self.shared.config.connect == super::ConnectMode::FirstUse
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        if *self.shared.status.borrow() == ToolkitStatus::Idle
            && tokio::runtime::Handle::try_current().is_ok()
        {
            // First use: start connecting now; the tools appear once the server is up.
            self.shared.ensure_supervisor();
        }
        read(&self.shared.live).tools.clone()
    }

    async fn shutdown(&self) {
        self.shared.shutdown.cancel();
        let supervisor = lock(&self.shared.supervisor).take();
        if let Some(handle) = supervisor
            && let Err(e) = handle.await
        {
            tracing::warn!(toolkit = %self.shared.name, "MCP supervisor ended abnormally: {e}");
        }
        self.shared.status.send_replace(ToolkitStatus::Stopped);
    }
}

/// Publishes the allowed subset of `listed` as the toolkit's tools.
fn publish_tools(shared: &Arc<Shared>, listed: Vec<rmcp::model::Tool>) {
    let weak: Weak<Shared> = Arc::downgrade(shared);
    let mut seen = std::collections::HashSet::new();
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    for tool in listed {
        if !shared.config.allows(&tool.name) {
            continue;
        }
        if !seen.insert(tool.name.to_string()) {
            tracing::warn!(toolkit = %shared.name, tool = %tool.name, "MCP server lists a tool twice; keeping the first");
            continue;
        }
        tools.push(Arc::new(McpTool::from_mcp(
            &shared.name,
            tool,
            weak.clone(),
        )));
    }
    if let Some(allowed) = &shared.config.available_tools {
        for missing in allowed.iter().filter(|name| !seen.contains(*name)) {
            tracing::warn!(toolkit = %shared.name, tool = %missing, "available_tools names a tool the MCP server does not list");
        }
    }
    write(&shared.live).tools = tools;
}

/// How a session ended.
enum SessionEnd {
    /// The toolkit is shutting down.
    Shutdown,
    /// The server went away.
    Died(String),
}

/// Keeps the toolkit's server running until shutdown.
async fn supervise(shared: Arc<Shared>) {
    let mut restarts: u32 = 0;
    loop {
        let stop = shared.shutdown.child_token();
        let events = ClientEvents {
            toolkit: shared.name.clone(),
            tools_changed: shared.tools_changed.clone(),
        };
        let opened = tokio::select! {
            opened = open_session(&shared.config, events, stop.clone()) => opened,
            _ = shared.shutdown.cancelled() => break,
        };
        match opened {
            Ok(session) => {
                let began = Instant::now();
                tracing::info!(toolkit = %shared.name, tools = session.tools.len(), "MCP server is up");
                match run_session(&shared, session).await {
                    SessionEnd::Shutdown => break,
                    SessionEnd::Died(reason) => {
                        tracing::warn!(toolkit = %shared.name, "MCP server stopped: {reason}; restarting");
                        if began.elapsed() >= STABLE_SESSION {
                            restarts = 0;
                        }
                        shared.status.send_replace(ToolkitStatus::Starting);
                        write(&shared.live).peer = None;
                    }
                }
            }
            Err(reason) => {
                tracing::warn!(toolkit = %shared.name, "MCP server could not start: {reason}");
                shared.status.send_replace(ToolkitStatus::Failed(reason));
            }
        }
        let delay = restart_delay(restarts);
        restarts = restarts.saturating_add(1);
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = shared.shutdown.cancelled() => break,
        }
    }
    write(&shared.live).peer = None;
    shared.status.send_replace(ToolkitStatus::Stopped);
}

/// Serves one session: publishes it, follows tool-list changes, and returns when it ends.
async fn run_session(shared: &Arc<Shared>, session: Session) -> SessionEnd {
    let Session { service, tools } = session;
    let peer = service.peer().clone();
    publish_tools(shared, tools);
    write(&shared.live).peer = Some(peer.clone());
    shared.status.send_replace(ToolkitStatus::Ready);

    let ended = service.waiting();
    tokio::pin!(ended);
    loop {
        tokio::select! {
            quit = &mut ended => {
                return SessionEnd::Died(match quit {
                    Ok(reason) => format!("session ended ({reason:?})"),
                    Err(e) => format!("session task failed: {e}"),
                });
            }
            _ = shared.shutdown.cancelled() => {
                // The session's stop token is a child of `shutdown`: the session is already
                // closing its transport; wait for that, within bounds.
                write(&shared.live).peer = None;
                if tokio::time::timeout(CLOSE_TIMEOUT, &mut ended).await.is_err() {
                    tracing::warn!(toolkit = %shared.name, "MCP server did not close in time");
                }
                return SessionEnd::Shutdown;
            }
            _ = shared.tools_changed.notified() => {
                match tokio::time::timeout(RELIST_TIMEOUT, peer.list_all_tools()).await {
                    Ok(Ok(listed)) => {
                        tracing::info!(toolkit = %shared.name, tools = listed.len(), "MCP tool list changed");
                        publish_tools(shared, listed);
                    }
                    Ok(Err(e)) => tracing::warn!(toolkit = %shared.name, "re-listing tools failed: {e}"),
                    Err(_) => tracing::warn!(toolkit = %shared.name, "re-listing tools timed out"),
                }
            }
        }
    }
}

/// The delay before restart number `restarts` (0-based).
fn restart_delay(restarts: u32) -> Duration {
    FIRST_RESTART_DELAY
        .saturating_mul(2u32.saturating_pow(restarts.min(16)))
        .min(MAX_RESTART_DELAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_delay_doubles_up_to_the_cap() {
        assert_eq!(restart_delay(0), Duration::from_millis(250));
        assert_eq!(restart_delay(1), Duration::from_millis(500));
        assert_eq!(restart_delay(3), Duration::from_secs(2));
        assert_eq!(restart_delay(10), MAX_RESTART_DELAY);
        assert_eq!(restart_delay(u32::MAX), MAX_RESTART_DELAY);
    }
}

//! The [`Toolkit`] trait: a named group of tools with a lifecycle.

use std::sync::Arc;

use async_trait::async_trait;

use super::Tool;

/// Where a toolkit is in its lifecycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolkitStatus {
    /// Not started yet (e.g. connects on first use).
    Idle,
    /// Starting or restarting.
    Starting,
    /// Up; its tools can be called.
    Ready,
    /// Down, with the reason (skills that declare it are `Blocked` with this reason).
    Failed(String),
    /// Shut down by the host.
    Stopped,
}

impl ToolkitStatus {
    /// Whether skills that depend on the toolkit can run (ready, or able to start on use).
    pub fn is_usable(&self) -> bool {
        matches!(
            self,
            ToolkitStatus::Ready | ToolkitStatus::Idle | ToolkitStatus::Starting
        )
    }
}

/// Why a toolkit could not start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("toolkit {toolkit}: {reason}")]
pub struct ToolkitError {
    /// The toolkit's name.
    pub toolkit: String,
    /// What went wrong.
    pub reason: String,
}

/// A named group of tools with a lifecycle, e.g. the tools of one MCP server.
#[async_trait]
pub trait Toolkit: Send + Sync {
    /// The toolkit's name as skills declare it.
    fn name(&self) -> &str;
    /// Starts the toolkit (idempotent).
    async fn start(&self) -> Result<(), ToolkitError>;
    /// Whether the toolkit connects on first use rather than when the host boots; the host
    /// skips it at boot and the run loop starts it before a skill that declares it runs.
    fn connects_on_first_use(&self) -> bool {
        false
    }
    /// One line saying where the tools come from (e.g. `stdio: npx -y server`), never secrets.
    fn describe(&self) -> String {
        String::new()
    }
    /// Current status.
    fn status(&self) -> ToolkitStatus;
    /// The tools it offers now (the list may change while it runs).
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
    /// Stops the toolkit and releases its resources (idempotent).
    async fn shutdown(&self);
}

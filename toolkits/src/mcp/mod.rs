//! Toolkits backed by MCP servers, on `rmcp` (the official Rust SDK).
//!
//! A host names an MCP server in `skillet.toml` (`[toolkits.NAME]`, see [`McpToolkitConfig`]);
//! [`build`] turns that into a [`Toolkit`] whose tools are the server's tools:
//!
//! - `config` — the TOML shape, validated at parse time (stdio or streamable HTTP,
//!   `available_tools`, timeouts, `connect = "boot" | "first-use"`);
//! - `connect` — launching or dialling the server, the MCP handshake, the first `tools/list`;
//! - `toolkit` — [`McpToolkit`] and its supervisor: status, restarts with backoff,
//!   `notifications/tools/list_changed`, shutdown;
//! - `tool` — [`McpTool`]: a call's deadline and cancellation carried to the MCP request;
//! - `content` — MCP results (text, structured JSON, images as `artifact` events, `isError`)
//!   mapped onto [`ToolOutput`](skillet_core::tools::ToolOutput).
//!
//! Not here: provider-safe tool names (the `ToolRegistry` derives them from the MCP names),
//! argument validation and per-turn dispatch (the run loop), reading `skillet.toml` (the `skillet`
//! crate).
//!
//! A composition root (the `skillet` binary, or a program) registers it in the engine's registry:
//!
//! ```no_run
//! # async fn demo() {
//! use skillet_toolkits::mcp::{self, McpToolkitConfig};
//! use skillet_engine::tools::ToolRegistry;
//!
//! let config: McpToolkitConfig = toml::from_str(r#"
//!     command = "npx"
//!     args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]
//! "#).unwrap();
//! let mut registry = ToolRegistry::new();
//! registry.register_toolkit(mcp::build("files", config)).unwrap();
//! for failure in registry.start_toolkits().await {
//!     eprintln!("{failure}");
//! }
//! registry.shutdown_toolkits().await;
//! # }
//! ```

mod config;
mod connect;
mod content;
mod shared;
mod tool;
mod toolkit;

use std::sync::Arc;

pub use config::{
    ConnectMode, DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, HeaderSource, HttpServer,
    McpToolkitConfig, McpTransport, StdioServer,
};
pub use tool::McpTool;
pub use toolkit::McpToolkit;

use skillet_core::tools::Toolkit;

/// The toolkit `name` for the MCP server in `config`, not started yet (the host starts it at
/// boot when `config.connect` is [`ConnectMode::Boot`]; otherwise the first run of a skill that
/// declares it does).
pub fn build(name: &str, config: McpToolkitConfig) -> Arc<dyn Toolkit> {
    McpToolkit::new(name, config)
}

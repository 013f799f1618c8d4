//! # skillet-toolkits
//!
//! Toolkits the host configures from outside the process: today, MCP servers ([`mcp`]).
//!
//! What lives here: the `[toolkits.NAME]` settings of an MCP server ([`mcp::McpToolkitConfig`]:
//! a child over stdio or a streamable-HTTP URL, call timeout, header secrets), the connection
//! and its handshake, its tools as engine [`Tool`](skillet_core::tools::Tool)s, and the
//! re-listing a server's `tools/list_changed` triggers.
//!
//! What does not: the traits these implement ([`skillet_core::tools::Toolkit`],
//! [`skillet_core::tools::Tool`]) and the registry that offers their tools to a model (the
//! engine's `tools`), and running a call (the engine's run loop dispatches a model's tool call
//! here). This crate only connects to the outside world and maps it onto those traits, so the
//! engine never depends on an MCP client.

#![warn(missing_docs)]

pub mod mcp;
